import HTTPCore
import Testing

@Suite("Percent-decoding")
struct PercentDecodingTests {
    /// (input, plusAsSpace, decoded or nil)
    static let rows: [(String, Bool, String?)] = [
        ("plain", false, "plain"),
        ("a%2Fb", false, "a/b"),
        ("a%2fb", false, "a/b"),
        ("%C3%A9t%C3%A9", false, "été"),
        ("a+b", false, "a+b"),
        ("a+b", true, "a b"),
        ("%2B", true, "+"),
        ("", false, ""),
        ("%", false, nil),
        ("%4", false, nil),
        ("%zz", false, nil),
        ("%+f", false, nil),  // Int(_:radix:) would take "+f" as 15
        ("%-1", false, nil),
        ("%FF", false, nil),  // not UTF-8
        ("%C3", false, nil),  // a truncated sequence
        ("%00", false, "\u{0}"),
    ]

    @Test(arguments: rows)
    func decodes(input: String, plusAsSpace: Bool, expected: String?) {
        #expect(PercentDecoding.decode(input[...], plusAsSpace: plusAsSpace) == expected)
    }

    @Test func queryItems() {
        #expect(PercentDecoding.queryItems("platform=ios&version=5.3.0") == ["platform": "ios", "version": "5.3.0"])
        #expect(PercentDecoding.queryItems("q=red+shoes&q=ignored&flag&=x") == ["q": "red shoes", "flag": "", "": "x"])
        #expect(PercentDecoding.queryItems(nil) == [:])
        #expect(PercentDecoding.queryItems("a=%zz") == nil)
        #expect(PercentDecoding.queryItems("&&a=1&&") == ["a": "1"])
    }

    @Test func queryPairsKeepOrderAndRepeats() {
        let pairs = PercentDecoding.queryPairs("a=b=c&=x&flag&e=&q=1&q=2&%41=%42")?.map { "\($0.name)|\($0.value)" }
        #expect(pairs == ["a|b=c", "|x", "flag|", "e|", "q|1", "q|2", "A|B"])
        #expect(PercentDecoding.queryPairs("")?.isEmpty == true)
        #expect(PercentDecoding.queryPairs("&")?.isEmpty == true)
        #expect(PercentDecoding.queryPairs("ok=1&bad=%G0") == nil)
    }
}
