@testable import LinkChecks
import TestSupport
import Testing

/// PathCoverage against brute force: random route patterns and rule lists over a tiny
/// alphabet, the paths each pattern matches enumerated (captures of up to two characters)
/// and judged one by one.
@Suite("PathCoverage agrees with brute force")
struct CoverageCrossCheckTests {
    typealias Generator = SplitMix

    static func route(_ g: inout Generator) -> String {
        let count = 1 + g.next(3)
        var segments: [String] = []
        for index in 0..<count {
            switch g.next(4) {
            case 0: segments.append(":p\(index)")
            case 1 where index == count - 1: segments.append("*rest")
            default: segments.append(String((0..<(1 + g.next(2))).map { _ in g.pick(["a", "b"]) }))
            }
        }
        return "/" + segments.joined(separator: "/")
    }

    static func rule(_ g: inout Generator) -> PathRule {
        let length = 1 + g.next(5)
        let pattern = "/" + String((0..<length).map { _ in g.pick(Array("ab*?/ab*")) })
        let exclude = g.next(3) == 0
        return PathRule((exclude ? "NOT " : "") + pattern, pattern: pattern, exclude: exclude)
    }

    /// Values a capture takes here: 1 or 2 characters of a, b and x (x stands for every
    /// character no pattern names).
    static let values = ["a", "b", "x"] + ["a", "b", "x"].flatMap { first in ["a", "b", "x"].map { first + $0 } }

    /// The paths `pattern` matches, with each capture taking each of `values` (a `*rest`
    /// one or two segments of them), shortest first.
    static func paths(of pattern: String) -> [String] {
        var paths = [""]
        for segment in pattern.dropFirst().split(separator: "/") {
            let choices: [String]
            switch segment.first {
            case ":": choices = values
            case "*": choices = values + values.flatMap { first in values.map { first + "/" + $0 } }
            default: choices = [String(segment)]
            }
            paths = paths.flatMap { prefix in choices.map { prefix + "/" + $0 } }
        }
        return paths.sorted { ($0.count, $0) < ($1.count, $1) }
    }

    static func opens(_ path: String, _ rules: [PathRule]) -> Bool {
        guard let first = rules.first(where: { PathAutomaton(wildcard: $0.pattern, caseSensitive: true).matches(path) }) else { return false }
        return !first.exclude
    }

    @Test(arguments: 0..<40)
    func agrees(_ seed: Int) {
        var g = Generator(seed: UInt64(seed) &* 7919)
        for _ in 0..<25 {
            let pattern = Self.route(&g)
            let rules = (0..<g.next(4)).map { _ in Self.rule(&g) }
            let failing = Self.paths(of: pattern).filter { !Self.opens($0, rules) }
            switch PathCoverage.check(route: pattern, rules: rules) {
            case .covered:
                #expect(failing.isEmpty, "seed \(seed): \(pattern) against \(rules) said covered, but \(failing.first ?? "") is not")
            case .notCovered(let example, let rule):
                #expect(PathAutomaton(route: pattern).matches(example) && !Self.opens(example, rules), "seed \(seed): \(example) is no counterexample")
                let first = rules.first { PathAutomaton(wildcard: $0.pattern, caseSensitive: true).matches(example) }
                #expect(rule == first, "seed \(seed): the rule named is not the first that matches \(example)")
                #expect(failing.allSatisfy { $0.count >= example.count }, "seed \(seed): \(failing.first ?? "") is shorter than \(example)")
            case .undecided:
                Issue.record("seed \(seed): \(pattern) against \(rules) undecided")
            }
        }
    }
}
