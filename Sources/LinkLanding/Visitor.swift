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
        self = userAgent.withUTF8 { Self(userAgent: $0) }
    }

    /// The same, from the field's bytes (as a server holds them).
    public init(userAgent bytes: UnsafeBufferPointer<UInt8>) {
        self = Self.classify(UnsafeBufferPointer(rebasing: bytes.prefix(Self.scannedBytes)))
    }

    /// Real user agents are a few hundred bytes; the head parser bounds the field anyway.
    public static let scannedBytes = 512

    /// One pass: each place where a word of the rules can start (`an`, `ip`, `wi`, without
    /// case) is checked for the words it starts; the first rule that matches anywhere wins.
    /// The places are found eight at a time (a zero-byte test on each word and the word one
    /// byte on, XORed with the pair's letters), so the bytes in between cost nothing each.
    /// - Complexity: O(bytes); each check reads at most 13 bytes.
    static func classify(_ bytes: UnsafeBufferPointer<UInt8>) -> Visitor {
        var found = Found()
        let ones: UInt64 = 0x0101_0101_0101_0101, highs: UInt64 = 0x8080_8080_8080_8080, lower: UInt64 = 0x2020_2020_2020_2020
        @inline(__always) func zeros(_ x: UInt64) -> UInt64 { (x &- ones) & ~x & highs }
        @inline(__always) func spread(_ letter: Unicode.Scalar) -> UInt64 { ones &* UInt64(letter.value) }
        let (a, n, i, p, w) = (spread("a"), spread("n"), spread("i"), spread("p"), spread("w"))
        var start = 0
        if let base = bytes.baseAddress {
            let raw = UnsafeRawPointer(base)
            // Each byte with the one after it: the words start `an`, `ip` or `wi`.
            while start + 9 <= bytes.count {
                let first = UInt64(littleEndian: raw.loadUnaligned(fromByteOffset: start, as: UInt64.self)) | lower
                let second = UInt64(littleEndian: raw.loadUnaligned(fromByteOffset: start + 1, as: UInt64.self)) | lower
                // May flag a byte past a real pair (a borrow); never misses one: the check rejects the extra.
                var candidates = zeros(first ^ a) & zeros(second ^ n) | zeros(first ^ i) & zeros(second ^ p) | zeros(first ^ w) & zeros(second ^ i)
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
