/// Why a document is not JSON, with the byte offset where reading stopped.
public enum JSONParseError: Error, Hashable, Sendable {
    case unexpectedEnd
    case unexpectedByte(UInt8, offset: Int)
    case invalidNumber(offset: Int)
    case invalidEscape(offset: Int)
    case invalidUTF8(offset: Int)
    case controlCharacterInString(offset: Int)
    case duplicateKey(String, offset: Int)
    case tooDeep(offset: Int)
    case trailingData(offset: Int)
    /// More objects and arrays than `JSONParser.maximumContainers`.
    case tooManyContainers(limit: Int, offset: Int)
    /// More values in all than `JSONParser.maximumValues`.
    case tooManyValues(limit: Int, offset: Int)

    /// A sentence for people who did not write the parser.
    public var message: String {
        switch self {
        case .unexpectedEnd: "The document ends in the middle of a value."
        case .unexpectedByte(let byte, let offset):
            "Unexpected character \(Self.describe(byte)) at byte \(offset)."
        case .invalidNumber(let offset): "Invalid number at byte \(offset)."
        case .invalidEscape(let offset): "Invalid escape sequence in a string at byte \(offset)."
        case .invalidUTF8(let offset): "Invalid UTF-8 at byte \(offset)."
        case .controlCharacterInString(let offset): "Unescaped control character in a string at byte \(offset)."
        case .duplicateKey(let key, let offset): "The key \"\(key)\" appears twice in one object (byte \(offset))."
        case .tooDeep(let offset): "Values are nested too deeply at byte \(offset)."
        case .trailingData(let offset): "Unexpected data after the document at byte \(offset)."
        case .tooManyContainers(let limit, let offset):
            "The document holds more than \(limit) objects and lists in all (at byte \(offset)); split it, or leave out what it does not need."
        case .tooManyValues(let limit, let offset):
            "The document holds more than \(limit) values in all (at byte \(offset)); split it, or leave out what it does not need."
        }
    }

    private static func describe(_ byte: UInt8) -> String {
        (0x21...0x7E).contains(byte) ? "'\(Character(Unicode.Scalar(byte)))'" : "0x" + String(byte, radix: 16)
    }
}

/// A strict RFC 8259 parser: no comments, no trailing commas, no duplicate keys,
/// no lone surrogates, valid UTF-8 only, nesting bounded by `maximumDepth`.
public struct JSONParser: Sendable {
    public var maximumDepth: Int
    /// How many objects and arrays one document may hold in all. Each costs a parsed
    /// document an allocation of its own (a one-member object about 180 bytes, against the
    /// 8 bytes of `{"a":0},`), so a limit on them, and on values, is what bounds a parse's
    /// memory by more than its length does.
    public var maximumContainers: Int
    /// How many values (containers, strings, numbers, literals) one document may hold in
    /// all: each is at least 24 bytes parsed, against 2 bytes for `0,`.
    public var maximumValues: Int

    public init(maximumDepth: Int = 64, maximumContainers: Int = .max, maximumValues: Int = .max) {
        self.maximumDepth = maximumDepth
        self.maximumContainers = maximumContainers
        self.maximumValues = maximumValues
    }

    /// For documents sent by clients (routes, drafts, schemas): at most 250,000 objects
    /// and arrays and 1,000,000 values, so a document of millions of tiny values is refused
    /// as it is read, at about 70 MB parsed rather than 450 MB and more. A routes document
    /// of 50,000 routes, each with a param, an owner and notes, holds about 200,000 objects
    /// and arrays and 600,000 values.
    public static let requests = JSONParser(maximumContainers: 250_000, maximumValues: 1_000_000)

    /// Parses one complete document.
    /// - Complexity: O(n) in the document's length.
    public func parse(_ bytes: some Collection<UInt8>) throws(JSONParseError) -> JSONValue {
        let array = Array(bytes)
        return try array.withUnsafeBufferPointer { buffer throws(JSONParseError) in
            var reader = Reader(bytes: buffer, maximumDepth: maximumDepth, containersLeft: maximumContainers, valuesLeft: maximumValues)
            reader.skipWhitespace()
            let value = try reader.readValue(depth: 0)
            reader.skipWhitespace()
            guard reader.offset == buffer.count else { throw .trailingData(offset: reader.offset) }
            return value
        }
    }

    public func parse(_ text: String) throws(JSONParseError) -> JSONValue {
        try parse(Array(text.utf8))
    }
}

private struct Reader {
    let bytes: UnsafeBufferPointer<UInt8>
    let maximumDepth: Int
    let maximumContainers: Int
    let maximumValues: Int
    var containersLeft: Int
    var valuesLeft: Int
    var offset = 0

    init(bytes: UnsafeBufferPointer<UInt8>, maximumDepth: Int, containersLeft: Int, valuesLeft: Int) {
        self.bytes = bytes
        self.maximumDepth = maximumDepth
        self.maximumContainers = containersLeft
        self.containersLeft = containersLeft
        self.maximumValues = valuesLeft
        self.valuesLeft = valuesLeft
    }

