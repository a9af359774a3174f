/// A QR Code (Model 2, ISO/IEC 18004) holding bytes: byte mode, the smallest version 1…40
/// that holds them at the chosen error-correction level, the mask with the lowest penalty.
/// Pure and small: the modules as a grid, rendered by `svg` and `png`.
public struct QRCode: Sendable {
    public enum ErrorCorrection: String, CaseIterable, Sendable {
        /// About 7 % of codewords can be restored.
        case low = "L"
        /// About 15 %.
        case medium = "M"
        /// About 25 %.
        case quartile = "Q"
        /// About 30 %.
        case high = "H"

        var ordinal: Int { ["L": 0, "M": 1, "Q": 2, "H": 3][rawValue]! }
        /// The two bits of the format information (Table 12): L 01, M 00, Q 11, H 10.
        var formatBits: Int { [1, 0, 3, 2][ordinal] }
    }

    public enum EncodingError: Error, Equatable, Sendable, CustomStringConvertible {
        /// More bytes than version 40 holds at that level.
        case tooLong(bytes: Int, maximum: Int)

        public var description: String {
            switch self {
            case .tooLong(let bytes, let maximum): "\(bytes) bytes do not fit a QR code at this level (at most \(maximum))."
            }
        }
    }

    public let version: Int
    public let errorCorrection: ErrorCorrection
    public let mask: Int
    /// Modules per side: 4 × version + 17.
    public let size: Int
    /// Row-major, true = dark.
    public private(set) var modules: [Bool]

    public func isDark(x: Int, y: Int) -> Bool { modules[y * size + x] }

    /// The bytes version `version` holds at `level` in byte mode.
    public static func byteCapacity(version: Int, level: ErrorCorrection) -> Int {
        let bits = dataCodewords(version: version, level: level) * 8 - 4 - characterCountBits(version: version)
        return bits / 8
    }

    /// Encodes `bytes` in the smallest version that holds them (at least `minimumVersion`).
    public static func encode(_ bytes: [UInt8], level: ErrorCorrection, minimumVersion: Int = 1) throws(EncodingError) -> QRCode {
        guard let version = (max(1, minimumVersion)...40).first(where: { byteCapacity(version: $0, level: level) >= bytes.count }) else {
            throw .tooLong(bytes: bytes.count, maximum: byteCapacity(version: 40, level: level))
        }
        let codewords = interleaved(dataCodewords(for: bytes, version: version, level: level), version: version, level: level)
        var grid = Grid(version: version)
        grid.placeData(codewords)
        var best: (penalty: Int, mask: Int, modules: [Bool])?
        for mask in 0..<8 {
            var candidate = grid
            candidate.apply(mask: mask)
            candidate.placeFormat(level: level, mask: mask)
            let penalty = candidate.penalty()
            if best == nil || penalty < best!.penalty { best = (penalty, mask, candidate.dark) }
        }
        return QRCode(version: version, errorCorrection: level, mask: best!.mask, size: grid.size, modules: best!.modules)
    }

    // MARK: Codewords

    static func characterCountBits(version: Int) -> Int { version <= 9 ? 8 : 16 }

    /// The codewords the symbol holds, data and error correction: its modules less the
    /// function patterns, in whole bytes.
    static func totalCodewords(version: Int) -> Int { Grid(version: version).dataModuleCount / 8 }

    static func dataCodewords(version: Int, level: ErrorCorrection) -> Int {
        totalCodewords(version: version) - Tables.eccCodewordsPerBlock[level.ordinal][version] * Tables.blocks[level.ordinal][version]
    }

    /// Mode 0100 (byte), the count, the bytes, a terminator of up to four zeros, zeros to a
    /// byte boundary, then the pad bytes 0xEC and 0x11 in turn (§7.4).
    static func dataCodewords(for bytes: [UInt8], version: Int, level: ErrorCorrection) -> [UInt8] {
        let capacity = dataCodewords(version: version, level: level)
        var bits = BitBuffer()
        bits.append(0b0100, count: 4)
        bits.append(bytes.count, count: characterCountBits(version: version))
        for byte in bytes { bits.append(Int(byte), count: 8) }
        bits.append(0, count: min(4, capacity * 8 - bits.count))
        bits.append(0, count: (8 - bits.count % 8) % 8)
        var codewords = bits.bytes
        var pad: UInt8 = 0xEC
        while codewords.count < capacity {
            codewords.append(pad)
            pad = pad == 0xEC ? 0x11 : 0xEC
        }
        return codewords
    }

