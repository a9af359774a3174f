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
        for item in query.utf8.split(separator: UInt8(ascii: "&")) {
            let equals = item.firstIndex(of: UInt8(ascii: "=")) ?? item.endIndex
            let value = equals == item.endIndex ? item[equals...] : item[item.index(after: equals)...]
            guard let name = decode(Substring(item[..<equals]), plusAsSpace: true),
                  let value = decode(Substring(value), plusAsSpace: true) else { return nil }
            pairs.append((name, value))
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
