import Foundation
import RouteEngine

public struct TelemetryConfiguration: Sendable {
    public var server: URL
    public var build: AppBuild
    /// A `telemetry:write` token.
    public var token: String?
    /// Where pending events are kept until the server has them, and the install id the
    /// envelope's cohort and source key come from: the manifest client's directory.
    public var cacheDirectory: URL
    /// Distinct events per batch (the server takes 1,000 at most).
    public var batchSize = 200
    /// How often pending events are posted, and the backoff after failures.
    public var backoff = Backoff(interval: 60, minimum: 5, maximum: 30 * 60)
    /// Distinct pending events kept at most; past it the oldest are dropped and counted.
    public var maximumPending = 5_000
    /// Events older than this are not posted (the server keeps 90 days): dropped and counted.
    public var maximumAge: TimeInterval = 80 * 24 * 3600
    /// The whole post's deadline, sending the batch and reading the answer included.
    public var requestTimeout: TimeInterval = 30
    /// Whether batches are posted over a constrained network (Low Data Mode on Apple's
    /// systems). Off by default: they wait in the journal for another network.
    public var postsOnConstrainedNetworks = false
    /// The longest answer to a post that is read (64 KiB): the server's is a few hundred bytes.
    public static let maximumAnswerBytes = 64 << 10
    /// Opt-in: a link that resolves to no route is reported with its shape (`LinkShape`,
    /// made on the device: nothing personal in it), so ops can see which unknown links
    /// people follow (`GET /v1/telemetry/unknown-links`). Off: no trace of the link leaves.
    public var reportsUnknownLinkShapes = false
    /// Where the reporter's log messages go (`ClientLogMessage`); nil: nowhere.
    public var log: ClientLog?
    /// What is recorded while the journal is shut by data protection (before the first
    /// unlock) is kept in a side journal without file protection, so a background launch
    /// iOS ends then does not lose it (`TelemetryReporter.sideJournalFile`). Off: in memory
    /// only — for an app whose files are `.complete`, shut at every lock.
    public var keepsEventsWhileLocked = true

    public init(server: URL, build: AppBuild, token: String?, cacheDirectory: URL) {
        self.server = server
        self.build = build
        self.token = token
        self.cacheDirectory = cacheDirectory
    }
}

/// How one post ended.
public enum TelemetryPostOutcome: Hashable, Sendable {
    /// Nothing was pending.
    case idle
    /// `202`: the server has them; `rejected` of them it refused one by one (and they are dropped).
    case delivered(events: Int, resolutions: Int, rejected: Int)
    /// `202` with `"duplicate": true`: the server had counted this batch already (its first
    /// `202` was lost on the way); delivered, and counted once.
    case alreadyDelivered(events: Int, resolutions: Int)
    /// `400`: the server refused the batch as invalid; dropped, never retried.
    case refused(events: Int, resolutions: Int, message: String)
    /// Kept, and tried again after the backoff (`401`/`403`, `429`, `5xx`, no network).
    case retryLater(status: Int?, retryAfter: TimeInterval?)

    public var isFailure: Bool {
        if case .retryLater = self { return true }
        return false
    }
}

