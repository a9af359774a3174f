/// The protocol version of a request: HTTP/1.0 or HTTP/1.1 (RFC 9112 §2.3).
public enum HTTPVersion: Hashable, Sendable, CustomStringConvertible {
    case http1_0
    case http1_1

    public var description: String { self == .http1_0 ? "HTTP/1.0" : "HTTP/1.1" }
}

/// Header fields in the order received. Names compare case-insensitively (RFC 9110 §5.1).
public struct HTTPHeaders: Hashable, Sendable, Sequence {
    public private(set) var fields: [(name: String, value: String)]

    public init(_ fields: [(name: String, value: String)] = []) {
        self.fields = fields
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

    public mutating func add(_ name: String, _ value: String) {
        fields.append((name, value))
    }

    /// Replaces every field named `name` with one.
    public mutating func replace(_ name: String, with value: String) {
        remove(name)
        fields.append((name, value))
    }

    public mutating func remove(_ name: String) {
        fields.removeAll { $0.name.equalsIgnoringASCIICase(name) }
    }

    /// The first value of the field named `name`.
    public subscript(name: String) -> String? {
        fields.first { $0.name.equalsIgnoringASCIICase(name) }?.value
    }

    /// Every value of the field named `name`, in order.
    public func values(_ name: String) -> [String] {
        var values: [String] = []
        for field in fields where field.name.equalsIgnoringASCIICase(name) { values.append(field.value) }
        return values
    }

    /// The comma-separated list elements of every field named `name`, trimmed and lowercased.
    public func tokens(_ name: String) -> [String] {
        values(name).flatMap { $0.split(separator: ",") }.map { $0.trimmingOWS().lowercased() }.filter { !$0.isEmpty }
    }

    public func makeIterator() -> IndexingIterator<[(name: String, value: String)]> { fields.makeIterator() }
}

/// A parsed request head: request line and header fields.
public struct HTTPRequestHead: Hashable, Sendable {
    public var method: String
    /// The request-target as received (origin-form `/path?query`, or `*`).
    public var target: String
    public var version: HTTPVersion
    public var headers: HTTPHeaders

    public init(method: String, target: String, version: HTTPVersion = .http1_1, headers: HTTPHeaders = HTTPHeaders()) {
        self.method = method
        self.target = target
        self.version = version
        self.headers = headers
    }

    /// The target's path, without the query. (Found on UTF-8 bytes: the target is ASCII.)
    public var path: Substring {
        let utf8 = target.utf8
        return Substring(utf8[..<(utf8.firstIndex(of: 0x3F) ?? utf8.endIndex)])
    }

    /// The target's query, without `?`; nil when there is none.
    public var query: Substring? {
        let utf8 = target.utf8
        guard let mark = utf8.firstIndex(of: 0x3F) else { return nil }
        return Substring(utf8[utf8.index(after: mark)...])
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

extension StringProtocol {
    public func equalsIgnoringASCIICase(_ other: some StringProtocol) -> Bool {
        guard utf8.count == other.utf8.count else { return false }
        // Field names are compared several times per request: on contiguous bytes when possible.
        let contiguous = utf8.withContiguousStorageIfAvailable { a in
            other.utf8.withContiguousStorageIfAvailable { b in
                for index in 0..<a.count where asciiLowercase(a[index]) != asciiLowercase(b[index]) { return false }
                return true
            }
        }
        if let contiguous = contiguous ?? nil { return contiguous }
        return zip(utf8, other.utf8).allSatisfy { asciiLowercase($0) == asciiLowercase($1) }
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

@inline(__always) func asciiLowercase(_ byte: UInt8) -> UInt8 {
    byte >= 0x41 && byte <= 0x5A ? byte | 0x20 : byte
}
