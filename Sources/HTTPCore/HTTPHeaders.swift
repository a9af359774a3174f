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
