/// A loop's connections by descriptor: a slot per descriptor number. The kernel hands out
/// the lowest free number, so descriptors are dense and the table is as long as the
/// highest open one; a lookup is an index, where a dictionary hashed the descriptor on
/// every event (twice a request).
struct ConnectionTable {
    private var slots: [Connection?] = []
    private(set) var count = 0

    var isEmpty: Bool { count == 0 }

    subscript(fd: Int32) -> Connection? {
        get {
            let index = Int(fd)
            return index >= 0 && index < slots.count ? slots[index] : nil
        }
        set {
            let index = Int(fd)
            guard index >= 0 else { return }
            if index >= slots.count {
                guard newValue != nil else { return }
                slots.append(contentsOf: repeatElement(nil, count: max(index + 1, slots.count * 2) - slots.count))
            }
            if slots[index] == nil, newValue != nil { count += 1 } else if slots[index] != nil, newValue == nil { count -= 1 }
            slots[index] = newValue
        }
    }

    /// Removes and returns the connection on `fd`, if any.
    @discardableResult
    mutating func removeValue(forKey fd: Int32) -> Connection? {
        let removed = self[fd]
        if removed != nil { self[fd] = nil }
        return removed
    }

    /// Every connection, in descriptor order.
    var values: [Connection] { slots.compactMap { $0 } }
}
