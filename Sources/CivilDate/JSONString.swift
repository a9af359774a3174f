/// JSON string literals (RFC 8259 §7), the one escaper of every module that writes JSON by
/// hand or from values: the quote, the backslash and every control character (and DEL)
/// escaped, `\n`, `\r` and `\t` by their short forms, the others as `\u00XX`; everything
/// else, non-ASCII included, as its UTF-8 bytes.
public enum JSONString {
    /// Appends `value` as a quoted JSON string.
    public static func append(_ value: String, to out: inout [UInt8]) {
        out.append(UInt8(ascii: "\""))
        for byte in value.utf8 {
            switch byte {
            case UInt8(ascii: "\""): out.append(contentsOf: "\\\"".utf8)
            case UInt8(ascii: "\\"): out.append(contentsOf: "\\\\".utf8)
            case 0x0A: out.append(contentsOf: "\\n".utf8)
            case 0x0D: out.append(contentsOf: "\\r".utf8)
            case 0x09: out.append(contentsOf: "\\t".utf8)
            case 0x00..<0x20, 0x7F:
                out.append(contentsOf: "\\u00".utf8)
                out.append(hexDigits[Int(byte >> 4)])
                out.append(hexDigits[Int(byte & 0x0F)])
            default: out.append(byte)
            }
        }
        out.append(UInt8(ascii: "\""))
    }

    /// `value` as a quoted JSON string.
    public static func quoted(_ value: String) -> String {
        var out: [UInt8] = []
        out.reserveCapacity(value.utf8.count + 2)
        append(value, to: &out)
        return String(decoding: out, as: UTF8.self)
    }

    private static let hexDigits = Array("0123456789abcdef".utf8)
}

/// `text` with zeros before it up to `width` characters (`7` → `07`); longer text as it is.
public func zeroPadded(_ text: String, width: Int) -> String {
    let count = text.count
    return count >= width ? text : String(repeating: "0", count: width - count) + text
}

/// `value` in decimal with zeros before it up to `width` digits.
public func zeroPadded(_ value: Int, width: Int) -> String {
    zeroPadded(String(value), width: width)
}
