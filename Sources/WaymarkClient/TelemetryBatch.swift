import Foundation
import RouteEngine

/// One batch as it goes to `POST /v1/telemetry` (docs/api.md, "The envelope"): formed once,
/// kept in the journal with its id, and sent byte for byte the same on every retry, so the
/// server, which remembers accepted ids, counts it exactly once.
struct TelemetryBatch: Hashable, Sendable {
    /// 32 lowercase hex digits, 128 random bits.
    let id: String
    /// The request body, exactly as first formed.
    let body: JSONValue
    /// Event lines in it, and the resolutions they add up to.
    let events: Int
    let resolutions: Int
    /// The `client.dropped` it reports.
    var drops: Int { body["client"]?["dropped"]?.intValue ?? 0 }

    /// The server's bounds on what one batch may claim (docs/api.md): an event's count,
    /// the counts of a batch, and `client.dropped`.
    static let maximumEventCount = 1_000
    static let maximumBatchCount = 10_000
    static let maximumDropped = 100_000
    /// Event lines per batch the server takes at most.
    static let maximumEvents = 1_000

    /// What the install says about itself in the envelope: its cohort and the day's source key.
    struct Install: Hashable, Sendable {
        var id: UUID
        var cohort: Int { Cohort.of(installID: id) }

        /// The first 16 bytes of SHA-256 of `waymark-source/1|<install id>|<UTC day>`, in hex:
        /// it changes every day and cannot be turned back into the install id.
        func sourceKey(day: String) -> String {
            let text = "waymark-source/1|\(id.uuidString)|\(day)"
            return SHA256.hash(Array(text.utf8)).prefix(16).hexString
        }
    }

    /// A fresh id: 128 bits from the system's random source.
    static func makeID() -> String {
        var generator = SystemRandomNumberGenerator()
        let bytes = (0..<16).map { _ in UInt8.random(in: 0...255, using: &generator) }
        return bytes.hexString
    }

    /// The UTC day of `date`, `YYYY-MM-DD`.
    static func day(of date: Date) -> String {
        String(TelemetryEvent.timestamp(Int(date.timeIntervalSince1970)).prefix(10))
    }

    /// Forms the next batch from what is pending: the oldest client's events in the order
    /// first seen, each count split into lines of at most 1,000, up to `lines` lines and
    /// 10,000 resolutions in all; drops ride along (at most 100,000). Returns the batch and
    /// what it took from each event (an event may be taken in part, the rest stays pending).
    static func form(id: String, order: [TelemetryEvent], pending: [TelemetryEvent: Int], dropped: Int, lines: Int,
                     install: Install?, now: Date) -> (batch: TelemetryBatch, taken: [(TelemetryEvent, Int)], reportedDrops: Int)? {
        guard let first = order.first else { return nil }
        let lineBudget = max(1, min(lines, maximumEvents))
        var taken: [(TelemetryEvent, Int)] = []
        var eventLines: [JSONValue] = []
        var total = 0
        for event in order where event.client == first.client {
            guard eventLines.count < lineBudget, total < maximumBatchCount else { break }
            var left = pending[event] ?? 0
            var took = 0
            while left > 0, eventLines.count < lineBudget, total < maximumBatchCount {
                let count = min(left, maximumEventCount, maximumBatchCount - total)
                eventLines.append(event.json(count: count))
                left -= count
                took += count
                total += count
            }
            if took > 0 { taken.append((event, took)) }
        }
        var client: [String: JSONValue] = ["platform": .string(first.client.platform), "appVersion": .string(first.client.appVersion),
                                           "revision": .int(first.client.revision)]
        let reportedDrops = min(dropped, maximumDropped)
        if reportedDrops > 0 { client["dropped"] = .int(reportedDrops) }
        if let install {
            client["cohort"] = .int(install.cohort)
            client["source"] = .string(install.sourceKey(day: day(of: now)))
        }
        let body: JSONValue = ["batch": .string(id), "client": .object(client), "events": .array(eventLines)]
        return (TelemetryBatch(id: id, body: body, events: eventLines.count, resolutions: total), taken, reportedDrops)
    }

    init(id: String, body: JSONValue, events: Int, resolutions: Int) {
        self.id = id
        self.body = body
        self.events = events
        self.resolutions = resolutions
    }

    /// Back from the journal's `{"outgoing": body}` line; nil for anything else (a torn tail).
    init?(journal json: JSONValue) {
        guard let body = json["outgoing"], let id = body["batch"]?.stringValue, id.utf8.count == 32,
              let lines = body["events"]?.arrayValue, body["client"] != nil else { return nil }
        let counts = lines.compactMap { $0["count"]?.intValue }
        guard counts.count == lines.count else { return nil }
        self.init(id: id, body: body, events: lines.count, resolutions: counts.reduce(0, +))
    }

    /// The journal's line for it.
    var journalJSON: JSONValue { ["outgoing": body] }
}

extension TelemetryReporter {
    /// The log message a post's outcome makes (none for nothing to post).
    static func message(for outcome: TelemetryPostOutcome) -> ClientLogMessage? {
        switch outcome {
        case .idle: nil
        case .delivered(let events, let resolutions, let rejected):
            ClientLogMessage(rejected > 0 ? .warning : .debug, "telemetry",
                             "Delivered \(resolutions) resolutions in \(events) events; the server rejected \(rejected) events.")
        case .alreadyDelivered(_, let resolutions):
            ClientLogMessage(.info, "telemetry", "The server had this batch already (\(resolutions) resolutions): counted once.")
        case .refused(_, let resolutions, let message):
            ClientLogMessage(.error, "telemetry", "The server refused a batch of \(resolutions) resolutions, dropped: \(message.prefix(200))")
        case .retryLater(let status, _):
            ClientLogMessage(.warning, "telemetry", "Not delivered (\(status.map(String.init) ?? "no answer")); kept and retried.")
        }
    }
}
