import Foundation
import RouteEngine
import LibraryTestSupport
import Testing
@testable import WaymarkClient

/// Navigation that cannot get stuck: a handler that never answers, `cancel()`, a cancelled
/// task, a dispatch from inside a handler, an auth callback, a newer tap at the login screen.
/// The lab app's `lab://vault/1` is gated on `auth` (then `adult`); `lab://kind/a` proceeds.
@Suite("Dispatcher prompts")
struct DispatcherPromptTests {
    typealias Preconditions = DispatcherTests.Preconditions

    /// A login screen the test controls: it answers only when told (or when a callback
    /// arrives), closes when the dispatcher says so, and gives up its wait when cancelled.
    actor LoginScreen: GateHandler {
        let session: Preconditions
        private(set) var shown: [String] = []
        private(set) var closed: [PromptEnding] = []
        private(set) var callbacks: [String] = []
        private var answer: CheckedContinuation<Bool, Never>?
        /// Run inside `satisfy` before it waits (a dispatch from inside the handler).
        var onShow: (@Sendable () async -> Void)?

        init(_ session: Preconditions) { self.session = session }

        func setOnShow(_ action: @escaping @Sendable () async -> Void) { onShow = action }

        func satisfy(_ precondition: String, for gate: Gate) async -> Bool {
            shown.append(precondition)
            if precondition != "auth" {
                await session.satisfy(precondition)
                return true
            }
            await onShow?()
            return await withTaskCancellationHandler {
                await withCheckedContinuation { answer = $0 }
            } onCancel: {
                Task { await self.giveUp() }
            }
        }

        private func giveUp() { respond(false) }

        /// The user logs in (commits the session, then answers).
        func logIn() async {
            await session.satisfy("auth")
            respond(true)
        }

        private func respond(_ value: Bool) {
            answer?.resume(returning: value)
            answer = nil
        }

        var isShowing: Bool { answer != nil }

        func close(_ gate: Gate, because ending: PromptEnding) async { closed.append(ending) }

        func received(callback link: String, for gate: Gate) async {
            callbacks.append(link)
            await logIn()
        }
    }

    static func make(_ configure: (inout DispatcherConfiguration) -> Void = { _ in })
        -> (RouteDispatcher, RecordingNavigator, LoginScreen, ResultLog) {
        let session = Preconditions()
        let login = LoginScreen(session)
        let log = ResultLog()
        let navigator = RecordingNavigator(NavigationState(selectedTab: "main", stacks: ["main": [Screen("root")]]))
        var configuration = DispatcherConfiguration()
        configure(&configuration)
        let dispatcher = RouteDispatcher(tables: FixedRouteTable(DispatcherTests.table), navigator: navigator, context: session,
                                         gates: login, observer: log, configuration: configuration)
        return (dispatcher, navigator, login, log)
    }

    static let vault = Intent.link("lab://vault/1", door: .scheme)
    static let kind = Intent.link("lab://kind/a", door: .universalLink)
    static let request = Intent.request(DestinationRequest(destination: "kind", params: ["k": .string("b")]))

    @Test("A gate handler that never answers: the timeout ends the intent, the handler is told to close, later intents run")
    func gateTimeout() async {
        let (dispatcher, navigator, login, _) = Self.make { $0.gateTimeout = 0.05 }
        await dispatcher.ready()
        #expect(await dispatcher.dispatch(Self.vault).outcome == .gateTimedOut(precondition: "auth"))
        #expect(await login.closed == [.timedOut])
        #expect(await dispatcher.dispatch(Self.kind).outcome.name == "navigated")
        #expect(await navigator.applied.count == 1)
    }

    /// Never answers: the leave prompt of a user who walked away.
    struct SilentLeave: LeaveHandler {
        func decide(leaving dirty: [Screen], for plan: NavigationPlan) async -> LeaveDecision {
            // An hour, unless its task is cancelled (the dispatcher gave up on it): then a late
            // answer that must change nothing.
            try? await Task.sleep(nanoseconds: 3_600_000_000_000)
            return .discard
        }
        func save(_ dirty: [Screen]) async -> Bool { true }
    }

