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
/// 3. A segment is kept — lowercased — only when it is a word: one or two parts of 1 to 11
///    ASCII letters joined by one `-` or `_` (`sale`, `spring-sale`), each part in lower case
///    or capitalised; a part of four letters or more has a vowel (`aeiouy`) in one letter of
///    seven and no run of five consonants. Anything else becomes `:param`: digits anywhere (ids, prices, dates,
///    phone numbers), UUIDs, e-mail addresses, any percent-escape (a username written
///    `%6A%61…`), tokens (mixed case, all capitals, runs of 12 letters or more, text with
///    too few vowels), names of three parts or more (`mary-ann_smith-jones`), non-ASCII text
///    — whatever it is, it is not kept.
/// 4. Repeated `:param`s stay (they are structure: `/orders/:param/items/:param`); at most
///    `maximumSegments` segments are kept, the rest becomes one `*`.
/// 5. Query values are dropped always; a query item's name is kept only when it is on the
///    allow list (by default the `utm_` campaign names), sorted, each once.
///
/// So a shape is at most 8 × 24 bytes of path plus the allowed names: bounded whatever a
/// client or a scanner sends.
public struct LinkShape: Hashable, Sendable, Comparable, CustomStringConvertible {
    public let path: String
    public let queryNames: [String]

    public static let maximumSegments = 8
    public static let maximumWordLength = 23
    /// The longest part of a word, in letters: a longer run reads as a token or a name.
    public static let maximumPartLength = 11
    public static let defaultAllowedQueryNames: Set<String> = ["utm_source", "utm_medium", "utm_campaign", "utm_content", "utm_term"]

    public init(path: String, queryNames: [String] = []) {
        self.path = path
        self.queryNames = queryNames
    }

    public var description: String { queryNames.isEmpty ? path : path + "?" + queryNames.joined(separator: "&") }

    public static func < (lhs: LinkShape, rhs: LinkShape) -> Bool { lhs.description < rhs.description }

    /// The shape of `link`: an absolute URL (`https://host/path?q`), or a path (`/path?q`).
    /// With a `vocabulary` (lowercased words; an app passes its route table's literals,
    /// `Resolver.vocabulary`), a word is kept only when it is one of them: a segment that is a
    /// plain word and also personal (`/u/janedoe`, `/profile/maria-garcia`) never leaves the
    /// phone. Without one (a landing the server saw itself), every word is kept.
    public init(link: String, allowedQueryNames: Set<String> = LinkShape.defaultAllowedQueryNames, vocabulary: Set<String>? = nil) {
        // Bytes of UTF-8 throughout, every delimiter an ASCII byte (so a port splits the same
        // link the same way, whatever its text type: a combining mark after a `/` does not
        // hide the `/`).
        let bytes = Array(link.utf8)
        var rest = bytes[...]
        if let fragment = rest.firstIndex(of: 0x23) { rest = rest[..<fragment] }  // #
        var query: ArraySlice<UInt8> = []
        if let mark = rest.firstIndex(of: 0x3F) {  // ?
            query = rest[(mark + 1)...]
            rest = rest[..<mark]
        }
        // An absolute link (RFC 3986 scheme: ASCII letters, digits, + - .): drop the scheme;
        // an http(s) link's authority (host, port, user information) goes too, while a custom
        // scheme's is its first path segment, as the engine reads it (`shop://product/p1` ≡
        // `/product/p1`), without user information or port.
        var path: [ArraySlice<UInt8>] = []
        if let colon = rest.firstIndex(of: 0x3A), colon > rest.startIndex,
           rest[..<colon].allSatisfy({ Self.isASCIILetter($0) || (0x30...0x39).contains($0) || $0 == 0x2B || $0 == 0x2D || $0 == 0x2E }) {
            let scheme = String(decoding: rest[..<colon].map(Self.asciiLowercased), as: UTF8.self)
            rest = rest[(colon + 1)...]
            if rest.starts(with: [0x2F, 0x2F]) {
                rest = rest.dropFirst(2)
                let end = rest.firstIndex(of: 0x2F) ?? rest.endIndex
                var authority = rest[..<end]
                rest = rest[end...]
                if scheme != "http", scheme != "https" {
                    if let at = authority.lastIndex(of: 0x40) { authority = authority[(at + 1)...] }
                    if let port = authority.firstIndex(of: 0x3A) { authority = authority[..<port] }
                    path.append(authority)
                }
            }
        }
        path += rest.split(separator: 0x2F, omittingEmptySubsequences: true)
        var segments: [String] = []
        for raw in path where !raw.isEmpty {
            if raw.elementsEqual([0x2E]) { continue }
            if raw.elementsEqual([0x2E, 0x2E]) {
                if !segments.isEmpty { segments.removeLast() }
                continue
            }
            let segment = Self.segment(raw)
            let known = segment == ":param" || (vocabulary.map { $0.contains(segment) } ?? true)
            segments.append(known ? segment : ":param")
        }
        if segments.count > Self.maximumSegments { segments = Array(segments.prefix(Self.maximumSegments)) + ["*"] }
        self.path = "/" + segments.joined(separator: "/")
        var names = Set<String>()
        for item in query.split(separator: 0x26) {  // &
            let name = item.split(separator: 0x3D, maxSplits: 1, omittingEmptySubsequences: false).first ?? []
            // Names on the allow list are ASCII: lowercased as ASCII (no other text lowercases into one).
            if let decoded = Self.percentDecodedBytes(name) {
                let lowered = String(decoding: decoded.map(Self.asciiLowercased), as: UTF8.self)
                if allowedQueryNames.contains(lowered) { names.insert(lowered) }
            }
        }
        queryNames = names.sorted()
    }

