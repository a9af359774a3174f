import Dispatch
import Foundation
import Synchronization
import Telemetry

/// Link landings, counted as telemetry with entry `web`: added up in memory per minute and
/// dimension (a bounded set: platforms × routes × outcomes × reasons), and handed to the
/// telemetry store as batches every second, like a client's. A landing answers before it
/// is durable — its count is not something a client was promised — so a crash loses at most
/// the last second's.
final class LandingCounter: Sendable {
    struct Key: Hashable {
        var platform: Platform
        var appVersion: String?
        var revision: Int
        var minute: Int32
        var outcome: Outcome
        var reason: FailureReason
        var route: String?
        var precondition: String?
    }

    private let pending = Mutex<[Key: UInt32]>([:])
    private let flushing = Mutex<Ticker?>(nil)
    private let telemetry: TelemetryStore
    /// Landings whose batch the telemetry store refused (a full disk), since start.
    let lost = Atomic<UInt64>(0)
    /// Landings counted, since start.
    let counted = Atomic<UInt64>(0)
    /// Distinct keys held before a flush: past it, new ones are flushed at once.
    static let maximumPending = 4_096

    init(telemetry: TelemetryStore) {
        self.telemetry = telemetry
    }

    deinit { flushing.withLock { $0?.cancel() } }

    func record(_ key: Key) {
        let full = pending.withLock { pending -> Bool in
            pending[key, default: 0] &+= 1
            return pending.count >= Self.maximumPending
        }
        counted.add(1, ordering: .relaxed)
        if full { flush() }
        startFlushing()
    }

    /// Hands what is pending to the telemetry store; `completion` once it is durable.
    func flush(_ completion: (@Sendable () -> Void)? = nil) {
        let taken = pending.withLock { pending in
            defer { pending = [:] }
            return pending
        }
        let batches = Self.batches(taken)
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

    private func startFlushing() {
        flushing.withLock { ticker in
            guard ticker == nil else { return }
            ticker = Ticker(every: 1, on: DispatchQueue(label: "waymark.landings", qos: .utility)) { [weak self] in self?.flush() }
        }
    }

    /// One batch per (platform, app version, revision), as a client of that build sends.
    static func batches(_ counts: [Key: UInt32]) -> [(Batch, UInt64)] {
        struct Client: Hashable { let platform: Platform, appVersion: String?, revision: Int }
        var grouped: [Client: [(Key, UInt32)]] = [:]
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
            for (key, count) in entries.sorted(by: { $0.0.minute < $1.0.minute }) {
                batch.tallies.append(Tally(minute: key.minute, entry: EntryPoint.web.rawValue, outcome: key.outcome.rawValue,
                                           reason: key.reason.rawValue, route: slot(key.route, &routeSlots, &batch.routes),
                                           precondition: slot(key.precondition, &preconditionSlots, &batch.preconditions), count: count))
                events += UInt64(count)
            }
            return (batch, events)
        }
    }
}
