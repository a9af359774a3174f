import RouteEngine
import Testing

@Suite("JSON parser")
struct JSONParserTests {
    static let accepted: [(String, JSONValue)] = [
        ("{}", [:]),
        ("[]", []),
        ("  {\"a\" : [1, -2, 3.5, true, false, null]}\n", ["a": [1, -2, .double(3.5), true, false, nil]]),
        ("\"x\"", "x"),
        ("0", 0),
        ("-0", 0),
        ("2147483647", 2147483647),
        ("9223372036854775807", .int(Int.max)),
        ("9223372036854775808", .double(9223372036854775808)),
        ("1e3", .double(1000)),
        ("1E-2", .double(0.01)),
        ("\"\\u00e9\\n\\t\\\"\\\\\\/\"", "é\n\t\"\\/"),
        ("\"\\ud83d\\ude00\"", "😀"),
        ("\"é😀\"", "é😀"),
        ("{\"a\":{\"b\":{\"c\":[[]]}}}", ["a": ["b": ["c": [[]]]]]),
    ]

    static let rejected: [(String, String)] = [
        ("", "empty"),
        ("{", "unclosed object"),
        ("[1,]", "trailing comma"),
        ("{\"a\":1,}", "trailing comma in object"),
        ("{\"a\":1,\"a\":2}", "duplicate key"),
        ("{a:1}", "unquoted key"),
        ("'x'", "single quotes"),
        ("01", "leading zero"),
        ("+1", "plus sign"),
        ("1.", "bare decimal point"),
        (".5", "no integer part"),
        ("1e", "empty exponent"),
        ("NaN", "NaN"),
        ("Infinity", "infinity"),
        ("1e999", "overflowing float"),
        ("\"a\nb\"", "raw control character in string"),
        ("\"\\x41\"", "unknown escape"),
        ("\"\\u12\"", "short unicode escape"),
        ("\"\\ud83d\"", "lone high surrogate"),
        ("\"\\ude00\"", "lone low surrogate"),
        ("\"\\ud83d\\u0041\"", "high surrogate with non-low"),
        ("tru", "truncated literal"),
        ("nul", "truncated null"),
        ("{} {}", "two documents"),
        ("[1] x", "trailing data"),
        ("// c\n{}", "comment"),
        (String(repeating: "[", count: 100) + String(repeating: "]", count: 100), "too deep"),
    ]

    @Test(arguments: accepted)
    func accepts(_ text: String, _ expected: JSONValue) throws {
        #expect(try JSONParser().parse(text) == expected)
    }

    @Test(arguments: rejected)
    func rejects(_ text: String, _ label: String) {
        #expect(throws: JSONParseError.self, "\(label)") { try JSONParser().parse(text) }
    }

    @Test func rejectsInvalidUTF8() {
        #expect(throws: JSONParseError.invalidUTF8(offset: 1)) { try JSONParser().parse([0x22, 0xC3, 0x28, 0x22]) }
    }

    @Test func serializationIsSortedAndRoundTrips() throws {
        let value: JSONValue = ["b": [1, "two", nil], "a": ["z": true, "y": "\u{1}\"\\"]]
        let text = value.serialized()
        #expect(text == #"{"a":{"y":"\u0001\"\\","z":true},"b":[1,"two",null]}"#)
        #expect(try JSONParser().parse(text) == value)
        #expect(try JSONParser().parse(value.serialized(pretty: true)) == value)
    }
}
