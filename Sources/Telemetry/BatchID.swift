/// A 128-bit value a client writes as 32 lowercase hex digits: a batch's id (`batch`) or
/// the install's source key for the day (`client.source`). Two words, compared and hashed
/// as such; the text form is never kept.
public struct HexID: Hashable, Sendable, Comparable, CustomStringConvertible {
    public var high: UInt64
    public var low: UInt64

    public init(high: UInt64, low: UInt64) {
        (self.high, self.low) = (high, low)
    }

    /// Exactly 32 digits `0-9a-f`; nil for anything else (upper case included: one spelling
    /// per value, so two spellings of one id can never be two ids).
    public init?<Bytes: Collection>(hex bytes: Bytes) where Bytes.Element == UInt8 {
        guard bytes.count == 32 else { return nil }
        var words: (UInt64, UInt64) = (0, 0)
        for (index, byte) in bytes.enumerated() {
            let digit: UInt64
            switch byte {
            case 0x30...0x39: digit = UInt64(byte - 0x30)
            case 0x61...0x66: digit = UInt64(byte - 0x61 + 10)
            default: return nil
            }
            if index < 16 { words.0 = words.0 << 4 | digit } else { words.1 = words.1 << 4 | digit }
        }
        (high, low) = words
    }

    public var description: String {
        func hex(_ word: UInt64) -> String {
            let digits = String(word, radix: 16)
            return String(repeating: "0", count: 16 - digits.count) + digits
        }
        return hex(high) + hex(low)
    }

    public static func < (lhs: HexID, rhs: HexID) -> Bool { (lhs.high, lhs.low) < (rhs.high, rhs.low) }
}
