import Foundation
import RouteEngine

/// The one funnel every entry point calls: resolves each intent with the table in use,
/// runs the launch, enter and leave gates as one stash-and-resume loop, plans, and has
/// the app's navigator apply the plan — one intent at a time, in arrival order.
///
/// - Launch gate: until `ready()`, intents wait (at most `maximumWaiting`).
/// - Enter gate: `gated` → the `GateHandler`; `true` → the original request is resolved
///   again with a fresh context (and the table in use then), so chained gates compose;
///   `false` → dropped. A gate still standing after its handler said `true` is retried
///   once, then ends the intent as `gateLoop`.
/// - Leave gate: dirty screens the plan would remove go to the `LeaveHandler` first;
///   without one, the plan is not applied (`leaveCancelled`) — work is never lost silently.
/// - Nothing waits for ever: a handler or an apply that does not answer in time ends its
///   intent (`gateTimedOut`, `leaveTimedOut`, `applyTimedOut`); `cancel()` and the caller's
///   task being cancelled end it (`cancelled`), at a prompt or during an apply; a newer
///   external link ends one waiting at a prompt (`superseded`). A dispatch from inside a
///   handler or an apply is queued, not awaited (`queuedFromHandler`).
public actor RouteDispatcher {
    let tables: any RouteTableSource
    let navigator: any Navigator
    let contextProvider: any ContextProvider
    let gateHandler: (any GateHandler)?
    let leaveHandler: (any LeaveHandler)?
    /// Told every intent's result, in this order (the telemetry reporter, the app's logging…).
    let observers: [any DispatchObserver]
    public nonisolated let configuration: DispatcherConfiguration
    /// What every intent's path reads from the configuration, read once here: the common
    /// case (no callbacks, no log, no stash) then costs a few compares, not a copy of the
    /// configuration per check.
    private let hasAuthCallbacks: Bool
    private let supersedesExternal: Bool
    private let supersedesPrompts: Bool
    private let maximumWaiting: Int
    private let unknownRouteWait: TimeInterval?
    private let log: ClientLog?
    let gateStash: GateStash?

    /// An intent waiting or running, and whoever awaits its result. Touched only on the
    /// dispatcher's actor (hence unchecked).
    final class Pending: @unchecked Sendable {
        let sequence: Int
        let intent: Intent
        var result: DispatchResult?
        var continuation: CheckedContinuation<DispatchResult, Never>?
        /// Set when it is cancelled or superseded while it runs: it stops at its next step.
        var interruption: DispatchOutcome?
        /// Run in the task that dispatched it (nothing was ahead): that task's cancellation
        /// is read at each step, with no handler installed on the fast path.
        var runsInCallerTask = false

        init(sequence: Int, intent: Intent) {
            self.sequence = sequence
            self.intent = intent
        }
    }

    var waiting: [Pending] = []
    private var isReady = false
    private var isDraining = false
    /// The intent running now, and the handler prompt it waits at, if any.
    var current: Pending?
    var prompt: Prompt?
    /// The intent whose link is in the gate stash now.
    var stashed: Pending?
    /// An apply the dispatcher stopped waiting for (timed out, cancelled): the next apply
    /// waits a little for it first, so two seldom overlap.
    var lingeringApply: Task<Void, Never>?
    /// Intents dispatched so far (the last one's `sequence`).
    public private(set) var arrivals = 0

    public init(tables: any RouteTableSource, navigator: any Navigator, context: any ContextProvider,
                gates: (any GateHandler)? = nil, leave: (any LeaveHandler)? = nil, observer: (any DispatchObserver)? = nil,
                observers: [any DispatchObserver] = [], configuration: DispatcherConfiguration = DispatcherConfiguration()) {
        self.tables = tables
        self.navigator = navigator
        contextProvider = context
        gateHandler = gates
        leaveHandler = leave
        self.observers = (observer.map { [$0] } ?? []) + observers
        self.configuration = configuration
        hasAuthCallbacks = !configuration.authCallbackPrefixes.isEmpty
        supersedesExternal = configuration.supersede == .newestExternalLink
        supersedesPrompts = configuration.supersedesPrompts
        maximumWaiting = configuration.maximumWaiting
        unknownRouteWait = configuration.unknownRouteWait
        log = configuration.log
        gateStash = configuration.gateStash
    }

    /// The launch gate opens: the app's root exists. Waiting intents run, in order — after
    /// a link the last run left waiting at a gate (`gateStash`), if it is recent enough.
    public func ready() {
        if !isReady, let stash = gateStash, let intent = stash.take(now: Date()) {
            arrivals += 1
            waiting.insert(Pending(sequence: arrivals, intent: intent), at: 0)
        }
        isReady = true
        startDraining()
    }

    /// The launch gate opens once the first refresh of the manifest has ended, or `bound`
    /// has passed, whichever is first (like a remote config's fetch-and-activate with a
    /// timeout): a cold-start link taps into the newest table the launch could get.
    public func ready(waitingForManifest bound: Duration) async {
        let (seconds, attoseconds) = bound.components
        _ = await tables.tableAfterFirstRefresh(within: TimeInterval(seconds) + TimeInterval(attoseconds) / 1e18)
        ready()
    }

    /// Dispatches `intent` and returns how it ended (after it waited its turn). Cancelling
    /// the calling task ends the intent `cancelled`, waiting or running.
    @discardableResult
    public func dispatch(_ intent: Intent) async -> DispatchResult {
        arrivals += 1
        let pending = Pending(sequence: arrivals, intent: intent)
        if hasAuthCallbacks, let prompt, let gate = prompt.gate, let gateHandler, case .link(let link, let door) = intent,
           door == .scheme || door == .universalLink, configuration.isAuthCallback(link) {
            // The answer to the running gate: handed to it, never queued behind it.
            await gateHandler.received(callback: link, for: gate)
            finish(pending, .handedToGate(precondition: gate.precondition))
            return pending.result!
        }
        // Only while a handler runs can a dispatch come from inside one (a task-local read, skipped otherwise).
        let fromHandler = prompt != nil && HandlerScope.dispatcher == ObjectIdentifier(self)
        if supersedesExternal && intent.isExternal {
            if !waiting.isEmpty {
                for older in waiting where older.intent.isExternal { finish(older, .superseded) }
                waiting.removeAll { $0.result != nil }
            }
            if supersedesPrompts, !fromHandler, let current, current.intent.isExternal, let prompt, !prompt.isApply {
                interrupt(current, .superseded)
            }
        }
        if waiting.count >= maximumWaiting, !waiting.isEmpty {
            finish(waiting.removeFirst(), .dropped)
        }
        if fromHandler {
            // Awaiting it would wait for the handler that is awaiting it: queued, and its own
            // end goes to the observer.
            waiting.append(pending)
            return DispatchResult(sequence: pending.sequence, intent: intent, outcome: .queuedFromHandler, resolution: nil, revision: 0, time: Date())
        }
        if isReady && !isDraining && waiting.isEmpty {
            // Nothing ahead of it: run it in this call (no task to start, no continuation to
            // wait on). Intents arriving meanwhile wait, and are drained after it, in order.
            isDraining = true
            pending.runsInCallerTask = true
            await run(pending)
            isDraining = false
            startDraining()
            return pending.result!
        }
        return await withTaskCancellationHandler {
            if let interruption = pending.interruption {
                finish(pending, interruption)  // cancelled before it was queued
                return pending.result!
            }
            waiting.append(pending)
            startDraining()
            return await withCheckedContinuation { continuation in
                if let result = pending.result {
                    continuation.resume(returning: result)
                } else {
                    pending.continuation = continuation
                }
            }
        } onCancel: {
            Task { await self.interrupt(pending, .cancelled) }
        }
    }

    /// Dispatches the link a push payload carries (`configuration.pushLinkKeys`); nil, and
    /// nothing dispatched, when it carries none.
    @discardableResult
    public func dispatch(push payload: [String: any Sendable]) async -> DispatchResult? {
        let bridged = [AnyHashable: Any](uniqueKeysWithValues: payload.map { (AnyHashable($0.key), $0.value as Any) })
        guard let intent = Intent.push(bridged, keys: configuration.pushLinkKeys) else { return nil }
        return await dispatch(intent)
    }

    private func startDraining() {
        guard isReady, !isDraining, !waiting.isEmpty else { return }
        isDraining = true
        Task { await drain() }
    }

    private func drain() async {
        while isReady, !waiting.isEmpty {
            await run(waiting.removeFirst())
        }
        isDraining = false
    }

    /// Resolves, gates, plans and applies one intent, then tells the observer.
    private func run(_ pending: Pending) async {
        guard pending.result == nil else { return }
        current = pending
        let (outcome, resolution, revision) = await process(pending)
        current = nil
        if stashed === pending {
            gateStash?.clear()
            stashed = nil
        }
        var shape: String?
        if case .notFound(let notFound)? = resolution, notFound.reason == .unknownRoute, case .link(let link, _) = pending.intent {
            // Only the words the app's table has: nothing of the link the app did not know already.
            let vocabulary = await tables.currentTable().manifest?.resolver.vocabulary ?? []
            shape = LinkShape(link: link, vocabulary: vocabulary).description
        }
        finish(pending, outcome, resolution: resolution, revision: revision, unknownLinkShape: shape)
        if let result = pending.result {
            // Each observer is told in queue order, for a bounded time: one that never returns
            // is not waited for past `handlerBound`.
            for observer in observers { await Self.bounded { await observer.dispatched(result) } }
        }
    }

    func finish(_ pending: Pending, _ outcome: DispatchOutcome, resolution: Resolution? = nil, revision: Int = 0, unknownLinkShape: String? = nil) {
        guard pending.result == nil else { return }
        let result = DispatchResult(sequence: pending.sequence, intent: pending.intent, outcome: outcome,
                                    resolution: resolution, revision: revision, time: Date(), unknownLinkShape: unknownLinkShape)
        pending.result = result
        if let log, let message = Self.message(for: result) { log(message) }
        pending.continuation?.resume(returning: result)
        pending.continuation = nil
        if resolution == nil, !observers.isEmpty {  // never resolved (dropped, superseded, cancelled waiting): told outside the queue's order
            let observers = observers
            Task { for observer in observers { await observer.dispatched(result) } }
        }
    }

    // MARK: One intent

    private func process(_ pending: Pending) async -> (DispatchOutcome, Resolution?, Int) {
        let intent = pending.intent
        var table = await tables.currentTable()
        var resolution = table.resolve(intent.resolutionRequest, context: await contextProvider.context())
        var passed: Set<String> = []
        var triedNewer = false
        var retried: Set<String> = []
        var asked = 0
        while true {
            if let interruption = interruption(of: pending) { return (interruption, resolution, table.revision) }
            switch resolution {
            case .notFound(let notFound):
                // A link to a route newer than the table: once, the table a refresh in flight brings.
                if notFound.reason == .unknownRoute, intent.isExternal, !triedNewer, let wait = unknownRouteWait {
                    triedNewer = true
                    if let newer = await tables.newerTable(than: table.revision, within: wait) {
                        table = newer
                        resolution = table.resolve(intent.resolutionRequest, context: await contextProvider.context())
                        continue
                    }
                }
                return (.notFound(notFound), resolution, table.revision)
            case .gated(let gate):
                if passed.contains(gate.precondition) {
                    // The handler said yes, yet the fresh context says no: once more, then stop.
                    guard !retried.contains(gate.precondition) else {
                        return (.gateLoop(precondition: gate.precondition), resolution, table.revision)
                    }
                    retried.insert(gate.precondition)
                    await Task.yield()
                } else {
                    guard asked < configuration.maximumGates, let gateHandler else {
                        return (.gateCancelled(precondition: gate.precondition), resolution, table.revision)
                    }
                    asked += 1
                    if let stash = gateStash, stashed !== pending, case .link(let link, let door) = intent {
                        stash.keep(link, door: door, at: Date())
                        stashed = pending
                    }
                    switch await ask(pending, gate: gate, timeout: configuration.gateTimeout, { .gate(await gateHandler.satisfy(gate.precondition, for: gate)) }) {
                    case .answered(.gate(true)): passed.insert(gate.precondition)
                    case .answered: return (.gateCancelled(precondition: gate.precondition), resolution, table.revision)
                    case .timedOut:
                        await Self.bounded { await gateHandler.close(gate, because: .timedOut) }
                        return (.gateTimedOut(precondition: gate.precondition), resolution, table.revision)
                    case .interrupted(let outcome):
                        await Self.bounded { await gateHandler.close(gate, because: outcome == .superseded ? .superseded : .cancelled) }
                        return (outcome, resolution, table.revision)
                    }
                }
                // The original request, against a fresh context and the table in use now.
                table = await tables.currentTable()
                resolution = table.resolve(gate.resume, context: await contextProvider.context())
            case .proceed(let proceed):
                let outcome = await navigate(pending, to: table.target(for: proceed), source: intent.isExternal ? .external : .inApp)
                return (outcome, resolution, table.revision)
            }
        }
    }
}
