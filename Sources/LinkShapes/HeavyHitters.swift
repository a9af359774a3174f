/// The most frequent keys of a stream in fixed memory: the Space-Saving algorithm
/// (Metwally, Agrawal and El Abbadi, "Efficient computation of frequent and top-k elements
/// in data streams", ICDT 2005). At most `capacity` keys are held, whatever arrives. A new
/// key, when the table is full, takes the place of the key with the smallest count and
/// inherits that count as its possible overestimate (`error`). Guarantees: every key seen
/// more than total / capacity times is held; a held key's true count lies in
/// [count − error, count]. A min-heap over the counts makes each offer O(log capacity).
public struct HeavyHitters<Key: Hashable & Sendable, Note: Sendable>: Sendable {
    public struct Entry: Sendable {
        public let key: Key
        /// Offers counted for this key (an upper bound on its true count).
        public var count: UInt64
        /// How much of `count` may belong to the keys it displaced.
        public var error: UInt64
        /// The caller's summary of its offers (first and last seen, platforms, …).
        public var note: Note

        public init(key: Key, count: UInt64, error: UInt64, note: Note) {
            (self.key, self.count, self.error, self.note) = (key, count, error, note)
        }
    }

    public let capacity: Int
    /// Offers counted, held keys or not.
    public private(set) var total: UInt64 = 0
    private var heap: [Entry] = []
    private var position: [Key: Int] = [:]

    public init(capacity: Int) {
        precondition(capacity > 0)
        self.capacity = capacity
        heap.reserveCapacity(capacity)
        position.reserveCapacity(capacity)
    }

    public var count: Int { heap.count }

    /// Counts `weight` offers of `key`; `note` makes a new entry's note, `update` changes a
    /// held one's (a displaced key's note is not inherited: it described another key).
    public mutating func offer(_ key: Key, weight: UInt64 = 1, note: () -> Note, update: (inout Note) -> Void) {
        total &+= weight
        if let index = position[key] {
            heap[index].count &+= weight
            update(&heap[index].note)
            siftDown(index)
            return
        }
        if heap.count < capacity {
            heap.append(Entry(key: key, count: weight, error: 0, note: note()))
            position[key] = heap.count - 1
            siftUp(heap.count - 1)
            return
        }
        let smallest = heap[0]
        position[smallest.key] = nil
        heap[0] = Entry(key: key, count: smallest.count &+ weight, error: smallest.count, note: note())
        position[key] = 0
        siftDown(0)
    }

    /// Restores a held entry as it was saved (no heap order assumed of the caller).
    public mutating func restore(_ entry: Entry) {
        guard position[entry.key] == nil, heap.count < capacity else { return }
        heap.append(entry)
        position[entry.key] = heap.count - 1
        siftUp(heap.count - 1)
    }

    public mutating func restoreTotal(_ value: UInt64) { total = value }

    /// Held entries, largest count first (ties by the smaller error).
    public func top(_ limit: Int) -> [Entry] {
        Array(heap.sorted { $0.count != $1.count ? $0.count > $1.count : $0.error < $1.error }.prefix(max(0, limit)))
    }

    public var entries: [Entry] { heap }

    // MARK: The heap (smallest count at the root)

    private mutating func swapAt(_ a: Int, _ b: Int) {
        heap.swapAt(a, b)
        position[heap[a].key] = a
        position[heap[b].key] = b
    }

    private mutating func siftUp(_ start: Int) {
        var index = start
        while index > 0 {
            let parent = (index - 1) / 2
            guard heap[index].count < heap[parent].count else { return }
            swapAt(index, parent)
            index = parent
        }
    }

    private mutating func siftDown(_ start: Int) {
        var index = start
        while true {
            let (left, right) = (2 * index + 1, 2 * index + 2)
            var smallest = index
            if left < heap.count, heap[left].count < heap[smallest].count { smallest = left }
            if right < heap.count, heap[right].count < heap[smallest].count { smallest = right }
            guard smallest != index else { return }
            swapAt(index, smallest)
            index = smallest
        }
    }
}
