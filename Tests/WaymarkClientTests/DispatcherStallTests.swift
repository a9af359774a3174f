import Foundation
import RouteEngine
import LibraryTestSupport
import Testing
@testable import WaymarkClient

/// What stalled navigation for good before: a navigator's `apply` that never returns (UIKit
/// skips a completion handler when it refuses a presentation), `cancel()` during it, and a
/// save that never ends behind a "Saving…" sheet nobody closes.
@Suite("Dispatcher stalls")
struct DispatcherStallTests {
    typealias Prompts = DispatcherPromptTests

    /// A navigator whose first `stuck` applies never return, whatever happens to their task
    /// (as a UIKit completion that is never called); later ones apply at once.
    actor StuckNavigator: Navigator {
        private(set) var current = NavigationState(selectedTab: "main", stacks: ["main": [Screen("root")]])
        private(set) var started = 0
        private(set) var finished = 0
        private var stuck: Int
        private var held: [CheckedContinuation<Void, Never>] = []

        init(stuck: Int) { self.stuck = stuck }

        var state: NavigationState { current }

        func apply(_ plan: NavigationPlan) async {
            started += 1
            if stuck > 0 {
                stuck -= 1
                await withCheckedContinuation { held.append($0) }
            }
            current.apply(plan)
            finished += 1
        }

        /// Lets the stuck applies end (the test's clean-up).
        func release() {
            for continuation in held { continuation.resume() }
            held = []
        }
    }

    static func make(_ navigator: StuckNavigator, leave: (any LeaveHandler)? = nil,
                     _ configure: (inout DispatcherConfiguration) -> Void = { _ in }) -> RouteDispatcher {
        var configuration = DispatcherConfiguration()
        configure(&configuration)
        return RouteDispatcher(tables: FixedRouteTable(DispatcherTests.table), navigator: navigator, context: DispatcherTests.Preconditions(),
                               leave: leave, configuration: configuration)
    }

    @Test("An apply that never returns ends applyTimedOut, and the next link is applied")
    func applyNeverReturns() async {
        let navigator = StuckNavigator(stuck: 1)
        let dispatcher = Self.make(navigator) { $0.applyTimeout = 0.05 }
        await dispatcher.ready()
        guard case .applyTimedOut(let plan) = await dispatcher.dispatch(Prompts.kind).outcome else { Issue.record("not timed out"); return }
        #expect(!plan.isEmpty)
        #expect(await dispatcher.dispatch(Prompts.request).outcome.name == "navigated", "the funnel is not stuck")
        #expect(await navigator.started == 2)
        #expect(await navigator.finished == 1)
        await navigator.release()
    }

    @Test("Links queued behind a stuck apply each run once it times out, in order")
    func queuedBehindAStuckApply() async {
        let navigator = StuckNavigator(stuck: 1)
        let dispatcher = Self.make(navigator) { $0.applyTimeout = 0.05; $0.supersede = .keepAll }
        await dispatcher.ready()
        let first = Task { await dispatcher.dispatch(Prompts.kind) }
        #expect(await eventually { await navigator.started == 1 })
        let second = Task { await dispatcher.dispatch(Prompts.request) }
        #expect(await first.value.outcome.name == "applyTimedOut")
        #expect(await second.value.outcome.name == "navigated")
        await navigator.release()
    }

    @Test("cancel() during an apply ends it at once, returns true, and the next link runs")
    func cancelDuringApply() async {
        let navigator = StuckNavigator(stuck: 1)
        let dispatcher = Self.make(navigator) { $0.applyTimeout = 3600 }
        await dispatcher.ready()
        let first = Task { await dispatcher.dispatch(Prompts.kind) }
        #expect(await eventually { await navigator.started == 1 })
        #expect(await dispatcher.cancel())
        #expect(await first.value.outcome == .cancelled)
        #expect(await dispatcher.dispatch(Prompts.request).outcome.name == "navigated")
        await navigator.release()
    }

    @Test("A newer link during an apply does not supersede it: it runs after")
    func newerLinkDuringApply() async {
        let navigator = StuckNavigator(stuck: 1)
        let dispatcher = Self.make(navigator) { $0.applyTimeout = 3600 }
        await dispatcher.ready()
        let first = Task { await dispatcher.dispatch(Prompts.kind) }
        #expect(await eventually { await navigator.started == 1 })
        let second = Task { await dispatcher.dispatch(.link("lab://kind/b", door: .universalLink)) }
        #expect(await eventually { await dispatcher.arrivals == 2 })
        await navigator.release()
        #expect(await first.value.outcome.name == "navigated")
        #expect(await second.value.outcome.name == "navigated")
    }

    /// Asks to save, then saves for ever (unless cancelled); records what it is told to close.
    actor EndlessSave: LeaveHandler {
        private(set) var closed: [PromptEnding] = []
        private(set) var saves = 0
        func decide(leaving dirty: [Screen], for plan: NavigationPlan) async -> LeaveDecision { .saveThenContinue }
        func save(_ dirty: [Screen]) async -> Bool {
            saves += 1
            try? await Task.sleep(nanoseconds: 3_600_000_000_000)
            return true
        }
        func close(because ending: PromptEnding) async { closed.append(ending) }
    }

    @Test("A save that times out closes the save prompt; one cancelled closes it too")
    func saveTimesOut() async {
        let dirty = NavigationState(selectedTab: "main", stacks: ["main": [Screen("root"), Screen("item", params: ["id": .int(1)], isDirty: true)]])
        let navigator = RecordingNavigator(dirty)
        let leave = EndlessSave()
        var configuration = DispatcherConfiguration()
        configuration.leaveTimeout = 0.05
        let dispatcher = RouteDispatcher(tables: FixedRouteTable(DispatcherTests.table), navigator: navigator, context: DispatcherTests.Preconditions(),
                                         leave: leave, configuration: configuration)
        await dispatcher.ready()
        #expect(await dispatcher.dispatch(Prompts.kind).outcome.name == "leaveTimedOut")
        #expect(await leave.closed == [.timedOut], "the Saving… sheet is told to close")

        var patient = configuration
        patient.leaveTimeout = 3600
        let second = RouteDispatcher(tables: FixedRouteTable(DispatcherTests.table), navigator: navigator, context: DispatcherTests.Preconditions(),
                                     leave: leave, configuration: patient)
        await second.ready()
        let running = Task { await second.dispatch(Prompts.kind) }
        #expect(await eventually { await leave.saves == 2 })
        #expect(await second.cancel())
        #expect(await running.value.outcome == .cancelled)
        #expect(await leave.closed == [.timedOut, .cancelled])
        #expect(await navigator.applied.isEmpty)
    }
}