    @Test("A leave handler that never answers: leaveTimedOut, nothing applied, the next intent runs")
    func leaveTimeout() async {
        let dirty = NavigationState(selectedTab: "main", stacks: ["main": [Screen("root"), Screen("item", params: ["id": .int(1)], isDirty: true)]])
        let navigator = RecordingNavigator(dirty)
        var configuration = DispatcherConfiguration()
        configuration.leaveTimeout = 0.05
        let dispatcher = RouteDispatcher(tables: FixedRouteTable(DispatcherTests.table), navigator: navigator, context: Preconditions(),
                                         leave: SilentLeave(), configuration: configuration)
        await dispatcher.ready()
        guard case .leaveTimedOut(let screens) = await dispatcher.dispatch(Self.kind).outcome else { Issue.record("not timed out"); return }
        #expect(screens.map(\.destination) == ["item"])
        #expect(await navigator.applied.isEmpty)
        await navigator.setDirty("item", false)  // the user saved by hand: nothing to ask
        #expect(await dispatcher.dispatch(Self.request).outcome.name == "navigated", "the dispatcher is not stuck")
    }

    @Test("cancel() ends the intent waiting at its gate; with nothing running it is false")
    func cancelRunning() async {
        let (dispatcher, _, login, log) = Self.make { $0.gateTimeout = nil }
        await dispatcher.ready()
        #expect(await dispatcher.cancel() == false)
        let first = Task { await dispatcher.dispatch(Self.vault) }
        #expect(await eventually { await login.isShowing })
        #expect(await dispatcher.cancel())
        #expect(await first.value.outcome == .cancelled)
        #expect(await login.closed == [.cancelled])
        #expect(await dispatcher.dispatch(Self.kind).outcome.name == "navigated")
        #expect(await eventually { await log.results.count == 2 })
    }

    @Test("A cancelled task ends its intent, running at a gate or waiting behind it")
    func taskCancellation() async {
        let (dispatcher, navigator, login, _) = Self.make { $0.gateTimeout = nil; $0.supersede = .keepAll }
        await dispatcher.ready()
        let running = Task { await dispatcher.dispatch(Self.vault) }
        #expect(await eventually { await login.isShowing })
        let queued = Task { await dispatcher.dispatch(Self.request) }
        #expect(await eventually { await dispatcher.arrivals == 2 })
        queued.cancel()
        #expect(await queued.value.outcome == .cancelled)
        #expect(await login.isShowing, "the one running is not touched")
        running.cancel()
        #expect(await running.value.outcome == .cancelled)
        #expect(await dispatcher.dispatch(Self.kind).outcome.name == "navigated")
        // Already cancelled when it dispatches, with nothing ahead (it runs in its own task): nothing applied.
        let applied = await navigator.applied.count
        let cancelledFirst = Task { () -> DispatchResult in
            withUnsafeCurrentTask { $0?.cancel() }
            return await dispatcher.dispatch(.link("lab://kind/b", door: .universalLink))
        }
        #expect(await cancelledFirst.value.outcome == .cancelled)
        #expect(await navigator.applied.count == applied)
    }

    @Test("A dispatch from inside the gate handler is queued, not awaited: no deadlock; it runs after")
    func dispatchFromHandler() async {
        let (dispatcher, navigator, login, log) = Self.make { $0.gateTimeout = nil }
        let nested = ResultLog()
        await login.setOnShow {
            let result = await dispatcher.dispatch(Self.request)
            await nested.dispatched(result)
        }
        await dispatcher.ready()
        let gated = Task { await dispatcher.dispatch(Self.vault) }
        #expect(await eventually { await login.isShowing })
        #expect(await nested.results.map(\.outcome) == [.queuedFromHandler])
        await login.logIn()
        #expect(await gated.value.outcome.name == "navigated")
        #expect(await eventually { await navigator.applied.count == 2 })
        #expect(await navigator.current.stacks["main"]?.last == Screen("kind", params: ["k": .string("b")]))
        #expect(await eventually { await log.results.map(\.outcome.name) == ["navigated", "navigated"] })
    }

    @Test("An auth callback is handed to the running gate; without a gate it is dispatched like any link",
          arguments: [("prefix as configured", "lab://kind/callback?code=1"), ("scheme in capitals", "LAB://kind/callback?code=2")])
    func authCallback(_ label: String, _ callback: String) async {
        let (dispatcher, _, login, _) = Self.make { $0.gateTimeout = nil; $0.authCallbackPrefixes = ["lab://kind/callback"] }
        await dispatcher.ready()
        let gated = Task { await dispatcher.dispatch(Self.vault) }
        #expect(await eventually { await login.isShowing })
        #expect(await dispatcher.dispatch(.link(callback, door: .scheme)).outcome == .handedToGate(precondition: "auth"), "\(label)")
        #expect(await gated.value.outcome.name == "navigated", "\(label)")
        #expect(await login.callbacks == [callback])
        // No gate running: an ordinary link, resolved by the engine like any other.
        let ordinary = await dispatcher.dispatch(.link(callback, door: .scheme))
        #expect(ordinary.resolution != nil && ordinary.outcome != .handedToGate(precondition: "auth"), "\(label): \(ordinary.outcome)")
    }

