import HTTPCore
import Testing

/// `HTTPHeaders` answers "absent" from a one-word filter of the names present before it
/// compares any name. The filter must never hide a field: every lookup here is checked
/// against a plain case-insensitive scan of the same fields, for names that share a
/// filter bit (same length, first and last letter), differ only in case, repeat, or were
/// removed or replaced.
@Suite("HTTP header fields")
struct HTTPHeadersTests {
    /// The answers a plain scan gives.
    static func scan(_ fields: [(String, String)], _ name: String) -> [String] {
        fields.filter { $0.0.lowercased() == name.lowercased() }.map(\.1)
    }

    static let names = ["Host", "host", "HOST", "Hxst", "Haat", "X-Ab", "X-Cb", "x-ab", "Expect", "Etag-t",
                        "Content-Length", "Transfer-Encoding", "If-None-Match", "Authorization", "A", "a", "B"]

    @Test func lookupsAgreeWithAPlainScan() {
        var generator = Xorshift(state: 20_261_121)  // the same 300 field sets on every run
        for _ in 0..<300 {
            var fields: [(String, String)] = []
            var headers = HTTPHeaders()
            for index in 0..<Int.random(in: 0...6, using: &generator) {
                let name = Self.names.randomElement(using: &generator)!
                fields.append((name, "v\(index)"))
                headers.add(name, "v\(index)")
            }
            if Bool.random(using: &generator), let name = Self.names.randomElement(using: &generator) {
                fields.removeAll { $0.0.lowercased() == name.lowercased() }
                headers.remove(name)
            }
            if Bool.random(using: &generator), let name = Self.names.randomElement(using: &generator) {
                fields.removeAll { $0.0.lowercased() == name.lowercased() }
                fields.append((name, "replaced"))
                headers.replace(name, with: "replaced")
            }
            for name in Self.names {
                let expected = Self.scan(fields, name)
                #expect(headers.values(name) == expected, "\(fields) \(name)")
                #expect(headers[name] == expected.first, "\(fields) \(name)")
                #expect(headers.count(of: name) == expected.count, "\(fields) \(name)")
                #expect(headers.single(name) == (expected.count == 1 ? expected[0] : nil), "\(fields) \(name)")
            }
            #expect(HTTPHeaders(fields.map { (name: $0.0, value: $0.1) }) == headers)
        }
    }
}

/// A fixed sequence of pseudo-random numbers (xorshift64), so a failure comes back on rerun.
struct Xorshift: RandomNumberGenerator {
    var state: UInt64

    mutating func next() -> UInt64 {
        state ^= state << 13
        state ^= state >> 7
        state ^= state << 17
        return state
    }
}

/// A request target split at its first `?` into path and query.
@Suite("Request targets")
struct RequestTargetTests {
    static let rows: [(String, String, String?)] = [
        ("/v1/manifest?platform=ios&version=5.3.0", "/v1/manifest", "platform=ios&version=5.3.0"),
        ("/v1/manifest", "/v1/manifest", nil),
        ("/v1/manifest?", "/v1/manifest", ""),
        ("/?a?b", "/", "a?b"),
        ("?x", "", "x"),
        ("*", "*", nil),
        ("/" + String(repeating: "segment/", count: 40) + "?q=" + String(repeating: "v", count: 300), "/" + String(repeating: "segment/", count: 40),
         "q=" + String(repeating: "v", count: 300)),
    ]

    @Test(arguments: rows)
    func splitsAtTheFirstQuestionMark(_ target: String, _ path: String, _ query: String?) {
        let head = HTTPRequestHead(method: "GET", target: target)
        #expect(head.path == path[...])
        #expect(head.query.map(String.init) == query)
    }
}
