@testable import QRCode
import Testing

/// The encoder against the specification's worked examples and tables (ISO/IEC 18004):
/// Reed–Solomon codewords, format and version information, alignment positions,
/// capacities. `make test-qr` decodes whole symbols with a real decoder (zbarimg).
@Suite("QR codes")
struct QRCodeTests {
    @Test("Reed–Solomon: Annex I's 1-M symbol for \"01234567\" gets the error correction the standard lists")
    func reedSolomonWorkedExample() {
        let data: [UInt8] = [0x10, 0x20, 0x0C, 0x56, 0x61, 0x80, 0xEC, 0x11, 0xEC, 0x11, 0xEC, 0x11, 0xEC, 0x11, 0xEC, 0x11]
        let ecc = ReedSolomon.remainder(data, generator: ReedSolomon.generator(degree: 10))
        #expect(ecc == [0xA5, 0x24, 0xD4, 0xC1, 0xED, 0x36, 0xC7, 0x87, 0x2C, 0x55])
    }

    @Test("The generator polynomials of Annex A, as exponents of α")
    func generatorPolynomials() {
        // Degree 7: x⁷ + α⁸⁷x⁶ + α²²⁹x⁵ + α¹⁴⁶x⁴ + α¹⁴⁹x³ + α²³⁸x² + α¹⁰²x + α²¹.
        let seven = ReedSolomon.generator(degree: 7).map { Int(ReedSolomon.logarithms[Int($0)]) }
        #expect(seven == [87, 229, 146, 149, 238, 102, 21])
        // Degree 10: α²⁵¹, α⁶⁷, α⁴⁶, α⁶¹, α¹¹⁸, α⁷⁰, α⁶⁴, α⁹⁴, α³², α⁴⁵.
        let ten = ReedSolomon.generator(degree: 10).map { Int(ReedSolomon.logarithms[Int($0)]) }
        #expect(ten == [251, 67, 46, 61, 118, 70, 64, 94, 32, 45])
    }

    @Test("Format information: the worked example (M, mask 101) and every entry's distance from the others")
    func formatInformation() {
        #expect(QRCode.formatInformation(level: .medium, mask: 5) == 0b100000011001110)
        #expect(QRCode.formatInformation(level: .low, mask: 0) == 0b111011111000100)
        #expect(QRCode.formatInformation(level: .high, mask: 7) == 0b000100000111011)
        // A BCH(15,5) code: any two of the 32 words differ in at least 7 bits.
        let words = QRCode.ErrorCorrection.allCases.flatMap { level in (0..<8).map { QRCode.formatInformation(level: level, mask: $0) } }
        for (i, a) in words.enumerated() {
            for b in words[(i + 1)...] { #expect((a ^ b).nonzeroBitCount >= 7) }
        }
    }

    @Test("Version information: the worked example (version 7) and version 40 (Annex D)")
    func versionInformation() {
        #expect(QRCode.versionInformation(7) == 0x07C94)
        #expect(QRCode.versionInformation(40) == 0x28C69)
        #expect(QRCode.versionInformation(21) == 0x15683)
    }

    @Test("Alignment pattern centres (Annex E)", arguments: [
        (1, []), (2, [6, 18]), (7, [6, 22, 38]), (14, [6, 26, 46, 66]), (22, [6, 26, 50, 74, 98]),
        (32, [6, 34, 60, 86, 112, 138]), (36, [6, 24, 50, 76, 102, 128, 154]), (40, [6, 30, 58, 86, 114, 142, 170]),
    ])
    func alignmentPositions(version: Int, expected: [Int]) {
        #expect(Tables.alignmentPositions(version: version) == expected)
    }

    @Test("Codewords per version (Table 1) and byte capacities (Table 7)")
    func capacities() {
        #expect([1, 2, 7, 10, 27, 40].map(QRCode.totalCodewords) == [26, 44, 196, 346, 1_828, 3_706])
        #expect(QRCode.dataCodewords(version: 27, level: .low) == 1_468 && QRCode.dataCodewords(version: 1, level: .high) == 9)
        let expected: [(Int, [Int])] = [(1, [17, 14, 11, 7]), (2, [32, 26, 20, 14]), (10, [271, 213, 151, 119]), (40, [2_953, 2_331, 1_663, 1_273])]
        for (version, bytes) in expected {
            #expect(QRCode.ErrorCorrection.allCases.map { QRCode.byteCapacity(version: version, level: $0) } == bytes, "version \(version)")
        }
        // Capacity only grows with the version.
        for level in QRCode.ErrorCorrection.allCases {
            let all = (1...40).map { QRCode.byteCapacity(version: $0, level: level) }
            #expect(zip(all, all.dropFirst()).allSatisfy { $0 < $1 })
        }
    }

    @Test("The smallest version that holds the bytes; too long is refused")
    func versionChoice() throws {
        #expect(try QRCode.encode(Array(repeating: 0x61, count: 17), level: .low).version == 1)
        #expect(try QRCode.encode(Array(repeating: 0x61, count: 18), level: .low).version == 2)
        #expect(try QRCode.encode(Array(repeating: 0x61, count: 1_273), level: .high).version == 40)
        #expect(throws: QRCode.EncodingError.tooLong(bytes: 1_274, maximum: 1_273)) {
            _ = try QRCode.encode(Array(repeating: 0x61, count: 1_274), level: .high)
        }
    }

    @Test("A symbol's fixed parts: finders, timing, the dark module, both copies of the format information")
    func functionPatterns() throws {
        let code = try QRCode.encode(Array("https://storefront.example/sale/spring".utf8), level: .medium)
        let last = code.size - 1
        for (x, y) in [(0, 0), (6, 0), (0, 6), (last, 0), (last - 6, 6), (0, last), (6, last - 6), (3, 3)] {
            #expect(code.isDark(x: x, y: y), "finder module (\(x), \(y))")
        }
        #expect(!code.isDark(x: 7, y: 0) && !code.isDark(x: 1, y: 1) && !code.isDark(x: 0, y: 7))
        #expect((8..<(code.size - 8)).allSatisfy { code.isDark(x: $0, y: 6) == ($0 % 2 == 0) && code.isDark(x: 6, y: $0) == ($0 % 2 == 0) })
        #expect(code.isDark(x: 8, y: code.size - 8))
        let format = QRCode.formatInformation(level: code.errorCorrection, mask: code.mask)
        func bit(_ index: Int) -> Bool { (format >> index) & 1 == 1 }
        #expect((0...5).allSatisfy { code.isDark(x: 8, y: $0) == bit($0) })
        #expect((0..<8).allSatisfy { code.isDark(x: last - $0, y: 8) == bit($0) })
        #expect((8..<15).allSatisfy { code.isDark(x: 8, y: code.size - 15 + $0) == bit($0) })
    }

    @Test("PNG: a valid signature, chunks with their CRCs, and a zlib stream with its Adler-32")
    func png() throws {
        let code = try QRCode.encode(Array("https://storefront.example/p/1".utf8), level: .low)
        let bytes = code.png(moduleSize: 2)
        #expect(Array(bytes.prefix(8)) == [0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A])
        #expect(PNG.crc32(Array("IEND".utf8)) == 0xAE42_6082)
        #expect(Array(bytes.suffix(12)) == [0, 0, 0, 0, 0x49, 0x45, 0x4E, 0x44, 0xAE, 0x42, 0x60, 0x82])
        let svg = code.svg()
        #expect(svg.hasPrefix("<svg xmlns=\"http://www.w3.org/2000/svg\" viewBox=\"0 0 \(code.size + 8) \(code.size + 8)\""))
    }
}
