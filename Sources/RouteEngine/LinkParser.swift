/// Splits an untrusted link into its origin, percent-decoded path segments and raw query,
/// applying the brief's rules of normalisation. Works on bytes, without Foundation's URL,
/// so every platform parses a link identically.
///
/// The parsed segments live in caller-provided scratch buffers: a link is at most
/// `maximumLength` bytes, so parsing allocates nothing.
struct LinkParser {
    /// Links longer than this are `malformed` (bytes of UTF-8).
    static let maximumLength = 2048

    /// Declared origins, lowercased: hosts first, then custom schemes.
    let hosts: [[UInt8]]
    let schemes: [[UInt8]]

    init(schema: Schema) {
        hosts = schema.hosts.map { Array($0.utf8) }
        schemes = schema.schemes.map { Array($0.utf8) }
    }

    /// The index of a declared origin: `0..<hosts.count` for hosts, then schemes.
    var originCount: Int { hosts.count + schemes.count }

    func origin(at index: Int) -> LinkOrigin {
        index < hosts.count
            ? .web(host: String(decoding: hosts[index], as: UTF8.self))
            : .custom(scheme: String(decoding: schemes[index - hosts.count], as: UTF8.self))
    }

    struct Parsed {
        var origin: Int
        var segmentCount: Int
        /// Byte range of the query in the link, without `?`; empty when there is none.
        var query: Range<Int>
    }

    /// Parses `link`, writing decoded segment bytes into `decoded` and their ranges into `ranges`.
    /// Throws the rule a `malformed` link breaks (including an undeclared scheme, host or port).
    /// - Complexity: O(n) in the link's length.
    func parse(
        _ link: UnsafeBufferPointer<UInt8>, decoded: UnsafeMutableBufferPointer<UInt8>,
        ranges: UnsafeMutableBufferPointer<Range<Int>>
    ) throws(LinkDefect) -> Parsed {
        let count = link.count
        guard count > 0 else { throw .empty }
        guard count <= Self.maximumLength else { throw .tooLong }
        // One pass: every byte must be a URL character (the fragment's too, though it is
        // otherwise ignored), and before the fragment every % starts a triplet of two hex
        // digits (RFC 3986 §2.1).
        var end = count
        var index = 0
        while index < count {
            let byte = link[index]
            guard Self.isURLByte(byte) else { throw byte < 0x20 || byte == 0x7F ? .controlCharacter : .invalidCharacter(offset: index) }
            if byte == UInt8(ascii: "%"), end == count {
                guard index + 2 < count, hexValue(link[index + 1]) != nil, hexValue(link[index + 2]) != nil else {
                    throw .invalidPercentEncoding
                }
                index += 3
                continue
            }
            if byte == UInt8(ascii: "#"), end == count { end = index }
            index += 1
        }
        // RFC 3986 §3.1: scheme = ALPHA *( ALPHA / DIGIT / "+" / "-" / "." ), compared case-insensitively.
        var cursor = 0
        guard isASCIIAlphanumeric(link[0]), !isDigit(link[0]) else { throw .missingScheme }
        while cursor < end, link[cursor] != UInt8(ascii: ":") {
            let byte = link[cursor]
            guard isASCIIAlphanumeric(byte) || byte == UInt8(ascii: "+") || byte == UInt8(ascii: "-") || byte == UInt8(ascii: ".")
            else { throw .missingScheme }
            cursor += 1
        }
        guard cursor < end else { throw .missingScheme }
        let scheme = UnsafeBufferPointer(rebasing: link[0..<cursor])
        cursor += 1
        let hasAuthority = cursor + 1 < end && link[cursor] == UInt8(ascii: "/") && link[cursor + 1] == UInt8(ascii: "/")
        var authority = cursor..<cursor
        if hasAuthority {
            cursor += 2
            let start = cursor
            while cursor < end, link[cursor] != UInt8(ascii: "/"), link[cursor] != UInt8(ascii: "?") { cursor += 1 }
            authority = start..<cursor
            // Userinfo is a classic way to disguise a link's real host.
            for position in authority where link[position] == UInt8(ascii: "@") { throw .userinfo }
        }
        var segmentCount = 0
        var written = 0
        let origin: Int
        if Self.equalsIgnoringCase(scheme, "https") {
            guard hasAuthority, !authority.isEmpty else { throw .missingHost }
            origin = try hostIndex(link, authority)
        } else {
            guard let schemeIndex = schemes.firstIndex(where: { Self.equalsIgnoringCase(scheme, $0) }) else {
                throw .undeclaredScheme(String(decoding: scheme, as: UTF8.self).lowercased())
            }
            origin = hosts.count + schemeIndex
            // A custom-scheme link's host is its first path segment: shop://product/p1 ≡ https://shop.example/product/p1.
            // So it is read as one: a port or brackets (`shop://product:80/x`, `shop://[x]/y`) have no meaning there.
            for position in authority where [UInt8(ascii: ":"), UInt8(ascii: "["), UInt8(ascii: "]")].contains(link[position]) {
                throw .customAuthority
            }
            if !authority.isEmpty {
                try Self.decodeSegment(link, authority, into: decoded, at: &written, ranges: ranges, count: &segmentCount)
            }
        }
        var segmentStart = cursor
        while cursor <= end {
            let atBoundary = cursor == end || link[cursor] == UInt8(ascii: "/") || link[cursor] == UInt8(ascii: "?")
            if atBoundary {
                if cursor > segmentStart {
                    try Self.decodeSegment(link, segmentStart..<cursor, into: decoded, at: &written, ranges: ranges, count: &segmentCount)
                }
                if cursor == end || link[cursor] == UInt8(ascii: "?") { break }
                segmentStart = cursor + 1
            }
            cursor += 1
        }
        var query = end..<end
        if cursor < end, link[cursor] == UInt8(ascii: "?") {
            query = (cursor + 1)..<end
            try Self.checkQuery(link, query, spare: UnsafeMutableBufferPointer(rebasing: decoded[written...]))
        }
        return Parsed(origin: origin, segmentCount: segmentCount, query: query)
    }

