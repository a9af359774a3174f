/// The protocol version of a request: HTTP/1.0 or HTTP/1.1 (RFC 9112 §2.3).
public enum HTTPVersion: Hashable, Sendable, CustomStringConvertible {
    case http1_0
    case http1_1

    public var description: String { self == .http1_0 ? "HTTP/1.0" : "HTTP/1.1" }
}

/// Header fields in the order received. Names compare case-insensitively (RFC 9110 §5.1).
public struct HTTPHeaders: Hashable, Sendable, Sequence {
    public private(set) var fields: [(name: String, value: String)]
    /// One bit per name present (a Bloom filter of one hash, case-insensitive): a lookup of
    /// a field the request does not have (Transfer-Encoding, Expect, Connection on most
    /// requests) answers without comparing any name. Every request asks for several.
    private var present: UInt64

    public init(_ fields: [(name: String, value: String)] = []) {
        self.fields = fields
        present = Self.filter(of: fields)
    }

    /// Room for `count` fields without growing (a parser knows how many lines it has).
    public mutating func reserveCapacity(_ count: Int) {
        fields.reserveCapacity(count)
    }

    public static func == (lhs: HTTPHeaders, rhs: HTTPHeaders) -> Bool {
        lhs.fields.count == rhs.fields.count && zip(lhs.fields, rhs.fields).allSatisfy { $0.name == $1.name && $0.value == $1.value }
    }

    public func hash(into hasher: inout Hasher) {
        for field in fields {
            hasher.combine(field.name)
            hasher.combine(field.value)
        }
    }

    /// The filter bit of a name: from its length and its first and last bytes, lowercased.
    @inline(__always)
    static func bit(_ name: String) -> UInt64 {
        // On the bytes where they lie: the generic `last` of a UTF8View walks back through
        // String's index machinery, and this runs for every field added or looked up.
        if let bit = name.utf8.withContiguousStorageIfAvailable({ bytes -> UInt64 in
            guard let first = bytes.first, let last = bytes.last else { return 1 }
            return 1 << UInt64((bytes.count &* 31 &+ Int(asciiLowercase(first)) &* 7 &+ Int(asciiLowercase(last))) & 63)
        }) { return bit }
        let utf8 = name.utf8
        guard let first = utf8.first, let last = utf8.last else { return 1 }
        let mixed = utf8.count &* 31 &+ Int(asciiLowercase(first)) &* 7 &+ Int(asciiLowercase(last))
        return 1 << UInt64(mixed & 63)
    }

    private static func filter(of fields: [(name: String, value: String)]) -> UInt64 {
        fields.reduce(0) { $0 | bit($1.name) }
    }

    /// Whether a field named `name` may be present (false: certainly not).
    @inline(__always)
    private func mayHave(_ name: String) -> Bool { present & Self.bit(name) != 0 }

    public mutating func add(_ name: String, _ value: String) {
        fields.append((name, value))
        present |= Self.bit(name)
    }

    /// Replaces every field named `name` with one.
    public mutating func replace(_ name: String, with value: String) {
        remove(name)
        add(name, value)
    }

    public mutating func remove(_ name: String) {
        guard mayHave(name) else { return }
        fields.removeAll { $0.name.equalsIgnoringASCIICase(name) }
        present = Self.filter(of: fields)
    }

    /// The first value of the field named `name`.
    public subscript(name: String) -> String? {
        guard mayHave(name) else { return nil }
        return fields.withUnsafeBufferPointer { fields in
            for index in fields.indices where fields[index].name.equalsIgnoringASCIICase(name) { return fields[index].value }
            return nil
        }
    }

    /// How many fields are named `name`.
    public func count(of name: String) -> Int {
        guard mayHave(name) else { return 0 }
        // Over the storage in place: a loop over the fields as tuples retained both strings of each.
        return fields.withUnsafeBufferPointer { fields in
            var count = 0
            for index in fields.indices where fields[index].name.equalsIgnoringASCIICase(name) { count += 1 }
            return count
        }
    }

    /// The value of the field named `name` when exactly one field has that name; nil when
    /// none or several do (a credential or a host must not be ambiguous).
    public func single(_ name: String) -> String? {
        guard mayHave(name) else { return nil }
        var found: String?
        for field in fields where field.name.equalsIgnoringASCIICase(name) {
            if found != nil { return nil }
            found = field.value
        }
        return found
    }

    /// Every value of the field named `name`, in order.
    public func values(_ name: String) -> [String] {
        guard mayHave(name) else { return [] }
        var values: [String] = []
        for field in fields where field.name.equalsIgnoringASCIICase(name) { values.append(field.value) }
        return values
    }

    /// The comma-separated list elements of every field named `name`, trimmed and lowercased.
    public func tokens(_ name: String) -> [String] {
        guard mayHave(name) else { return [] }
        return values(name).flatMap { $0.split(separator: ",") }.map { $0.trimmingOWS().lowercased() }.filter { !$0.isEmpty }
    }

    public func makeIterator() -> IndexingIterator<[(name: String, value: String)]> { fields.makeIterator() }
}

/// A parsed request head: request line and header fields.
/// Who a connection comes from, as the server counts peers: an IPv4 address, or the /64
/// of an IPv6 one (one subscriber's allocation). Two words, so every request can carry it.
public struct PeerAddress: Hashable, Sendable, CustomStringConvertible {
    /// `0xFFFF` and the address for IPv4; the /64 prefix and 1 for IPv6; 0 and 0 unknown.
    public let high: UInt64
    public let low: UInt64

