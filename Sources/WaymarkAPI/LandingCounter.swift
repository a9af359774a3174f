import Dispatch
import Foundation
import Synchronization
import Telemetry

/// One combination of what a landing is counted by (all but the minute), with its count
/// since the last flush: a landing adds one with a single atomic add, so the loops share no
/// lock to count. Cached answers hold theirs.
final class LandingTally: Sendable {
    let key: LandingCounter.Key
    let count = Atomic<UInt64>(0)
    /// Flushes in a row that found nothing to hand over.
    let idleFlushes = Atomic<Int>(0)

    init(key: LandingCounter.Key) {
        self.key = key
    }
}

/// Link landings, counted as telemetry with entry `web` (`bot` for bots): one `LandingTally` per combination
/// of dimensions (a bounded set: platforms × routes × outcomes × reasons of the current
/// revision), handed to the telemetry store as batches every second, like a client's, in
/// the minute of the hand-over (at most a second after the landing). A landing answers
/// before its count is durable — nobody was promised it — so a crash loses at most the last
/// second's.
final class LandingCounter: Sendable {
    struct Key: Hashable {
        var platform: Platform
        var appVersion: String?
        var revision: Int
        var outcome: Outcome
        var reason: FailureReason
        var route: String?
        var precondition: String?
        /// `web`, or `bot` for a crawler's or a `HEAD` landing.
        var entry: EntryPoint = .web
    }

    /// A tally per combination and event loop (`HTTPRequestHead.loop`, modulo
    /// `LandingCache.shardCount`): loops never add to the same atomic.
    private let tallies = Mutex<[Slot: LandingTally]>([:])

    struct Slot: Hashable {
        let key: Key
        let loop: Int
    }
    /// Unknown links' shapes landed since the last flush, by platform; at
    /// `maximumPendingShapes` distinct ones they are flushed at once.
    private let shapes = Mutex<[ShapeKey: UInt32]>([:])
    static let maximumPendingShapes = 4_096

    struct ShapeKey: Hashable {
        let platform: Platform
        let shape: String
        /// The visitor's network, hashed (`ShapeAllowance.sourceHash`).
        var source: UInt32 = 0
    }
    private let flushing = Mutex<Ticker?>(nil)
    /// Flushes run here one at a time, each until its batches are durable: so a flush asked
    /// for (`API.flushLandings`) completes after any flush the ticker had begun.
    private let flushQueue = DispatchQueue(label: "waymark.landings", qos: .utility)
    private let telemetry: TelemetryStore
    private let now: @Sendable () -> Date
    private let currentRevision: @Sendable () -> Int?
    /// Landings whose batch the telemetry store refused (a full disk), since start.
    let lost = Atomic<UInt64>(0)

    init(telemetry: TelemetryStore, now: @escaping @Sendable () -> Date, currentRevision: @escaping @Sendable () -> Int?) {
        self.telemetry = telemetry
        self.now = now
        self.currentRevision = currentRevision
    }

    deinit { flushing.withLock { $0?.cancel() } }

    /// The tally of `key` for event loop `loop`, made on first use (and the flushing started).
    func tally(for key: Key, loop: Int) -> LandingTally {
        let slot = Slot(key: key, loop: loop & (LandingCache.shardCount - 1))
        let tally = tallies.withLock { tallies in
            if let known = tallies[slot] { return known }
            let made = LandingTally(key: key)
            tallies[slot] = made
            return made
        }
        flushing.withLock { ticker in
            if ticker == nil {
                ticker = Ticker(every: 1, on: flushQueue) { [weak self] in self?.flushNow() }
            }
        }
        return tally
    }

    func record(_ tally: LandingTally) {
        tally.count.add(1, ordering: .relaxed)
    }

    /// Counts an unknown link's shape (`LinkShape`: nothing personal in it).
    func recordShape(_ shape: String, platform: Platform, source: UInt32 = 0) {
        let full = shapes.withLock { shapes in
            shapes[ShapeKey(platform: platform, shape: shape, source: source), default: 0] &+= 1
            return shapes.count >= Self.maximumPendingShapes
        }
        if full { flush() }
    }