    /// Counts one more object or array.
    mutating func countContainer() throws(JSONParseError) {
        guard containersLeft > 0 else { throw .tooManyContainers(limit: maximumContainers, offset: offset) }
        containersLeft -= 1
    }

    mutating func skipWhitespace() {
        while offset < bytes.count {
            switch bytes[offset] {
            case 0x20, 0x09, 0x0A, 0x0D: offset += 1
            default: return
            }
        }
    }

    func peek() throws(JSONParseError) -> UInt8 {
        guard offset < bytes.count else { throw .unexpectedEnd }
        return bytes[offset]
    }

    mutating func expect(_ literal: StaticString, value: JSONValue) throws(JSONParseError) -> JSONValue {
        for index in 0..<literal.utf8CodeUnitCount {
            guard offset < bytes.count else { throw .unexpectedEnd }
            guard bytes[offset] == literal.utf8Start[index] else {
                throw .unexpectedByte(bytes[offset], offset: offset)
            }
            offset += 1
        }
        return value
    }

    mutating func readValue(depth: Int) throws(JSONParseError) -> JSONValue {
        guard valuesLeft > 0 else { throw .tooManyValues(limit: maximumValues, offset: offset) }
        valuesLeft -= 1
        switch try peek() {
        case UInt8(ascii: "{"): return try readObject(depth: depth + 1)
        case UInt8(ascii: "["): return try readArray(depth: depth + 1)
        case UInt8(ascii: "\""): return .string(try readString())
        case UInt8(ascii: "t"): return try expect("true", value: .bool(true))
        case UInt8(ascii: "f"): return try expect("false", value: .bool(false))
        case UInt8(ascii: "n"): return try expect("null", value: .null)
        case UInt8(ascii: "-"), UInt8(ascii: "0")...UInt8(ascii: "9"): return try readNumber()
        case let byte: throw .unexpectedByte(byte, offset: offset)
        }
    }

    mutating func readObject(depth: Int) throws(JSONParseError) -> JSONValue {
        guard depth <= maximumDepth else { throw .tooDeep(offset: offset) }
        try countContainer()
        offset += 1
        var members: [String: JSONValue] = [:]
        skipWhitespace()
        if try peek() == UInt8(ascii: "}") { offset += 1; return .object(members) }
        while true {
            skipWhitespace()
            let keyOffset = offset
            guard try peek() == UInt8(ascii: "\"") else { throw .unexpectedByte(bytes[offset], offset: offset) }
            let key = try readString()
            skipWhitespace()
            guard try peek() == UInt8(ascii: ":") else { throw .unexpectedByte(bytes[offset], offset: offset) }
            offset += 1
            skipWhitespace()
            let value = try readValue(depth: depth)
            guard members.updateValue(value, forKey: key) == nil else { throw .duplicateKey(key, offset: keyOffset) }
            skipWhitespace()
            switch try peek() {
            case UInt8(ascii: ","): offset += 1
            case UInt8(ascii: "}"): offset += 1; return .object(members)
            case let byte: throw .unexpectedByte(byte, offset: offset)
            }
        }
    }

    mutating func readArray(depth: Int) throws(JSONParseError) -> JSONValue {
        guard depth <= maximumDepth else { throw .tooDeep(offset: offset) }
        try countContainer()
        offset += 1
        var elements: [JSONValue] = []
        skipWhitespace()
        if try peek() == UInt8(ascii: "]") { offset += 1; return .array(elements) }
        while true {
            skipWhitespace()
            elements.append(try readValue(depth: depth))
            skipWhitespace()
            switch try peek() {
            case UInt8(ascii: ","): offset += 1
            case UInt8(ascii: "]"): offset += 1; return .array(elements)
            case let byte: throw .unexpectedByte(byte, offset: offset)
            }
        }
    }

    /// RFC 8259 §6: `-? (0 | [1-9][0-9]*) (. [0-9]+)? ([eE] [+-]? [0-9]+)?`
    mutating func readNumber() throws(JSONParseError) -> JSONValue {
        let start = offset
        if bytes[offset] == UInt8(ascii: "-") { offset += 1 }
        guard offset < bytes.count, isDigit(bytes[offset]) else { throw .invalidNumber(offset: start) }
        if bytes[offset] == UInt8(ascii: "0") {
            offset += 1
        } else {
            while offset < bytes.count, isDigit(bytes[offset]) { offset += 1 }
        }
        var isIntegral = true
        if offset < bytes.count, bytes[offset] == UInt8(ascii: ".") {
            isIntegral = false
            offset += 1
            guard offset < bytes.count, isDigit(bytes[offset]) else { throw .invalidNumber(offset: start) }
            while offset < bytes.count, isDigit(bytes[offset]) { offset += 1 }
        }
        if offset < bytes.count, bytes[offset] | 0x20 == UInt8(ascii: "e") {
            isIntegral = false
            offset += 1
            if offset < bytes.count, bytes[offset] == UInt8(ascii: "+") || bytes[offset] == UInt8(ascii: "-") {
                offset += 1
            }
            guard offset < bytes.count, isDigit(bytes[offset]) else { throw .invalidNumber(offset: start) }
            while offset < bytes.count, isDigit(bytes[offset]) { offset += 1 }
        }
        let text = String(decoding: UnsafeBufferPointer(rebasing: bytes[start..<offset]), as: UTF8.self)
        if isIntegral, let integer = Int(text) { return .int(integer) }
        guard let double = Double(text), double.isFinite else { throw .invalidNumber(offset: start) }
        return .double(double)
    }

