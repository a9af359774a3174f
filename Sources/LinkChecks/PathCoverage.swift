/// A pattern over URL paths as a small NFA over characters: a route's pattern
/// (`/product/:id`, `/help/*topic`) or an associated-domain file's wildcard pattern
/// (`/product/*`, `/p/?*`, `NOT /help/*`).
struct PathAutomaton: Sendable {
    enum Step: Hashable, Sendable {
        case exact(Character)
        /// Either case of an ASCII letter (case-insensitive rules).
        case caseless(Character)
        case notSlash
        case any
    }

    /// `transitions[state]`: the steps out of `state`; `epsilon[state]`: free moves.
    private(set) var transitions: [[(Step, Int)]] = [[]]
    private(set) var epsilon: [[Int]] = [[]]
    private(set) var accepting = 0

    private mutating func newState() -> Int {
        transitions.append([])
        epsilon.append([])
        return transitions.count - 1
    }

    private mutating func append(_ step: Step, from state: Int) -> Int {
        let next = newState()
        transitions[state].append((step, next))
        return next
    }

    /// Apple's wildcard syntax: `*` any run of characters (slashes too), `?` one character.
    init(wildcard text: String, caseSensitive: Bool) {
        var state = 0
        for character in text {
            switch character {
            case "*":
                let loop = newState()
                epsilon[state].append(loop)
                transitions[loop].append((.any, loop))
                state = loop
            case "?": state = append(.any, from: state)
            default: state = append(caseSensitive || !character.isLetter ? .exact(character) : .caseless(character), from: state)
            }
        }
        accepting = state
    }

    /// The paths a route pattern matches as they would be published: `/`, the literals as
    /// written, one or more non-slash characters for `:param`, one or more segments for `*rest`.
    init(route text: String) {
        var state = 0
        var segments = text.dropFirst().split(separator: "/", omittingEmptySubsequences: false)
        if segments.last?.isEmpty == true { segments.removeLast() }
        if segments.isEmpty { state = append(.exact("/"), from: state) }
        for segment in segments {
            state = append(.exact("/"), from: state)
            switch segment.first {
            case ":", "*":
                let inside = append(.notSlash, from: state)
                transitions[inside].append((.notSlash, inside))
                if segment.first == "*" {
                    let slash = append(.exact("/"), from: inside)
                    transitions[slash].append((.notSlash, inside))
                }
                state = inside
            default:
                for character in segment { state = append(.exact(character), from: state) }
            }
        }
        accepting = state
    }

    func closure(_ states: [Int]) -> [Int] {
        var seen = Set(states)
        var stack = states
        while let state = stack.popLast() {
            for next in epsilon[state] where seen.insert(next).inserted { stack.append(next) }
        }
        return seen.sorted()
    }

    func step(_ states: [Int], _ character: Character) -> [Int] {
        var next: [Int] = []
        for state in states {
            for (step, target) in transitions[state] where Self.matches(step, character) { next.append(target) }
        }
        return closure(next)
    }

    var start: [Int] { closure([0]) }

    func accepts(_ states: [Int]) -> Bool { states.contains(accepting) }

    func matches(_ text: String) -> Bool {
        accepts(text.reduce(start) { step($0, $1) })
    }

    /// Every character the pattern names, both cases where it ignores case.
    var mentioned: Set<Character> {
        var characters: Set<Character> = ["/"]
        for steps in transitions {
            for (step, _) in steps {
                switch step {
                case .exact(let character): characters.insert(character)
                case .caseless(let character):
                    characters.insert(Character(character.lowercased()))
                    characters.insert(Character(character.uppercased()))
                case .notSlash, .any: break
                }
            }
        }
        return characters
    }

    private static func matches(_ step: Step, _ character: Character) -> Bool {
        switch step {
        case .exact(let expected): character == expected
        case .caseless(let expected): character.lowercased() == expected.lowercased()
        case .notSlash: character != "/"
        case .any: true
        }
    }
}

/// One entry of an associated-domain file's ordered list: the first that matches a path
/// decides whether the app opens it.
public struct PathRule: Hashable, Sendable, CustomStringConvertible {
    /// As written in the file, for reports: `NOT /help/*`, `{"/": "/p/*", "exclude": true}`.
    public var description: String
    public var pattern: String
    public var exclude: Bool
    public var caseSensitive: Bool

    public init(_ description: String, pattern: String, exclude: Bool, caseSensitive: Bool = true) {
        self.description = description
        self.pattern = pattern
        self.exclude = exclude
        self.caseSensitive = caseSensitive
    }
}

/// Whether an ordered list of rules opens every path a route pattern matches, decided
/// exactly: a breadth-first walk of the product of the route's automaton and the rules',
/// over an alphabet of the characters they name plus one standing for all others. The
/// first path found that the rules do not open is the shortest, and is reported.
public enum PathCoverage {
    public enum Verdict: Hashable, Sendable {
        case covered
        /// A path the route matches and the rules do not open, and the rule that excludes
        /// it (nil: no rule matches it).
        case notCovered(example: String, excludedBy: PathRule?)
        /// The walk exceeded its bound (pathological patterns): not decided.
        case undecided
    }

    /// Product states explored before giving up.
    static let maximumStates = 50_000

    public static func check(route pattern: String, rules: [PathRule]) -> Verdict {
        let route = PathAutomaton(route: pattern)
        let automata = rules.map { PathAutomaton(wildcard: $0.pattern, caseSensitive: $0.caseSensitive) }
        let alphabet = automata.reduce(route.mentioned) { $0.union($1.mentioned) }
        let other = "xzqkjwvy0123456789_-~".first { !alphabet.contains($0) && !alphabet.contains(Character($0.uppercased())) } ?? "\u{00E9}"
        // The stand-in first, so examples read /product/x rather than /product/c.
        let characters = [other] + alphabet.sorted()

        struct State: Hashable {
            var route: [Int]
            var rules: [[Int]]
        }
        let start = State(route: route.start, rules: automata.map(\.start))
        var parent: [State: (State, Character)] = [:]
        var seen: Set<State> = [start]
        var queue = [start]
        var head = 0
        while head < queue.count {
            let state = queue[head]
            head += 1
            if route.accepts(state.route) {
                let first = automata.indices.first { automata[$0].accepts(state.rules[$0]) }
                if first.map({ rules[$0].exclude }) ?? true {
                    var path: [Character] = []
                    var cursor = state
                    while let (previous, character) = parent[cursor] {
                        path.append(character)
                        cursor = previous
                    }
                    return .notCovered(example: String(path.reversed()), excludedBy: first.map { rules[$0] })
                }
            }
            for character in characters {
                let routeNext = route.step(state.route, character)
                guard !routeNext.isEmpty else { continue }
                let next = State(route: routeNext, rules: automata.indices.map { automata[$0].step(state.rules[$0], character) })
                guard seen.insert(next).inserted else { continue }
                guard seen.count <= maximumStates else { return .undecided }
                parent[next] = (state, character)
                queue.append(next)
            }
        }
        return .covered
    }
}
