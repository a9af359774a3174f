@testable import HTTPCore
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
                #expect(headers.withSingleValue(name) { String(decoding: $0, as: UTF8.self) } == headers.single(name), "\(fields) \(name)")
            }
            #expect(HTTPHeaders(fields.map { (name: $0.0, value: $0.1) }) == headers)
        }
    }

    /// A parsed head keeps its fields as the bytes received (see `HTTPHeaders`): the same
    /// random field sets, sent in a head with odd spacing, answer every lookup as a plain
    /// scan does; then changed, they turn into strings and still do.
    @Test func parsedFieldsAgreeWithAPlainScanBeforeAndAfterAChange() throws {
        var generator = Xorshift(state: 20_261_126)
        for _ in 0..<300 {
            var fields: [(String, String)] = [("Host", "example.com")]
            var text = "GET / HTTP/1.1\r\nHost: example.com\r\n"
            for index in 0..<Int.random(in: 0...8, using: &generator) {
                let name = Self.names.filter { $0.lowercased() != "host" }.randomElement(using: &generator)!
                let value = index % 3 == 0 ? "v \(index)\u{00E9}" : "v\(index)"
                fields.append((name, value))
                text += "\(name):" + String(repeating: " ", count: index % 3) + value + String(repeating: "\t", count: index % 2) + "\r\n"
            }
            var parser = HTTPHeadParser()
            let bytes = Array((text + "\r\n").utf8)
            let result = try bytes.withUnsafeBufferPointer { try parser.parse($0) }
            guard case .complete(let head, _) = result else {
                Issue.record("incomplete: \(text)")
                continue
            }
            var headers = head.headers
            #expect(headers.fields.map(\.name) == fields.map(\.0))
            #expect(headers.fields.map(\.value) == fields.map(\.1))
            #expect(headers.fieldCount == fields.count)
            for name in Self.names {
                let expected = Self.scan(fields, name)
                #expect(headers.values(name) == expected, "\(text) \(name)")
                #expect(headers[name] == expected.first, "\(text) \(name)")
                #expect(headers.count(of: name) == expected.count, "\(text) \(name)")
                #expect(headers.withValue(name) { String(decoding: $0, as: UTF8.self) } == expected.first, "\(text) \(name)")
                #expect(headers.withSingleValue(name) { String(decoding: $0, as: UTF8.self) } == (expected.count == 1 ? expected[0] : nil), "\(text) \(name)")
            }
            #expect(HTTPHeaders(fields.map { (name: $0.0, value: $0.1) }) == headers)
            let name = Self.names.randomElement(using: &generator)!
            fields.removeAll { $0.0.lowercased() == name.lowercased() }
            fields.append((name, "replaced"))
            headers.replace(name, with: "replaced")
            for name in Self.names {
                #expect(headers.values(name) == Self.scan(fields, name), "\(text) \(name) after a change")
            }
        }
    }

    /// The byte classes as masks agree with RFC 9110's tchar and RFC 3986's lists, for every byte.
    @Test func byteClassesAreTheRFCsLists() {
        let alphanumeric = Set(Array("0123456789abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ".utf8))
        let token = alphanumeric.union("!#$%&'*+-.^_`|~".utf8)
        let target = alphanumeric.union("-._~!$&'()*+,;=:@/?%".utf8)
        let host = alphanumeric.union("-._~!$&'()*+,;=:[]%".utf8)
        for byte in UInt8.min...UInt8.max {
            #expect(isTokenByte(byte) == token.contains(byte), "tchar \(byte)")
            #expect(isTargetByte(byte) == target.contains(byte), "target \(byte)")
            #expect(isHostByte(byte) == host.contains(byte), "host \(byte)")
        }
    }

    /// Names compared eight bytes at a time, with letters folded, agree with a byte-by-byte
    /// comparison of lowercased bytes: random names of every length up to 24 over letters,
    /// tchar symbols (`^` and `~` differ by the case bit) and bytes above 0x7F.
    @Test func namesComparedAWordAtATime() {
        var generator = Xorshift(state: 0xCA5E)
        let alphabet = Array("aAbBzZ-_^~`|09@[".utf8) + [0x7E, 0xC1, 0xE1, 0xFF]
        func lower(_ byte: UInt8) -> UInt8 { (0x41...0x5A).contains(byte) ? byte | 0x20 : byte }
        for _ in 0..<20_000 {
            let count = Int.random(in: 0...24, using: &generator)
            let a = (0..<count).map { _ in alphabet.randomElement(using: &generator)! }
            var b = a
            for index in b.indices where Int.random(in: 0..<4, using: &generator) == 0 { b[index] = alphabet.randomElement(using: &generator)! }
            let expected = a.map(lower) == b.map(lower)
            let fast = a.withUnsafeBytes { x in b.withUnsafeBytes { y in sameASCIIIgnoringCase(x.baseAddress ?? UnsafeRawPointer(bitPattern: 1)!, y.baseAddress ?? UnsafeRawPointer(bitPattern: 1)!, count: count) } }
            #expect(fast == expected, "\(a) \(b)")
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

/// `lastElement(of:maximumLength:)`, as a proxy's `X-Forwarded-For` is read: the last
/// element of the last field line, blanks trimmed, nil past the length — the same for
/// fields parsed from bytes and fields built in code.
@Suite("The last element of a list field")
struct LastElementTests {
    static let rows: [(String, [String], String?)] = [
        ("one address", ["203.0.113.7"], "203.0.113.7"),
        ("the proxy's, after the client's own", ["198.51.100.1, 203.0.113.7"], "203.0.113.7"),
        ("blanks and tabs around it", ["198.51.100.1 ,\t 203.0.113.7 \t"], "203.0.113.7"),
        ("no blank after the comma", ["198.51.100.1,203.0.113.7"], "203.0.113.7"),
        ("a line a proxy added last", ["198.51.100.66", "203.0.113.7"], "203.0.113.7"),
        ("the last line's last element", ["198.51.100.66, 1.1.1.1", "10.0.0.1, 203.0.113.7"], "203.0.113.7"),
        ("an empty last element", ["203.0.113.7,"], nil),
        ("an empty field", [""], nil),
        ("none", [], nil),
        ("the longest taken", ["x, " + String(repeating: "a", count: 53)], String(repeating: "a", count: 53)),
        ("one byte longer", ["x, " + String(repeating: "a", count: 54)], nil),
        ("longer, with no comma", [String(repeating: "a", count: 8_000)], nil),
        ("a long list: only its end is read", [String(repeating: "198.51.100.1, ", count: 500) + "203.0.113.7"], "203.0.113.7"),
        ("a long element before a short last one", [String(repeating: "a", count: 8_000) + ",203.0.113.7"], "203.0.113.7"),
    ]

    @Test(arguments: rows)
    func lastElements(_ label: String, _ lines: [String], _ expected: String?) {
        let built = HTTPHeaders(lines.map { ("X-Forwarded-For", $0) } + [("Host", "h")])
        #expect(built.lastElement(of: "x-forwarded-for", maximumLength: 53) == expected, "\(label), built")
        let text = "GET / HTTP/1.1\r\n" + lines.map { "X-Forwarded-For: \($0)\r\n" }.joined() + "Host: h\r\n\r\n"
        let decoded = decode(Array(text.utf8), piece: 0)
        guard let head = decoded.requests.first?.head else {
            Issue.record("\(label): \(decoded)")
            return
        }
        #expect(head.headers.lastElement(of: "X-Forwarded-For", maximumLength: 53) == expected, "\(label), parsed")
    }
}
