import Foundation
import RouteEngine

/// What a newer external link does to older ones still waiting.
public enum SupersedePolicy: String, Hashable, Sendable {
    /// A newer external link ends every external link still waiting (not the one running)
    /// as `superseded`: the user's last tap wins, and two links never replay one after the
    /// other. In-app requests are never superseded. The default.
    case newestExternalLink
    /// Every intent is carried out in arrival order.
    case keepAll
}

public struct DispatcherConfiguration: Sendable {
    /// Push payload keys that may carry the link, first match wins.
    public var pushLinkKeys: [String] = ["deeplink", "url", "link"]
    /// Intents waiting (stashed before `ready()`, or queued behind the running one) at
    /// most; one more drops the oldest waiting intent (`dropped`).
    public var maximumWaiting = 256
    public var supersede = SupersedePolicy.newestExternalLink
    /// Gate handler calls one intent may make (chained gates), at most.
    public var maximumGates = 8

    public init() {}
}

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
public actor RouteDispatcher {
    private let tables: any RouteTableSource
    private let navigator: any Navigator
    private let contextProvider: any ContextProvider
    private let gateHandler: (any GateHandler)?
    private let leaveHandler: (any LeaveHandler)?
    private let observer: (any DispatchObserver)?
    public let configuration: DispatcherConfiguration

    /// An intent waiting or running, and whoever awaits its result.
    private final class Pending {
        let sequence: Int
        let intent: Intent
        var result: DispatchResult?
        var continuation: CheckedContinuation<DispatchResult, Never>?

        init(sequence: Int, intent: Intent) {
            self.sequence = sequence
            self.intent = intent
        }
    }

    private var waiting: [Pending] = []
    private var isReady = false
    private var isDraining = false
    /// Intents dispatched so far (the last one's `sequence`).
    public private(set) var arrivals = 0

    public init(tables: any RouteTableSource, navigator: any Navigator, context: any ContextProvider,
                gates: (any GateHandler)? = nil, leave: (any LeaveHandler)? = nil, observer: (any DispatchObserver)? = nil,
                configuration: DispatcherConfiguration = DispatcherConfiguration()) {
        self.tables = tables
        self.navigator = navigator
        contextProvider = context
        gateHandler = gates
        leaveHandler = leave
        self.observer = observer
        self.configuration = configuration
    }

    /// The launch gate opens: the app's root exists. Waiting intents run, in order.
    public func ready() {
        isReady = true
        startDraining()
    }

    /// Dispatches `intent` and returns how it ended (after it waited its turn).
    @discardableResult
    public func dispatch(_ intent: Intent) async -> DispatchResult {
        arrivals += 1
        let pending = Pending(sequence: arrivals, intent: intent)
        if intent.isExternal && configuration.supersede == .newestExternalLink {
            for older in waiting where older.intent.isExternal { finish(older, .superseded) }
            waiting.removeAll { $0.result != nil }
        }
        if waiting.count >= configuration.maximumWaiting, !waiting.isEmpty {
            finish(waiting.removeFirst(), .dropped)
        }
        if isReady && !isDraining && waiting.isEmpty {
            // Nothing ahead of it: run it in this call (no task to start, no continuation to
            // wait on). Intents arriving meanwhile wait, and are drained after it, in order.
            isDraining = true
            await run(pending)
            isDraining = false
            startDraining()
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
        let (outcome, resolution, revision) = await process(pending.intent)
        finish(pending, outcome, resolution: resolution, revision: revision)
        if let observer, let result = pending.result { await observer.dispatched(result) }
    }

    private func finish(_ pending: Pending, _ outcome: DispatchOutcome, resolution: Resolution? = nil, revision: Int = 0) {
        let result = DispatchResult(sequence: pending.sequence, intent: pending.intent, outcome: outcome,
                                    resolution: resolution, revision: revision, time: Date())
        pending.result = result
        pending.continuation?.resume(returning: result)
        pending.continuation = nil
        if resolution == nil, let observer {  // dropped or superseded: told outside the queue's order
            Task { await observer.dispatched(result) }
        }
    }

    // MARK: One intent

    private func process(_ intent: Intent) async -> (DispatchOutcome, Resolution?, Int) {
        var table = await tables.currentTable()
        var resolution = table.resolve(intent.resolutionRequest, context: await contextProvider.context())
        var passed: Set<String> = []
        var retried: Set<String> = []
        var asked = 0
        while true {
            switch resolution {
            case .notFound(let notFound):
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
                    guard await gateHandler.satisfy(gate.precondition, for: gate) else {
                        return (.gateCancelled(precondition: gate.precondition), resolution, table.revision)
                    }
                    passed.insert(gate.precondition)
                }
                // The original request, against a fresh context and the table in use now.
                table = await tables.currentTable()
                resolution = table.resolve(gate.resume, context: await contextProvider.context())
            case .proceed(let proceed):
                let outcome = await navigate(to: table.target(for: proceed), source: intent.isExternal ? .external : .inApp)
                return (outcome, resolution, table.revision)
            }
        }
    }

    /// The leave gate, then the apply.
    private func navigate(to target: NavigationTarget, source: NavigationSource) async -> DispatchOutcome {
        var plan = NavigationPlanner.plan(from: await navigator.state, to: target, source: source)
        var answered: [Screen] = []
        for round in 0...Self.leaveRounds {
            let dirty = plan.leaving.filter { $0.isDirty && !answered.contains($0) }
            guard !dirty.isEmpty else {
                if !plan.isEmpty { await navigator.apply(plan) }
                return .navigated(plan)
            }
            guard round < Self.leaveRounds, let leaveHandler else { return .leaveCancelled(dirty: dirty) }
            switch await leaveHandler.decide(leaving: dirty, for: plan) {
            case .cancel: return .leaveCancelled(dirty: dirty)
            case .discard: answered += dirty
            case .saveThenContinue:
                guard await leaveHandler.save(dirty) else { return .leaveCancelled(dirty: dirty) }
                answered += dirty
            }
            // The user may have done something while asked: plan again from what is shown now.
            plan = NavigationPlanner.plan(from: await navigator.state, to: target, source: source)
        }
        fatalError("unreachable: the last round returns")
    }

    /// Times the leave handler is asked for one intent (new dirty screens may appear while it asks).
    static let leaveRounds = 3
}
