/// Who opened a link in a browser, as far as Waymark can tell from `User-Agent` alone:
/// the platform whose app store and newest build a landing uses.
public enum Visitor: String, Hashable, Sendable, CaseIterable {
    case ios, android, other

    /// The rules, in order, over at most the first `scannedBytes` bytes of the field,
    /// letters compared without case:
    /// 1. `Windows Phone` is `other` (its browsers claim both Android and iPhone);
    /// 2. `Android` is `android`;
    /// 3. `iPhone`, `iPad` or `iPod` is `ios`;
    /// 4. anything else, or no `User-Agent`, is `other` (a desktop, a bot, an app's browser
    ///    that says nothing). iPadOS's Safari asks for desktop sites and says `Macintosh`,
    ///    so it lands as a desktop does.
    public init(userAgent: String?) {
        guard let userAgent else {
            self = .other
            return
        }
        let bytes = Array(userAgent.utf8.prefix(Self.scannedBytes))
        if Self.contains(bytes, "windows phone") { self = .other }
        else if Self.contains(bytes, "android") { self = .android }
        else if Self.contains(bytes, "iphone") || Self.contains(bytes, "ipad") || Self.contains(bytes, "ipod") { self = .ios }
        else { self = .other }
    }

    /// Real user agents are a few hundred bytes; the head parser bounds the field anyway.
    public static let scannedBytes = 512

    /// Whether `needle` (lowercase ASCII) occurs in `haystack`, ASCII letters folded.
    /// - Complexity: O(haystack × needle), both bounded.
    static func contains(_ haystack: [UInt8], _ needle: StaticString) -> Bool {
        let count = needle.utf8CodeUnitCount
        guard haystack.count >= count else { return false }
        return needle.withUTF8Buffer { needle in
            for start in 0...(haystack.count - count) {
                var index = 0
                while index < count, haystack[start + index] | (isUpper(haystack[start + index]) ? 0x20 : 0) == needle[index] { index += 1 }
                if index == count { return true }
            }
            return false
        }
    }

    private static func isUpper(_ byte: UInt8) -> Bool { byte >= 0x41 && byte <= 0x5A }
}