    static func isASCIILetter(_ byte: UInt8) -> Bool { (0x41...0x5A).contains(byte) || (0x61...0x7A).contains(byte) }
    static func asciiLowercased(_ byte: UInt8) -> UInt8 { (0x41...0x5A).contains(byte) ? byte + 0x20 : byte }

    /// A word (kept, lowercased) or `:param`.
    static func segment(_ raw: ArraySlice<UInt8>) -> String {
        // Whatever an escape spells, a path written with one is not a plain word; a word is
        // ASCII letters, `-` and `_` alone, so it is its own bytes.
        guard !raw.contains(0x25), isWord(raw) else { return ":param" }
        return String(decoding: raw.map(asciiLowercased), as: UTF8.self)
    }

    /// One or two parts of 1 to 11 ASCII letters joined by one `-` or `_`; each part in
    /// lower case or capitalised (`sale`, `spring-sale`, `Sale`, `New_Arrivals`), not all
    /// capitals past one letter (`KXQZ`), not mixed (`aBcDeF`), and a part of four letters
    /// or more has a vowel in at least one letter of seven and no run of five consonants
    /// (`kxqzvt` is not a word).
    static func isWord(_ bytes: ArraySlice<UInt8>) -> Bool {
        guard (1...maximumWordLength).contains(bytes.count) else { return false }
        let parts = bytes.split(separator: 0x2D, omittingEmptySubsequences: false).flatMap {
            $0.split(separator: 0x5F, omittingEmptySubsequences: false)
        }
        guard parts.count <= 2 else { return false }
        return parts.allSatisfy(isPart)
    }

    static func isPart(_ part: ArraySlice<UInt8>) -> Bool {
        func isUpper(_ byte: UInt8) -> Bool { (0x41...0x5A).contains(byte) }
        func isLower(_ byte: UInt8) -> Bool { (0x61...0x7A).contains(byte) }
        guard (1...maximumPartLength).contains(part.count), part.allSatisfy({ isUpper($0) || isLower($0) }) else { return false }
        // Lower case, or capitalised: a capital past the first letter reads as a token.
        guard part.dropFirst().allSatisfy(isLower) else { return false }
        // Text with too few vowels reads as a token: a part of four letters or more needs a
        // vowel, one in every seven letters at least, and no run of five consonants.
        guard part.count >= 4 else { return true }
        var vowels = 0, run = 0
        for byte in part {
            if "aeiouyAEIOUY".utf8.contains(byte) { vowels += 1; run = 0 } else { run += 1 }
            if run >= 5 { return false }
        }
        return vowels > 0 && vowels * 7 >= part.count
    }

    /// Percent-decoded bytes; nil for a bad escape.
    static func percentDecodedBytes(_ text: ArraySlice<UInt8>) -> [UInt8]? {
        var bytes: [UInt8] = []
        var iterator = text.makeIterator()
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
        return bytes
    }
}
