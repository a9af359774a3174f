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

/// Link landings, counted as telemetry with entry `web`: one `LandingTally` per combination
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
    }

    private let tallies = Mutex<[Key: LandingTally]>([:])
    private let flushing = Mutex<Ticker?>(nil)
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

    /// The tally of `key`, made on first use (and the flushing started).
    func tally(for key: Key) -> LandingTally {
        let tally = tallies.withLock { tallies in
            if let known = tallies[key] { return known }
            let made = LandingTally(key: key)
            tallies[key] = made
            return made
        }
        flushing.withLock { ticker in
            if ticker == nil {
                ticker = Ticker(every: 1, on: DispatchQueue(label: "waymark.landings", qos: .utility)) { [weak self] in self?.flush() }
            }
        }
        return tally
    }

    func record(_ tally: LandingTally) {
        tally.count.add(1, ordering: .relaxed)
    }

    /// Hands every tally's count to the telemetry store; `completion` once it is durable.
    /// A tally of another revision than the current one, idle for two flushes, is forgotten
    /// (no cached answer holds it any more: answers are kept per store generation).
    func flush(_ completion: (@Sendable () -> Void)? = nil) {
        let current = currentRevision()
        let minute = Int32(clamping: Int(now().timeIntervalSince1970.rounded(.down)) / 60)
        let taken = tallies.withLock { tallies -> [(Key, UInt64)] in
            var taken: [(Key, UInt64)] = []
            for (key, tally) in tallies {
                let count = tally.count.exchange(0, ordering: .relaxed)
                if count > 0 {
                    taken.append((key, count))
                    tally.idleFlushes.store(0, ordering: .relaxed)
                } else if tally.idleFlushes.add(1, ordering: .relaxed).newValue >= 2, let current, key.revision != current {
                    tallies[key] = nil
                }
            }
            return taken
        }
        let batches = Self.batches(taken, minute: minute)
        guard !batches.isEmpty else {
            completion?()
            return
        }
        let group = DispatchGroup()
        for (batch, events) in batches {
            group.enter()
            telemetry.submit(batch) { result in
                if case .failure = result { self.lost.add(events, ordering: .relaxed) }
                group.leave()
            }
        }
        if let completion { group.notify(queue: .global(qos: .utility), execute: completion) }
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
                    batch.tallies.append(Tally(minute: minute, entry: EntryPoint.web.rawValue, outcome: key.outcome.rawValue,
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
