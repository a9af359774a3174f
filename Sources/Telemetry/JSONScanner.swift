// One file, though long: a scanner is one state (an offset into one buffer), and its
// string, number and skipping rules are RFC 8259's, read best side by side.

/// A strict, allocation-free JSON reader over a byte buffer, for bodies read on every
/// request (RFC 8259: no trailing commas, no leading zeros, no control bytes or invalid
/// UTF-8 in strings, nesting bounded). It reads values in place; only a string with escapes
/// is copied.
struct JSONScanner {
    struct Malformed: Error, Equatable {
        var offset: Int
        var message: String
    }

    /// A string value: its bytes, in the body when it has no escapes, or else decoded into
    /// the scanner's scratch space, which holds them until `deallocate()`.
    struct Text {
        let bytes: UnsafeBufferPointer<UInt8>

        var count: Int { bytes.count }

        @inline(__always)
        func equals(_ literal: StaticString) -> Bool {
            bytes.count == literal.utf8CodeUnitCount
                && sameBytes(bytes, UnsafeBufferPointer(start: literal.utf8Start, count: literal.utf8CodeUnitCount))
        }

        var string: String { String(decoding: bytes, as: UTF8.self) }
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

    /// Where strings with escapes or non-ASCII bytes are decoded, one after another:
    /// allocated by the first such string, as large as the body (no string decodes to more
    /// bytes than it is spelled with), so every `Text` stays valid until `deallocate()`.
    private var scratch: UnsafeMutablePointer<UInt8>?
    private var scratchUsed = 0

    /// A scanner over `bytes`; its owner calls `deallocate()` when done with it and with
    /// every `Text` it returned.
    init(_ bytes: UnsafeBufferPointer<UInt8>) {
        self.bytes = bytes
    }

