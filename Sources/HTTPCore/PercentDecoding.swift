/// RFC 3986 §2.1 percent-decoding for path segments and query components.
public enum PercentDecoding {
    /// Decodes `%XX` escapes (exactly two hex digits each) and, with `plusAsSpace` (query
    /// strings, `application/x-www-form-urlencoded`), `+` as a space. Nil when an escape is
    /// malformed or the result is not UTF-8.
    public static func decode(_ text: Substring, plusAsSpace: Bool = false) -> String? {
        // Most components have nothing to decode: one copy (none for short, small strings).
        if !text.utf8.contains(where: { $0 == UInt8(ascii: "%") || (plusAsSpace && $0 == UInt8(ascii: "+")) }) { return String(text) }
        var bytes: [UInt8] = []
        bytes.reserveCapacity(text.utf8.count)
        var iterator = text.utf8.makeIterator()
        while let byte = iterator.next() {
            switch byte {
            case UInt8(ascii: "+") where plusAsSpace: bytes.append(UInt8(ascii: " "))
            case UInt8(ascii: "%"):
                guard let high = iterator.next().flatMap(hexValue), let low = iterator.next().flatMap(hexValue) else { return nil }
                bytes.append(high << 4 | low)
            default: bytes.append(byte)
            }
        }
        return String(validating: bytes, as: UTF8.self)
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
        var pairs: [(name: String, value: String)] = []
        guard let query else { return pairs }
        pairs.reserveCapacity(4)
        // One pass over the bytes, no intermediate arrays: every manifest fetch parses a query.
        let utf8 = query.utf8
        var start = utf8.startIndex
        while start < utf8.endIndex {
            var end = start
            var equals: Substring.UTF8View.Index?
            while end < utf8.endIndex, utf8[end] != UInt8(ascii: "&") {
                if equals == nil, utf8[end] == UInt8(ascii: "=") { equals = end }
                end = utf8.index(after: end)
            }
            if end > start {  // empty items (`a=1&&b=2`) are skipped, as before
                let nameEnd = equals ?? end
                let valueStart = equals.map(utf8.index(after:)) ?? end
                guard let name = decode(Substring(utf8[start..<nameEnd]), plusAsSpace: true),
                      let value = decode(Substring(utf8[valueStart..<end]), plusAsSpace: true) else { return nil }
                pairs.append((name, value))
            }
            start = end < utf8.endIndex ? utf8.index(after: end) : end
        }
        return pairs
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
