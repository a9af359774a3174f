/// A strict, allocation-free JSON reader over a byte buffer, for bodies read on every
/// request (RFC 8259: no trailing commas, no leading zeros, no control bytes or invalid
/// UTF-8 in strings, nesting bounded). It reads values in place; only a string with escapes
/// is copied.
struct JSONScanner {
    struct Malformed: Error, Equatable {
        var offset: Int
        var message: String
    }

    /// A string value: the raw bytes between the quotes when there were no escapes, or
    /// the decoded bytes when there were.
    enum Text {
        case raw(UnsafeBufferPointer<UInt8>)
        case decoded([UInt8])

        func withBytes<T>(_ body: (UnsafeBufferPointer<UInt8>) -> T) -> T {
            switch self {
            case .raw(let bytes): body(bytes)
            case .decoded(let bytes): bytes.withUnsafeBufferPointer(body)
            }
        }

        var count: Int { withBytes { $0.count } }

        @inline(__always)
        func equals(_ literal: StaticString) -> Bool {
            withBytes { bytes in
                bytes.count == literal.utf8CodeUnitCount
                    && sameBytes(bytes, UnsafeBufferPointer(start: literal.utf8Start, count: literal.utf8CodeUnitCount))
            }
        }

        var string: String { withBytes { String(decoding: $0, as: UTF8.self) } }
    }

    enum Number {
        case integer(Int)
        /// A valid JSON number that is not an integer in range (fraction, exponent, huge).
        case other
    }

    static let maximumDepth = 32

    private let bytes: UnsafeBufferPointer<UInt8>
    /// The next byte to read.
    var offset = 0

    init(_ bytes: UnsafeBufferPointer<UInt8>) {
        self.bytes = bytes
    }

    var atEnd: Bool { offset >= bytes.count }

    func fail(_ message: String) -> Malformed { Malformed(offset: offset, message: message) }

    @inline(__always)
    mutating func skipWhitespace() {
        while offset < bytes.count {
            switch bytes[offset] {
            case 0x20, 0x0A, 0x0D, 0x09: offset += 1
            default: return
            }
        }
    }

    /// The next significant byte, not consumed; nil at the end.
    @inline(__always)
    mutating func peek() -> UInt8? {
        skipWhitespace()
        return offset < bytes.count ? bytes[offset] : nil
    }

    @inline(__always)
    mutating func expect(_ byte: UInt8, _ what: @autoclosure () -> String) throws(Malformed) {
        guard peek() == byte else { throw fail("expected \(what())") }
        offset += 1
    }

    /// Consumes `byte` if it is next.
    @inline(__always)
    mutating func consume(_ byte: UInt8) -> Bool {
        guard peek() == byte else { return false }
        offset += 1
        return true
    }

    /// After a member or element: true if another follows (`,`), false at `close`.
    mutating func more(close: UInt8) throws(Malformed) -> Bool {
        switch peek() {
        case 0x2C?:
            offset += 1
            return true
        case close?:
            offset += 1
            return false
        default:
            throw fail(close == 0x7D ? "expected ',' or '}'" : "expected ',' or ']'")
        }
    }

    /// Reads a string; the opening quote must be next.
    mutating func string() throws(Malformed) -> Text {
        try expect(0x22, "a string")
        let start = offset
        // Eight bytes at a time while none is a quote, a backslash, a control or a
        // non-ASCII byte (the SWAR "has zero byte" test on each).
        // The lowest flagged byte of each test is exact (a borrow only runs upward from a
        // byte that matched), so the first special byte is found without a byte loop, and a
        // short string ends here when that byte is its closing quote.
        if let base = bytes.baseAddress {
            while offset + 8 <= bytes.count {
                let word = UInt64(littleEndian: UnsafeRawPointer(base + offset).loadUnaligned(as: UInt64.self))
                let ones: UInt64 = 0x0101_0101_0101_0101, highs: UInt64 = 0x8080_8080_8080_8080
                let quote = word ^ (ones &* 0x22), backslash = word ^ (ones &* 0x5C)
                let special = (((quote &- ones) & ~quote) | ((backslash &- ones) & ~backslash) | (word &- ones &* 0x20) | word) & highs
                if special != 0 {
                    offset += special.trailingZeroBitCount / 8
                    if bytes[offset] == 0x22 {
                        offset += 1
                        return .raw(UnsafeBufferPointer(rebasing: bytes[start..<offset - 1]))
                    }
                    break
                }
                offset += 8
            }
        }
        while offset < bytes.count {
            let byte = bytes[offset]
            if byte == 0x22 {
                offset += 1
                return .raw(UnsafeBufferPointer(rebasing: bytes[start..<offset - 1]))
            }
            if byte == 0x5C || byte < 0x20 || byte >= 0x80 { break }
            offset += 1
        }
        return .decoded(try slowString(from: start))
    }