    mutating func deallocate() {
        scratch?.deallocate()
        scratch = nil
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
        // Compact JSON has no whitespace between tokens: one comparison decides.
        if offset < bytes.count, bytes[offset] > 0x20 { return bytes[offset] }
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
    @inline(__always)
    mutating func more(close: UInt8) throws(Malformed) -> Bool {
        if offset < bytes.count {
            if bytes[offset] == 0x2C {
                offset += 1
                return true
            }
            if bytes[offset] == close {
                offset += 1
                return false
            }
        }
        return try moreAfterSpace(close: close)
    }

    private mutating func moreAfterSpace(close: UInt8) throws(Malformed) -> Bool {
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

    /// Reads a string; the opening quote must be next. Inlined, so that the common string,
    /// with nothing to decode and so a range of the body, costs one call (the byte search).
    @inline(__always)
    mutating func string() throws(Malformed) -> Text {
        try expect(0x22, "a string")
        let start = offset
        if skipPlainString() { return Text(bytes: UnsafeBufferPointer(rebasing: bytes[start..<offset - 1])) }
        return try slowString(from: start)
    }

    /// Moves past the content and closing quote of a string with no escape, control or
    /// non-ASCII byte (true); otherwise stops at the first such byte (false).
    private mutating func skipPlainString() -> Bool {
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
                        return true
                    }
                    return false
                }
                offset += 8
            }
        }
        while offset < bytes.count {
            let byte = bytes[offset]
            if byte == 0x22 {
                offset += 1
                return true
            }
            if byte == 0x5C || byte < 0x20 || byte >= 0x80 { return false }
            offset += 1
        }
        return false
    }

    /// The sixteen bytes after the opening quote of the string that is next, when it is a
    /// string and they are all in the buffer: what `consume(_:in:)` matches against.
    @inline(__always)
    mutating func wordsAfterQuote() -> (UInt64, UInt64)? {
        guard peek() == 0x22, offset + 17 <= bytes.count, let base = bytes.baseAddress else { return nil }
        let raw = UnsafeRawPointer(base + offset + 1)
        return (UInt64(littleEndian: raw.loadUnaligned(as: UInt64.self)), UInt64(littleEndian: raw.loadUnaligned(fromByteOffset: 8, as: UInt64.self)))
    }

    /// Consumes the string next if it is `name` spelled without escapes; `words` are
    /// `wordsAfterQuote()`. A string spelled otherwise (`"\u0074s"`) is left for `string()`.
    @inline(__always)
    mutating func consume(_ name: PlainString, in words: (UInt64, UInt64)) -> Bool {
        guard words.0 & name.masks.0 == name.words.0, words.1 & name.masks.1 == name.words.1 else { return false }
        offset += 1 + name.length
        return true
    }

    /// Decodes the rest of a string into the scratch space; `start` is just after its quote.
    private mutating func slowString(from start: Int) throws(Malformed) -> Text {
        if scratch == nil { scratch = .allocate(capacity: max(bytes.count, 1)) }
        let first = scratchUsed
        for position in start..<offset { emit(bytes[position]) }
        while offset < bytes.count {
            let byte = bytes[offset]
            switch byte {
            case 0x22:
                offset += 1
                return Text(bytes: UnsafeBufferPointer(start: scratch! + first, count: scratchUsed - first))
            case 0x5C:
                offset += 1
                guard offset < bytes.count else { break }
                let escape = bytes[offset]
                offset += 1
                switch escape {
                case 0x22, 0x5C, 0x2F: emit(escape)
                case 0x62: emit(0x08)
                case 0x66: emit(0x0C)
                case 0x6E: emit(0x0A)
                case 0x72: emit(0x0D)
                case 0x74: emit(0x09)
                case 0x75: try unicodeEscape()
                default: throw Malformed(offset: offset - 1, message: "invalid escape in a string")
                }
            case 0..<0x20:
                throw fail("a control character in a string")
            case 0x80...:
                let length = try utf8Sequence()
                for position in offset..<offset + length { emit(bytes[position]) }
                offset += length
            default:
                emit(byte)
                offset += 1
            }
        }
        throw fail("an unterminated string")
    }

    /// Appends a decoded byte to the scratch space. It cannot overflow: decoding never
    /// lengthens what it reads, and each byte of the body is read once.
    @inline(__always)
    private mutating func emit(_ byte: UInt8) {
        precondition(scratchUsed < bytes.count, "decoded strings outgrew the body")
        scratch![scratchUsed] = byte
        scratchUsed += 1
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

    private mutating func unicodeEscape() throws(Malformed) {
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
        UTF8.encode(Unicode.Scalar(scalar)!) { emit($0) }
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

/// A string of up to 15 bytes as the scanner meets it in a body: the bytes after its
/// opening quote, closing quote included, as two little-endian words, with masks that keep
/// only those bytes. Matching it is two comparisons, whatever its length.
struct PlainString: Sendable {
    let words: (UInt64, UInt64)
    let masks: (UInt64, UInt64)
    /// The bytes after the opening quote, closing quote included.
    let length: Int

    init(_ text: StaticString) {
        let bytes = UnsafeBufferPointer(start: text.utf8Start, count: text.utf8CodeUnitCount)
        precondition(bytes.count < 16 && !bytes.contains { $0 == 0x22 || $0 == 0x5C || $0 < 0x20 || $0 >= 0x80 },
                     "a plain string is at most 15 bytes of printable ASCII, with no quote or backslash")
        var words: (UInt64, UInt64) = (0, 0), masks: (UInt64, UInt64) = (0, 0)
        for (position, byte) in (Array(bytes) + [0x22]).enumerated() {
            let shift = UInt64(position % 8 * 8)
            if position < 8 {
                words.0 |= UInt64(byte) << shift
                masks.0 |= 0xFF << shift
            } else {
                words.1 |= UInt64(byte) << shift
                masks.1 |= 0xFF << shift
            }
        }
        self.words = words
        self.masks = masks
        self.length = bytes.count + 1
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
