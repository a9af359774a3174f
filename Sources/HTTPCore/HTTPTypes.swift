/// The protocol version of a request: HTTP/1.0 or HTTP/1.1 (RFC 9112 §2.3).
public enum HTTPVersion: Hashable, Sendable, CustomStringConvertible {
    case http1_0
    case http1_1

    public var description: String { self == .http1_0 ? "HTTP/1.0" : "HTTP/1.1" }
}

/// Header fields in the order received. Names compare case-insensitively (RFC 9110 §5.1).
///
/// Two representations behind one API. Fields built in code (a response's, a head made
/// in a test) are strings. A parsed head's fields stay the bytes received, in one array
/// with where each name and value lies: a request is looked up a handful of times and
/// most of its fields (`User-Agent`, `Accept`, ...) are never read, so none becomes a
/// `String` until asked for. The first change to a parsed head's fields turns them into
/// strings.
public struct HTTPHeaders: Hashable, Sendable, Sequence {
    /// The fields as strings (empty while `rawCount` > 0).
    @usableFromInline var stored: [(name: String, value: String)]
    /// A parsed head's fields: `rawCount` spans of four little-endian `UInt32` (name start,
    /// name end, value start, value end: offsets into this array), then the field lines'
    /// bytes. Empty for fields built in code.
    @usableFromInline var raw: [UInt8]
    @usableFromInline var rawCount: Int
    /// One bit per name present (a Bloom filter of one hash, case-insensitive): a lookup of
    /// a field the request does not have (Transfer-Encoding, Expect, Connection on most
    /// requests) answers without comparing any name. Every request asks for several.
    @usableFromInline var present: UInt64

    public init(_ fields: [(name: String, value: String)] = []) {
        stored = fields
        raw = []
        rawCount = 0
        present = Self.filter(of: fields)
    }

    /// A parsed head's fields (see `RawFieldsBuilder`).
    init(raw: [UInt8], count: Int, present: UInt64) {
        stored = []
        self.raw = raw
        rawCount = count
        self.present = present
    }

    /// Every field as strings, in order.
    public var fields: [(name: String, value: String)] {
        guard rawCount > 0 else { return stored }
        return raw.withUnsafeBytes { bytes in
            (0..<rawCount).map { index in
                let (name, value) = Self.span(index, in: bytes)
                return (Self.string(bytes, name), Self.string(bytes, value))
            }
        }
    }

    /// How many fields there are.
    public var fieldCount: Int { rawCount > 0 ? rawCount : stored.count }

    /// Room for `count` fields without growing.
    public mutating func reserveCapacity(_ count: Int) {
        makeStored()
        stored.reserveCapacity(count)
    }

    public static func == (lhs: HTTPHeaders, rhs: HTTPHeaders) -> Bool {
        let (left, right) = (lhs.fields, rhs.fields)
        return left.count == right.count && zip(left, right).allSatisfy { $0.name == $1.name && $0.value == $1.value }
    }

    public func hash(into hasher: inout Hasher) {
        for field in fields {
            hasher.combine(field.name)
            hasher.combine(field.value)
        }
    }

    /// The filter bit of a name: from its length and its first and last bytes, lowercased.
    @inlinable @inline(__always)
    static func bit(_ name: String) -> UInt64 {
        // On the bytes where they lie: the generic `last` of a UTF8View walks back through
        // String's index machinery, and this runs for every field added or looked up.
        if let bit = name.utf8.withContiguousStorageIfAvailable({ bit(UnsafeRawBufferPointer($0)) }) { return bit }
        let utf8 = name.utf8
        guard let first = utf8.first, let last = utf8.last else { return 1 }
        let mixed = utf8.count &* 31 &+ Int(asciiLowercase(first)) &* 7 &+ Int(asciiLowercase(last))
        return 1 << UInt64(mixed & 63)
    }

    @inlinable @inline(__always)
    static func bit(_ name: UnsafeRawBufferPointer) -> UInt64 {
        guard let first = name.first, let last = name.last else { return 1 }
        return 1 << UInt64((name.count &* 31 &+ Int(asciiLowercase(first)) &* 7 &+ Int(asciiLowercase(last))) & 63)
    }

    private static func filter(of fields: [(name: String, value: String)]) -> UInt64 {
        fields.reduce(0) { $0 | bit($1.name) }
    }

    /// Whether a field named `name` may be present (false: certainly not).
    @inlinable @inline(__always)
    func mayHave(_ name: String) -> Bool { present & Self.bit(name) != 0 }

    /// Turns a parsed head's fields into strings, before a change.
    private mutating func makeStored() {
        guard rawCount > 0 else { return }
        stored = fields
        raw = []
        rawCount = 0
    }

    public mutating func add(_ name: String, _ value: String) {
        makeStored()
        stored.append((name, value))
        present |= Self.bit(name)
    }

    /// Replaces every field named `name` with one.
    public mutating func replace(_ name: String, with value: String) {
        remove(name)
        add(name, value)
    }

    public mutating func remove(_ name: String) {
        guard mayHave(name) else { return }
        makeStored()
        stored.removeAll { $0.name.equalsIgnoringASCIICase(name) }
        present = Self.filter(of: stored)
    }