    /// A declared host, with no port or port 443; anything else is not a link for this app.
    private func hostIndex(_ link: UnsafeBufferPointer<UInt8>, _ authority: Range<Int>) throws(LinkDefect) -> Int {
        var hostEnd = authority.upperBound
        if let colon = authority.lastIndex(where: { link[$0] == UInt8(ascii: ":") }) {
            let port = UnsafeBufferPointer(rebasing: link[(colon + 1)..<authority.upperBound])
            let is443 = port.count == 3 && port[0] == UInt8(ascii: "4") && port[1] == UInt8(ascii: "4") && port[2] == UInt8(ascii: "3")
            guard is443 else { throw .unexpectedPort(String(decoding: port, as: UTF8.self)) }
            hostEnd = colon
        }
        let host = UnsafeBufferPointer(rebasing: link[authority.lowerBound..<hostEnd])
        guard let index = hosts.firstIndex(where: { Self.equalsIgnoringCase(host, $0) }) else {
            throw .undeclaredHost(String(decoding: host, as: UTF8.self).lowercased())
        }
        return index
    }

    /// Percent-decodes one raw segment (RFC 3986 §2.1, after splitting, so `%2F` never
    /// splits) and rejects what decodes to a control character, invalid UTF-8, `.` or `..`.
    private static func decodeSegment(
        _ link: UnsafeBufferPointer<UInt8>, _ raw: Range<Int>, into decoded: UnsafeMutableBufferPointer<UInt8>,
        at written: inout Int, ranges: UnsafeMutableBufferPointer<Range<Int>>, count: inout Int
    ) throws(LinkDefect) {
        let start = written
        var hasHighBytes = false
        var index = raw.lowerBound
        while index < raw.upperBound {
            var byte = link[index]
            if byte == UInt8(ascii: "%") {
                byte = hexValue(link[index + 1])! << 4 | hexValue(link[index + 2])!
                guard byte >= 0x20, byte != 0x7F else { throw .controlCharacter }
                if byte >= 0x80 { hasHighBytes = true }
                index += 3
            } else {
                index += 1
            }
            decoded[written] = byte
            written += 1
        }
        let segment = UnsafeBufferPointer(rebasing: decoded[start..<written])
        if hasHighBytes {
            guard let text = String(validating: segment, as: UTF8.self) else { throw .invalidUTF8 }
            if text.unicodeScalars.contains(where: isInvisibleControl) { throw .controlCharacter }
        }
        // RFC 3986 §5.2.4 would remove dot-segments; a link that relies on that is hiding something.
        let dot = UInt8(ascii: ".")
        if (segment.count == 1 && segment[0] == dot) || (segment.count == 2 && segment[0] == dot && segment[1] == dot) {
            throw .dotSegment
        }
        ranges[count] = start..<written
        count += 1
    }

