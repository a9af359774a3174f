import Dispatch
import Foundation
import Synchronization
import HTTPServer
import Rollout
import LinkChecks
import ManifestStore
import Replication
import SystemIO
import Telemetry

/// The HTTP API of `waymark serve` over a `ManifestStore` (see docs/api.md and
/// docs/openapi.yaml): one endpoint group per resource, each registering its routes with
/// their declarations on a shared `APIContext`.
public final class API: Sendable {
    public struct Options: Sendable {
        /// `GET /v1/manifest` and the other reads without a token.
        public var publicManifestReads = false
        /// Largest routes document or schema accepted, in bytes.
        public var maximumDocumentBytes = 16 << 20
        /// Outbound checks of fallbacks and associated-domain files on validate and publish
        /// (nil: off).
        public var linkChecks: LinkCheckOptions?
        /// Set on a follower (`serve --follow`): it mirrors this primary and refuses writes.
        public var follower: Follower?
        /// On a database (`serve --database`): whether this node holds the lease now, and so
        /// runs the scheduler and the rollout guard's looks (nil: it always does).
        public var holdsLease: (@Sendable () -> Bool)?
        /// On a database: telemetry committed there, counted once across the nodes, and the
        /// guard's evidence read from it by every node (nil: this node's own telemetry store).
        public var sharedTelemetry: (any SharedTelemetry)?
        /// How many requests' worth of changes (publish, validation, schedules, rollout
        /// controls, schemas) and, apart, of costly reads (QR, previews, revisions, diffs; a
        /// quarter per token or peer) may wait or run off the loops at once; beyond it such
        /// requests get `503`. Builds (manifest views, landing tables) are never refused.
        public var maximumQueuedWork = 64
        /// How many jobs parsing a document (changes, drafts, stored documents read, schedules
        /// firing) run at once (`serve --documents-at-once`): each holds its parse while it
        /// validates it, so this, times what one document may cost (`documentInWorkBytes`),
        /// bounds what documents hold in memory; the rest wait, each token's in turn (`WorkQueue`).
        public var documentsAtOnce = 1
        /// What one document job holds at its peak while it parses and validates a client's
        /// document: the worst a request may send under `JSONParser.requests`' limits
        /// (docs/operations.md, "Memory"; `hostile.py`'s `documents_in_work` measures it).
        public static let documentInWorkBytes = 160 << 20
        /// What counts answers being made may hold at once, all readers together: the largest
        /// answer (`CountQuery.seriesValueLimit` values at `AnswerBudget.bytesPerValue`) fits
        /// it once (docs/operations.md, "Memory"; `hostile.py`'s `counts_answer_size`).
        public static let answersInMakingBytes = 32 << 20
        /// What a draft's impact holds once its parse is done, outside the document turns
        /// (its draft decoded and three pattern indexes; one replay at a time, at most
        /// `ImpactEndpoints.maximumPatterns` patterns a document): +53 MB measured for the
        /// largest (docs/operations.md, "Memory"; `hostile.py`'s `impact_beside_publish`).
        public static let replayBytes = 64 << 20
        /// The percent of the app's token's rate (one with `telemetry:write`: every install's)
        /// one peer (an IPv4 address, an IPv6 /64; behind a trusted proxy, the address it
        /// forwards) may use, and never less than 10 a second; while the token's bucket is
        /// below half only quiet peers are served (`RateLimiter`; 0: off).
        public var rateSharePerPeer = 5
        /// Monotonic nanoseconds, for per-token rate limits; tests move it.
        public var monotonicClock: @Sendable () -> UInt64 = { DispatchTime.now().uptimeNanoseconds }
        /// The wall clock changes are stamped and decided by: revision and audit times,
        /// rollout steps, scheduled publishes (`serve --clock-file` moves it in tests).
        public var clock = WallClock.system
        /// Fallback URLs at loopback, private or other non-public addresses validate
        /// (`serve --allow-private-fallbacks`): for tests against servers on loopback only.
        public var allowPrivateFallbacks = false
        /// How often the primary looks at a running rollout's telemetry, in seconds.
        public var rolloutLookInterval: Double = 5
        /// What the rollout guard calls a regression, and the breadth it needs (`docs/rollouts.md`).
        public var guardPolicy = GuardPolicy()
        /// How much evidence one install and one network may supply to the guard.
        public var evidencePolicy = EvidencePolicy()
        /// Behind a reverse proxy on loopback: a request's network for the guard's caps is the
        /// last `X-Forwarded-For` address (`serve --trust-forwarded-for`).
        public var trustForwardedFor = false
        /// Unknown-link shapes one install (or a visitor's network) and one network may add to
        /// the list in a minute, and the distinct sources a shape needs before a route is
        /// suggested for it (`docs/link-shapes.md`).
        public var shapesPerSource = ShapeAllowance.perSource
        public var shapesPerNetwork = ShapeAllowance.perNetwork
        public var sourcesForSuggestion = 3

        public init() {}
    }

    /// The groups, in the order their routes are registered (metrics list routes so).
    static let groups: [any EndpointGroup.Type] = [
        HealthEndpoints.self, ManifestEndpoints.self, RevisionEndpoints.self, PublishingEndpoints.self, RouteEndpoints.self, ImportEndpoints.self,
        SchemaEndpoints.self, PreviewEndpoints.self, AssociatedDomainEndpoints.self, TelemetryEndpoints.self,
        ReplicationEndpoints.self, MetricsEndpoints.self, DashboardEndpoints.self, ConsoleEndpoints.self, ScheduleEndpoints.self, RolloutEndpoints.self, QREndpoints.self,
        UnknownLinkEndpoints.self, LandingEndpoints.self, ImpactEndpoints.self,
    ]