    static let notCallbacks: [(String, String)] = [
        ("another path", "lab://kind/other"),
        ("the path in capitals (only scheme and host ignore case)", "lab://kind/CALLBACK"),
        ("shorter than the prefix", "lab://kind/"),
    ]

    @Test(arguments: notCallbacks)
    func notACallback(_ label: String, _ link: String) {
        var configuration = DispatcherConfiguration()
        configuration.authCallbackPrefixes = ["lab://kind/callback"]
        #expect(!configuration.isAuthCallback(link), "\(label)")
        #expect(configuration.isAuthCallback("lab://KIND/callback?x"), "the host ignores case")
    }

    @Test("A second tap at the login screen supersedes the first, whose handler is told to close")
    func secondTapAtLogin() async {
        let (dispatcher, navigator, login, _) = Self.make { $0.gateTimeout = nil }
        await dispatcher.ready()
        let first = Task { await dispatcher.dispatch(Self.vault) }
        #expect(await eventually { await login.isShowing })
        #expect(await dispatcher.dispatch(Self.kind).outcome.name == "navigated")
        #expect(await first.value.outcome == .superseded)
        #expect(await login.closed == [.superseded])
        #expect(await navigator.applied.count == 1)
    }

    /// Asks, then waits until its task is cancelled; records why it was told to close.
    actor WaitingLeave: LeaveHandler {
        private(set) var asked = 0
        private(set) var closed: [PromptEnding] = []
        func decide(leaving dirty: [Screen], for plan: NavigationPlan) async -> LeaveDecision {
            asked += 1
            try? await Task.sleep(nanoseconds: 3_600_000_000_000)
            return .discard
        }
        func save(_ dirty: [Screen]) async -> Bool { true }
        func close(because ending: PromptEnding) async { closed.append(ending) }
    }

    @Test("A second tap at the unsaved-work prompt supersedes the first, whose prompt is told to close")
    func secondTapAtLeavePrompt() async {
        let dirty = NavigationState(selectedTab: "main", stacks: ["main": [Screen("root"), Screen("item", params: ["id": .int(1)], isDirty: true)]])
        let navigator = RecordingNavigator(dirty)
        let leave = WaitingLeave()
        var configuration = DispatcherConfiguration()
        configuration.leaveTimeout = nil
        let dispatcher = RouteDispatcher(tables: FixedRouteTable(DispatcherTests.table), navigator: navigator, context: Preconditions(),
                                         leave: leave, configuration: configuration)
        await dispatcher.ready()
        let first = Task { await dispatcher.dispatch(Self.kind) }
        #expect(await eventually { await leave.asked == 1 })
        let second = Task { await dispatcher.dispatch(.link("lab://kind/b", door: .universalLink)) }
        #expect(await first.value.outcome == .superseded)
        #expect(await leave.closed == [.superseded])
        #expect(await eventually { await leave.asked == 2 }, "the newer link is asked about the same work")
        #expect(await dispatcher.cancel())
        #expect(await second.value.outcome == .cancelled)
        #expect(await navigator.applied.isEmpty, "the dirty screen was never removed")
    }

    @Test("Not superseded: an in-app request, or supersedesPrompts off; the prompt finishes first",
          arguments: [("an in-app request", true), ("a link with supersedesPrompts off", false)])
    func notSuperseded(_ label: String, _ inApp: Bool) async {
        let (dispatcher, navigator, login, _) = Self.make { $0.gateTimeout = nil; $0.supersedesPrompts = inApp }
        await dispatcher.ready()
        let first = Task { await dispatcher.dispatch(Self.vault) }
        #expect(await eventually { await login.isShowing })
        let second = Task { await dispatcher.dispatch(inApp ? Self.request : Self.kind) }
        #expect(await eventually { await dispatcher.arrivals == 2 })
        #expect(await login.isShowing, "\(label)")
        await login.logIn()
        #expect(await first.value.outcome.name == "navigated", "\(label)")
        #expect(await second.value.outcome.name == "navigated", "\(label)")
        #expect(await navigator.applied.count == 2, "\(label)")
    }
}
