import Foundation
import RouteEngine
import LibraryTestSupport
import Testing
@testable import WaymarkClient

/// The dispatcher's rules on the lab app's table (no server): chained gates, gate loops in a
/// chain, missing handlers, the stash bound, a failed save, push payloads.
@Suite("Route dispatcher")
struct DispatcherTests {
    static let build = AppBuild(app: "lab", platform: "android", version: "1.0.0")
    static let table: RouteTable = {
        let bytes = Fixtures.manifestJSON(schema: Fixtures.labSchemaJSON, routes: Fixtures.labRoutesJSON["routes"]!.arrayValue!).serializedBytes()
        guard case .success(let manifest) = Manifest.decode(bytes, for: build) else { fatalError("the lab manifest is refused") }
        return RouteTable(manifest: manifest, origin: .bundled)
    }()

    /// A session of named preconditions.
    actor Preconditions: ContextProvider {
        var satisfied: Set<String>
        init(_ satisfied: Set<String> = []) { self.satisfied = satisfied }
        func context() -> ResolutionContext { ResolutionContext(satisfied: satisfied, now: Fixtures.date("2026-03-15T00:00:00Z")) }
        func satisfy(_ name: String) { satisfied.insert(name) }
    }

    /// Satisfies each precondition it is asked for, except those in `refuses` (answered
    /// false) and `pretends` (answered true without satisfying it).
    actor Gates: GateHandler {
        let session: Preconditions
        let refuses: Set<String>
        let pretends: Set<String>
        private(set) var asked: [String] = []

        init(_ session: Preconditions, refuses: Set<String> = [], pretends: Set<String> = []) {
            self.session = session
            self.refuses = refuses
            self.pretends = pretends
        }

        func satisfy(_ precondition: String, for gate: Gate) async -> Bool {
            asked.append(precondition)
            if refuses.contains(precondition) { return false }
            if !pretends.contains(precondition) { await session.satisfy(precondition) }
            return true
        }
    }

    static func dispatcher(_ session: Preconditions, gates: (any GateHandler)? = nil, leave: (any LeaveHandler)? = nil,
                           state: NavigationState = NavigationState(selectedTab: "main", stacks: ["main": [Screen("root")]]),
                           configure: (inout DispatcherConfiguration) -> Void = { _ in }) -> (RouteDispatcher, RecordingNavigator) {
        let navigator = RecordingNavigator(state)
        var configuration = DispatcherConfiguration()
        configure(&configuration)
        return (RouteDispatcher(tables: FixedRouteTable(table), navigator: navigator, context: session, gates: gates, leave: leave,
                                configuration: configuration), navigator)
    }

    @Test("Chained gates compose: auth, then adult, each asked once, then the link is applied")
    func chainedGates() async {
        let session = Preconditions()
        let gates = Gates(session)
        let (dispatcher, navigator) = Self.dispatcher(session, gates: gates)
        await dispatcher.ready()
        let result = await dispatcher.dispatch(.link("lab://vault/1", door: .scheme))
        #expect(result.outcome.name == "navigated")
        #expect(await gates.asked == ["auth", "adult"])
        #expect(await navigator.current.stacks["main"]?.last == Screen("vaultItem", params: ["n": .int(1)]))
    }

    @Test("A chain: the second gate cancelled drops the intent; the second gate looping ends once")
    func chainEnds() async {
        for (gatesOf, expected) in [({ (s: Preconditions) in Gates(s, refuses: ["adult"]) }, DispatchOutcome.gateCancelled(precondition: "adult")),
                                    ({ (s: Preconditions) in Gates(s, pretends: ["adult"]) }, .gateLoop(precondition: "adult"))] {
            let session = Preconditions()
            let gates = gatesOf(session)
            let (dispatcher, navigator) = Self.dispatcher(session, gates: gates)
            await dispatcher.ready()
            #expect(await dispatcher.dispatch(.link("lab://vault/1", door: .scheme)).outcome == expected)
            #expect(await gates.asked == ["auth", "adult"])
            #expect(await navigator.applied.isEmpty)
        }
    }

