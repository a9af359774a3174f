import Testing
@testable import Telemetry

/// `NameTable` hashes a name in words, reading short names in overlapping pieces; a lookup
/// must find exactly the names the table holds, whatever their length and wherever the
/// bytes sit in memory.
@Suite("Name tables")
struct NameTableTests {
    /// Names of 1 to 40 bytes, and for each a set of near misses: one byte changed at the
    /// start, the middle and the end, one byte more, one byte less.
    static let names: [String] = {
        var seen = Set<String>()
        return (1...40).flatMap { length in
            let base = String((0..<length).map { Character(Unicode.Scalar(UInt8(97 + $0 % 26))) })
            return [base, String(base.reversed())]
        }.filter { seen.insert($0).inserted }
    }()

    static func nearMisses(_ name: String) -> [String] {
        var bytes = Array(name.utf8)
        var misses = [name + "x", String(name.dropLast()), name.uppercased()]
        for position in Set([0, bytes.count / 2, bytes.count - 1]) {
            bytes[position] ^= 0x01
            misses.append(String(decoding: bytes, as: UTF8.self))
            bytes[position] ^= 0x01
        }
        return misses.filter { !Self.names.contains($0) }
    }

    @Test func findsEveryNameItHoldsAndNoOther() {
        let table = NameTable(Self.names)
        #expect(table.count == Self.names.count)
        for (expected, name) in Self.names.enumerated() {
            // Looked up from a buffer where the name sits at each alignment, amid other bytes.
            for padding in 0..<8 {
                let buffer = Array(repeating: UInt8(ascii: "#"), count: padding) + Array(name.utf8) + Array("\",".utf8)
                let found = buffer.withUnsafeBufferPointer { table.index(of: UnsafeBufferPointer(rebasing: $0[padding..<padding + name.utf8.count])) }
                #expect(found == expected, "\(name) at padding \(padding)")
            }
            for miss in Self.nearMisses(name) {
                var miss = miss
                #expect(miss.withUTF8 { table.index(of: $0) } == nil, "\(miss), a near miss of \(name)")
            }
        }
        var empty = ""
        #expect(empty.withUTF8 { table.index(of: $0) } == nil)
    }

    /// Names that differ in one byte, at any position, land in different slots: a hash that
    /// dropped a byte of a name would put every variant of that byte in one probe chain.
    @Test func everyByteOfANameMovesItsSlot() {
        for length in 1...24 {
            for position in 0..<length {
                let slots = Set((0..<8).map { change in
                    var bytes = Array(repeating: UInt8(ascii: "a"), count: length)
                    bytes[position] = UInt8(ascii: "b") + UInt8(change)
                    return bytes.withUnsafeBufferPointer { NameTable.hash($0) & 0xFF }
                })
                #expect(slots.count >= 5, "length \(length), byte \(position): 8 names in \(slots.count) of 256 slots")
            }
        }
    }
}
