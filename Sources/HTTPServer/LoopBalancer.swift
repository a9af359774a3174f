import Synchronization

/// Open connections per event loop, so a loop that accepted more than its share hands a
/// newcomer to the least-loaded loop. SO_REUSEPORT spreads connections by a hash of the
/// addresses, not by load: 64 `wrk` connections over two loops were measured landing
/// 40/26, and the busier loop's clients waited longer at the tail (p99) because both
/// threads get the same CPU. Taken only when a connection opens or closes, never per request.
final class LoopBalancer: Sendable {
    private let loads: Mutex<[Int]>

    init(loops: Int) {
        loads = Mutex([Int](repeating: 0, count: max(1, loops)))
    }

    /// Chooses the loop for a connection `loop` just accepted, and counts it there. Ties stay put.
    func place(acceptedBy loop: Int) -> Int {
        loads.withLock { loads in
            var target = loop
            for candidate in loads.indices where loads[candidate] < loads[target] { target = candidate }
            loads[target] += 1
            return target
        }
    }

    /// Counts a connection that reached `loop` some other way (an adopted socket).
    func add(to loop: Int) {
        loads.withLock { $0[loop] += 1 }
    }

    func remove(from loop: Int) {
        loads.withLock { $0[loop] -= 1 }
    }

    var snapshot: [Int] { loads.withLock { $0 } }
}