    /// Flushes on the flush queue; `completion` once what was counted before is durable.
    func flush(_ completion: (@Sendable () -> Void)? = nil) {
        flushQueue.async { [self] in
            flushNow()
            completion?()
        }
    }

    /// Hands every tally's count and every shape to the telemetry store and waits until they
    /// are durable (on the flush queue only). A tally of another revision than the current
    /// one, idle for two flushes, is forgotten (no cached answer holds it any more: answers
    /// are kept per store generation).
    private func flushNow() {
        let current = currentRevision()
        let minute = Int32(clamping: Int(now().timeIntervalSince1970.rounded(.down)) / 60)
        let taken = tallies.withLock { tallies -> [(Key, UInt64)] in
            var taken: [Key: UInt64] = [:]
            for (slot, tally) in tallies {
                let count = tally.count.exchange(0, ordering: .relaxed)
                if count > 0 {
                    taken[slot.key, default: 0] += count
                    tally.idleFlushes.store(0, ordering: .relaxed)
                } else if tally.idleFlushes.add(1, ordering: .relaxed).newValue >= 2, let current, slot.key.revision != current {
                    tallies[slot] = nil
                }
            }
            return taken.map { ($0.key, $0.value) }
        }
        let landedShapes = shapes.withLock { shapes in
            defer { shapes = [:] }
            return shapes
        }
        let batches = Self.batches(taken, minute: minute) + Self.shapeBatches(landedShapes, minute: minute)
        guard !batches.isEmpty else { return }
        let group = DispatchGroup()
        for (batch, events) in batches {
            group.enter()
            telemetry.submit(batch) { result in
                if case .failure = result { self.lost.add(events, ordering: .relaxed) }
                group.leave()
            }
        }
        group.wait()
    }

    /// The shapes as one batch per platform (no tallies: they are counted by `batches`).
    static func shapeBatches(_ shapes: [ShapeKey: UInt32], minute: Int32) -> [(Batch, UInt64)] {
        var byPlatform: [Platform: Batch] = [:]
        for (key, count) in shapes {
            byPlatform[key.platform, default: { var batch = Batch(); batch.platform = key.platform; return batch }()].shapes
                .append(ShapeTally(minute: minute, entry: EntryPoint.web.rawValue, shape: Array(key.shape.utf8), count: count, source: key.source))
        }
        return byPlatform.values.map { ($0, 0) }
    }

    /// One batch per (platform, app version, revision), as a client of that build sends.
    static func batches(_ counts: [(Key, UInt64)], minute: Int32) -> [(Batch, UInt64)] {
        struct Client: Hashable { let platform: Platform, appVersion: String?, revision: Int }
        var grouped: [Client: [(Key, UInt64)]] = [:]
        for (key, count) in counts { grouped[Client(platform: key.platform, appVersion: key.appVersion, revision: key.revision), default: []].append((key, count)) }
        return grouped.map { client, entries in
            var batch = Batch()
            batch.platform = client.platform
            batch.appVersion = client.appVersion.map { Array($0.utf8) }
            batch.revision = UInt32(clamping: client.revision)
            var routeSlots: [String: UInt16] = [:], preconditionSlots: [String: UInt16] = [:]
            func slot(_ name: String?, _ slots: inout [String: UInt16], _ names: inout [[UInt8]]) -> UInt16 {
                guard let name else { return 0 }
                if let known = slots[name] { return known }
                names.append(Array(name.utf8))
                slots[name] = UInt16(names.count + 1)
                return UInt16(names.count + 1)
            }
            var events: UInt64 = 0
            for (key, total) in entries {
                // A tally's count fits one event's `count` many times over; split past it.
                var left = total
                while left > 0 {
                    let count = UInt32(min(left, UInt64(TelemetryLimits().maximumCount)))
                    batch.tallies.append(Tally(minute: minute, entry: key.entry.rawValue, outcome: key.outcome.rawValue,
                                               reason: key.reason.rawValue, route: slot(key.route, &routeSlots, &batch.routes),
                                               precondition: slot(key.precondition, &preconditionSlots, &batch.preconditions), count: count))
                    left -= UInt64(count)
                }
                events += total
            }
            return (batch, events)
        }
    }
}