    /// Splits the data into the version's blocks (the short ones first), adds each block's
    /// error correction, and interleaves: every block's first data codeword, then every
    /// block's second, …, then the error-correction codewords likewise (§7.6).
    static func interleaved(_ data: [UInt8], version: Int, level: ErrorCorrection) -> [UInt8] {
        let blockCount = Tables.blocks[level.ordinal][version]
        let eccLength = Tables.eccCodewordsPerBlock[level.ordinal][version]
        let total = totalCodewords(version: version)
        let shortBlocks = blockCount - total % blockCount
        let shortData = total / blockCount - eccLength
        let generator = ReedSolomon.generator(degree: eccLength)
        var blocks: [[UInt8]] = []
        var eccs: [[UInt8]] = []
        var offset = 0
        for index in 0..<blockCount {
            let length = shortData + (index < shortBlocks ? 0 : 1)
            let block = Array(data[offset..<offset + length])
            offset += length
            blocks.append(block)
            eccs.append(ReedSolomon.remainder(block, generator: generator))
        }
        var result: [UInt8] = []
        result.reserveCapacity(total)
        for column in 0...shortData {
            for block in blocks where column < block.count { result.append(block[column]) }
        }
        for column in 0..<eccLength {
            for ecc in eccs { result.append(ecc[column]) }
        }
        return result
    }

    /// The 15 bits of format information for a level and mask, BCH-coded and masked (§7.9.1).
    static func formatInformation(level: ErrorCorrection, mask: Int) -> Int {
        let data = level.formatBits << 3 | mask
        var remainder = data
        for _ in 0..<10 { remainder = (remainder << 1) ^ ((remainder >> 9) * 0x537) }
        return (data << 10 | remainder) ^ 0x5412
    }

    /// The 18 bits of version information (versions 7 and up), BCH-coded (§7.10).
    static func versionInformation(_ version: Int) -> Int {
        var remainder = version
        for _ in 0..<12 { remainder = (remainder << 1) ^ ((remainder >> 11) * 0x1F25) }
        return version << 12 | remainder
    }
}

/// Bits, most significant first.
struct BitBuffer {
    private(set) var bits: [Bool] = []

    var count: Int { bits.count }

    mutating func append(_ value: Int, count: Int) {
        for shift in stride(from: count - 1, through: 0, by: -1) { bits.append((value >> shift) & 1 == 1) }
    }

    var bytes: [UInt8] {
        stride(from: 0, to: bits.count, by: 8).map { start in
            bits[start..<min(start + 8, bits.count)].enumerated().reduce(UInt8(0)) { $0 | ($1.element ? 0x80 >> UInt8($1.offset) : 0) }
        }
    }
}

/// The symbol as it is built: which modules are dark, and which belong to function patterns
/// (finders, separators, timing, alignment, format and version information, the dark module).
struct Grid {
    let version: Int
    let size: Int
    var dark: [Bool]
    var function: [Bool]

    init(version: Int) {
        self.version = version
        size = version * 4 + 17
        dark = Array(repeating: false, count: size * size)
        function = Array(repeating: false, count: size * size)
        placeFunctionPatterns()
    }

    /// Modules left for data and error correction.
    var dataModuleCount: Int { function.lazy.filter { !$0 }.count }

    private mutating func set(_ x: Int, _ y: Int, _ isDark: Bool) {
        dark[y * size + x] = isDark
        function[y * size + x] = true
    }

    mutating func placeFunctionPatterns() {
        // Timing patterns: row and column 6, dark on even positions.
        for index in 0..<size {
            set(6, index, index % 2 == 0)
            set(index, 6, index % 2 == 0)
        }
        // Finder patterns with their light separators, in three corners.
        for (cx, cy) in [(3, 3), (size - 4, 3), (3, size - 4)] {
            for dy in -4...4 {
                for dx in -4...4 {
                    let (x, y) = (cx + dx, cy + dy)
                    guard (0..<size).contains(x), (0..<size).contains(y) else { continue }
                    let ring = max(abs(dx), abs(dy))
                    set(x, y, ring != 2 && ring != 4)
                }
            }
        }
        // Alignment patterns, except where they would overlap a finder.
        let positions = Tables.alignmentPositions(version: version)
        let last = positions.count - 1
        for (i, cx) in positions.enumerated() {
            for (j, cy) in positions.enumerated() {
                if (i == 0 && j == 0) || (i == 0 && j == last) || (i == last && j == 0) { continue }
                for dy in -2...2 {
                    for dx in -2...2 { set(cx + dx, cy + dy, max(abs(dx), abs(dy)) != 1) }
                }
            }
        }
        // Reserve the format information areas (written per mask later) and the dark module.
        for index in 0...8 {
            reserve(8, index)
            reserve(index, 8)
        }
        for index in 0..<8 {
            reserve(size - 1 - index, 8)
            reserve(8, size - 1 - index)
        }
        set(8, size - 8, true)
        // Version information, versions 7 and up: two 6 × 3 blocks beside the finders.
        if version >= 7 {
            let bits = QRCode.versionInformation(version)
            for index in 0..<18 {
                let bit = (bits >> index) & 1 == 1
                let (a, b) = (size - 11 + index % 3, index / 3)
                set(a, b, bit)
                set(b, a, bit)
            }
        }
    }

