import RouteEngine
import Testing

@Suite("SHA-256")
struct SHA256Tests {
    /// FIPS 180-4 examples and NIST CAVP short/long messages (SHA256ShortMsg, SHA256LongMsg).
    static let vectors: [(String, String)] = [
        ("", "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855"),
        ("abc", "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad"),
        ("abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq",  // 448 bits: padding spills into a second block
         "248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1"),
        ("abcdefghbcdefghicdefghijdefghijkefghijklfghijklmghijklmnhijklmnoijklmnopjklmnopqklmnopqrlmnopqrsmnopqrstnopqrstu",
         "cf5b16a778af8380036ce59e7b0492370b249b11e8f07a51afac45037afee9d1"),
        ("The quick brown fox jumps over the lazy dog", "d7a8fbb307d7809469ca9abcb0082e4f8d5651e46d3cdb762d02d0bf37c9e592"),
    ]

    @Test(arguments: vectors)
    func knownAnswers(message: String, digest: String) {
        #expect(SHA256.hex(Array(message.utf8)) == digest)
    }

    @Test func oneMillionAs() {
        #expect(SHA256.hex([UInt8](repeating: UInt8(ascii: "a"), count: 1_000_000))
            == "cdc76e5c9914fb9281a1c7e284d73e67f1809a48a497200e046d39ccc7112cd0")
    }

    /// Every split of a message into two updates gives the digest of the whole, across the
    /// 55/56/64-byte padding boundaries.
    @Test func incrementalUpdatesMatchOneShot() {
        for length in [0, 1, 55, 56, 57, 63, 64, 65, 127, 128, 129, 200] {
            let message = (0..<length).map { UInt8(truncatingIfNeeded: $0 &* 31 &+ 7) }
            let whole = SHA256.hash(message)
            for split in 0...length {
                var hasher = SHA256()
                hasher.update(Array(message[..<split]))
                hasher.update(message[split...])  // the Sequence path
                #expect(hasher.finalize() == whole, "length \(length) split \(split)")
            }
        }
    }

    @Test func hexRoundTrips() {
        let bytes: [UInt8] = [0, 1, 0x7f, 0x80, 0xab, 0xff]
        #expect(bytes.hexString == "00017f80abff")
        #expect([UInt8](hex: "00017f80abff") == bytes)
        #expect([UInt8](hex: "00017F80ABFF") == bytes)
        #expect([UInt8](hex: "") == [])
        for bad in ["0", "0g", "+f", " 0", "0x00"] { #expect([UInt8](hex: bad) == nil, "\(bad)") }
    }

    @Test func constantTimeComparison() {
        #expect(constantTimeEquals([1, 2, 3], [1, 2, 3]))
        #expect(!constantTimeEquals([1, 2, 3], [1, 2, 4]))
        #expect(!constantTimeEquals([1, 2, 3], [1, 2]))
        #expect(constantTimeEquals([], []))
    }
}