    /// Every query item's name and value must decode to UTF-8 text without control characters.
    /// Only a component with an escape of a non-ASCII byte needs decoding to check it; that
    /// decoding goes into `spare`, the unused tail of the segment scratch buffer.
    private static func checkQuery(
        _ link: UnsafeBufferPointer<UInt8>, _ query: Range<Int>, spare: UnsafeMutableBufferPointer<UInt8>
    ) throws(LinkDefect) {
        var componentStart = query.lowerBound
        var hasHighBytes = false
        var index = query.lowerBound
        while index <= query.upperBound {
            if index == query.upperBound || link[index] == UInt8(ascii: "&") || link[index] == UInt8(ascii: "=") {
                if hasHighBytes {
                    var written = 0
                    var cursor = componentStart
                    while cursor < index {
                        if link[cursor] == UInt8(ascii: "%") {
                            spare[written] = hexValue(link[cursor + 1])! << 4 | hexValue(link[cursor + 2])!
                            cursor += 3
                        } else {
                            spare[written] = link[cursor]
                            cursor += 1
                        }
                        written += 1
                    }
                    guard let text = String(validating: UnsafeBufferPointer(rebasing: spare[0..<written]), as: UTF8.self) else {
                        throw .invalidUTF8
                    }
                    if text.unicodeScalars.contains(where: isInvisibleControl) { throw .controlCharacter }
                }
                hasHighBytes = false
                index += 1
                componentStart = index
                continue
            }
            if link[index] == UInt8(ascii: "%") {
                let value = hexValue(link[index + 1])! << 4 | hexValue(link[index + 2])!
                guard value >= 0x20, value != 0x7F else { throw .controlCharacter }
                if value >= 0x80 { hasHighBytes = true }
                index += 3
            } else {
                index += 1
            }
        }
    }

    /// The decoded value of the first query item named `name`; `+` is a space (HTML form
    /// encoding, which is how web links are written). Empty values count as absent.
    static func queryValue(_ link: UnsafeBufferPointer<UInt8>, _ query: Range<Int>, named name: [UInt8]) -> String? {
        var itemStart = query.lowerBound
        while itemStart < query.upperBound {
            var itemEnd = itemStart
            while itemEnd < query.upperBound, link[itemEnd] != UInt8(ascii: "&") { itemEnd += 1 }
            let equals = (itemStart..<itemEnd).first { link[$0] == UInt8(ascii: "=") } ?? itemEnd
            if decodeQueryComponent(link, itemStart..<equals) == name {
                let value = equals < itemEnd ? decodeQueryComponent(link, (equals + 1)..<itemEnd) : []
                return value.isEmpty ? nil : String(decoding: value, as: UTF8.self)
            }
            itemStart = itemEnd + 1
        }
        return nil
    }

    private static func decodeQueryComponent(_ link: UnsafeBufferPointer<UInt8>, _ range: Range<Int>) -> [UInt8] {
        var bytes: [UInt8] = []
        bytes.reserveCapacity(range.count)
        var index = range.lowerBound
        while index < range.upperBound {
            switch link[index] {
            case UInt8(ascii: "%"):
                bytes.append(hexValue(link[index + 1])! << 4 | hexValue(link[index + 2])!)
                index += 3
            case UInt8(ascii: "+"):
                bytes.append(UInt8(ascii: " "))
                index += 1
            case let byte:
                bytes.append(byte)
                index += 1
            }
        }
        return bytes
    }

