/// The pattern's syntax tree.
indirect enum RegexNode: Hashable {
    case empty
    case scalar(Unicode.Scalar)
    case set(ScalarSet)
    case any
    case concatenation([RegexNode])
    case alternation([RegexNode])
    case repetition(RegexNode, minimum: Int, maximum: Int?)
}

/// Recursive descent over the subset:
/// `alternation := concat ('|' concat)*`, `concat := (atom quantifier?)*`,
/// `atom := scalar | '.' | class | escape | '(' alternation ')' | '(?:' alternation ')'`.
/// `^` is allowed only first and `$` only last.
struct SafeRegexParser {
    let scalars: [Unicode.Scalar]
    var position = 0
    /// Whether a `|` stands outside every group.
    private(set) var hasTopLevelAlternation = false

    init(_ scalars: [Unicode.Scalar]) {
        self.scalars = scalars
    }

    mutating func parsePattern() throws(SafeRegexError) -> (node: RegexNode, anchoredAtStart: Bool, anchoredAtEnd: Bool) {
        var anchoredAtStart = false
        var end = scalars.count
        if scalars.first == "^" { anchoredAtStart = true; position = 1 }
        var anchoredAtEnd = false
        if end > position, scalars[end - 1] == "$", !isEscaped(end - 1) { anchoredAtEnd = true; end -= 1 }
        var bounded = SafeRegexParser(Array(scalars[..<end]))
        bounded.position = position
        let node = try bounded.parseAlternation(depth: 0)
        if bounded.position < end { throw .unexpected(Character(scalars[bounded.position]), position: bounded.position) }
        // `^ab|cd$` anchors the whole pattern here but only its first and last alternative
        // in JavaScript, Java and Kotlin: refused, so no port can read it otherwise.
        if anchoredAtStart || anchoredAtEnd, bounded.hasTopLevelAlternation {
            throw .unsupported("An anchored pattern with '|' outside a group, such as ^ab|cd$ (write ^(ab|cd)$)",
                               position: scalars.firstIndex(of: "|") ?? 0)
        }
        return (node, anchoredAtStart, anchoredAtEnd)
    }

    /// Whether the scalar at `index` is preceded by an odd number of backslashes.
    private func isEscaped(_ index: Int) -> Bool {
        var count = 0
        var cursor = index - 1
        while cursor >= 0, scalars[cursor] == "\\" { count += 1; cursor -= 1 }
        return count % 2 == 1
    }

    private var current: Unicode.Scalar? { position < scalars.count ? scalars[position] : nil }

    mutating func parseAlternation(depth: Int) throws(SafeRegexError) -> RegexNode {
        guard depth < 32 else { throw .tooComplex(limit: SafeRegex.maximumProgramSize) }
        var branches = [try parseConcatenation(depth: depth)]
        while current == "|" {
            if depth == 0 { hasTopLevelAlternation = true }
            position += 1
            branches.append(try parseConcatenation(depth: depth))
        }
        return branches.count == 1 ? branches[0] : .alternation(branches)
    }

    mutating func parseConcatenation(depth: Int) throws(SafeRegexError) -> RegexNode {
        var items: [RegexNode] = []
        while let scalar = current, scalar != "|", scalar != ")" {
            var atom = try parseAtom(depth: depth)
            if let quantified = try parseQuantifier(applyingTo: atom) { atom = quantified }
            if let next = current, "*+?{".unicodeScalars.contains(next) {
                throw .unsupported("A second quantifier ('\(next)') in a row", position: position)
            }
            items.append(atom)
        }
        return items.count == 1 ? items[0] : (items.isEmpty ? .empty : .concatenation(items))
    }

    mutating func parseAtom(depth: Int) throws(SafeRegexError) -> RegexNode {
        let start = position
        let scalar = scalars[position]
        position += 1
        switch scalar {
        case ".": return .any
        case "[": return .set(try parseClass(start: start))
        case "\\": return try parseEscape(start: start, inClass: false).node
        case "(":
            if current == "?" {
                guard position + 1 < scalars.count, scalars[position + 1] == ":" else {
                    throw .unsupported("Lookaround and group options", position: start)
                }
                position += 2
            }
            let inner = try parseAlternation(depth: depth + 1)
            guard current == ")" else { throw .unexpectedEnd }
            position += 1
            return inner
        case "*", "+", "?", "{": throw .unexpected(Character(scalar), position: start)
        case "^", "$": throw .unsupported("'\(scalar)' in the middle of a pattern", position: start)
        case ")": throw .unexpected(")", position: start)
        default: return .scalar(scalar)
        }
    }

    mutating func parseQuantifier(applyingTo atom: RegexNode) throws(SafeRegexError) -> RegexNode? {
        guard let scalar = current else { return nil }
        let start = position
        switch scalar {
        case "*": position += 1; return .repetition(atom, minimum: 0, maximum: nil)
        case "+": position += 1; return .repetition(atom, minimum: 1, maximum: nil)
        case "?": position += 1; return .repetition(atom, minimum: 0, maximum: 1)
        case "{":
            position += 1
            guard let minimum = parseNumber() else { throw .invalidRepetition(position: start) }
            var maximum: Int? = minimum
            if current == "," {
                position += 1
                maximum = current == "}" ? nil : parseNumber()
                if maximum == nil, current != "}" { throw .invalidRepetition(position: start) }
            }
            guard current == "}" else { throw .invalidRepetition(position: start) }
            position += 1
            guard minimum <= SafeRegex.maximumRepetition, (maximum ?? minimum) <= SafeRegex.maximumRepetition,
                  minimum <= (maximum ?? minimum) else { throw .invalidRepetition(position: start) }
            return .repetition(atom, minimum: minimum, maximum: maximum)
        default: return nil
        }
    }