/// Turns every dispatch result into the server's telemetry event, adds equal events up
/// (same minute, door, outcome, reason, route, destination, precondition, build and
/// revision) into one with a `count`, keeps them in a journal in the cache directory as
/// they are recorded, and posts them in batches. A batch is formed once, with a random id,
/// and kept in the journal until it has its answer, so a retry (after a lost `202`, a kill,
/// a timeout) sends the same id with the same events and the server counts it exactly once
/// (docs/api.md, "The envelope"). `202` is done; `400` drops the batch with a report;
/// anything else keeps it for the next try. A killed app loses only the events it had not
/// yet recorded.
public actor TelemetryReporter: DispatchObserver {
    public let configuration: TelemetryConfiguration
    private let transport: any Transport
    private let random: @Sendable () -> Double
    private let report: @Sendable (TelemetryPostOutcome) -> Void

    /// Pending counts by event, and the order events were first seen in (oldest first).
    private var pending: [TelemetryEvent: Int] = [:]
    private var order: [TelemetryEvent] = []
    /// Resolutions dropped (storage bound, age) and not yet reported: the next batch formed
    /// says how many in `client.dropped` (100,000 at most, the rest in the one after), and
    /// they are taken off once it is delivered.
    public var dropped: Int { unsentDrops + (outgoing?.drops ?? 0) }
    /// Drops in no batch yet.
    private var unsentDrops = 0
    /// The batch formed and not yet answered `202` or `400`: posted again, the same, until it is.
    private var outgoing: TelemetryBatch?
    private var journal: FileHandle?
    private var journalLines = 0
    private var loaded = false
    /// Whether the side journal (`sideJournalFile`) was read into memory in this run.
    private var sideLoaded = false
    private var sideLines = 0
    /// Whether the side journal may be on disk (read at load, or appended to in this run).
    private var sideFileExists = false
    private var keepsEventsWhileLocked: Bool { configuration.keepsEventsWhileLocked }
    public private(set) var consecutiveFailures = 0
    public private(set) var lastOutcome: TelemetryPostOutcome?
    private var lastRetryAfter: TimeInterval?

    public init(configuration: TelemetryConfiguration, transport: any Transport = URLSessionTransport(),
                random: @escaping @Sendable () -> Double = { Double.random(in: 0..<1) },
                report: @escaping @Sendable (TelemetryPostOutcome) -> Void = { _ in }) {
        self.configuration = configuration
        self.transport = transport
        self.random = random
        self.report = report
    }

    /// The journal: `telemetry-<platform>.jsonl` in the cache directory.
    public var journalFile: URL { configuration.cacheDirectory.appendingPathComponent("telemetry-\(configuration.build.platform).jsonl") }

    /// What is recorded while the journal cannot be read (before the device's first unlock,
    /// when data protection keeps it shut): `telemetry-<platform>.locked.jsonl`, written
    /// without file protection, so a background launch iOS ends before the first unlock keeps
    /// its events. It holds telemetry events only (minute, door, outcome, route names: no
    /// link, no user), joins the journal once that reads, and is removed then.
    ///
    /// `TelemetryConfiguration.keepsEventsWhileLocked` (on by default) turns it off, for an
    /// app whose files are `.complete` (shut whenever the device is locked, not only before the
    /// first unlock): what it records while its journal is shut then waits in memory only.
    public var sideJournalFile: URL { configuration.cacheDirectory.appendingPathComponent("telemetry-\(configuration.build.platform).locked.jsonl") }

    /// Resolutions recorded and not yet delivered.
    public var pendingResolutions: Int {
        loadIfNeeded()
        return pending.values.reduce(0, +) + (outgoing?.resolutions ?? 0)
    }

    // MARK: Recording

    public func dispatched(_ result: DispatchResult) async {
        guard let event = TelemetryEvent(result, build: configuration.build, shapes: configuration.reportsUnknownLinkShapes) else { return }
        record(event, count: 1)
    }

    /// Adds `count` resolutions of `event`, on disk before it returns.
    public func record(_ event: TelemetryEvent, count: Int) {
        loadIfNeeded()
        add(event, count)
        if loaded {
            append(event.journalJSON(count: count))
        } else if keepsEventsWhileLocked {
            appendToSideJournal(event.lockedJournalJSON(count: count))
        }
        enforceBound()
        if journalLines > 4 * configuration.maximumPending { rewriteJournal() }
    }

    private func add(_ event: TelemetryEvent, _ count: Int) {
        if let current = pending[event] {
            pending[event] = current + count
        } else {
            pending[event] = count
            order.append(event)
        }
    }

    /// Past `maximumPending` distinct events, the oldest go — down to nine tenths of the
    /// bound, so that an app offline for long rewrites its journal once per tenth, not
    /// once per event — counted in `dropped`.
    private func enforceBound() {
        guard order.count > configuration.maximumPending else { return }
        let excess = order.count - configuration.maximumPending * 9 / 10
        for event in order.prefix(excess) { unsentDrops += pending.removeValue(forKey: event) ?? 0 }
        order.removeFirst(excess)
        rewriteJournal()
    }

    // MARK: Posting

    /// Calls that joined one in flight (tests watch it to know an overlap happened).
    private(set) var joins = 0
    /// The flush in flight, which a flush called meanwhile joins.
    private var inFlight: Task<TelemetryPostOutcome, Never>?

    /// Posts one batch: the one formed earlier and not yet delivered, else a new one of the
    /// oldest client's events. Never throws. A flush called while one is in flight (the app
    /// entering the background during the scheduled one) joins it: a batch is never posted
    /// twice at once.
    @discardableResult
    public func flush(now: Date = Date()) async -> TelemetryPostOutcome {
        if let inFlight {
            joins += 1
            return await inFlight.value
        }
        let task = Task { await self.post(now: now) }
        inFlight = task
        let outcome = await task.value
        inFlight = nil
        return outcome
    }

    private func post(now: Date) async -> TelemetryPostOutcome {
        loadIfNeeded()
        // A journal that cannot be read yet may hold a batch already sent: it goes first, so nothing goes before it.
        guard loaded else { return finish(.retryLater(status: nil, retryAfter: nil)) }
        dropTooOld(now: now)
        guard let batch = outgoing ?? formBatch(now: now) else { return finish(.idle) }
        var headers = ["Content-Type": "application/json"]
        if let token = configuration.token { headers["Authorization"] = "Bearer \(token)" }
        // The server's answer is a few hundred bytes; a longer one is not read (a hostile server
        // or portal), and the batch stays for the next post.
        let request = TransportRequest(method: "POST", url: configuration.server.appendingPathComponent("v1/telemetry"), headers: headers,
                                       body: Data(batch.body.serializedBytes()), timeout: configuration.requestTimeout,
                                       maximumBodyBytes: TelemetryConfiguration.maximumAnswerBytes,
                                       allowsConstrainedNetwork: configuration.postsOnConstrainedNetworks)
        let response: TransportResponse
        do {
            response = try await transport.send(request)
        } catch {
            return finish(.retryLater(status: nil, retryAfter: nil))
        }
        switch response.status {
        case 202:
            let answer = try? JSONParser().parse(response.body)
            settle(batch)
            if answer?["duplicate"] == .bool(true) {
                // Its first post was counted and the 202 lost on the way: delivered, once.
                return finish(.alreadyDelivered(events: batch.events, resolutions: batch.resolutions))
            }
            let rejected = answer?["rejected"]?.arrayValue?.count ?? 0
            return finish(.delivered(events: batch.events, resolutions: batch.resolutions, rejected: rejected))
        case 400:
            settle(batch)
            let message = (try? JSONParser().parse(response.body))?["message"]?.stringValue ?? "400"
            return finish(.refused(events: batch.events, resolutions: batch.resolutions, message: message))
        default:
            return finish(.retryLater(status: response.status, retryAfter: response.retryAfter()))
        }
    }

    /// Posts batches until nothing is pending or a post fails.
    public func flushAll(now: Date = Date()) async -> TelemetryPostOutcome {
        var outcome = await flush(now: now)
        while !outcome.isFailure, outcome != .idle, outgoing != nil || !order.isEmpty { outcome = await flush(now: now) }
        return outcome
    }

    private func finish(_ outcome: TelemetryPostOutcome) -> TelemetryPostOutcome {
        consecutiveFailures = outcome.isFailure ? consecutiveFailures + 1 : 0
        if case .retryLater(_, let retryAfter) = outcome { lastRetryAfter = retryAfter } else { lastRetryAfter = nil }
        lastOutcome = outcome
        if outcome != .idle { report(outcome) }
        if let log = configuration.log, let message = Self.message(for: outcome) { log(message) }
        return outcome
    }

    /// Forms the next batch and moves its events from pending into it, in one atomic rewrite
    /// of the journal: after a kill, each resolution is either pending or in the batch, never both.
    private func formBatch(now: Date) -> TelemetryBatch? {
        let install = Cohort.installID(in: configuration.cacheDirectory).map(TelemetryBatch.Install.init(id:))
        guard let formed = TelemetryBatch.form(id: TelemetryBatch.makeID(), order: order, pending: pending, dropped: unsentDrops,
                                               lines: configuration.batchSize, install: install, now: now) else { return nil }
        for (event, count) in formed.taken {
            let left = (pending[event] ?? 0) - count
            pending[event] = left > 0 ? left : nil
        }
        order.removeAll { pending[$0] == nil }
        unsentDrops -= formed.reportedDrops
        outgoing = formed.batch
        rewriteJournal()
        return formed.batch
    }

    /// The batch has its answer (`202` or `400`): it is gone from the journal.
    private func settle(_ batch: TelemetryBatch) {
        guard outgoing == batch else { return }
        outgoing = nil
        rewriteJournal()
    }

    private func dropTooOld(now: Date) {
        let oldest = Int(now.timeIntervalSince1970 - configuration.maximumAge)
        let old = order.filter { $0.minute < oldest }
        guard !old.isEmpty else { return }
        for event in old { unsentDrops += pending.removeValue(forKey: event) ?? 0 }
        order.removeAll { pending[$0] == nil }
        rewriteJournal()
    }

    /// How long to wait before the next post.
    public func nextDelay() -> TimeInterval {
        configuration.backoff.delay(failures: consecutiveFailures, retryAfter: lastRetryAfter, random: random())
    }

    /// Posts on the schedule until the task is cancelled.
    public func run() async {
        while !Task.isCancelled {
            await Sleep.seconds(nextDelay())
            _ = await flushAll()
        }
    }

    // MARK: The journal

    /// One JSON object per line: the batch formed and not yet answered (`{"outgoing": body}`),
    /// `{"dropped": n}`, or an event with its client and count.
    /// Lines add up; a line that does not parse (the tail of a killed write) is skipped.
    /// Whether the cache directory reads and writes now (tests stand in for a shut device).
    var directoryIsOpen: @Sendable (URL) -> Bool = DurableFile.isReadableAndWritable

    private func loadIfNeeded() {
        guard !loaded else { return }
        let data: Data?
        switch DurableFile.contents(journalFile) {
        case .data(let bytes): data = bytes
        case .missing:
            // No journal yet: but before the first unlock no journal can be made either, so
            // the run is as locked (the side journal keeps what it records).
            guard !keepsEventsWhileLocked || directoryIsOpen(configuration.cacheDirectory) else {
                loadSideJournalIfNeeded()
                return
            }
            data = nil
        case .unreadable:
            // The journal is there but cannot be read now (before the first unlock): nothing
            // is written over it and nothing is posted; what is recorded meanwhile stays in
            // memory (within the bound) and joins it once it reads, at the next call. Unless
            // the directory itself reads and writes (the device is unlocked): then the journal
            // is damaged, and is moved aside rather than block telemetry for good.
            guard directoryIsOpen(configuration.cacheDirectory) else {
                loadSideJournalIfNeeded()
                return
            }
            let aside = journalFile.appendingPathExtension("unreadable")
            try? FileManager.default.removeItem(at: aside)
            guard (try? FileManager.default.moveItem(at: journalFile, to: aside)) != nil else {
                loadSideJournalIfNeeded()
                return
            }
            data = nil
        }
        // What an earlier run recorded while the journal was shut (it read the side journal
        // into memory, so in this run it is read once, whichever came first).
        loadSideJournalIfNeeded()
        loaded = true
        // The journal's events are older than what was recorded while it could not be read:
        // they go first (the bound drops the oldest, a batch takes the oldest).
        let recorded = order.map { ($0, pending[$0]!) }, recordedDrops = unsentDrops
        order = []
        pending = [:]
        unsentDrops = 0
        if let data {
            for line in data.split(separator: 0x0A) {
                guard let json = try? JSONParser().parse(line) else { continue }
                if let batch = TelemetryBatch(journal: json) {
                    outgoing = batch
                } else if let count = json["dropped"]?.intValue, count > 0 {
                    unsentDrops += count
                } else if let (event, count) = TelemetryEvent.fromJournal(json) {
                    add(event, count)
                }
            }
        }
        for (event, count) in recorded { add(event, count) }
        unsentDrops += recordedDrops
        rewriteJournal()
        enforceBound()
    }

    /// Reads the side journal into memory, once a run: events, and drops.
    private func loadSideJournalIfNeeded() {
        guard !sideLoaded else { return }
        sideLoaded = true
        guard case .data(let data) = DurableFile.contents(sideJournalFile) else { return }
        sideFileExists = true
        for line in data.split(separator: 0x0A) {
            guard let json = try? JSONParser().parse(line) else { continue }
            if let count = json["dropped"]?.intValue, count > 0 {
                unsentDrops += count
            } else if let (event, count) = TelemetryEvent.fromJournal(json) {
                add(event, count)
            }
            sideLines += 1
        }
    }

    /// Appends `line` to the side journal, made without file protection (readable and
    /// writable before the first unlock); past 4 × the bound it is rewritten from memory,
    /// which mirrors it.
    private func appendToSideJournal(_ line: JSONValue) {
        if sideLines > 4 * configuration.maximumPending {
            guard DurableFile.writeUnprotected(Data(pendingLines(locked: true)), to: sideJournalFile) else { return }
            sideFileExists = true
            sideLines = order.count
            return
        }
        var bytes = line.serializedBytes()
        bytes.append(0x0A)
        if DurableFile.appendUnprotected(Data(bytes), to: sideJournalFile) {
            sideFileExists = true
            sideLines += 1
        }
    }

    /// The drops and pending events as journal lines; `locked`: as the side journal keeps
    /// them (no shape).
    private func pendingLines(locked: Bool) -> [UInt8] {
        var bytes: [UInt8] = []
        if unsentDrops > 0 { bytes += JSONValue.object(["dropped": .int(unsentDrops)]).serializedBytes() + [0x0A] }
        for event in order {
            let count = pending[event]!
            bytes += (locked ? event.lockedJournalJSON(count: count) : event.journalJSON(count: count)).serializedBytes() + [0x0A]
        }
        return bytes
    }

    private func append(_ line: JSONValue) {
        guard loaded else { return }  // in memory until the journal reads
        if journal == nil { openJournal() }
        guard let journal else { return }
        var bytes = line.serializedBytes()
        bytes.append(0x0A)
        do {
            try journal.write(contentsOf: bytes)
            journalLines += 1
        } catch {
            // A full disk: the event stays in memory and is posted with the rest; a rewrite retries the file.
            self.journal = nil
        }
    }

    private func openJournal() {
        if !FileManager.default.fileExists(atPath: journalFile.path) {
            try? DurableFile.prepare(configuration.cacheDirectory)
            _ = FileManager.default.createFile(atPath: journalFile.path, contents: nil)
            DurableFile.excludeFromBackup(journalFile)
        }
        journal = try? FileHandle(forWritingTo: journalFile)
        _ = try? journal?.seekToEnd()
    }

    /// The whole pending state as a fresh journal, replacing the old one atomically.
    private func rewriteJournal() {
        guard loaded else { return }  // never over a journal that could not be read
        var bytes: [UInt8] = []
        if let outgoing { bytes += outgoing.journalJSON.serializedBytes() + [0x0A] }
        bytes += pendingLines(locked: false)
        try? journal?.close()
        journal = nil
        guard (try? DurableFile.write(Data(bytes), to: journalFile)) != nil else { return }
        journalLines = order.count
        openJournal()
        // Durable in the journal now, the side journal's events (read into memory when the
        // journal was loaded) are not kept twice: removed at the first rewrite that succeeds.
        if sideFileExists {
            try? FileManager.default.removeItem(at: sideJournalFile)
            sideFileExists = false
            sideLines = 0
        }
    }
}
