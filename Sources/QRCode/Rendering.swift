/// A QR code as an image: SVG (one path of unit squares in a viewBox, so it scales without
/// blurring) or PNG (8-bit greyscale, stored deflate: no compression library needed), each
/// with a light quiet zone around the symbol (4 modules by default, as §6.3.8 requires).
extension QRCode {
    public func svg(quietZone: Int = 4, moduleSize: Int = 8) -> String {
        let side = size + 2 * quietZone
        var path = ""
        for y in 0..<size {
            var x = 0
            while x < size {
                guard isDark(x: x, y: y) else { x += 1; continue }
                // One rectangle per horizontal run of dark modules.
                var end = x
                while end < size, isDark(x: end, y: y) { end += 1 }
                path += "M\(x + quietZone) \(y + quietZone)h\(end - x)v1h-\(end - x)z"
                x = end
            }
        }
        return """
            <svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 \(side) \(side)" width="\(side * moduleSize)" height="\(side * moduleSize)" \
            shape-rendering="crispEdges"><rect width="\(side)" height="\(side)" fill="#fff"/><path d="\(path)" fill="#000"/></svg>

            """
    }

    public func png(quietZone: Int = 4, moduleSize: Int = 8) -> [UInt8] {
        let side = (size + 2 * quietZone) * moduleSize
        // Each row: filter byte 0, then one bit per pixel, the leftmost in the high bit, 1
        // white (a two-tone image needs no more: an eighth of a grey byte per pixel, so a
        // 2,048-pixel side is 514 KiB rather than 4 MiB).
        let rowBytes = (side + 7) / 8
        var raw: [UInt8] = []
        raw.reserveCapacity((rowBytes + 1) * side)
        for row in 0..<side {
            raw.append(0)
            let y = row / moduleSize - quietZone
            var byte: UInt8 = 0
            for column in 0..<side {
                let x = column / moduleSize - quietZone
                let isDark = (0..<size).contains(x) && (0..<size).contains(y) && self.isDark(x: x, y: y)
                if !isDark { byte |= 0x80 >> UInt8(column % 8) }
                if column % 8 == 7 || column == side - 1 {
                    raw.append(byte)
                    byte = 0
                }
            }
        }
        var png: [UInt8] = [0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A]
        var header: [UInt8] = []
        header += PNG.bigEndian(UInt32(side)) + PNG.bigEndian(UInt32(side))
        header += [1, 0, 0, 0, 0]  // 1-bit, greyscale, deflate, filter 0, no interlace
        png += PNG.chunk("IHDR", header)
        png += PNG.chunk("IDAT", PNG.zlibStored(raw))
        png += PNG.chunk("IEND", [])
        return png
    }
}

/// The parts of PNG (RFC 2083) and zlib (RFC 1950/1951) a stored image needs.
enum PNG {
    static func bigEndian(_ value: UInt32) -> [UInt8] {
        [UInt8(value >> 24), UInt8(value >> 16 & 0xFF), UInt8(value >> 8 & 0xFF), UInt8(value & 0xFF)]
    }

    static let crcTable: [UInt32] = (0..<256).map { index in
        var value = UInt32(index)
        for _ in 0..<8 { value = value & 1 == 1 ? 0xEDB8_8320 ^ (value >> 1) : value >> 1 }
        return value
    }

    static func crc32(_ bytes: [UInt8]) -> UInt32 {
        var crc: UInt32 = 0xFFFF_FFFF
        for byte in bytes { crc = crcTable[Int((crc ^ UInt32(byte)) & 0xFF)] ^ (crc >> 8) }
        return crc ^ 0xFFFF_FFFF
    }

    static func chunk(_ type: String, _ data: [UInt8]) -> [UInt8] {
        let typed = Array(type.utf8) + data
        return bigEndian(UInt32(data.count)) + typed + bigEndian(crc32(typed))
    }

    /// A zlib stream of stored (uncompressed) deflate blocks of up to 65,535 bytes, with its Adler-32.
    static func zlibStored(_ data: [UInt8]) -> [UInt8] {
        var out: [UInt8] = [0x78, 0x01]
        var offset = 0
        repeat {
            let length = min(65_535, data.count - offset)
            let final: UInt8 = offset + length == data.count ? 1 : 0
            out.append(final)
            out += [UInt8(length & 0xFF), UInt8(length >> 8), UInt8(~length & 0xFF), UInt8((~length >> 8) & 0xFF)]
            out += data[offset..<offset + length]
            offset += length
        } while offset < data.count
        var (a, b): (UInt32, UInt32) = (1, 0)
        for byte in data {
            a = (a + UInt32(byte)) % 65_521
            b = (b + a) % 65_521
        }
        return out + bigEndian(b << 16 | a)
    }
}