    mutating func parseNumber() -> Int? {
        var value = 0
        var digits = 0
        while let scalar = current, ("0"..."9").contains(scalar), digits < 5 {
            value = value * 10 + Int(scalar.value - 0x30)
            digits += 1
            position += 1
        }
        return digits == 0 ? nil : value
    }

    mutating func parseClass(start: Int) throws(SafeRegexError) -> ScalarSet {
        var set = ScalarSet(ranges: [], isNegated: false)
        if current == "^" { set.isNegated = true; position += 1 }
        var isFirst = true
        while true {
            guard let scalar = current else { throw .unexpectedEnd }
            if scalar == "]", !isFirst { position += 1; break }
            isFirst = false
            let itemStart = position
            let low: UInt32
            if scalar == "\\" {
                position += 1
                let escape = try parseEscape(start: itemStart, inClass: true)
                guard let single = escape.scalar else {
                    if case .set(let inner) = escape.node, !inner.isNegated { set.ranges += inner.ranges; continue }
                    throw .unsupported("A negated class escape inside [...]", position: itemStart)
                }
                low = single.value
            } else if scalar == "[" {
                throw .unsupported("A nested '[' in a class (escape it as \\[)", position: itemStart)
            } else {
                position += 1
                low = scalar.value
            }
            // A '-' between two items makes a range; first or last it is literal.
            if current == "-", position + 1 < scalars.count, scalars[position + 1] != "]" {
                position += 1
                guard let highScalar = current else { throw .unexpectedEnd }
                var high = highScalar.value
                if highScalar == "\\" {
                    let escapeStart = position
                    position += 1
                    guard let single = try parseEscape(start: escapeStart, inClass: true).scalar else {
                        throw .invalidRange(position: itemStart)
                    }
                    high = single.value
                } else {
                    position += 1
                }
                guard low <= high else { throw .invalidRange(position: itemStart) }
                set.ranges.append(low...high)
            } else {
                set.ranges.append(low...low)
            }
        }
        return set
    }

    /// After a backslash: a class shorthand or an escaped metacharacter.
    mutating func parseEscape(start: Int, inClass: Bool) throws(SafeRegexError) -> (node: RegexNode, scalar: Unicode.Scalar?) {
        guard let scalar = current else { throw .unexpectedEnd }
        position += 1
        switch scalar {
        case "d": return (.set(.digit), nil)
        case "D": return (.set(ScalarSet(ranges: ScalarSet.digit.ranges, isNegated: true)), nil)
        case "w": return (.set(.word), nil)
        case "W": return (.set(ScalarSet(ranges: ScalarSet.word.ranges, isNegated: true)), nil)
        case "s": return (.set(.space), nil)
        case "S": return (.set(ScalarSet(ranges: ScalarSet.space.ranges, isNegated: true)), nil)
        case "n": return (.scalar("\n"), "\n")
        case "t": return (.scalar("\t"), "\t")
        default:
            let escapable = "\\.^$|?*+()[]{}-/"
            guard escapable.unicodeScalars.contains(scalar) else {
                throw .unsupported("The escape \\\(scalar)", position: start)
            }
            return (.scalar(scalar), scalar)
        }
    }
}

/// Thompson's construction: each node becomes a fragment of jumps and splits.
struct SafeRegexCompiler {
    var program: [Instruction] = []

    mutating func emit(_ node: RegexNode) throws(SafeRegexError) {
        guard program.count <= SafeRegex.maximumProgramSize else { throw .tooComplex(limit: SafeRegex.maximumProgramSize) }
        switch node {
        case .empty: break
        case .scalar(let scalar): program.append(.scalar(scalar))
        case .set(let set): program.append(.set(set))
        case .any: program.append(.any)
        case .concatenation(let items):
            for item in items { try emit(item) }
        case .alternation(let branches):
            // split L1, next; L1: branch; jump end; ... last branch falls through to end.
            var jumpsToEnd: [Int] = []
            for (index, branch) in branches.enumerated() {
                if index < branches.count - 1 {
                    let split = program.count
                    program.append(.split(split + 1, -1))
                    try emit(branch)
                    jumpsToEnd.append(program.count)
                    program.append(.jump(-1))
                    program[split] = .split(split + 1, program.count)
                } else {
                    try emit(branch)
                }
            }
            for jump in jumpsToEnd { program[jump] = .jump(program.count) }
        case .repetition(let inner, let minimum, let maximum):
            for _ in 0..<minimum { try emit(inner) }
            if let maximum {
                // Each optional copy: split into the copy or past all remaining copies.
                var splits: [Int] = []
                for _ in minimum..<maximum {
                    splits.append(program.count)
                    program.append(.split(program.count + 1, -1))
                    try emit(inner)
                }
                for split in splits { program[split] = .split(split + 1, program.count) }
            } else {
                let loop = program.count
                program.append(.split(loop + 1, -1))
                try emit(inner)
                program.append(.jump(loop))
                program[loop] = .split(loop + 1, program.count)
            }
        }
    }
}
