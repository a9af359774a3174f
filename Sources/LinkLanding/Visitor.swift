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
        guard var userAgent else {
            self = .other
            return
        }
        self = userAgent.withUTF8 { Self.classify(UnsafeBufferPointer(rebasing: $0.prefix(Self.scannedBytes))) }
    }

    /// Real user agents are a few hundred bytes; the head parser bounds the field anyway.
    public static let scannedBytes = 512

    /// One pass: each byte that can start a word of the rules (`a`, `i`, `w`, without case)
    /// is checked for the words it starts; the first rule that matches anywhere wins. The
    /// candidates are found eight bytes at a time (a zero-byte test on the word XORed with
    /// each letter), so the bytes in between cost nothing each.
    /// - Complexity: O(bytes); each check reads at most 13 bytes.
    static func classify(_ bytes: UnsafeBufferPointer<UInt8>) -> Visitor {
        var found = Found()
        let ones: UInt64 = 0x0101_0101_0101_0101, highs: UInt64 = 0x8080_8080_8080_8080
        let a = ones &* UInt64(UInt8(ascii: "a")), i = ones &* UInt64(UInt8(ascii: "i")), w = ones &* UInt64(UInt8(ascii: "w"))
        var start = 0
        if let base = bytes.baseAddress {
            let raw = UnsafeRawPointer(base)
            while start + 8 <= bytes.count {
                let lower = UInt64(littleEndian: raw.loadUnaligned(fromByteOffset: start, as: UInt64.self)) | 0x2020_2020_2020_2020
                let (xa, xi, xw) = (lower ^ a, lower ^ i, lower ^ w)
                // A zero byte in x is a candidate; the test may flag a byte past a real one, which the check rejects.
                var candidates = ((xa &- ones) & ~xa | (xi &- ones) & ~xi | (xw &- ones) & ~xw) & highs
                while candidates != 0 {
                    if found.check(bytes, at: start + candidates.trailingZeroBitCount / 8) { return .other }
                    candidates &= candidates &- 1
                }
                start += 8
            }
        }
        while start < bytes.count {
            if found.check(bytes, at: start) { return .other }
            start += 1
        }
        return found.android ? .android : found.apple ? .ios : .other
    }

    /// The words seen so far.
    private struct Found {
        var android = false, apple = false

        /// Notes the word at `start`; true when it decides the rules (`windows phone`).
        mutating func check(_ bytes: UnsafeBufferPointer<UInt8>, at start: Int) -> Bool {
            switch bytes[start] | 0x20 {
            case UInt8(ascii: "w"): return word(bytes, at: start, "windows phone")
            case UInt8(ascii: "a"): if !android { android = word(bytes, at: start, "android") }
            case UInt8(ascii: "i"):
                if !apple { apple = word(bytes, at: start, "iphone") || word(bytes, at: start, "ipad") || word(bytes, at: start, "ipod") }
            default: break
            }
            return false
        }
    }

    /// Whether `needle` (lowercase ASCII) stands in `bytes` at `start`, ASCII letters folded.
    static func word(_ bytes: UnsafeBufferPointer<UInt8>, at start: Int, _ needle: StaticString) -> Bool {
        let count = needle.utf8CodeUnitCount
        guard bytes.count - start >= count else { return false }
        return needle.withUTF8Buffer { needle in
            for index in 0..<count {
                let byte = bytes[start + index]
                guard byte | (isUpper(byte) ? 0x20 : 0) == needle[index] else { return false }
            }
            return true
        }
    }

    private static func isUpper(_ byte: UInt8) -> Bool { byte >= 0x41 && byte <= 0x5A }
}
