import Synchronization

import HTTPCore

/// Open connections per peer across every loop, so that one address cannot take the
/// server's connections (`ServerConfiguration.maximumConnectionsPerPeer`). Touched on
/// accept and close only, never per request.
final class PeerTable: Sendable {
    let limit: Int
    private let open = Mutex<[PeerAddress: Int]>([:])

    /// `limit` 0: no cap (nothing is counted).
    init(limit: Int) {
        self.limit = limit
    }

    /// Counts a new connection from `peer`; false (nothing counted) when it has `limit`.
    func admit(_ peer: PeerAddress) -> Bool {
        guard limit > 0 else { return true }
        return open.withLock { open in
            let held = open[peer, default: 0]
            guard held < limit else { return false }
            open[peer] = held + 1
            return true
        }
    }

    /// A connection `admit` counted has closed.
    func release(_ peer: PeerAddress) {
        guard limit > 0 else { return }
        open.withLock { open in
            let held = open[peer, default: 0]
            if held <= 1 { open[peer] = nil } else { open[peer] = held - 1 }
        }
    }

    /// Connections held by `peer` now (tests).
    func held(by peer: PeerAddress) -> Int { open.withLock { $0[peer, default: 0] } }
}