    public init(high: UInt64, low: UInt64) {
        self.high = high
        self.low = low
    }

    /// `203.0.113.7`, `2001:db8:1:2::/64`, or `unknown`.
    public var description: String {
        if high == 0xFFFF, low <= 0xFFFF_FFFF {
            return "\(low >> 24 & 255).\(low >> 16 & 255).\(low >> 8 & 255).\(low & 255)"
        }
        if low == 1 {
            let groups = (0..<4).map { String(high >> (48 - 16 * UInt64($0)) & 0xFFFF, radix: 16) }
            return groups.joined(separator: ":") + "::/64"
        }
        return "unknown"
    }
}

public struct HTTPRequestHead: Hashable, Sendable {
    public var method: String
    /// The request-target as received (origin-form `/path?query`, or `*`).
    public var target: String
    public var version: HTTPVersion
    public var headers: HTTPHeaders
    /// The connection's peer, set by the server (nil from a bare decoder or in-process).
    public var peer: PeerAddress?
    /// The event loop that read it, set by the server (0 from a bare decoder or in-process):
    /// a handler that keeps state per loop shares no lock or cache line with the others.
    public var loop = 0

    public init(method: String, target: String, version: HTTPVersion = .http1_1, headers: HTTPHeaders = HTTPHeaders()) {
        self.method = method
        self.target = target
        self.version = version
        self.headers = headers
    }

    /// The target's path, without the query. (Found on UTF-8 bytes: the target is ASCII.)
    public var path: Substring {
        let utf8 = target.utf8
        return Substring(utf8[..<(questionMark ?? utf8.endIndex)])
    }

    /// The target's query, without `?`; nil when there is none.
    public var query: Substring? {
        let utf8 = target.utf8
        guard let mark = questionMark else { return nil }
        return Substring(utf8[utf8.index(after: mark)...])
    }

    /// Where the query starts, found on the target's contiguous bytes (as a parsed target's
    /// are): the generic search over a `UTF8View` cost about 400 instructions a request.
    private var questionMark: String.Index? {
        let utf8 = target.utf8
        let offset = utf8.withContiguousStorageIfAvailable { bytes in bytes.firstIndex(of: 0x3F) }
        guard let offset else { return utf8.firstIndex(of: 0x3F) }
        return offset.map { utf8.index(utf8.startIndex, offsetBy: $0) }
    }

    /// RFC 9112 §9.3: HTTP/1.1 persists unless `close`; HTTP/1.0 only with `keep-alive`.
    public var wantsKeepAlive: Bool {
        guard headers["Connection"] != nil else { return version == .http1_1 }
        let tokens = headers.tokens("Connection")
        if tokens.contains("close") { return false }
        return version == .http1_1 || tokens.contains("keep-alive")
    }

    /// RFC 9110 §10.1.1: only an HTTP/1.1 request can expect `100 Continue`.
    public var expectsContinue: Bool {
        version == .http1_1 && headers.tokens("Expect").contains("100-continue")
    }
}

/// A complete request: head and (decoded) body.
public struct HTTPRequest: Hashable, Sendable {
    public var head: HTTPRequestHead
    public var body: [UInt8]

    public init(head: HTTPRequestHead, body: [UInt8] = []) {
        self.head = head
        self.body = body
    }
}

extension String {
    /// `equalsIgnoringASCIICase` for two strings, the common case (field names): the
    /// lengths, then plain equality (a field name is usually spelled as the server asks
    /// for it, and two short strings compare as two words), then the bytes.
    public func equalsIgnoringASCIICase(_ other: String) -> Bool {
        guard utf8.count == other.utf8.count else { return false }
        if self == other { return true }
        return sameBytesIgnoringASCIICase(utf8, other.utf8)
    }
}

extension StringProtocol {
    public func equalsIgnoringASCIICase(_ other: some StringProtocol) -> Bool {
        guard utf8.count == other.utf8.count else { return false }
        return sameBytesIgnoringASCIICase(utf8, other.utf8)
    }

    /// Without optional whitespace (SP, HTAB) at either end (RFC 9110 §5.6.3).
    public func trimmingOWS() -> String {
        String(Substring(self).withoutOWS)
    }
}

extension Substring {
    /// The same bytes without optional whitespace (SP, HTAB) at either end: a view, no copy.
    public var withoutOWS: Substring {
        var utf8 = self.utf8
        while let first = utf8.first, first == 0x20 || first == 0x09 { utf8 = utf8.dropFirst() }
        while let last = utf8.last, last == 0x20 || last == 0x09 { utf8 = utf8.dropLast() }
        return Substring(utf8)
    }
}

/// Two UTF-8 views of the same length, byte by byte with ASCII letters folded: on
/// contiguous bytes when both have them (field names are compared several times per request).
@inline(__always)
func sameBytesIgnoringASCIICase<A: Collection<UInt8>, B: Collection<UInt8>>(_ a: A, _ b: B) -> Bool {
    let contiguous = a.withContiguousStorageIfAvailable { a in
        b.withContiguousStorageIfAvailable { b in
            for index in 0..<a.count where asciiLowercase(a[index]) != asciiLowercase(b[index]) { return false }
            return true
        }
    }
    if let contiguous = contiguous ?? nil { return contiguous }
    return zip(a, b).allSatisfy { asciiLowercase($0) == asciiLowercase($1) }
}

@inline(__always) func asciiLowercase(_ byte: UInt8) -> UInt8 {
    byte >= 0x41 && byte <= 0x5A ? byte | 0x20 : byte
}
