/// RFC 3986 §2.1 percent-decoding for path segments and query components.
public enum PercentDecoding {
    /// Decodes `%XX` escapes (exactly two hex digits each) and, with `plusAsSpace` (query
    /// strings, `application/x-www-form-urlencoded`), `+` as a space. Nil when an escape is
    /// malformed or the result is not UTF-8.
    public static func decode(_ text: Substring, plusAsSpace: Bool = false) -> String? {
        if let decoded = text.utf8.withContiguousStorageIfAvailable({ decode($0, plusAsSpace: plusAsSpace) }) { return decoded }
        return Array(text.utf8).withUnsafeBufferPointer { decode($0, plusAsSpace: plusAsSpace) }
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
        if let pairs = query.utf8.withContiguousStorageIfAvailable(queryPairs) { return pairs }
        return Array(query.utf8).withUnsafeBufferPointer(queryPairs)
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
    /// name and value UTF-8), without making a string for a component with no escape.
    public static func isWellFormedQuery(_ query: Substring?) -> Bool {
        guard let query else { return true }
        return withBytes(query) { bytes in
            var wellFormed = true
            func reads(_ part: Slice<UnsafeBufferPointer<UInt8>>) -> Bool {
                !part.contains(UInt8(ascii: "%")) || decode(UnsafeBufferPointer(rebasing: part), plusAsSpace: true) != nil
            }
            forEachItem(bytes) { name, value in
                wellFormed = reads(name) && reads(value)
                return wellFormed
            }
            return wellFormed
        }
    }

    /// The decoded value of the first item of a well-formed `query` (`isWellFormedQuery`)
    /// whose decoded name is `name`, as `queryPairs` would give it; nil when there is none.
    /// Only that value becomes a string: a handler reading two names of a short query pays
    /// for two strings, not one per name and value.
    public static func queryValue(named name: String, in query: Substring?) -> String? {
        guard let query else { return nil }
        var wanted = name
        return wanted.withUTF8 { wanted in
            withBytes(query) { bytes in
                var found: String?
                forEachItem(bytes) { itemName, itemValue in
                    let matches: Bool
                    if itemName.contains(where: { $0 == UInt8(ascii: "%") || $0 == UInt8(ascii: "+") }) {
                        matches = decode(UnsafeBufferPointer(rebasing: itemName), plusAsSpace: true).map { $0 == name } ?? false
                    } else {
                        matches = itemName.count == wanted.count && itemName.indices.allSatisfy { itemName[$0] == wanted[$0 - itemName.startIndex] }
                    }
                    guard matches else { return true }
                    found = decode(UnsafeBufferPointer(rebasing: itemValue), plusAsSpace: true)
                    return false
                }
                return found
            }
        }
    }

    private static func withBytes<R>(_ text: Substring, _ body: (UnsafeBufferPointer<UInt8>) -> R) -> R {
        if let result = text.utf8.withContiguousStorageIfAvailable(body) { return result }
        return Array(text.utf8).withUnsafeBufferPointer(body)
    }

    /// Calls `body` with each non-empty item's name and value bytes (the value empty when
    /// there is no `=`), in order, until it returns false.
    private static func forEachItem(_ bytes: UnsafeBufferPointer<UInt8>,
                                    _ body: (Slice<UnsafeBufferPointer<UInt8>>, Slice<UnsafeBufferPointer<UInt8>>) -> Bool) {
        var start = 0
        while start < bytes.count {
            var end = start
            var equals: Int?
            while end < bytes.count, bytes[end] != UInt8(ascii: "&") {
                if equals == nil, bytes[end] == UInt8(ascii: "=") { equals = end }
                end += 1
            }
            if end > start {
                let nameEnd = equals ?? end
                let valueStart = equals.map { $0 + 1 } ?? end
                guard body(bytes[start..<nameEnd], bytes[valueStart..<end]) else { return }
            }
            start = end + 1
        }
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
