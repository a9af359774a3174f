@testable import QRCode
import Testing

/// A code's PNG read back pixel by pixel — one bit a pixel, 1 white, rows padded to a whole
/// byte — and the size of the largest one the server draws.
@Suite("QR code PNG")
struct PNGTests {
    /// The image's side, its bit depth, and its pixels (true dark), from a PNG whose IDAT
    /// is one zlib stream of stored blocks, as `png` writes it; nil when it is not one.
    static func decode(_ png: [UInt8]) -> (side: Int, depth: UInt8, dark: [[Bool]])? {
        func word(_ at: Int) -> Int { png[at..<at + 4].reduce(0) { $0 << 8 | Int($1) } }
        guard png.count > 33, word(16) == word(20) else { return nil }
        let side = word(16), depth = png[24]
        var offset = 8, stream: [UInt8] = []
        while offset + 8 <= png.count {
            let length = word(offset)
            let type = String(decoding: png[offset + 4..<offset + 8], as: UTF8.self)
            if type == "IDAT" { stream += png[offset + 8..<offset + 8 + length] }
            offset += 12 + length
        }
        var raw: [UInt8] = [], at = 2
        while at < stream.count - 4 {
            let final = stream[at] & 1 == 1
            let length = Int(stream[at + 1]) | Int(stream[at + 2]) << 8
            raw += stream[at + 5..<at + 5 + length]
            at += 5 + length
            if final { break }
        }
        let rowBytes = (side * Int(depth) + 7) / 8
        guard raw.count == (rowBytes + 1) * side else { return nil }
        let dark = (0..<side).map { row in
            (0..<side).map { column in raw[row * (rowBytes + 1) + 1 + column / 8] & (0x80 >> UInt8(column % 8)) == 0 }
        }
        return (side, depth, dark)
    }

    static let rows: [(String, Int, QRCode.ErrorCorrection, Int)] = [
        ("version 1, one pixel a module (a side of 29: rows end mid-byte)", 10, .low, 1),
        ("version 1, three pixels a module", 10, .low, 3),
        ("a longer link, eight pixels a module", 200, .medium, 8),
        ("a long link at level H, five pixels a module", 600, .high, 5),
    ]

    @Test(arguments: rows)
    func pixelsAreTheModules(_ label: String, _ length: Int, _ level: QRCode.ErrorCorrection, _ scale: Int) throws {
        let code = try QRCode.encode(Array(("https://storefront.example/" + String(repeating: "a", count: length)).utf8), level: level)
        guard let image = Self.decode(code.png(moduleSize: scale)) else {
            Issue.record("\(label): not a PNG of stored blocks")
            return
        }
        #expect(image.depth == 1 && image.side == (code.size + 8) * scale, "\(label)")
        var wrong = 0
        for y in 0..<image.side {
            for x in 0..<image.side {
                let (moduleX, moduleY) = (x / scale - 4, y / scale - 4)
                let dark = (0..<code.size).contains(moduleX) && (0..<code.size).contains(moduleY) && code.isDark(x: moduleX, y: moduleY)
                if image.dark[y][x] != dark { wrong += 1 }
            }
        }
        #expect(wrong == 0, "\(label): \(wrong) pixels differ from their modules")
    }

    /// A version-40 code at the largest scale whose side is within 2,048 pixels is the
    /// largest PNG the server draws (`QREndpoints.maximumPNGBytes`: 526,444 bytes).
    @Test func theLargestPNGIsUnderHalfAMegabyteAndAQuarter() throws {
        let code = try QRCode.encode(Array(("https://storefront.example/" + String(repeating: "a", count: 2_900)).utf8), level: .low)
        #expect(code.version == 40)
        let scale = 2_048 / (code.size + 8)
        let png = code.png(moduleSize: scale)
        #expect(png.count <= 526_444, "\(png.count) bytes")
        // At the 2,048-pixel bound exactly (a side the server allows for a smaller code).
        let bound = (2_048 + 7) / 8 + 1
        #expect(8 + 25 + 12 + 2 + bound * 2_048 + 5 * ((bound * 2_048 + 65_534) / 65_535) + 4 + 12 == 526_444)
    }
}
