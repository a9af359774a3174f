import Dispatch
import Foundation
import HTTPCore
import HTTPServer
import LinkChecks
import ManifestStore
import RouteEngine
import Rollout
import Synchronization
import Telemetry

/// What every endpoint group shares: the store, telemetry, the options, the caches built
/// from revisions, the counters `/metrics` reports, and who may do what.
final class APIContext: Sendable {
    let store: ManifestStore
    let telemetry: TelemetryStore
    let options: API.Options
    /// Per-build manifests and the associated-domain files of the current revision.
    let manifests = ManifestCache()
    /// Stored revisions read as documents (from disk for history), so no request parses one
    /// again while it is kept.
    let documents: RevisionDocuments
    /// What link landing reads: the link hosts and each visitor's engine, per generation.
    let landings = LandingCache()
    /// What a new generation serves, made before readers move to it.
    let preparer: GenerationPreparer
    /// Link landings, counted as telemetry (entry `web`).
    let landingCounter: LandingCounter
    /// `GET /v1/revisions` as answered in one store generation (`RevisionEndpoints`).
    let revisionList = GenerationAnswer()
    /// `GET /v1/schedules` as answered in one store generation (`ScheduleEndpoints`).
    let scheduleList = GenerationAnswer()
    /// Revision and diff answers, which never change.
    let revisionAnswers = ResponseCache()
    /// QR codes by their parameters (link, level, format, scale): a code asked again is a
    /// lookup on the loop, not a symbol encoded again off it.
    let qrAnswers = ResponseCache(capacity: 64, maximumBytes: 16 << 20)
    /// What telemetry may name, rebuilt when the store changes.
    let vocabulary = VocabularyCache()
    /// Events refused one by one inside accepted batches, since start.
    let telemetryRejected = Atomic<UInt64>(0)
    /// What counts answers being made hold together (`TelemetryEndpoints.counts`): each
    /// reserves its size before its series are made, so however many readers run at once
    /// they hold at most `API.Options.answersInMakingBytes`.
    let answersInMaking = AnswerBudget(limit: API.Options.answersInMakingBytes)
    /// Unknown-link shapes each install and network may add in a minute.
    let shapeAllowance: ShapeAllowance
    /// Batches refused whole, by code, since start.
    let telemetryRefusals = TelemetryRefusals()
    /// Batches answered as repeats of accepted ones (counted nothing), since start.
    let telemetryDuplicates = Atomic<UInt64>(0)
    /// Followers' forwards refused whole since start (`waymark_telemetry_forwards_refused_total`).
    let forwardsRefused = Atomic<UInt64>(0)
    let forwardsClamped = Atomic<UInt64>(0)
    let forwardEventsDropped = Atomic<UInt64>(0)
    /// Revisions published (rollbacks included) since start.
    let publishes = Atomic<UInt64>(0)
    /// Scheduled publishes fired, and skipped (they no longer validated, or their base moved), since start.
    let schedulesFired = Atomic<UInt64>(0)
    let schedulesSkipped = Atomic<UInt64>(0)
    /// Looks at due schedules that failed on the store (reading a schedule's routes or
    /// writing its status: the disk, not a missing or damaged file, which is skipped), since
    /// start. The schedule stays pending and is tried again at the next tick.
    let scheduleFailures = Atomic<UInt64>(0)
    /// The primary's look at due schedules, once a second (`API.startScheduling`).
    let scheduling = Mutex<SchedulerRun?>(nil)
    /// The primary's latest look at the rollout's telemetry (`RolloutWatch`).
    let rolloutLook = Mutex<RolloutLook?>(nil)
    /// The active rollout's evidence, capped per source (`GuardEvidence`): what the guard judges.
    let guardEvidence = Mutex<GuardEvidence?>(nil)
    /// On a database: the last `guard_evidence` row counted into `guardEvidence` (`RolloutWatch.pull`).
    let evidenceSeq = Mutex<Int64>(0)
    /// Rollouts the guard tripped, since start.
    let rolloutTrips = Atomic<UInt64>(0)
    /// Problems the link checks reported, since start.
    let linkFindings = Atomic<UInt64>(0)
    /// Requests by route and status with latency, filled by the `HTTPServer` serving the API.
    let httpMetrics = HTTPMetrics()
    /// Unknown links' route suggestions, kept per shape for the current revision and schemas.
    let suggestions = SuggestionCache()
    /// Present when link checks are on; its cache lives as long as the service.
    let linkChecker: LinkChecker?
    /// Validation, build views, revision reads and other work that grows with a document.
    let work: WorkQueue
    /// Each token's requests per second, per scope (429 past them).
    let rates: RateLimiter
    /// Link checks block on the network: they run here, never on an event loop.
    private let linkCheckQueue = DispatchQueue(label: "waymark.link-checks", attributes: .concurrent)

