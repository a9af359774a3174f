/// The shape of a link that resolved to nothing: what is left of it once anything that
/// could name a person, an account or an order is gone, so unknown links can be counted
/// and shown to marketing without keeping the links themselves (`docs/link-shapes.md`).
///
/// The rules, in order:
/// 1. Scheme, user information, port and fragment are dropped, and an http(s) link's host;
///    a custom scheme's host is its first path segment, as the engine reads it. The path is
///    taken up to `?` or `#`.
/// 2. The path is split on `/`; empty segments and `.` are dropped, `..` removes the
///    segment before it (RFC 3986 §5.2.4), so `/a/../b` and `/b` are one shape.
/// 3. Each segment is percent-decoded. It is kept — lowercased — only when it is a word:
///    1 to 24 ASCII letters, with single `-` or `_` between letters (`spring-sale`).
///    Anything else becomes `:param`: digits anywhere (ids, prices, dates, phone numbers),
///    UUIDs, e-mail addresses, tokens, mixed-case or over-long runs of letters, non-ASCII
///    text, a bad escape or invalid UTF-8 — whatever it is, it is not kept.
/// 4. Repeated `:param`s stay (they are structure: `/orders/:param/items/:param`); at most
///    `maximumSegments` segments are kept, the rest becomes one `*`.
/// 5. Query values are dropped always; a query item's name is kept only when it is on the
///    allow list (by default the `utm_` campaign names), sorted, each once.
///
/// So a shape is at most 8 × 25 bytes of path plus the allowed names: bounded whatever a
/// client or a scanner sends.
public struct LinkShape: Hashable, Sendable, Comparable, CustomStringConvertible {
    public let path: String
    public let queryNames: [String]

    public static let maximumSegments = 8
    public static let maximumWordLength = 24
    public static let defaultAllowedQueryNames: Set<String> = ["utm_source", "utm_medium", "utm_campaign", "utm_content", "utm_term"]

    public init(path: String, queryNames: [String] = []) {
        self.path = path
        self.queryNames = queryNames
    }

    public var description: String { queryNames.isEmpty ? path : path + "?" + queryNames.joined(separator: "&") }

    public static func < (lhs: LinkShape, rhs: LinkShape) -> Bool { lhs.description < rhs.description }

    /// The shape of `link`: an absolute URL (`https://host/path?q`), or a path (`/path?q`).
    public init(link: String, allowedQueryNames: Set<String> = LinkShape.defaultAllowedQueryNames) {
        var rest = Substring(link)
        if let fragment = rest.firstIndex(of: "#") { rest = rest[..<fragment] }
        var query: Substring = ""
        if let mark = rest.firstIndex(of: "?") {
            query = rest[rest.index(after: mark)...]
            rest = rest[..<mark]
        }
        // An absolute link: drop the scheme; an http(s) link's authority (host, port, user
        // information) goes too, while a custom scheme's is its first path segment, as the
        // engine reads it (`shop://product/p1` ≡ `/product/p1`), without user information or port.
        if let colon = rest.firstIndex(of: ":"), rest[..<colon].allSatisfy({ $0.isLetter || $0.isNumber || "+-.".contains($0) }),
           !rest[..<colon].isEmpty {
            let scheme = rest[..<colon].lowercased()
            rest = rest[rest.index(after: colon)...]
            if rest.hasPrefix("//") {
                rest = rest.dropFirst(2)
                let end = rest.firstIndex(of: "/") ?? rest.endIndex
                var authority = rest[..<end]
                rest = rest[end...]
                if scheme != "http", scheme != "https" {
                    if let at = authority.lastIndex(of: "@") { authority = authority[authority.index(after: at)...] }
                    if let port = authority.firstIndex(of: ":") { authority = authority[..<port] }
                    rest = Substring("/" + authority + rest)
                }
            }
        }
        var segments: [String] = []
        for raw in rest.split(separator: "/", omittingEmptySubsequences: true) {
            switch raw {
            case ".": continue
            case "..": if !segments.isEmpty { segments.removeLast() }
            default: segments.append(Self.segment(raw))
            }
        }
        if segments.count > Self.maximumSegments { segments = Array(segments.prefix(Self.maximumSegments)) + ["*"] }
        path = "/" + segments.joined(separator: "/")
        var names = Set<String>()
        for item in query.split(separator: "&") {
            let name = item.split(separator: "=", maxSplits: 1, omittingEmptySubsequences: false).first.map(String.init) ?? ""
            if let decoded = Self.percentDecoded(Substring(name))?.lowercased(), allowedQueryNames.contains(decoded) { names.insert(decoded) }
        }
        queryNames = names.sorted()
    }

    /// A word (kept, lowercased) or `:param`.
    static func segment(_ raw: Substring) -> String {
        guard let decoded = percentDecoded(raw), isWord(decoded) else { return ":param" }
        return decoded.lowercased()
    }

    /// 1 to 24 ASCII letters, single `-` or `_` between letters, one case (or only the first
    /// letter capitalised): `sale`, `spring-sale`, `New_Arrivals`, `Sale`. Not `aBcDeF`.
    static func isWord(_ text: String) -> Bool {
        let bytes = Array(text.utf8)
        guard (1...maximumWordLength).contains(bytes.count) else { return false }
        func isLetter(_ byte: UInt8) -> Bool { (0x41...0x5A).contains(byte) || (0x61...0x7A).contains(byte) }
        func isUpper(_ byte: UInt8) -> Bool { (0x41...0x5A).contains(byte) }
        guard isLetter(bytes.first!), isLetter(bytes.last!) else { return false }
        for (index, byte) in bytes.enumerated() {
            if isLetter(byte) { continue }
            guard byte == 0x2D || byte == 0x5F, isLetter(bytes[index - 1]), isLetter(bytes[index + 1]) else { return false }
        }
        // Mixed case past the first letter of each word reads as a token (`aZ3…` without the digit).
        let letters = bytes.filter(isLetter)
        let upper = letters.filter(isUpper).count
        if upper == letters.count { return true }
        let wordStarts = bytes.indices.filter { $0 == 0 || bytes[$0 - 1] == 0x2D || bytes[$0 - 1] == 0x5F }
        return bytes.indices.allSatisfy { !isUpper(bytes[$0]) || wordStarts.contains($0) }
    }

    /// Percent-decoded as UTF-8; nil for a bad escape or bytes that are not UTF-8.
    static func percentDecoded(_ text: Substring) -> String? {
        var bytes: [UInt8] = []
        var iterator = Array(text.utf8).makeIterator()
        func hex(_ byte: UInt8) -> UInt8? {
            switch byte {
            case 0x30...0x39: byte - 0x30
            case 0x41...0x46: byte - 0x37
            case 0x61...0x66: byte - 0x57
            default: nil
            }
        }
        while let byte = iterator.next() {
            if byte == 0x25 {
                guard let high = iterator.next().flatMap(hex), let low = iterator.next().flatMap(hex) else { return nil }
                bytes.append(high << 4 | low)
            } else {
                bytes.append(byte)
            }
        }
        return String(validating: bytes, as: UTF8.self)
    }
}
