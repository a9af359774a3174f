/// RFC 3986 §2.1 percent-decoding for path segments and query components.
public enum PercentDecoding {
    /// Decodes `%XX` escapes (exactly two hex digits each) and, with `plusAsSpace` (query
    /// strings, `application/x-www-form-urlencoded`), `+` as a space. Nil when an escape is
    /// malformed or the result is not UTF-8.
    public static func decode(_ text: Substring, plusAsSpace: Bool = false) -> String? {
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
        var items: [String: String] = [:]
        guard let query else { return items }
        for item in query.split(separator: "&") {
            let parts = item.split(separator: "=", maxSplits: 1, omittingEmptySubsequences: false)
            guard let name = decode(parts[0], plusAsSpace: true),
                  let value = decode(parts.count > 1 ? parts[1] : "", plusAsSpace: true) else { return nil }
            if items[name] == nil { items[name] = value }
        }
        return items
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