    init(store: ManifestStore, telemetry: TelemetryStore, options: API.Options) {
        self.store = store
        self.telemetry = telemetry
        self.options = options
        documents = RevisionDocuments(store: store)
        preparer = GenerationPreparer(manifests: manifests, landings: landings, documents: documents, vocabulary: vocabulary, now: options.clock.now)
        work = WorkQueue(capacity: options.maximumQueuedWork, documentsAtOnce: options.documentsAtOnce)
        shapeAllowance = ShapeAllowance(perSource: options.shapesPerSource, perNetwork: options.shapesPerNetwork)
        landingCounter = LandingCounter(telemetry: telemetry, now: options.clock.now, currentRevision: { store.snapshot.current?.number })
        rates = RateLimiter(peerPercent: options.rateSharePerPeer, clock: options.monotonicClock)
        linkChecker = options.linkChecks.map(LinkChecker.init)
    }

    /// The time now on the daemon's clock (`Options.clock`).
    func now() -> Date { options.clock.now() }

    /// Writes go to the primary: on a follower they are refused and change nothing.
    func requirePrimary() throws(Refusal) {
        guard let follower = options.follower else { return }
        throw Refusal(.conflict, "follower", "This node is a read-only follower of \(follower.client.base); "
            + "publish, roll back and register schemas there.", details: ["primary": .string(follower.client.base)])
    }

    /// A place for a link check of `holder`'s (a token's) `purpose` against `snapshot`'s
    /// schemas: nil when checks are off or nothing is registered to check against (then
    /// nothing is checked), `503 linkChecksBusy` when the checker has no place free. Taken
    /// before the document is validated, so a refused request costs nothing more.
    func linkCheckPlace(for holder: String, _ purpose: LinkChecker.Purpose, against snapshot: StoreSnapshot) throws(Refusal) -> LinkChecker.Place? {
        guard let linkChecker, !snapshot.schemas.isEmpty else { return nil }
        guard let place = linkChecker.admit(holder, for: purpose) else {
            let limits = linkChecker.options
            throw Refusal(.serviceUnavailable, "linkChecksBusy",
                          "Link checks are busy: \(limits.maximumChecks) \(purpose == .publish ? "publishes" : "validations") at once, "
                          + "\(limits.maximumChecksPerHolder) for one token; retry in a moment.",
                          headers: [("Retry-After", "5")])
        }
        return place
    }

    /// Calls `body` with the findings for `routes` against `snapshot`'s schemas: fallbacks
    /// at non-public addresses (unless allowed), and the link checks' in `place`
    /// (`linkCheckPlace`). At once when there is no place (checks off, nothing
    /// registered), else from the link-check queue once the check has ended (its fetches,
    /// or its `checkSeconds`).
    func withLinkFindings(_ routes: JSONValue?, against snapshot: StoreSnapshot, in place: LinkChecker.Place?,
                          _ body: @escaping @Sendable (ValidationReport) -> Void) {
        let schemas = snapshot.orderedSchemas.map(\.schema)
        // Fallbacks at non-public addresses, whether or not link checks run (`FallbackAddresses`).
        let addresses = options.allowPrivateFallbacks ? ValidationReport() : routes.map(FallbackAddresses.report) ?? ValidationReport()
        guard let linkChecker, let place, !schemas.isEmpty, let routes else { return body(addresses) }
        linkCheckQueue.async { [self] in
            let findings = linkChecker.check(routes, against: schemas, in: place)
            linkFindings.add(UInt64(findings.count), ordering: .relaxed)
            var all = addresses
            all.append(contentsOf: findings)
            body(all)
        }
    }
}

/// A repeating Dispatch timer, owned by one holder that cancels it (Dispatch sources are
/// thread-safe; the type is not marked `Sendable`).
final class Ticker: @unchecked Sendable {
    private let timer: DispatchSourceTimer

    init(every interval: Double, on queue: DispatchQueue, _ body: @escaping @Sendable () -> Void) {
        timer = DispatchSource.makeTimerSource(queue: queue)
        timer.schedule(deadline: .now(), repeating: interval, leeway: .milliseconds(100))
        timer.setEventHandler(handler: body)
        timer.resume()
    }

    func cancel() { timer.cancel() }
}

/// One `API.startScheduling`: its ticker, the queue scheduled publishes fire on, whether a
/// firing is under way or queued for a document's turn, and whether it was stopped.
final class SchedulerRun: Sendable {
    let tickQueue = DispatchQueue(label: "waymark.schedules", qos: .utility)
    /// Firing has a queue of its own: the rollout looks on the ticker's never wait for it.
    let firingQueue = DispatchQueue(label: "waymark.schedules.firing", qos: .utility)
    let firing = Atomic<Bool>(false)
    let stopped = Atomic<Bool>(false)
    private let ticker = Mutex<Ticker?>(nil)

    func start(every interval: Double, _ tick: @escaping @Sendable () -> Void) {
        ticker.withLock { $0 = Ticker(every: interval, on: tickQueue, tick) }
    }

    /// Nothing fires or looks after it returns: a tick or firing under way is waited for,
    /// and one queued later finds `stopped`. Never on either queue.
    func stop() {
        stopped.store(true, ordering: .releasing)
        ticker.withLock { $0?.cancel(); $0 = nil }
        tickQueue.sync {}
        firingQueue.sync {}
    }
}