    /// Calls `body` with the value of each field named `name`, in order, as bytes where they
    /// lie, until it returns false.
    @inlinable @inline(__always)
    func forEachValue(named name: String, _ body: (UnsafeRawBufferPointer) -> Bool) {
        guard mayHave(name) else { return }
        if rawCount == 0 {
            stored.withUnsafeBufferPointer { fields in
                for index in fields.indices where fields[index].name.equalsIgnoringASCIICase(name) {
                    var value = fields[index].value
                    if !value.withUTF8({ body(UnsafeRawBufferPointer($0)) }) { return }
                }
            }
            return
        }
        var name = name
        name.withUTF8 { wanted in
            raw.withUnsafeBytes { bytes in
                for index in 0..<rawCount {
                    let (nameRange, valueRange) = Self.span(index, in: bytes)
                    guard nameRange.count == wanted.count,
                          sameASCIIIgnoringCase(bytes.baseAddress! + nameRange.lowerBound, UnsafeRawPointer(wanted.baseAddress!), count: wanted.count)
                    else { continue }
                    if !body(UnsafeRawBufferPointer(rebasing: bytes[valueRange])) { return }
                }
            }
        }
    }

    /// The value of the first field named `name` as bytes, given to `body` where they lie
    /// (no `String` made); nil when there is none.
    @inlinable
    public func withValue<R>(_ name: String, _ body: (UnsafeBufferPointer<UInt8>) -> R) -> R? {
        var result: R?
        forEachValue(named: name) { value in
            result = body(value.assumingMemoryBound(to: UInt8.self))
            return false
        }
        return result
    }

    /// The last element of a comma-separated list field — of the last field line named
    /// `name` (a proxy that adds a line of its own, rather than rewriting the field, adds
    /// it last) — without the blanks around it; nil when there is none, when it is empty,
    /// or when it is longer than `maximumLength` bytes. Reads each line back from its end
    /// only as far as its last comma, so a long field costs no more than a short one.
    public func lastElement(of name: String, maximumLength: Int) -> String? {
        @inline(__always) func isBlank(_ byte: UInt8) -> Bool { byte == UInt8(ascii: " ") || byte == UInt8(ascii: "\t") }
        var found: String?
        forEachValue(named: name) { value in
            var end = value.count
            while end > 0, isBlank(value[end - 1]) { end -= 1 }
            // Back to the comma, but never further than the longest element taken and the
            // blanks a writer might put before it.
            var start = end, tooLong = false
            while start > 0, value[start - 1] != UInt8(ascii: ",") {
                if end - start >= maximumLength + 16 {
                    tooLong = true
                    break
                }
                start -= 1
            }
            while start < end, isBlank(value[start]) { start += 1 }
            found = tooLong || start == end || end - start > maximumLength
                ? nil : String(decoding: UnsafeRawBufferPointer(rebasing: value[start..<end]), as: UTF8.self)
            return true
        }
        return found
    }

    /// The first value of the field named `name`.
    public subscript(name: String) -> String? {
        var found: String?
        forEachValue(named: name) { value in
            found = String(decoding: value, as: UTF8.self)
            return false
        }
        return found
    }

    /// How many fields are named `name`.
    public func count(of name: String) -> Int {
        var count = 0
        forEachValue(named: name) { _ in
            count += 1
            return true
        }
        return count
    }

    /// The value of the field named `name` when exactly one field has that name; nil when
    /// none or several do (a credential or a host must not be ambiguous).
    public func single(_ name: String) -> String? {
        var found: String?
        var several = false
        forEachValue(named: name) { value in
            if found != nil {
                several = true
                return false
            }
            found = String(decoding: value, as: UTF8.self)
            return true
        }
        return several ? nil : found
    }

    /// `withValue` for a field that must appear once: nil (and `body` not called) when it
    /// is absent or repeated, as `single` would say.
    @inlinable
    public func withSingleValue<R>(_ name: String, _ body: (UnsafeBufferPointer<UInt8>) -> R) -> R? {
        count(of: name) == 1 ? withValue(name, body) : nil
    }

    /// Every value of the field named `name`, in order.
    public func values(_ name: String) -> [String] {
        var values: [String] = []
        forEachValue(named: name) { value in
            values.append(String(decoding: value, as: UTF8.self))
            return true
        }
        return values
    }

    /// The comma-separated list elements of every field named `name`, trimmed and lowercased.
    public func tokens(_ name: String) -> [String] {
        guard mayHave(name) else { return [] }
        return values(name).flatMap { $0.split(separator: ",") }.map { $0.trimmingOWS().lowercased() }.filter { !$0.isEmpty }
    }

    public func makeIterator() -> IndexingIterator<[(name: String, value: String)]> { fields.makeIterator() }