    /// RFC 3986 unreserved, reserved and `%`: everything else (space, `"<>\^`{|}`,
    /// controls, raw non-ASCII) must be percent-encoded, as every platform's URL type does.
    @inline(__always)
    static func isURLByte(_ byte: UInt8) -> Bool {
        byte < 64 ? urlBytesBelow64 & (1 << UInt64(byte)) != 0
            : byte < 128 && urlBytesFrom64 & (1 << UInt64(byte - 64)) != 0
    }

    /// Bit b set when byte b (or 64 + b) is one of `urlCharacters`; checked against it by a test.
    static let urlBytesBelow64: UInt64 = 0xAFFFFFFA00000000
    static let urlBytesFrom64: UInt64 = 0x47FFFFFEAFFFFFFF
    static let urlCharacters = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-._~:/?#[]@!$&'()*+,;=%"

    static func equalsIgnoringCase(_ bytes: UnsafeBufferPointer<UInt8>, _ lowercased: some Collection<UInt8>) -> Bool {
        guard bytes.count == lowercased.count else { return false }
        return zip(bytes, lowercased).allSatisfy { lowercaseASCII($0) == $1 }
    }

    static func equalsIgnoringCase(_ bytes: UnsafeBufferPointer<UInt8>, _ lowercased: StaticString) -> Bool {
        equalsIgnoringCase(bytes, UnsafeBufferPointer(start: lowercased.utf8Start, count: lowercased.utf8CodeUnitCount))
    }
}

/// Beyond ASCII's controls (refused as bytes), the scalars a link may not decode to: the C1
/// controls U+0080–U+009F, the line and paragraph separators U+2028 and U+2029, and the
/// bidirectional formatting characters U+061C, U+200E, U+200F, U+202A–U+202E and
/// U+2066–U+2069 — invisible characters that change how a value reads or prints.
func isInvisibleControl(_ scalar: Unicode.Scalar) -> Bool {
    switch scalar.value {
    case 0x80...0x9F, 0x061C, 0x200E, 0x200F, 0x2028, 0x2029, 0x202A...0x202E, 0x2066...0x2069: true
    default: false
    }
}

@inline(__always) func lowercaseASCII(_ byte: UInt8) -> UInt8 {
    byte >= UInt8(ascii: "A") && byte <= UInt8(ascii: "Z") ? byte | 0x20 : byte
}

/// The rule a `malformed` link breaks, for people previewing links.
public enum LinkDefect: Error, Hashable, Sendable, CustomStringConvertible {
    case empty
    case tooLong
    case controlCharacter
    case invalidCharacter(offset: Int)
    case invalidPercentEncoding
    case invalidUTF8
    case missingScheme
    case undeclaredScheme(String)
    case missingHost
    case userinfo
    case undeclaredHost(String)
    case unexpectedPort(String)
    case dotSegment
    case customAuthority

    public var description: String {
        switch self {
        case .empty: "The link is empty."
        case .tooLong: "The link is longer than \(LinkParser.maximumLength) bytes."
        case .controlCharacter: "The link contains a control character, a line separator or a bidirectional formatting character."
        case .invalidCharacter(let offset): "The link contains a character that must be percent-encoded (byte \(offset))."
        case .invalidPercentEncoding: "The link contains a % that is not followed by two hexadecimal digits."
        case .invalidUTF8: "The link's percent-encoding does not decode to valid UTF-8 text."
        case .missingScheme: "The link does not start with a scheme such as https:."
        case .undeclaredScheme(let scheme): "The app does not answer \(scheme): links."
        case .missingHost: "The https link has no host."
        case .userinfo: "The link contains a user name (an @ before the host)."
        case .undeclaredHost(let host): "The app does not answer links on \(host)."
        case .unexpectedPort(let port): "The link names port \(port.isEmpty ? "(empty)" : port); only 443 or none is the app's."
        case .dotSegment: "The link contains a . or .. path segment."
        case .customAuthority: "The link's first part after scheme:// holds a port or brackets; in a custom-scheme link it is a path segment."
        }
    }
}
