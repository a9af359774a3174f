/// RFC 3986 §2.1 percent-decoding for path segments and query components.
public enum PercentDecoding {
    /// Decodes `%XX` escapes (exactly two hex digits each) and, with `plusAsSpace` (query
    /// strings, `application/x-www-form-urlencoded`), `+` as a space. Nil when an escape is
    /// malformed or the result is not UTF-8.
    public static func decode(_ text: Substring, plusAsSpace: Bool = false) -> String? {
        withBytes(text) { decode($0, plusAsSpace: plusAsSpace) }
    }

    /// `decode` on the bytes of a String (so valid UTF-8 before decoding).
    static func decode(_ bytes: UnsafeBufferPointer<UInt8>, plusAsSpace: Bool) -> String? {
        // Most components have nothing to decode: one copy (none for short, small strings).
        var plain = true
        for byte in bytes where byte == UInt8(ascii: "%") || (plusAsSpace && byte == UInt8(ascii: "+")) {
            plain = false
            break
        }
        // Bytes of a String (a request target) are valid UTF-8 already: no validation to pay for.
        if plain { return String(decoding: bytes, as: UTF8.self) }
        var decoded: [UInt8] = []
        decoded.reserveCapacity(bytes.count)
        var index = 0
        while index < bytes.count {
            let byte = bytes[index]
            index += 1
            switch byte {
            case UInt8(ascii: "+") where plusAsSpace: decoded.append(UInt8(ascii: " "))
            case UInt8(ascii: "%"):
                guard index + 2 <= bytes.count,
                      let high = hexValue(bytes[index]), let low = hexValue(bytes[index + 1]) else { return nil }
                decoded.append(high << 4 | low)
                index += 2
            default: decoded.append(byte)
            }
        }
        return String(validating: decoded, as: UTF8.self)
    }

    /// A query string's `name=value` items, decoded; the first of a repeated name wins.
    /// Nil when any escape is malformed.
    public static func queryItems(_ query: Substring?) -> [String: String]? {
        guard let pairs = queryPairs(query) else { return nil }
        var items: [String: String] = [:]
        for (name, value) in pairs where items[name] == nil { items[name] = value }
        return items
    }

    /// A query string's `name=value` items, decoded, in order (repeats kept). Nil when any
    /// escape is malformed. No hashing: a handler looking up two names scans a short list.
    public static func queryPairs(_ query: Substring?) -> [(name: String, value: String)]? {
        guard let query else { return [] }
        return withBytes(query, queryPairs)
    }

    /// One pass over the bytes, no intermediate arrays: every manifest fetch parses a query.
    static func queryPairs(_ bytes: UnsafeBufferPointer<UInt8>) -> [(name: String, value: String)]? {
        var pairs: [(name: String, value: String)] = []
        pairs.reserveCapacity(4)
        var start = 0
        while start < bytes.count {
            var end = start
            var equals: Int?
            while end < bytes.count, bytes[end] != UInt8(ascii: "&") {
                if equals == nil, bytes[end] == UInt8(ascii: "=") { equals = end }
                end += 1
            }
            if end > start {  // empty items (`a=1&&b=2`) are skipped
                let nameEnd = equals ?? end
                let valueStart = equals.map { $0 + 1 } ?? end
                guard let name = decode(UnsafeBufferPointer(rebasing: bytes[start..<nameEnd]), plusAsSpace: true),
                      let value = decode(UnsafeBufferPointer(rebasing: bytes[valueStart..<end]), plusAsSpace: true) else { return nil }
                pairs.append((name, value))
            }
            start = end + 1
        }
        return pairs
    }

    /// Whether `queryPairs` would read `query` (every escape well-formed, every decoded
    /// name and value UTF-8). A query without `%` always reads (its bytes are a string's,
    /// and `+` decodes to a space): one scan, no string made.
    public static func isWellFormedQuery(_ query: Substring?) -> Bool {
        guard let query else { return true }
        return withBytes(query) { bytes in
            guard bytes.contains(UInt8(ascii: "%")) else { return true }
            return queryPairs(bytes) != nil
        }
    }

    /// The decoded value of the first item of a well-formed `query` (`isWellFormedQuery`)
    /// whose decoded name is `name`, as `queryPairs` would give it; nil when there is none.
    /// Only that value becomes a string: a handler reading two names of a short query pays
    /// for two strings, not one per name and value.
    public static func queryValue(named name: String, in query: Substring?) -> String? {
        guard let query else { return nil }
        var name = name
        return name.withUTF8 { wanted in withBytes(query) { value(named: wanted, in: $0) } }
    }

    private static func value(named wanted: UnsafeBufferPointer<UInt8>, in bytes: UnsafeBufferPointer<UInt8>) -> String? {
        let count = bytes.count
        var start = 0
        while start < count {
            var end = start
            var equals = -1
            var escaped = false  // the name has `%` or `+`: compared decoded
            while end < count {
                let byte = bytes[end]
                if byte == UInt8(ascii: "&") { break }
                if equals < 0 {
                    if byte == UInt8(ascii: "=") {
                        equals = end
                    } else if byte == UInt8(ascii: "%") || byte == UInt8(ascii: "+") {
                        escaped = true
                    }
                }
                end += 1
            }
            if end > start {  // empty items are skipped
                let name = UnsafeBufferPointer(rebasing: bytes[start..<(equals < 0 ? end : equals)])
                let matches = escaped
                    ? decode(name, plusAsSpace: true).map { $0.utf8.elementsEqual(wanted) } ?? false
                    : equal(name, wanted)
                if matches { return decode(UnsafeBufferPointer(rebasing: bytes[(equals < 0 ? end : equals + 1)..<end]), plusAsSpace: true) }
            }
            start = end + 1
        }
        return nil
    }

    @inline(__always)
    private static func equal(_ a: UnsafeBufferPointer<UInt8>, _ b: UnsafeBufferPointer<UInt8>) -> Bool {
        guard a.count == b.count else { return false }
        for index in 0..<a.count where a[index] != b[index] { return false }
        return true
    }

    private static func withBytes<R>(_ text: Substring, _ body: (UnsafeBufferPointer<UInt8>) -> R) -> R {
        if let result = text.utf8.withContiguousStorageIfAvailable(body) { return result }
        return Array(text.utf8).withUnsafeBufferPointer(body)
    }

    @inline(__always)
    static func hexValue(_ digit: UInt8) -> UInt8? {
        switch digit {
        case UInt8(ascii: "0")...UInt8(ascii: "9"): digit - UInt8(ascii: "0")
        case UInt8(ascii: "a")...UInt8(ascii: "f"): digit - UInt8(ascii: "a") + 10
        case UInt8(ascii: "A")...UInt8(ascii: "F"): digit - UInt8(ascii: "A") + 10
        default: nil
        }
    }
}
