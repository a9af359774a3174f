@testable import HTTPCore
import Testing

/// The word-at-a-time field-value check agrees with RFC 9110 §5.5 read byte by byte, for
/// every byte value at every offset of a word and on random values of every length.
@Suite("Field values, eight bytes at a time")
struct FieldValueTests {
    static func plain(_ bytes: [UInt8]) -> Bool { bytes.allSatisfy { ($0 >= 0x20 || $0 == 0x09) && $0 != 0x7F } }

    static func fast(_ bytes: [UInt8]) -> Bool { bytes.withUnsafeBufferPointer(isFieldValue) }

    @Test func everyByteAtEveryOffset() {
        for length in [1, 7, 8, 9, 16, 23] {
            for offset in 0..<length {
                for byte in 0...255 {
                    var value = [UInt8](repeating: UInt8(ascii: "a"), count: length)
                    value[offset] = UInt8(byte)
                    #expect(Self.fast(value) == Self.plain(value), "byte \(byte) at \(offset) of \(length)")
                }
            }
        }
    }

    @Test func randomValues() {
        var state: UInt64 = 0x5EED
        func next() -> UInt64 {
            state &+= 0x9E37_79B9_7F4A_7C15
            var z = state
            z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
            z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
            return z ^ (z >> 31)
        }
        // Mostly printable with a sprinkling of tabs, controls, DEL and obs-text.
        let pool: [UInt8] = Array(0x20...0x7E) + [0x09, 0x09, 0x00, 0x0A, 0x0D, 0x1F, 0x7F, 0x80, 0xC3, 0xFF]
        for _ in 0..<20_000 {
            let value = (0..<Int(next() % 40)).map { _ in next() % 50 == 0 ? pool[Int(next() % UInt64(pool.count))] : UInt8(0x20 + next() % 95) }
            #expect(Self.fast(value) == Self.plain(value), "\(value)")
        }
    }
}