    @Test("Without a gate handler a gate is cancelled; without a leave handler dirty work is never lost")
    func missingHandlers() async {
        let (gated, _) = Self.dispatcher(Preconditions())
        await gated.ready()
        #expect(await gated.dispatch(.link("lab://vault/1", door: .scheme)).outcome == .gateCancelled(precondition: "auth"))

        let dirty = NavigationState(selectedTab: "main", stacks: ["main": [Screen("root"), Screen("item", params: ["id": .int(1)], isDirty: true)]])
        let (leaving, navigator) = Self.dispatcher(Preconditions(), state: dirty)
        await leaving.ready()
        let result = await leaving.dispatch(.link("lab://kind/a", door: .universalLink))
        guard case .leaveCancelled(let screens) = result.outcome else { Issue.record("\(result.outcome)"); return }
        #expect(screens.map(\.destination) == ["item"])
        #expect(await navigator.applied.isEmpty)
    }

    /// Always answers save-then-continue; its save fails.
    struct FailingSave: LeaveHandler {
        func decide(leaving dirty: [Screen], for plan: NavigationPlan) async -> LeaveDecision { .saveThenContinue }
        func save(_ dirty: [Screen]) async -> Bool { false }
    }

    @Test("A failed save keeps the screen: leaveCancelled, nothing applied")
    func failedSave() async {
        let dirty = NavigationState(selectedTab: "main", stacks: ["main": [Screen("root"), Screen("item", params: ["id": .int(1)], isDirty: true)]])
        let (dispatcher, navigator) = Self.dispatcher(Preconditions(), leave: FailingSave(), state: dirty)
        await dispatcher.ready()
        #expect(await dispatcher.dispatch(.link("lab://kind/a", door: .universalLink)).outcome.name == "leaveCancelled")
        #expect(await navigator.applied.isEmpty)
    }

    @Test("Past the stash bound the oldest waiting intent is dropped; the rest run in order after ready()")
    func stashBound() async {
        let (dispatcher, navigator) = Self.dispatcher(Preconditions()) { $0.maximumWaiting = 2 }
        var tasks: [Task<DispatchResult, Never>] = []
        for kind in ["a", "b", "a"] {
            let arrived = await dispatcher.arrivals
            tasks.append(Task { await dispatcher.dispatch(.request(DestinationRequest(destination: "kind", params: ["k": .string(kind)]))) })
            while await dispatcher.arrivals == arrived { await Task.yield() }
        }
        await dispatcher.ready()
        var outcomes: [String] = []
        for task in tasks { outcomes.append(await task.value.outcome.name) }
        #expect(outcomes == ["dropped", "navigated", "navigated"])
        #expect(await navigator.applied.map { $0.target.base.last!.params["k"]!.description } == ["b", "a"])
    }

    @Test("Push payloads: the first configured key holding a string or URL; none, no intent")
    func pushPayloads() async {
        let keys = ["deeplink", "url", "link"]
        #expect(Intent.push(["deeplink": "lab://kind/a"], keys: keys) == .link("lab://kind/a", door: .push))
        #expect(Intent.push(["url": URL(string: "lab://kind/b")!, "link": "lab://kind/a"], keys: keys) == .link("lab://kind/b", door: .push))
        #expect(Intent.push(["deeplink": 42, "link": "lab://kind/a"], keys: keys) == .link("lab://kind/a", door: .push))
        #expect(Intent.push(["aps": ["alert": "Hi"]], keys: keys) == nil)
        let (dispatcher, _) = Self.dispatcher(Preconditions())
        await dispatcher.ready()
        #expect(await dispatcher.dispatch(push: ["aps": "x"]) == nil)
        #expect(await dispatcher.arrivals == 0, "a push without a link is not an intent")
    }
}