    /// Where field `index`'s name and value lie in a raw array.
    @inlinable @inline(__always)
    static func span(_ index: Int, in bytes: UnsafeRawBufferPointer) -> (name: Range<Int>, value: Range<Int>) {
        let at = index &* 16
        let nameStart = Int(UInt32(littleEndian: bytes.loadUnaligned(fromByteOffset: at, as: UInt32.self)))
        let nameEnd = Int(UInt32(littleEndian: bytes.loadUnaligned(fromByteOffset: at &+ 4, as: UInt32.self)))
        let valueStart = Int(UInt32(littleEndian: bytes.loadUnaligned(fromByteOffset: at &+ 8, as: UInt32.self)))
        let valueEnd = Int(UInt32(littleEndian: bytes.loadUnaligned(fromByteOffset: at &+ 12, as: UInt32.self)))
        return (nameStart..<nameEnd, valueStart..<valueEnd)
    }

    private static func string(_ bytes: UnsafeRawBufferPointer, _ range: Range<Int>) -> String {
        String(decoding: UnsafeRawBufferPointer(rebasing: bytes[range]), as: UTF8.self)
    }
}

/// Builds a parsed head's raw fields (`HTTPHeaders.init(raw:count:present:)`): the field
/// lines are copied once, and each field's span written as it is parsed.
enum RawFieldsBuilder {
    /// - Parameters:
    ///   - text: the field lines, CRLF-separated, without the last CRLF.
    ///   - count: how many lines `text` holds, at most (the array has room for this many spans).
    ///   - parse: called for each line with its offset in `text` and its bytes; returns the
    ///     name's and value's ranges within the line, or throws.
    static func build(text: UnsafeBufferPointer<UInt8>, count: Int,
                      parse: (UnsafeBufferPointer<UInt8>) throws(HTTPParserError) -> (name: Range<Int>, value: Range<Int>))
        throws(HTTPParserError) -> HTTPHeaders {
        let base = count &* 16
        var present: UInt64 = 0
        var parsed = 0
        var failure: HTTPParserError?
        // Zeroed, then written: `init(unsafeUninitializedCapacity:)` went through an
        // unspecialized allocation in the standard library, several times the memset.
        var raw = [UInt8](repeating: 0, count: base + text.count)
        raw.withUnsafeMutableBufferPointer { buffer in
            let out = UnsafeMutableRawBufferPointer(buffer)
            if let from = text.baseAddress, let to = buffer.baseAddress { (to + base).initialize(from: from, count: text.count) }
            var start = 0
            while start <= text.count {
                let end = HTTPHeadParser.nextLineBreak(in: text, from: start)
                guard parsed < count else {
                    failure = .tooManyHeaders
                    break
                }
                do throws(HTTPParserError) {
                    let (name, value) = try parse(UnsafeBufferPointer(rebasing: text[start..<end]))
                    let at = parsed &* 16, offset = base &+ start
                    out.storeBytes(of: UInt32(offset &+ name.lowerBound).littleEndian, toByteOffset: at, as: UInt32.self)
                    out.storeBytes(of: UInt32(offset &+ name.upperBound).littleEndian, toByteOffset: at &+ 4, as: UInt32.self)
                    out.storeBytes(of: UInt32(offset &+ value.lowerBound).littleEndian, toByteOffset: at &+ 8, as: UInt32.self)
                    out.storeBytes(of: UInt32(offset &+ value.upperBound).littleEndian, toByteOffset: at &+ 12, as: UInt32.self)
                    present |= HTTPHeaders.bit(UnsafeRawBufferPointer(rebasing: UnsafeRawBufferPointer(text)[(start + name.lowerBound)..<(start + name.upperBound)]))
                } catch {
                    failure = error
                    break
                }
                parsed += 1
                start = end &+ 2
            }
        }
        if let failure { throw failure }
        return HTTPHeaders(raw: raw, count: parsed, present: present)
    }
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
    public var description: String { written(asNetwork: false) }

    /// The network it is in, for counting refusals: an IPv4 address's /24
    /// (`203.0.113.0/24`), an IPv6 /64's /48 (`2001:db8:1::/48`), or `unknown`. A client
    /// spread over many addresses of one network is one line of the audit log, not one
    /// per address.
    public var network: String { written(asNetwork: true) }

    /// The address (IPv4) or /64 (IPv6), or the /24 or /48 it is in.
    private func written(asNetwork: Bool) -> String {
        if high == 0xFFFF, low <= 0xFFFF_FFFF {
            return "\(low >> 24 & 255).\(low >> 16 & 255).\(low >> 8 & 255)." + (asNetwork ? "0/24" : "\(low & 255)")
        }
        if low == 1 {
            let groups = (0..<(asNetwork ? 3 : 4)).map { String(high >> (48 - 16 * UInt64($0)) & 0xFFFF, radix: 16) }
            return groups.joined(separator: ":") + (asNetwork ? "::/48" : "::/64")
        }
        return "unknown"
    }

    /// The same network as one word, for counting per network without a string: the /24
    /// with a tag bit for IPv4, the /48 with another for IPv6, 0 unknown.
    public var networkKey: UInt64 {
        if high == 0xFFFF, low <= 0xFFFF_FFFF { return 1 << 62 | low >> 8 }
        if low == 1 { return 2 << 62 | high >> 16 }
        return 0
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