    private mutating func slowString(from start: Int) throws(Malformed) -> [UInt8] {
        var out = Array(bytes[start..<offset])
        while offset < bytes.count {
            let byte = bytes[offset]
            switch byte {
            case 0x22:
                offset += 1
                return out
            case 0x5C:
                offset += 1
                guard offset < bytes.count else { break }
                let escape = bytes[offset]
                offset += 1
                switch escape {
                case 0x22, 0x5C, 0x2F: out.append(escape)
                case 0x62: out.append(0x08)
                case 0x66: out.append(0x0C)
                case 0x6E: out.append(0x0A)
                case 0x72: out.append(0x0D)
                case 0x74: out.append(0x09)
                case 0x75: try unicodeEscape(into: &out)
                default: throw Malformed(offset: offset - 1, message: "invalid escape in a string")
                }
            case 0..<0x20:
                throw fail("a control character in a string")
            case 0x80...:
                let length = try utf8Sequence()
                out.append(contentsOf: bytes[offset..<offset + length])
                offset += length
            default:
                out.append(byte)
                offset += 1
            }
        }
        throw fail("an unterminated string")
    }

    private mutating func hex4() throws(Malformed) -> UInt32 {
        guard offset + 4 <= bytes.count else { throw fail("a short \\u escape") }
        var value: UInt32 = 0
        for _ in 0..<4 {
            let byte = bytes[offset]
            let digit: UInt8
            switch byte {
            case 0x30...0x39: digit = byte - 0x30
            case 0x41...0x46: digit = byte - 0x41 + 10
            case 0x61...0x66: digit = byte - 0x61 + 10
            default: throw fail("a \\u escape that is not hex")
            }
            value = value << 4 | UInt32(digit)
            offset += 1
        }
        return value
    }

    private mutating func unicodeEscape(into out: inout [UInt8]) throws(Malformed) {
        var scalar = try hex4()
        if (0xD800...0xDBFF).contains(scalar) {
            guard offset + 2 <= bytes.count, bytes[offset] == 0x5C, bytes[offset + 1] == 0x75 else { throw fail("a lone surrogate in a \\u escape") }
            offset += 2
            let low = try hex4()
            guard (0xDC00...0xDFFF).contains(low) else { throw fail("a lone surrogate in a \\u escape") }
            scalar = 0x10000 + ((scalar - 0xD800) << 10) + (low - 0xDC00)
        } else if (0xDC00...0xDFFF).contains(scalar) {
            throw fail("a lone surrogate in a \\u escape")
        }
        out.append(contentsOf: String(Unicode.Scalar(scalar)!).utf8)
    }

    /// The length of the well-formed UTF-8 sequence at `offset` (RFC 3629), or an error.
    private func utf8Sequence() throws(Malformed) -> Int {
        let lead = bytes[offset]
        let length: Int
        var low: UInt8 = 0x80, high: UInt8 = 0xBF
        switch lead {
        case 0xC2...0xDF: length = 2
        case 0xE0: length = 3; low = 0xA0
        case 0xE1...0xEC, 0xEE...0xEF: length = 3
        case 0xED: length = 3; high = 0x9F
        case 0xF0: length = 4; low = 0x90
        case 0xF1...0xF3: length = 4
        case 0xF4: length = 4; high = 0x8F
        default: throw fail("invalid UTF-8 in a string")
        }
        guard offset + length <= bytes.count else { throw fail("invalid UTF-8 in a string") }
        for position in 1..<length {
            let byte = bytes[offset + position]
            let (lower, upper) = position == 1 ? (low, high) : (UInt8(0x80), UInt8(0xBF))
            guard byte >= lower, byte <= upper else { throw fail("invalid UTF-8 in a string") }
        }
        return length
    }

