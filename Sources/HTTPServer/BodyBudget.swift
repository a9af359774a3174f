import Synchronization

/// The request body bytes every connection of a server may hold together
/// (`ServerConfiguration.maximumBufferedBodyBytes`): reserved at the end of a head, before
/// its body is read, and released once the request is answered or its connection closes.
/// Without it, each authorized client could make the server buffer a maximum-size body at
/// once; with it, the total is bounded whatever the number of connections.
public final class BodyBudget: Sendable {
    public let limit: Int
    private let used = Atomic<Int>(0)
    /// Heads answered 503 because their body did not fit, since start.
    public let refused = Atomic<UInt64>(0)

    public init(limit: Int) {
        self.limit = limit
    }

    /// Bytes reserved now.
    public var reserved: Int { used.load(ordering: .relaxed) }

    /// Reserves `bytes`; false (nothing reserved) when they do not fit.
    func reserve(_ bytes: Int) -> Bool {
        var current = used.load(ordering: .relaxed)
        while true {
            guard current + bytes <= limit else {
                refused.add(1, ordering: .relaxed)
                return false
            }
            let (exchanged, original) = used.compareExchange(expected: current, desired: current + bytes, ordering: .acquiringAndReleasing)
            if exchanged { return true }
            current = original
        }
    }

    func release(_ bytes: Int) {
        used.subtract(bytes, ordering: .acquiringAndReleasing)
    }
}
