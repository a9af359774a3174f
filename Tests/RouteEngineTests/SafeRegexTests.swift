import RouteEngine
import Testing

@Suite("Safe regex subset")
struct SafeRegexTests {
    /// pattern, input, matches?
    static let matching: [(String, String, Bool)] = [
        ("^p[0-9]{1,8}$", "p1", true),
        ("^p[0-9]{1,8}$", "p12345678", true),
        ("^p[0-9]{1,8}$", "p123456789", false),
        ("^p[0-9]{1,8}$", "p", false),
        ("^p[0-9]{1,8}$", "xp1", false),
        ("^[A-Z0-9]{4,12}$", "SPRING26", true),
        ("^[A-Z0-9]{4,12}$", "spring26", false),
        ("^[A-Z0-9]{4,12}$", "ABC", false),
        ("abc", "xxabcxx", true),
        ("abc", "ab", false),
        ("^abc", "abcx", true),
        ("abc$", "xabc", true),
        ("abc$", "abcx", false),
        ("^(a|b)$", "b", true),
        ("a|b", "xbx", true),
        ("^(red|green|blue)$", "green", true),
        ("^(red|green|blue)$", "greenish", false),
        ("^(?:ab)+$", "ababab", true),
        ("^(?:ab)+$", "aba", false),
        ("^a*b?c+$", "aaacc", true),
        ("^a*b?c+$", "bbc", false),
        ("^.{3}$", "é😀x", true),
        ("^\\d+-\\w+$", "12-ab_c", true),
        ("^\\d+-\\w+$", "12-ab c", false),
        ("^\\D\\W\\S$", "a-b", true),
        ("^[^0-9]+$", "abc", true),
        ("^[^0-9]+$", "ab1", false),
        ("^[a\\-z]+$", "a-z", true),
        ("^[a\\-z]+$", "b", false),
        ("^[-a]+$", "-a-", true),
        ("^a{2,}$", "aaaa", true),
        ("^a{2,}$", "a", false),
        ("^a{0}b$", "b", true),
        ("^\\.\\*$", ".*", true),
        ("^$", "", true),
        ("^$", "x", false),
        ("", "anything", true),
        ("^(a|)$", "", true),
        ("^(a*)*$", "aaaa", true),
    ]

    @Test(arguments: matching)
    func matches(_ pattern: String, _ input: String, _ expected: Bool) throws {
        #expect(try SafeRegex(pattern).matches(input) == expected)
    }

    static let rejected: [(String, String)] = [
        ("(a", "unclosed group"),
        ("a)", "stray close"),
        ("[a-", "unclosed class"),
        ("[z-a]", "backwards range"),
        ("a**", "double quantifier"),
        ("a+?", "lazy quantifier"),
        ("a{2}{3}", "stacked repetition"),
        ("*a", "quantifier without atom"),
        ("a{3,2}", "min above max"),
        ("a{1001}", "repetition over bound"),
        ("a{,3}", "missing minimum"),
        ("a{x}", "non-numeric repetition"),
        ("(?=a)", "lookahead"),
        ("(?<n>a)", "named group"),
        ("(a)\\1", "backreference"),
        ("\\bword", "word boundary"),
        ("\\p{L}", "unicode property"),
        ("a^b", "caret in the middle"),
        ("^a|b$", "anchored alternation outside a group"),
        ("^a|b", "anchored at the start, alternation outside a group"),
        ("a$b", "dollar in the middle"),
        ("\\", "dangling escape"),
        ("((((a{1000}){1000}){1000}){1000})", "expands too far"),
        (String(repeating: "a", count: 600), "too long"),
    ]

    @Test(arguments: rejected)
    func rejects(_ pattern: String, _ label: String) {
        #expect(throws: SafeRegexError.self, "\(label)") { try SafeRegex(pattern) }
    }

    /// Patterns that take exponential time in backtracking engines are linear here.
    /// (Correctness only: time is measured by benchmarks, never by unit tests.)
    @Test(arguments: ["^(a+)+$", "^(a|a)*$", "^(a|aa)+$", "^(.*a){12}$"])
    func catastrophicPatternsAreAnsweredCorrectly(_ pattern: String) throws {
        let regex = try SafeRegex(pattern)
        #expect(regex.matches(String(repeating: "a", count: 2000) + "!") == false)
        #expect(regex.matches(String(repeating: "a", count: 30)) == true)
    }
}
