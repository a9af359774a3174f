import Foundation
import HTTPCore
import LinkLanding
import ManifestStore
import RouteEngine
import Synchronization
import Telemetry

/// What link landing needs of one store generation: the link hosts, and for each kind of
/// visitor the engine of the newest build of its platform with that schema's `landing`
/// addresses, the routes by id, and when the answers may next change by themselves. Built
/// once per generation off the loop (`LandingCache`), then read by every landing on it.
final class LandingTable: Sendable {
    /// The engine a kind of visitor's links resolve with, and whose addresses it lands on.
    struct Side: Sendable {
        let resolver: Resolver
        /// The build, for telemetry: its version is counted only for a visitor of its platform.
        let key: SchemaKey
        let landing: Landing?
        /// The schema's app name: a link card's title when its route has no preview title.
        let app: String
        /// The Android package and the custom schemes an in-app browser's "Open in the app" uses.
        let package: String?
        let schemes: [String]
    }

    let generation: Int
    /// Every schema's universal-link hosts, lowercased.
    let hosts: Set<String>
    /// The stable revision (a rollout's candidate is for cohorts, and a browser has none).
    let revision: Int
    let sides: [Visitor: Side]
    let routes: [String: RouteSpec]
    /// Every route window edge and scheduled publish after the table was made, in order: a
    /// cached landing must not outlive the next one. All of them, not only the first, so
    /// that once an edge passes the one after it is known (`nextChange(after:)`) and
    /// landings are kept again rather than answered `no-cache` until the store next changes.
    let edges: [Date]

    /// The hosts links land on in `snapshot`, without building anything.
    static func hosts(of snapshot: StoreSnapshot) -> Set<String> {
        Set(snapshot.schemas.values.flatMap(\.schema.hosts))
    }

    init(generation: Int, snapshot: StoreSnapshot, now: Date, resolver: (Revision, StoredSchema) -> Resolver,
         document: (Revision) -> RoutesDocument?) {
        self.generation = generation
        hosts = Self.hosts(of: snapshot)
        revision = snapshot.current?.number ?? 0
        var newest: [String: StoredSchema] = [:]
        for stored in snapshot.orderedSchemas where newest[stored.schema.platform].map({ VersionOrder.precedes($0.schema.version, stored.schema.version) }) ?? true {
            newest[stored.schema.platform] = stored
        }
        var sides: [Visitor: Side] = [:]
        var routes: [String: RouteSpec] = [:]
        var edges: [Date] = snapshot.schedules.filter { $0.status == .pending }.map(\.at)
        if let current = snapshot.current {
            for visitor in Visitor.allCases {
                // A platform without a schema lands as the other's newest build would (desktops: iOS's, else Android's).
                let order = visitor == .android ? ["android", "ios"] : ["ios", "android"]
                guard let stored = order.lazy.compactMap({ newest[$0] }).first else { continue }
                sides[visitor] = Side(resolver: resolver(current, stored), key: stored.key, landing: stored.schema.landing, app: stored.schema.app,
                                       package: stored.schema.android?.package, schemes: stored.schema.schemes)
            }
            for route in document(current)?.routes ?? [] {
                routes[route.id] = route
                edges += [route.window.start, route.window.end].compactMap { $0 }
            }
        }
        self.sides = sides
        self.routes = routes
        self.edges = Array(Set(edges.filter { $0 > now })).sorted()
    }

    /// The first edge after `now`, if one is left.
    /// - Complexity: O(log edges).
    func nextChange(after now: Date) -> Date? { Self.nextEdge(in: edges, after: now) }

    /// The first of the ascending `edges` after `now` (binary search).
    static func nextEdge(in edges: [Date], after now: Date) -> Date? {
        var low = 0, high = edges.count
        while low < high {
            let middle = (low + high) / 2
            if edges[middle] > now { high = middle } else { low = middle + 1 }
        }
        return low < edges.count ? edges[low] : nil
    }
}

/// The landing table of the store's generation, made on first use after each change, and
/// the answers given on it: a link opened again (the same `Host` field, request target and
/// kind of visitor) is answered from here, prepared, without resolving it again. Bounded:
/// past `maximumAnswers` a shard's answers are dropped and made again, so a scanner's random
/// links cost it time, never memory. Sharded by event loop (`HTTPRequestHead.loop`): each
/// loop finds its answers under a lock of its own, so the loops share no lock and no cache
/// line on a landing (one shared lock cost the two loops of the benchmark about a tenth of
/// their throughput, in lock hand-offs no instruction count shows).
final class LandingCache: Sendable {
    /// What a kept answer is found by: the `Host` field as sent, the request target, and
    /// the kind of visitor (platform and agent); with one word hashed from them (`hash(host:target:visitor:)`).
    struct AnswerKey {
        let host: String
        let target: String
        let visitor: LandingVisitor
        let hash: UInt64

        init(host: String, target: String, visitor: LandingVisitor) {
            var host = host
            hash = host.withUTF8 { Self.hash(host: $0, target: target, visitor: visitor) }
            (self.host, self.target, self.visitor) = (host, target, visitor)
        }

        /// Telemetry's byte hash (`NameTable.hash`) of the host and of the target, mixed with
        /// the visitor: SipHash over a long target cost a landing more than its lookup did.
        static func hash(host: UnsafeBufferPointer<UInt8>, target: String, visitor: LandingVisitor) -> UInt64 {
            var target = target
            let targetHash = target.withUTF8 { NameTable.hash($0) }
            return NameTable.hash(host) ^ (targetHash &* 0x9E37_79B9_7F4A_7C15) ^ visitor.code
        }

