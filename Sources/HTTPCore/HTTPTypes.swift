// A request as the parser hands it over: its version, head and body, and the small string
// helpers the head's parsing uses. Header fields are in HTTPHeaders.swift, peers in
// PeerAddress.swift.

/// The protocol version of a request: HTTP/1.0 or HTTP/1.1 (RFC 9112 §2.3).
public enum HTTPVersion: Hashable, Sendable, CustomStringConvertible {
    case http1_0
    case http1_1

    public var description: String { self == .http1_0 ? "HTTP/1.0" : "HTTP/1.1" }
}

/// A parsed request head: request line and header fields.
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

/// Whether `count` bytes at `a` and at `b` are the same with ASCII letters folded: eight
/// at a time, each word lowercased with carry-free byte arithmetic: only bytes `A`–`Z`
/// are folded (a byte of 0x80 or more is left as it is).
@inlinable @inline(__always)
func sameASCIIIgnoringCase(_ a: UnsafeRawPointer, _ b: UnsafeRawPointer, count: Int) -> Bool {
    @inline(__always) func lower(_ word: UInt64) -> UInt64 {
        let ascii = word & 0x7F7F_7F7F_7F7F_7F7F
        let atLeastA = ascii &+ 0x3F3F_3F3F_3F3F_3F3F, aboveZ = ascii &+ 0x2525_2525_2525_2525
        return word | ((atLeastA & ~aboveZ & ~word & 0x8080_8080_8080_8080) >> 2)
    }
    var offset = 0
    while offset + 8 <= count {
        let x = a.loadUnaligned(fromByteOffset: offset, as: UInt64.self), y = b.loadUnaligned(fromByteOffset: offset, as: UInt64.self)
        if x != y, lower(x) != lower(y) { return false }
        offset += 8
    }
    while offset < count {
        let x = a.load(fromByteOffset: offset, as: UInt8.self), y = b.load(fromByteOffset: offset, as: UInt8.self)
        if x != y, asciiLowercase(x) != asciiLowercase(y) { return false }
        offset += 1
    }
    return true
}

@inlinable @inline(__always) func asciiLowercase(_ byte: UInt8) -> UInt8 {
    byte >= 0x41 && byte <= 0x5A ? byte | 0x20 : byte
}
