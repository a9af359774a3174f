import Dispatch
import HTTPCore
import Synchronization

extension WorkQueue {
    /// Who holds how many of one lane's places: per token and per peer, and in the reads lane
    /// per network (`WorkQueue.networkShares`) and the document jobs among them.
    struct Shares {
        var tokens: [String: Int] = [:]
        var peers: [PeerAddress: Int] = [:]
        /// By the network a peer is in (an IPv4 /24, an IPv6 /48), in the reads lane only:
        /// the peers of one network together hold at most `networkShares` peers' shares
        /// there (half the lane), so an attacker's many addresses queue no more QR codes
        /// than two do.
        var networks: [UInt64: Int] = [:]
        /// Of those, document jobs (`documentShare`), in the reads lane.
        var documentTokens: [String: Int] = [:]
        var documentPeers: [PeerAddress: Int] = [:]

        /// Whether `caller`'s token or peer (or, `byNetwork`, its network) already holds `share` jobs.
        func holdsShare(_ caller: WorkCaller, _ share: Int, byNetwork: Bool) -> Bool {
            if let token = caller.token, tokens[token, default: 0] >= share { return true }
            if let peer = caller.peer, peers[peer, default: 0] >= share { return true }
            if byNetwork, let peer = caller.peer, networks[peer.networkKey, default: 0] >= WorkQueue.networkShares * share { return true }
            return false
        }

        /// Whether `caller`'s token or peer already holds its share of document jobs.
        func holdsDocuments(_ caller: WorkCaller) -> Bool {
            if let token = caller.token, documentTokens[token, default: 0] >= WorkQueue.documentShare { return true }
            if let peer = caller.peer, documentPeers[peer, default: 0] >= WorkQueue.documentPeerShare { return true }
            return false
        }

        mutating func add(_ caller: WorkCaller, _ change: Int, document: Bool, byNetwork: Bool) {
            if let token = caller.token {
                Self.add(change, to: token, in: &tokens)
                if document { Self.add(change, to: token, in: &documentTokens) }
            }
            if let peer = caller.peer {
                Self.add(change, to: peer, in: &peers)
                if document { Self.add(change, to: peer, in: &documentPeers) }
                if byNetwork { Self.add(change, to: peer.networkKey, in: &networks) }
            }
        }

        private static func add<Key: Hashable>(_ change: Int, to key: Key, in table: inout [Key: Int]) {
            let held = table[key, default: 0] + change
            table[key] = held > 0 ? held : nil
        }
    }

    final class Lane: Sendable {
        let queues: [DispatchQueue]
        let pending = Atomic<Int>(0)
        let refused = Atomic<UInt64>(0)
        private let next = Atomic<Int>(0)

        /// One concurrent queue, or `serial` serial ones taken in turn.
        init(_ name: String, qos: DispatchQoS, serial: Int? = nil) {
            if let serial {
                queues = (0..<serial).map { DispatchQueue(label: "waymark.work.\(name).\($0)", qos: qos) }
            } else {
                queues = [DispatchQueue(label: "waymark.work.\(name)", qos: qos, attributes: .concurrent)]
            }
        }

        var queue: DispatchQueue {
            queues.count == 1 ? queues[0] : queues[next.add(1, ordering: .relaxed).oldValue % queues.count]
        }
    }
}
