/// Counts by packed key (see `TelemetryDimension`): open addressing with linear probing
/// in one flat array of key–count pairs, Fibonacci hashing, at most 70% full. The group
/// commit adds every accepted tally to two of these (its minute and its hour), so this
/// replaces a `Dictionary`, whose per-lookup SipHash was a tenth of the ingest profile.
///
/// A count of 0 marks an empty slot, so only positive amounts may be added.
public struct CountTable: Sendable, Sequence, Equatable {
    fileprivate struct Slot {
        var key: UInt64
        /// 0: the slot is empty.
        var count: UInt64
    }

    private var slots: [Slot]
    private var shift: UInt64
    /// Keys held.
    public private(set) var count = 0

    public init(minimumCapacity: Int = 0) {
        var capacity = 8
        while capacity * 7 < minimumCapacity * 10 { capacity *= 2 }
        slots = Array(repeating: Slot(key: 0, count: 0), count: capacity)
        shift = UInt64(64 - capacity.trailingZeroBitCount)
    }

    public var isEmpty: Bool { count == 0 }

    /// Slots allocated (for tests: a run added at once grows the table as its items one by
    /// one would).
    var capacity: Int { slots.count }

    @inline(__always)
    private static func home(_ key: UInt64, shift: UInt64) -> Int { Int(truncatingIfNeeded: (key &* 0x9E37_79B9_7F4A_7C15) >> shift) }

    /// Adds `amount` (> 0) to `key`'s count.
    public mutating func add(_ key: UInt64, _ amount: UInt64) {
        add(CollectionOfOne(key)) { ($0, amount) }
    }

    /// Adds each item's amount (> 0) to its key's count, in one pass over the slots; the
    /// pass stops to grow the table when a new key would fill it past 70%, as adding the
    /// items one by one would.
    @inline(__always)
    public mutating func add<Items: Collection>(_ items: Items, _ keyAndAmount: (Items.Element) -> (key: UInt64, amount: UInt64)) {
        add(items, newKeysAllowed: .max, fold: { $0 }, keyAndAmount)
    }

    /// Adds each item's amount (> 0) to its key's count, admitting at most
    /// `newKeysAllowed` keys the table does not have yet: past that, an item whose key is
    /// new is added to `fold(key)` instead (which is admitted whether new or not, so
    /// `fold` must map onto a small set). Returns the keys added that are not their own fold
    /// (`named`: only they use up `newKeysAllowed`), those that are (`foldedKeys`: bounded by
    /// the fold's range) and the amount folded.
    @inline(__always) @discardableResult
    public mutating func add<Items: Collection>(
        _ items: Items, newKeysAllowed: Int, fold: (UInt64) -> UInt64,
        _ keyAndAmount: (Items.Element) -> (key: UInt64, amount: UInt64)
    ) -> (named: Int, foldedKeys: Int, folded: UInt64) {
        var next = items.startIndex
        var allowed = newKeysAllowed, totalAdded = 0, totalFoldedKeys = 0, totalFolded: UInt64 = 0
        while true {
            let shift = shift, held = count, left = allowed
            let (stopped, added, foldedKeys, folded) = slots.withUnsafeMutableBufferPointer { slots in
                let mask = slots.count &- 1, room = slots.count * 7
                var index = next, added = 0, foldedKeys = 0, folded: UInt64 = 0
                while index != items.endIndex {
                    var (key, amount) = keyAndAmount(items[index])
                    precondition(amount > 0, "a count of 0 would mark the slot empty")
                    var slot = Self.home(key, shift: shift)
                    while slots[slot].count != 0, slots[slot].key != key { slot = (slot &+ 1) & mask }
                    if slots[slot].count == 0, added >= left, fold(key) != key {
                        let folding = fold(key)
                        if folding != key {
                            key = folding
                            folded &+= amount
                            slot = Self.home(key, shift: shift)
                            while slots[slot].count != 0, slots[slot].key != key { slot = (slot &+ 1) & mask }
                        }
                    }
                    if slots[slot].count == 0 {
                        if (held + added + foldedKeys + 1) * 10 > room {
                            // Undo this item's fold; the next pass sees it afresh.
                            if key != keyAndAmount(items[index]).key { folded &-= amount }
                            break
                        }
                        slots[slot].key = key
                        if fold(key) == key { foldedKeys &+= 1 } else { added &+= 1 }
                    }
                    slots[slot].count &+= amount
                    items.formIndex(after: &index)
                }
                return (index, added, foldedKeys, folded)
            }
            count += added + foldedKeys
            totalAdded += added
            totalFoldedKeys += foldedKeys
            totalFolded &+= folded
            allowed = allowed == .max ? .max : allowed - added
            guard stopped != items.endIndex else { return (totalAdded, totalFoldedKeys, totalFolded) }
            next = stopped
            grow()
        }
    }

    /// The count of `key`, 0 when it has none.
    public subscript(key: UInt64) -> UInt64 {
        let mask = slots.count - 1
        var slot = Self.home(key, shift: shift)
        while slots[slot].count != 0 {
            if slots[slot].key == key { return slots[slot].count }
            slot = (slot + 1) & mask
        }
        return 0
    }

    private mutating func grow() {
        var larger = CountTable(minimumCapacity: slots.count)  // twice the slots: 8 → 16 …
        while larger.slots.count <= slots.count { larger = CountTable(minimumCapacity: larger.slots.count) }
        for (key, amount) in self { larger.add(key, amount) }
        self = larger
    }

    public struct Iterator: IteratorProtocol {
        fileprivate let slots: [Slot]
        var slot = 0

        public mutating func next() -> (key: UInt64, count: UInt64)? {
            while slot < slots.count {
                defer { slot += 1 }
                if slots[slot].count != 0 { return (slots[slot].key, slots[slot].count) }
            }
            return nil
        }
    }

    public func makeIterator() -> Iterator { Iterator(slots: slots) }

    public var underestimatedCount: Int { count }

    public static func == (lhs: CountTable, rhs: CountTable) -> Bool {
        lhs.count == rhs.count && lhs.allSatisfy { rhs[$0.key] == $0.count }
    }
}