    let context: APIContext

    public init(store: ManifestStore, telemetry: TelemetryStore, options: Options = Options()) {
        let context = APIContext(store: store, telemetry: telemetry, options: options)
        self.context = context
        observeStore()
    }

    /// What each new generation serves is made before its change returns (`GenerationPreparer`).
    func observeStore() {
        // Weakly, and the preparer, never the context (see `GenerationPreparer`).
        let preparer = context.preparer
        store.observeChanges(before: { [weak preparer] generation in preparer?.begin(generation) },
                             after: { [weak preparer] generation in preparer?.prepare(generation: generation) })
    }

    public var store: ManifestStore { context.store }
    public var telemetry: TelemetryStore { context.telemetry }
    public var options: Options { context.options }
    /// Present when link checks are on.
    public var linkChecker: LinkChecker? { context.linkChecker }
    /// Requests by route and status with latency: give it to the `HTTPServer` serving `router()`.
    public var httpMetrics: HTTPMetrics { context.httpMetrics }

    /// Every endpoint, ready for `HTTPServer`.
    public func router() throws(RouterError) -> Router {
        try registry().router
    }

    /// What every route declares: access, body limit, mode.
    public func routes() throws(RouterError) -> [RouteDeclaration] {
        try registry().declarations
    }

    /// Fires scheduled publishes whose time has come: at once (those a stopped daemon
    /// missed), then every second, off the event loops. Only on a primary: a follower
    /// mirrors the revisions a schedule publishes. The same ticker looks at a running
    /// rollout every `options.rolloutLookInterval` seconds (`RolloutWatch`), and at once when
    /// the wall clock has moved that far since the last look (a clock a test moves,
    /// `--clock-file`, which ticks every 50 ms). `now` is for tests (default:
    /// `options.clock`).
    public func startScheduling(every interval: Double = 1, now: (@Sendable () -> Date)? = nil) {
        guard context.options.follower == nil else { return }
        let context = context
        let now = now ?? context.options.clock.now
        let lastLook = Mutex<(monotonic: UInt64, clock: Date)?>(nil)
        let lookInterval = max(0, context.options.rolloutLookInterval)
        let lookEvery = UInt64(lookInterval * 1e9)
        let run = SchedulerRun()
        // Firing parses and validates a schedule's document: it takes a document's turn
        // (`WorkQueue`), one schedule a turn, so many due at once take turns with everyone
        // else's documents rather than hold the one turn for all of them; the next is
        // queued as one ends, while any is due. The rollout looks go on meanwhile. A turn
        // that comes after `stopScheduling` fires nothing.
        @Sendable func fireNext() {
            // (Named with a space, which no token's name holds: none can share its turns.)
            context.work.whenDocumentTurn(for: "scheduled publishes", on: run.firingQueue) {
                guard !run.stopped.load(ordering: .acquiring) else { return }
                let changed: [ScheduledPublish]?
                do throws(StoreError) {
                    changed = try context.store.fireDueSchedules(now: now(), limit: 1)
                } catch {
                    changed = nil
                    context.scheduleFailures.add(1, ordering: .relaxed)
                }
                for item in changed ?? [] {
                    switch item.status {
                    case .fired: context.schedulesFired.add(1, ordering: .relaxed); context.publishes.add(1, ordering: .relaxed)
                    case .skipped: context.schedulesSkipped.add(1, ordering: .relaxed)
                    case .pending, .cancelled: break
                    }
                }
                // A failed firing (the disk) is tried again on the next tick.
                if let changed, !changed.isEmpty, context.store.hasDueSchedules(now: now()) {
                    fireNext()
                } else {
                    run.firing.store(false, ordering: .releasing)
                }
            }
        }
        run.start(every: interval) {
            guard !run.stopped.load(ordering: .acquiring) else { return }
            // Every node counts the fleet's evidence, so that the one that takes the lease has it.
            if let shared = context.options.sharedTelemetry { RolloutWatch.pull(context, from: shared) }
            // Another node holds the lease: it fires and looks (docs/postgres.md, "The lease").
            guard context.options.holdsLease?() ?? true else { return }
            if context.store.hasDueSchedules(now: now()),
               run.firing.compareExchange(expected: false, desired: true, ordering: .acquiringAndReleasing).exchanged {
                fireNext()
            }
            let monotonic = DispatchTime.now().uptimeNanoseconds, clock = now()
            let due = lastLook.withLock { last in
                if let previous = last, monotonic &- previous.monotonic < lookEvery,
                   clock.timeIntervalSince(previous.clock) < lookInterval { return false }
                last = (monotonic, clock)
                return true
            }
            if due { RolloutWatch.look(context, now: clock) }
        }
        let previous = context.scheduling.withLock { running in
            defer { running = run }
            return running
        }
        previous?.stop()
    }

    /// Hands the link landings counted so far to the telemetry store (it does so every
    /// second by itself); `completion` once they are durable. For tests and shutdown.
    public func flushLandings(_ completion: (@Sendable () -> Void)? = nil) {
        context.landingCounter.flush(completion)
    }

    /// Stops the ticker; returns once a look or a firing under way has ended, and no
    /// firing starts after it (one waiting for a document's turn fires nothing).
    public func stopScheduling() {
        context.scheduling.withLock { running in
            defer { running = nil }
            return running
        }?.stop()
    }

    private func registry() throws(RouterError) -> EndpointRegistry {
        var registry = EndpointRegistry(context: context)
        for group in Self.groups { try group.init(context: context).register(on: &registry) }
        return registry
    }
}
