import Synchronization

import HTTPCore

/// The response bytes every connection of a server may have queued and not yet written
/// (`ServerConfiguration.maximumQueuedOutputBytes`), and the share of them one peer (an
/// IPv4 address, an IPv6 /64) may have (`maximumQueuedOutputBytesPerPeer`). A reader that
/// never reads keeps what was queued for it; without a bound, 800 connections asking a
/// 4 MB QR code each took the server to 5.2 GB. Past the total or a peer's share, each
/// event loop resets its connections whose output has waited longest (the slowest readers)
/// until the budget holds again. Bytes are counted as queued, shared or not: a cached answer
/// queued to many connections costs once in memory but counts once per connection, so the
/// bound errs on the safe side.
public final class OutputBudget: Sendable {
    public let limit: Int
    /// The most one peer may have queued; 0: no share (only the total applies).
    public let perPeer: Int
    private let used = Atomic<Int>(0)
    /// Bytes queued per peer, only while a peer has some.
    private let byPeer = Mutex<[PeerAddress: Int]>([:])
    /// Connections reset because the budget or their peer's share was past, since start.
    public let shed = Atomic<UInt64>(0)

    public init(limit: Int, perPeer: Int = 0) {
        self.limit = limit
        self.perPeer = perPeer
    }

    /// Bytes queued now, across every connection.
    public var queued: Int { used.load(ordering: .relaxed) }

    /// Bytes `peer` has queued now.
    public func queued(by peer: PeerAddress) -> Int { byPeer.withLock { $0[peer, default: 0] } }

    /// Whether the total is past its limit.
    public var isOver: Bool { used.load(ordering: .relaxed) > limit }

    /// Whether the total or any peer's share is past: whether a loop should look for slow
    /// readers to shed. - Complexity: O(peers with output queued).
    public var isAnyOver: Bool {
        if isOver { return true }
        guard perPeer > 0 else { return false }
        return byPeer.withLock { $0.values.contains { $0 > perPeer } }
    }

    /// Whether `peer` is past its share.
    public func isOver(_ peer: PeerAddress?) -> Bool {
        guard perPeer > 0, let peer else { return false }
        return queued(by: peer) > perPeer
    }

    /// `bytes` were queued for `peer`.
    func add(_ bytes: Int, for peer: PeerAddress?) {
        guard bytes > 0 else { return }
        used.add(bytes, ordering: .relaxed)
        if perPeer > 0, let peer { byPeer.withLock { $0[peer, default: 0] += bytes } }
    }

    /// `bytes` queued for `peer` were written, or dropped with their connection.
    func remove(_ bytes: Int, for peer: PeerAddress?) {
        guard bytes > 0 else { return }
        used.subtract(bytes, ordering: .relaxed)
        guard perPeer > 0, let peer else { return }
        byPeer.withLock { table in
            let left = table[peer, default: 0] - bytes
            if left <= 0 { table[peer] = nil } else { table[peer] = left }
        }
    }
}
