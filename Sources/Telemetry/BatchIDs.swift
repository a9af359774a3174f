/// The ids of accepted batches, so a batch retried after a lost `202` is counted once:
/// each id with the minute it was accepted, for `window` seconds and at most `capacity`
/// ids, the oldest forgotten first. Kept in the counts (so in the snapshot) and in each
/// batch's log frame (so a replay remembers them too).
///
/// - Complexity: `contains` and `insert` O(1); memory about 40 bytes an id.
public struct BatchIDs: Sendable, Equatable {
    public let window: Int
    public let capacity: Int
    private var accepted: [HexID: Int32] = [:]
    /// Insertion order (oldest at `head`), compacted once half of it is spent.
    private var order: [(id: HexID, minute: Int32)] = []
    private var head = 0

    public init(window: Int, capacity: Int) {
        self.window = window
        self.capacity = max(1, capacity)
    }

    public var count: Int { accepted.count }

    public func contains(_ id: HexID) -> Bool { accepted[id] != nil }

    /// The minute the oldest remembered id was accepted (how far back a repeat is caught).
    public var oldestMinute: Int32? { head < order.count ? order[head].minute : nil }

    /// Remembers `id`, accepted in `minute`; forgets the oldest past the capacity.
    public mutating func insert(_ id: HexID, minute: Int32) {
        guard accepted.updateValue(minute, forKey: id) == nil else { return }
        order.append((id, minute))
        while accepted.count > capacity { dropOldest() }
    }

    /// Forgets ids accepted more than `window` seconds before `now`.
    public mutating func prune(now: Int) {
        let oldest = Int32(clamping: (now - window) / 60)
        while head < order.count, order[head].minute < oldest { dropOldest() }
    }

    private mutating func dropOldest() {
        let (id, minute) = order[head]
        if accepted[id] == minute { accepted[id] = nil }
        head += 1
        if head > 1_024, head * 2 > order.count {
            order.removeFirst(head)
            head = 0
        }
    }

    /// Oldest first, as a snapshot stores them.
    public var entries: ArraySlice<(id: HexID, minute: Int32)> { order[head...] }

    public static func == (lhs: BatchIDs, rhs: BatchIDs) -> Bool {
        lhs.window == rhs.window && lhs.capacity == rhs.capacity && lhs.accepted == rhs.accepted
    }
}