    private mutating func reserve(_ x: Int, _ y: Int) {
        function[y * size + x] = true
    }

    /// The codewords' bits in the zigzag order of §7.7.3: two-module columns from the right,
    /// upwards then downwards in turn, skipping the vertical timing pattern and every
    /// function module; remainder bits stay light.
    mutating func placeData(_ codewords: [UInt8]) {
        var bit = 0
        let total = codewords.count * 8
        var right = size - 1
        while right >= 1 {
            if right == 6 { right = 5 }
            let upward = (right + 1) & 2 == 0
            for step in 0..<size {
                let y = upward ? size - 1 - step : step
                for x in [right, right - 1] where !function[y * size + x] {
                    if bit < total {
                        dark[y * size + x] = (codewords[bit >> 3] >> (7 - UInt8(bit & 7))) & 1 == 1
                        bit += 1
                    }
                }
            }
            right -= 2
        }
    }

    /// Inverts the data modules where the mask's condition holds (Table 10; x is the column, y the row).
    mutating func apply(mask: Int) {
        for y in 0..<size {
            for x in 0..<size where !function[y * size + x] {
                let invert: Bool
                switch mask {
                case 0: invert = (x + y) % 2 == 0
                case 1: invert = y % 2 == 0
                case 2: invert = x % 3 == 0
                case 3: invert = (x + y) % 3 == 0
                case 4: invert = (x / 3 + y / 2) % 2 == 0
                case 5: invert = x * y % 2 + x * y % 3 == 0
                case 6: invert = (x * y % 2 + x * y % 3) % 2 == 0
                default: invert = ((x + y) % 2 + x * y % 3) % 2 == 0
                }
                if invert { dark[y * size + x].toggle() }
            }
        }
    }

    /// The format information in both places (§7.9.1): bits 0–7 and 8–14 around the
    /// top-left finder, and again split between the other two.
    mutating func placeFormat(level: QRCode.ErrorCorrection, mask: Int) {
        let bits = QRCode.formatInformation(level: level, mask: mask)
        func bit(_ index: Int) -> Bool { (bits >> index) & 1 == 1 }
        for index in 0...5 { set(8, index, bit(index)) }
        set(8, 7, bit(6))
        set(8, 8, bit(7))
        set(7, 8, bit(8))
        for index in 9..<15 { set(14 - index, 8, bit(index)) }
        for index in 0..<8 { set(size - 1 - index, 8, bit(index)) }
        for index in 8..<15 { set(8, size - 15 + index, bit(index)) }
        set(8, size - 8, true)
    }

    /// The penalty of §7.8.3: runs of five or more of a colour in a row or column (3 + the
    /// run beyond five), 2 × 2 blocks of one colour (3 each), the finder-like 1:1:3:1:1 with
    /// four light modules on a side (40 each; outside the symbol counts as light), and each
    /// full 5 % the dark share is away from half (10 each).
    func penalty() -> Int {
        var score = 0
        // Rows (`step` 1 along, `stride` size between lines), then columns.
        for (step, stride) in [(1, size), (size, 1)] {
            for line in 0..<size {
                let start = line * stride
                var run = 0
                var previous = false
                // The last 11 modules as bits, seeded with the light quiet zone.
                var window = 0
                for index in 0..<(size + 4) {
                    let isDark = index < size ? dark[start + index * step] : false
                    if index < size {
                        if index > 0, isDark == previous {
                            run += 1
                        } else {
                            if run >= 5 { score += run - 2 }
                            run = 1
                        }
                        previous = isDark
                    }
                    window = (window << 1 | (isDark ? 1 : 0)) & 0x7FF
                    // Dark, light, three dark, light, dark, then four light — or four light first.
                    if window == 0b101_1101_0000 || window == 0b000_0101_1101 { score += 40 }
                }
                if run >= 5 { score += run - 2 }
            }
        }
        for y in 0..<size - 1 {
            let row = y * size
            for x in 0..<size - 1 {
                let colour = dark[row + x]
                if dark[row + x + 1] == colour, dark[row + size + x] == colour, dark[row + size + x + 1] == colour { score += 3 }
            }
        }
        var darkCount = 0
        for module in dark where module { darkCount += 1 }
        let total = size * size
        score += abs(darkCount * 20 - total * 10) / total * 10
        return score
    }
}
