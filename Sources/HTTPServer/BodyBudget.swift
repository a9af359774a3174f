import Synchronization

import HTTPCore

/// The request body bytes every connection of a server may hold together
/// (`ServerConfiguration.maximumBufferedBodyBytes`), the share of them one peer (an
/// IPv4 address, an IPv6 /64) may hold (`maximumBufferedBodyBytesPerPeer`), and the share
/// one network (an IPv4 /24, an IPv6 /48) may hold, twice a peer's (`perNetwork`): many
/// addresses of one attacker's network hold half the budget at most. A body's
/// declared length is reserved at the end of its head, before any of it is read; a
/// chunked body's bytes as they arrive; all of it is released once the request is
/// answered, or once its connection closes mid-body; a request handed to a deferred
/// handler holds its bytes (`BodyLease`) until the handler lets go of it. Without the total, each authorized client could make
/// the server buffer a maximum-size body at once; without the share, one address could
/// hold the whole total and every other client's body would be refused.
public final class BodyBudget: Sendable {
    public let limit: Int
    /// The most one peer may hold; 0: no share (only the total applies).
    public let perPeer: Int
    /// The most the peers of one network (`PeerAddress.networkKey`) may hold together:
    /// twice `perPeer` (0 with it).
    public var perNetwork: Int { perPeer * 2 }
    private let used = Atomic<Int>(0)
    /// Bytes held per peer and per network, only while one holds some (so the tables never
    /// outgrow the connections with a body in progress).
    private let byPeer = Mutex<(peers: [PeerAddress: Int], networks: [UInt64: Int])>(([:], [:]))
    /// Reservations refused (heads answered 503, or chunked bodies cut), since start.
    public let refused = Atomic<UInt64>(0)
    /// Of those, the ones refused because their peer held its share.
    public let refusedOverShare = Atomic<UInt64>(0)

    public init(limit: Int, perPeer: Int = 0) {
        self.limit = limit
        self.perPeer = perPeer
    }

    /// Bytes reserved now.
    public var reserved: Int { used.load(ordering: .relaxed) }

    /// Bytes `peer` holds now.
    public func reserved(by peer: PeerAddress) -> Int { byPeer.withLock { $0.peers[peer, default: 0] } }

    /// Bytes the peers of `peer`'s network hold now.
    public func reserved(byNetworkOf peer: PeerAddress) -> Int { byPeer.withLock { $0.networks[peer.networkKey, default: 0] } }

    /// Reserves `bytes` for `peer` (nil: unknown, only the total applies); false, with
    /// nothing reserved, when they do not fit the peer's share or the total.
    func reserve(_ bytes: Int, for peer: PeerAddress?) -> Bool {
        let sharing = perPeer > 0 && peer != nil
        if sharing {
            let network = peer!.networkKey, perNetwork = perNetwork
            let fits = byPeer.withLock { table -> Bool in
                let held = table.peers[peer!, default: 0]
                guard held + bytes <= perPeer else { return false }
                if network != 0 {
                    let together = table.networks[network, default: 0]
                    guard together + bytes <= perNetwork else { return false }
                    table.networks[network] = together + bytes
                }
                table.peers[peer!] = held + bytes
                return true
            }
            guard fits else {
                refused.add(1, ordering: .relaxed)
                refusedOverShare.add(1, ordering: .relaxed)
                return false
            }
        }
        var current = used.load(ordering: .relaxed)
        while true {
            guard current + bytes <= limit else {
                refused.add(1, ordering: .relaxed)
                if sharing { giveBack(bytes, from: peer!) }
                return false
            }
            let (exchanged, original) = used.compareExchange(expected: current, desired: current + bytes, ordering: .acquiringAndReleasing)
            if exchanged { return true }
            current = original
        }
    }

    /// Gives back `bytes` that `reserve(_:for:)` reserved for `peer`.
    func release(_ bytes: Int, for peer: PeerAddress?) {
        guard bytes > 0 else { return }
        used.subtract(bytes, ordering: .acquiringAndReleasing)
        if perPeer > 0, let peer { giveBack(bytes, from: peer) }
    }

    private func giveBack(_ bytes: Int, from peer: PeerAddress) {
        let network = peer.networkKey
        byPeer.withLock { table in
            let held = table.peers[peer, default: 0] - bytes
            if held <= 0 { table.peers[peer] = nil } else { table.peers[peer] = held }
            guard network != 0 else { return }
            let together = table.networks[network, default: 0] - bytes
            if together <= 0 { table.networks[network] = nil } else { table.networks[network] = together }
        }
    }
}

/// A request's body bytes, reserved in a `BodyBudget`, held by whatever holds the request
/// once its connection has handed it over (`ConnectionStateMachine.handOverBody`): given
/// back when the request is answered (`release`, before the connection decodes the next
/// request, whose body it may then reserve) or when the last holder lets go, whichever
/// comes first. A deferred handler's job holds its request, body and all, until it
/// answers, whether or not its connection is still open; were the bytes given back when a
/// client reset its connection, every request queued behind a slow job would hold a body
/// the budget no longer counts.
public final class BodyLease: Sendable {
    private let budget: BodyBudget
    public let bytes: Int
    private let peer: PeerAddress?
    private let released = Atomic<Bool>(false)

    init(_ budget: BodyBudget, bytes: Int, peer: PeerAddress?) {
        self.budget = budget
        self.bytes = bytes
        self.peer = peer
    }

    /// Gives the bytes back now; once, whoever calls it and however often.
    public func release() {
        guard !released.exchange(true, ordering: .acquiringAndReleasing) else { return }
        budget.release(bytes, for: peer)
    }

    deinit { release() }
}