    /// Reads a number (the grammar of RFC 8259 §6). Integral values are integers however
    /// they are spelled (`12`, `12.0`, `1.2e1`), as JSON Schema's `integer` counts them.
    mutating func number() throws(Malformed) -> Number {
        skipWhitespace()
        var negative = false
        if offset < bytes.count, bytes[offset] == 0x2D {
            negative = true
            offset += 1
        }
        guard offset < bytes.count, (0x30...0x39).contains(bytes[offset]) else { throw fail("expected a number") }
        // Every significant digit, integer and fraction, into `value`; `scale` counts the
        // fraction digits taken, so the number is value × 10^(exponent − scale).
        var value = 0
        var fits = true
        var scale = 0
        func take(_ digit: UInt8) {
            guard fits else { return }
            let (times, overflowA) = value.multipliedReportingOverflow(by: 10)
            let (sum, overflowB) = times.addingReportingOverflow(Int(digit - 0x30))
            if overflowA || overflowB { fits = false } else { value = sum }
        }
        if bytes[offset] == 0x30 {
            offset += 1
            if offset < bytes.count, (0x30...0x39).contains(bytes[offset]) { throw fail("a number with a leading zero") }
        } else {
            while offset < bytes.count, (0x30...0x39).contains(bytes[offset]) {
                take(bytes[offset])
                offset += 1
            }
        }
        if offset < bytes.count, bytes[offset] == 0x2E {
            offset += 1
            guard offset < bytes.count, (0x30...0x39).contains(bytes[offset]) else { throw fail("a number with nothing after '.'") }
            while offset < bytes.count, (0x30...0x39).contains(bytes[offset]) {
                take(bytes[offset])
                scale += 1
                offset += 1
            }
        }
        var exponent = 0
        if offset < bytes.count, bytes[offset] | 0x20 == 0x65 {
            offset += 1
            var negativeExponent = false
            if offset < bytes.count, bytes[offset] == 0x2B || bytes[offset] == 0x2D {
                negativeExponent = bytes[offset] == 0x2D
                offset += 1
            }
            guard offset < bytes.count, (0x30...0x39).contains(bytes[offset]) else { throw fail("a number with an empty exponent") }
            while offset < bytes.count, (0x30...0x39).contains(bytes[offset]) {
                exponent = min(exponent * 10 + Int(bytes[offset] - 0x30), 10_000)
                offset += 1
            }
            if negativeExponent { exponent = -exponent }
        }
        guard fits else { return .other }
        var shift = exponent - scale
        while shift > 0, value != 0 {
            let (times, overflow) = value.multipliedReportingOverflow(by: 10)
            if overflow { return .other }
            value = times
            shift -= 1
        }
        while shift < 0, value != 0 {
            guard value % 10 == 0 else { return .other }
            value /= 10
            shift += 1
        }
        return .integer(negative ? -value : value)
    }

    private mutating func literal(_ word: StaticString) throws(Malformed) {
        let count = word.utf8CodeUnitCount
        guard offset + count <= bytes.count,
              UnsafeBufferPointer(start: word.utf8Start, count: count).elementsEqual(bytes[offset..<offset + count]) else {
            throw fail("expected a JSON value")
        }
        offset += count
    }

    /// Reads and discards one value of any kind, checking its syntax.
    mutating func skipValue(depth: Int = 0) throws(Malformed) {
        guard depth < Self.maximumDepth else { throw fail("nesting deeper than \(Self.maximumDepth) levels") }
        switch peek() {
        case 0x7B?:
            offset += 1
            if consume(0x7D) { return }
            repeat {
                _ = try string()
                try expect(0x3A, "':'")
                try skipValue(depth: depth + 1)
            } while try more(close: 0x7D)
        case 0x5B?:
            offset += 1
            if consume(0x5D) { return }
            repeat { try skipValue(depth: depth + 1) } while try more(close: 0x5D)
        case 0x22?: _ = try string()
        case 0x74?: try literal("true")
        case 0x66?: try literal("false")
        case 0x6E?: try literal("null")
        case nil: throw fail("unexpected end of the body")
        case let byte? where byte == 0x2D || (0x30...0x39).contains(byte): _ = try number()
        default: throw fail("expected a JSON value")
        }
    }
}

/// Whether two buffers of the same length hold the same bytes: a plain loop, which the
/// optimizer keeps tight (the generic `elementsEqual` is not, for names a few bytes long).
@inline(__always)
func sameBytes(_ a: UnsafeBufferPointer<UInt8>, _ b: UnsafeBufferPointer<UInt8>) -> Bool {
    guard a.count == b.count else { return false }
    guard var left = a.baseAddress, var right = b.baseAddress else { return a.count == 0 }
    var remaining = a.count
    while remaining >= 8 {
        if UnsafeRawPointer(left).loadUnaligned(as: UInt64.self) != UnsafeRawPointer(right).loadUnaligned(as: UInt64.self) { return false }
        left += 8
        right += 8
        remaining -= 8
    }
    while remaining > 0 {
        if left.pointee != right.pointee { return false }
        left += 1
        right += 1
        remaining -= 1
    }
    return true
}