        /// Whether this is the key of a request with these: its host compared as bytes, so a
        /// lookup needs no `String` of the field.
        func matches(hash: UInt64, host field: UnsafeBufferPointer<UInt8>, target: String, visitor: LandingVisitor) -> Bool {
            guard self.hash == hash, self.visitor == visitor, self.target == target else { return false }
            var host = host
            return host.withUTF8 { $0.count == field.count && ($0.count == 0 || memcmp($0.baseAddress!, field.baseAddress!, $0.count) == 0) }
        }
    }

    /// A shard's kept answers: open addressing on the key's hash, linear probing, at most
    /// half full, grown by doubling up to room for `maximumAnswers`.
    struct Answers {
        private var slots: [(key: AnswerKey, answer: Answer)?] = Array(repeating: nil, count: 64)
        private(set) var count = 0

        func find(hash: UInt64, host: UnsafeBufferPointer<UInt8>, target: String, visitor: LandingVisitor) -> Answer? {
            let mask = slots.count - 1
            var index = Int(truncatingIfNeeded: hash) & mask
            while let slot = slots[index] {
                if slot.key.matches(hash: hash, host: host, target: target, visitor: visitor) { return slot.answer }
                index = (index + 1) & mask
            }
            return nil
        }

        mutating func insert(_ answer: Answer, for key: AnswerKey) {
            if (count + 1) * 2 > slots.count { grow() }
            let mask = slots.count - 1
            var index = Int(truncatingIfNeeded: key.hash) & mask
            while let slot = slots[index] {
                if slot.key.hash == key.hash, slot.key.visitor == key.visitor, slot.key.target == key.target, slot.key.host == key.host {
                    slots[index] = (key, answer)
                    return
                }
                index = (index + 1) & mask
            }
            slots[index] = (key, answer)
            count += 1
        }

        mutating func removeAll() {
            for index in slots.indices { slots[index] = nil }
            count = 0
        }

        private mutating func grow() {
            let old = slots
            slots = Array(repeating: nil, count: old.count * 2)
            count = 0
            for case let (key, answer)? in old { insert(answer, for: key) }
        }
    }

    /// A landing's answer and what it is counted as, usable until `validUntil` (so its
    /// `Cache-Control` lifetime never reaches past the table's next change).
    /// A class, so that finding one under the lock costs one retain, not a copy of each field.
    final class Answer: Sendable {
        let response: HTTPResponse
        let tally: LandingTally
        let validUntil: Date

        init(response: HTTPResponse, tally: LandingTally, validUntil: Date) {
            (self.response, self.tally, self.validUntil) = (response, tally, validUntil)
        }
    }

    static let maximumAnswers = 4_096
    static let shardCount = 16

    /// One loop's table and answers. A class each, so shards do not share a cache line.
    private final class Shard: Sendable {
        let state = Mutex<(table: LandingTable?, answers: Answers)>((nil, Answers()))
    }

    private let shards = (0..<LandingCache.shardCount).map { _ in Shard() }
    /// The newest table made, from which a shard takes it.
    private let newest = Mutex<LandingTable?>(nil)

    private func shard(_ loop: Int) -> Shard { shards[loop & (Self.shardCount - 1)] }

    /// What a loop finds for a landing.
    enum Found {
        /// An answer kept for the key (the caller checks its `validUntil`).
        case answer(Answer)
        /// No answer; the table to make one with.
        case table(LandingTable)
        /// The generation's table is not made yet.
        case nothing
    }

    /// One lock, the loop's own; a hit touches nothing another loop touches (not even the
    /// shared table's reference count).
    /// - Parameter host: the `Host` field's bytes, as sent.
    func lookup(generation: Int, host: UnsafeBufferPointer<UInt8>, target: String, visitor: LandingVisitor, loop: Int) -> Found {
        let shard = shard(loop)
        let hash = AnswerKey.hash(host: host, target: target, visitor: visitor)
        let found = shard.state.withLock { state -> Found in
            guard let table = state.table, table.generation == generation else { return .nothing }
            if let answer = state.answers.find(hash: hash, host: host, target: target, visitor: visitor) { return .answer(answer) }
            return .table(table)
        }
        if case .nothing = found {
            guard let table = table(generation: generation) else { return .nothing }
            shard.state.withLock { state in
                if state.table.map({ $0.generation < table.generation }) ?? true { state = (table, Answers()) }
            }
            return .table(table)
        }
        return found
    }

    func table(generation: Int) -> LandingTable? {
        newest.withLock { $0?.generation == generation ? $0 : nil }
    }

    /// The newest table made, whatever its generation.
    var newestTable: LandingTable? { newest.withLock { $0 } }

    func remember(_ made: LandingTable) {
        newest.withLock { kept in if kept.map({ $0.generation < made.generation }) ?? true { kept = made } }
    }

    func remember(_ answer: Answer, for key: AnswerKey, generation: Int, loop: Int) {
        shard(loop).state.withLock { state in
            guard state.table?.generation == generation else { return }
            if state.answers.count >= Self.maximumAnswers { state.answers.removeAll() }
            state.answers.insert(answer, for: key)
        }
    }
}
