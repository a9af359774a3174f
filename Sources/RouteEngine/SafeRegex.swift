/// A regular expression from a small, safe subset, matched in time linear in the input
/// (Thompson's construction, simulated as a set of states; no backtracking), so a pattern
/// submitted by marketing cannot hang a phone or the server. The subset is documented in
/// `docs/patterns.md`.
///
/// Without `^` the pattern may match anywhere in the value; without `$` it may end anywhere.
public struct SafeRegex: Hashable, Sendable, CustomStringConvertible {
    /// The compiled program, shared: copying a regex (or a `ParamSpec` holding one) is one retain.
    private let program: Program

    /// The source text, as written.
    public var description: String { program.source }

    /// Patterns longer than this are refused (bytes of source).
    public static let maximumSourceLength = 512
    /// The largest `{n,m}` bound.
    public static let maximumRepetition = 1000
    /// The largest compiled program; bounds the work per input character.
    public static let maximumProgramSize = 4000

    public init(_ source: String) throws(SafeRegexError) {
        guard source.utf8.count <= Self.maximumSourceLength else { throw .tooLong(limit: Self.maximumSourceLength) }
        var parser = SafeRegexParser(Array(source.unicodeScalars))
        let parsed = try parser.parsePattern()
        var compiler = SafeRegexCompiler()
        try compiler.emit(parsed.node)
        compiler.program.append(.match)
        guard compiler.program.count <= Self.maximumProgramSize else { throw .tooComplex(limit: Self.maximumProgramSize) }
        program = Program(source: source, instructions: compiler.program, anchoredAtStart: parsed.anchoredAtStart,
                          anchoredAtEnd: parsed.anchoredAtEnd)
    }

    /// The most steps matching one value may take, for patterns a schema declares: a step
    /// is one operation tried on one input scalar (a set counts each of its ranges). About
    /// a millisecond; a link has at most a few params, so no link costs a preview or a
    /// landing more than a few milliseconds whatever the schema says.
    public static let matchBudget = 1_000_000

    /// Steps per input scalar at worst: every operation live at once, each set tried range
    /// by range.
    public var stepsPerScalar: Int { program.stepsPerScalar }

    /// The most steps matching a value of `length` scalars can take.
    public func worstCaseSteps(length: Int) -> Int { stepsPerScalar * max(1, length) }

    public static func == (lhs: SafeRegex, rhs: SafeRegex) -> Bool { lhs.description == rhs.description }
    public func hash(into hasher: inout Hasher) { hasher.combine(description) }

    /// Whether `value` matches.
    /// - Complexity: O(n × m) for n Unicode scalars of input and m instructions, never worse.
    public func matches(_ value: String) -> Bool {
        program.matches(value)
    }
}

/// A compiled pattern as flat, trivially-copyable operations, so the matching loop
/// neither retains nor releases.
private final class Program: Sendable {
    enum Kind: UInt8 { case scalar, set, negatedSet, any, jump, split, match }

    /// `scalar`: a = the scalar. `set`/`negatedSet`: ranges[a..<b] (pairs of bounds).
    /// `jump`: a = target. `split`: a, b = targets (a preferred).
    struct Operation {
        var kind: Kind
        var a: UInt32
        var b: UInt32
    }

    let source: String
    let operations: [Operation]
    /// Inclusive ranges as consecutive (low, high) pairs.
    let bounds: [UInt32]
    let anchoredAtStart: Bool
    let anchoredAtEnd: Bool

    init(source: String, instructions: [Instruction], anchoredAtStart: Bool, anchoredAtEnd: Bool) {
        var operations: [Operation] = []
        var bounds: [UInt32] = []
        for instruction in instructions {
            switch instruction {
            case .scalar(let scalar): operations.append(Operation(kind: .scalar, a: scalar.value, b: 0))
            case .set(let set):
                let start = UInt32(bounds.count)
                for range in set.ranges { bounds += [range.lowerBound, range.upperBound] }
                operations.append(Operation(kind: set.isNegated ? .negatedSet : .set, a: start, b: UInt32(bounds.count)))
            case .any: operations.append(Operation(kind: .any, a: 0, b: 0))
            case .jump(let target): operations.append(Operation(kind: .jump, a: UInt32(target), b: 0))
            case .split(let first, let second): operations.append(Operation(kind: .split, a: UInt32(first), b: UInt32(second)))
            case .match: operations.append(Operation(kind: .match, a: 0, b: 0))
            }
        }
        self.source = source
        self.operations = operations
        self.bounds = bounds
        self.anchoredAtStart = anchoredAtStart
        self.anchoredAtEnd = anchoredAtEnd
    }

    var stepsPerScalar: Int {
        operations.reduce(0) { steps, operation in
            steps + 1 + (operation.kind == .set || operation.kind == .negatedSet ? Int(operation.b - operation.a) / 2 : 0)
        }
    }

    func matches(_ value: String) -> Bool {
        operations.withUnsafeBufferPointer { operations in
            bounds.withUnsafeBufferPointer { bounds in
                run(value, operations, bounds)
            }
        }
    }

