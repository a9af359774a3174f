// The binary forms on disk — log frames (`Frame`, one accepted batch each) and the snapshot
// of the counts (`SnapshotCodec`) — are written and read with these: little-endian,
// length-prefixed, each checked by CRC-32C (`CRC32C`).

/// Appends little-endian integers and length-prefixed names.
struct ByteWriter {
    var bytes: [UInt8] = []

    mutating func u8(_ value: UInt8) { bytes.append(value) }
    mutating func u16(_ value: UInt16) { withUnsafeBytes(of: value.littleEndian) { bytes.append(contentsOf: $0) } }
    mutating func u32(_ value: UInt32) { withUnsafeBytes(of: value.littleEndian) { bytes.append(contentsOf: $0) } }
    mutating func u64(_ value: UInt64) { withUnsafeBytes(of: value.littleEndian) { bytes.append(contentsOf: $0) } }

    /// A name: 16-bit length, then its bytes.
    mutating func name(_ value: [UInt8]) {
        u16(UInt16(clamping: value.count))
        bytes.append(contentsOf: value.prefix(Int(UInt16.max)))
    }
}

struct ByteReader {
    let bytes: UnsafeRawBufferPointer
    var offset = 0

    init(_ bytes: UnsafeRawBufferPointer) {
        self.bytes = bytes
    }

    var remaining: Int { bytes.count - offset }

    private mutating func fixed<T: FixedWidthInteger>(_: T.Type) -> T? {
        let size = MemoryLayout<T>.size
        guard remaining >= size else { return nil }
        var value: T = 0
        withUnsafeMutableBytes(of: &value) { $0.copyMemory(from: UnsafeRawBufferPointer(rebasing: bytes[offset..<offset + size])) }
        offset += size
        return T(littleEndian: value)
    }

    mutating func u8() -> UInt8? { fixed(UInt8.self) }
    mutating func u16() -> UInt16? { fixed(UInt16.self) }
    mutating func u32() -> UInt32? { fixed(UInt32.self) }
    mutating func u64() -> UInt64? { fixed(UInt64.self) }

    mutating func name() -> [UInt8]? {
        guard let count = u16().map(Int.init), remaining >= count else { return nil }
        defer { offset += count }
        return Array(bytes[offset..<offset + count])
    }
}