    mutating func readString() throws(JSONParseError) -> String {
        offset += 1  // opening quote
        let start = offset
        // Fast path: no escapes.
        while offset < bytes.count {
            let byte = bytes[offset]
            if byte == UInt8(ascii: "\"") {
                let slice = UnsafeBufferPointer(rebasing: bytes[start..<offset])
                offset += 1
                return try validatedString(slice, at: start)
            }
            if byte == UInt8(ascii: "\\") { break }
            if byte < 0x20 { throw .controlCharacterInString(offset: offset) }
            offset += 1
        }
        var scratch = Array(UnsafeBufferPointer(rebasing: bytes[start..<offset]))
        while true {
            guard offset < bytes.count else { throw .unexpectedEnd }
            let byte = bytes[offset]
            switch byte {
            case UInt8(ascii: "\""):
                offset += 1
                return try scratch.withUnsafeBufferPointer { buffer throws(JSONParseError) in
                    try validatedString(buffer, at: start)
                }
            case UInt8(ascii: "\\"):
                try readEscape(into: &scratch)
            case 0x00..<0x20:
                throw .controlCharacterInString(offset: offset)
            default:
                scratch.append(byte)
                offset += 1
            }
        }
    }

    func validatedString(_ buffer: UnsafeBufferPointer<UInt8>, at start: Int) throws(JSONParseError) -> String {
        guard let string = String(validating: buffer, as: UTF8.self) else { throw .invalidUTF8(offset: start) }
        return string
    }

    mutating func readEscape(into scratch: inout [UInt8]) throws(JSONParseError) {
        let escapeOffset = offset
        offset += 1
        guard offset < bytes.count else { throw .unexpectedEnd }
        let byte = bytes[offset]
        offset += 1
        switch byte {
        case UInt8(ascii: "\""): scratch.append(UInt8(ascii: "\""))
        case UInt8(ascii: "\\"): scratch.append(UInt8(ascii: "\\"))
        case UInt8(ascii: "/"): scratch.append(UInt8(ascii: "/"))
        case UInt8(ascii: "b"): scratch.append(0x08)
        case UInt8(ascii: "f"): scratch.append(0x0C)
        case UInt8(ascii: "n"): scratch.append(0x0A)
        case UInt8(ascii: "r"): scratch.append(0x0D)
        case UInt8(ascii: "t"): scratch.append(0x09)
        case UInt8(ascii: "u"):
            var scalar = try readHex4(escapeOffset)
            if (0xD800..<0xDC00).contains(scalar) {
                // A high surrogate must be followed by an escaped low surrogate.
                guard offset + 1 < bytes.count, bytes[offset] == UInt8(ascii: "\\"), bytes[offset + 1] == UInt8(ascii: "u")
                else { throw .invalidEscape(offset: escapeOffset) }
                offset += 2
                let low = try readHex4(escapeOffset)
                guard (0xDC00..<0xE000).contains(low) else { throw .invalidEscape(offset: escapeOffset) }
                scalar = 0x10000 + ((scalar - 0xD800) << 10) + (low - 0xDC00)
            } else if (0xDC00..<0xE000).contains(scalar) {
                throw .invalidEscape(offset: escapeOffset)
            }
            guard let unicode = Unicode.Scalar(scalar) else { throw .invalidEscape(offset: escapeOffset) }
            scratch.append(contentsOf: String(Character(unicode)).utf8)
        default:
            throw .invalidEscape(offset: escapeOffset)
        }
    }

    mutating func readHex4(_ escapeOffset: Int) throws(JSONParseError) -> UInt32 {
        guard offset + 4 <= bytes.count else { throw .unexpectedEnd }
        var value: UInt32 = 0
        for _ in 0..<4 {
            guard let digit = hexValue(bytes[offset]) else { throw .invalidEscape(offset: escapeOffset) }
            value = value << 4 | UInt32(digit)
            offset += 1
        }
        return value
    }
}

@inline(__always) func isDigit(_ byte: UInt8) -> Bool {
    byte >= UInt8(ascii: "0") && byte <= UInt8(ascii: "9")
}

@inline(__always) func hexValue(_ byte: UInt8) -> UInt8? {
    switch byte {
    case UInt8(ascii: "0")...UInt8(ascii: "9"): byte - UInt8(ascii: "0")
    case UInt8(ascii: "a")...UInt8(ascii: "f"): byte - UInt8(ascii: "a") + 10
    case UInt8(ascii: "A")...UInt8(ascii: "F"): byte - UInt8(ascii: "A") + 10
    default: nil
    }
}
