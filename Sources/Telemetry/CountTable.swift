/// Counts by packed key (see `TelemetryDimension`): open addressing with linear probing
/// in two flat arrays, Fibonacci hashing, at most 70% full. The group commit adds every
/// accepted tally to two of these (its minute and its hour), so this replaces a
/// `Dictionary`, whose per-lookup SipHash was a tenth of the ingest profile.
///
/// A count of 0 marks an empty slot, so only positive amounts may be added.
public struct CountTable: Sendable, Sequence, Equatable {
    private var keys: [UInt64]
    private var values: [UInt64]
    private var shift: UInt64
    /// Keys held.
    public private(set) var count = 0

    public init(minimumCapacity: Int = 0) {
        var capacity = 8
        while capacity * 7 < minimumCapacity * 10 { capacity *= 2 }
        keys = Array(repeating: 0, count: capacity)
        values = Array(repeating: 0, count: capacity)
        shift = UInt64(64 - capacity.trailingZeroBitCount)
    }

    public var isEmpty: Bool { count == 0 }

    @inline(__always)
    private func home(_ key: UInt64) -> Int { Int(truncatingIfNeeded: (key &* 0x9E37_79B9_7F4A_7C15) >> shift) }

    /// Adds `amount` (> 0) to `key`'s count.
    public mutating func add(_ key: UInt64, _ amount: UInt64) {
        precondition(amount > 0, "a count of 0 would mark the slot empty")
        if (count + 1) * 10 > values.count * 7 { grow() }
        let mask = values.count - 1
        var slot = home(key)
        keys.withUnsafeMutableBufferPointer { keys in
            values.withUnsafeMutableBufferPointer { values in
                while values[slot] != 0 {
                    if keys[slot] == key {
                        values[slot] &+= amount
                        return
                    }
                    slot = (slot + 1) & mask
                }
                keys[slot] = key
                values[slot] = amount
                count += 1
            }
        }
    }

    /// The count of `key`, 0 when it has none.
    public subscript(key: UInt64) -> UInt64 {
        let mask = values.count - 1
        var slot = home(key)
        while values[slot] != 0 {
            if keys[slot] == key { return values[slot] }
            slot = (slot + 1) & mask
        }
        return 0
    }

    private mutating func grow() {
        var larger = CountTable(minimumCapacity: values.count)  // twice the slots: 8 → 16 …
        while larger.values.count <= values.count { larger = CountTable(minimumCapacity: larger.values.count) }
        for (key, amount) in self { larger.add(key, amount) }
        self = larger
    }

    public struct Iterator: IteratorProtocol {
        let keys: [UInt64], values: [UInt64]
        var slot = 0

        public mutating func next() -> (key: UInt64, count: UInt64)? {
            while slot < values.count {
                defer { slot += 1 }
                if values[slot] != 0 { return (keys[slot], values[slot]) }
            }
            return nil
        }
    }

    public func makeIterator() -> Iterator { Iterator(keys: keys, values: values) }

    public var underestimatedCount: Int { count }

    public static func == (lhs: CountTable, rhs: CountTable) -> Bool {
        lhs.count == rhs.count && lhs.allSatisfy { rhs[$0.key] == $0.count }
    }
}
