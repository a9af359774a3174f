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

    /// The lazy reading (`isWellFormedQuery`, then `queryValue(named:in:)`) against the
    /// eager one (`queryPairs`) on 20,000 random queries from the bytes that matter: the two
    /// agree on which queries are refused and on the first value of every name.
    @Test func lazyLookupAgreesWithQueryPairs() {
        let pieces = ["a", "b", "ab", "platform", "version", "%61", "%62", "+", "a+b", "%20", "=", "&", "&&", "%", "%6", "%zz", "%C3%A9",
                      "%ff", "%C3", "é", "1", "5.3.0", "ios"]
        let names = ["a", "b", "ab", "a b", "platform", "version", "é", "", " "]
        var random = SystemRandomNumberGenerator()
        var refused = 0
        for _ in 0..<20_000 {
            let query = (0..<Int.random(in: 0...8, using: &random)).map { _ in pieces.randomElement(using: &random)! }.joined()
            let pairs = PercentDecoding.queryPairs(Substring(query))
            #expect(PercentDecoding.isWellFormedQuery(Substring(query)) == (pairs != nil), "\(query)")
            guard let pairs else {
                refused += 1
                continue
            }
            for name in names {
                #expect(PercentDecoding.queryValue(named: name, in: Substring(query)) == pairs.first { $0.name == name }?.value, "\(name) in \(query)")
            }
        }
        #expect(refused > 1_000 && refused < 19_000, "both kinds were tried: \(refused) refused")
        #expect(PercentDecoding.queryValue(named: "a", in: nil) == nil && PercentDecoding.isWellFormedQuery(nil))
    }
}