    private func run(_ value: String, _ operations: UnsafeBufferPointer<Operation>, _ bounds: UnsafeBufferPointer<UInt32>) -> Bool {
        let count = operations.count
        // Two state lists, the generation stamps of each, and a work stack: all on the stack.
        return withUnsafeTemporaryAllocation(of: Int.self, capacity: count * 5) { memory in
            memory.initialize(repeating: 0)
            var current = StateList(states: UnsafeMutableBufferPointer(rebasing: memory[0..<count]),
                                    stamps: UnsafeMutableBufferPointer(rebasing: memory[count..<(2 * count)]))
            var next = StateList(states: UnsafeMutableBufferPointer(rebasing: memory[(2 * count)..<(3 * count)]),
                                 stamps: UnsafeMutableBufferPointer(rebasing: memory[(3 * count)..<(4 * count)]))
            let stack = UnsafeMutableBufferPointer(rebasing: memory[(4 * count)..<(5 * count)])
            var generation = 1
            Self.addState(0, to: &current, generation: generation, stack: stack, operations)
            if current.containsMatch, !anchoredAtEnd { return true }
            for scalar in value.unicodeScalars {
                let input = scalar.value
                generation += 1
                next.removeAll()
                for index in 0..<current.count {
                    let pc = current.states[index]
                    let operation = operations[pc]
                    let consumes: Bool
                    switch operation.kind {
                    case .scalar: consumes = operation.a == input
                    case .any: consumes = true
                    case .set, .negatedSet:
                        var found = false
                        var cursor = Int(operation.a)
                        while cursor < Int(operation.b) {
                            if input >= bounds[cursor] && input <= bounds[cursor + 1] { found = true; break }
                            cursor += 2
                        }
                        consumes = found != (operation.kind == .negatedSet)
                    default: consumes = false
                    }
                    if consumes { Self.addState(pc + 1, to: &next, generation: generation, stack: stack, operations) }
                }
                // Unanchored: a match may start at any position.
                if !anchoredAtStart { Self.addState(0, to: &next, generation: generation, stack: stack, operations) }
                swap(&current, &next)
                if current.containsMatch, !anchoredAtEnd { return true }
                // No thread left to consume input: only a match reached on this very scalar can still count.
                if current.count == 0, !current.containsMatch { return false }
            }
            return current.containsMatch
        }
    }

    /// Follows jumps and splits, adding every state reachable without consuming input.
    /// Each state is marked once per generation, so the stack never holds more than the program's size.
    private static func addState(
        _ start: Int, to list: inout StateList, generation: Int, stack: UnsafeMutableBufferPointer<Int>,
        _ operations: UnsafeBufferPointer<Operation>
    ) {
        var depth = 0
        func push(_ pc: Int) {
            guard list.stamps[pc] != generation else { return }
            list.stamps[pc] = generation
            stack[depth] = pc
            depth += 1
        }
        push(start)
        while depth > 0 {
            depth -= 1
            let pc = stack[depth]
            let operation = operations[pc]
            switch operation.kind {
            case .jump: push(Int(operation.a))
            case .split:
                push(Int(operation.b))
                push(Int(operation.a))
            case .match:
                list.containsMatch = true
            default:
                list.states[list.count] = pc
                list.count += 1
            }
        }
    }
}

/// Why a pattern is not in the supported subset; `message` says it in plain words.
public enum SafeRegexError: Error, Hashable, Sendable {
    case tooLong(limit: Int)
    case tooComplex(limit: Int)
    case unexpectedEnd
    case unexpected(Character, position: Int)
    case unsupported(String, position: Int)
    case invalidRepetition(position: Int)
    case invalidRange(position: Int)

    public var message: String {
        switch self {
        case .tooLong(let limit): "The pattern is longer than \(limit) characters."
        case .tooComplex(let limit): "The pattern expands to more than \(limit) steps; use smaller repetition counts."
        case .unexpectedEnd: "The pattern ends too early (an unclosed group, class or escape)."
        case .unexpected(let character, let position): "Unexpected '\(character)' at position \(position) of the pattern."
        case .unsupported(let feature, let position): "\(feature) (at position \(position)) is not supported; see docs/patterns.md."
        case .invalidRepetition(let position): "The repetition at position \(position) is not valid (use {n}, {n,} or {n,m} with n ≤ m ≤ \(SafeRegex.maximumRepetition))."
        case .invalidRange(let position): "The character range at position \(position) runs backwards."
        }
    }
}

enum Instruction: Hashable, Sendable {
    case scalar(Unicode.Scalar)
    case set(ScalarSet)
    case any
    case jump(Int)
    case split(Int, Int)
    case match
}

/// A character class: ranges of scalars, possibly negated.
struct ScalarSet: Hashable, Sendable {
    var ranges: [ClosedRange<UInt32>]
    var isNegated: Bool

    static let digit = ScalarSet(ranges: [0x30...0x39], isNegated: false)
    static let word = ScalarSet(ranges: [0x30...0x39, 0x41...0x5A, 0x5F...0x5F, 0x61...0x7A], isNegated: false)
    static let space = ScalarSet(ranges: [0x09...0x0D, 0x20...0x20], isNegated: false)
}

/// The threads alive at one input position: program counters, with a generation stamp
/// per instruction so clearing is O(1).
private struct StateList {
    var states: UnsafeMutableBufferPointer<Int>
    var stamps: UnsafeMutableBufferPointer<Int>
    var count = 0
    var containsMatch = false

    mutating func removeAll() {
        count = 0
        containsMatch = false
    }
}
