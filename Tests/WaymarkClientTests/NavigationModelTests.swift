import Foundation
import Observation
import RouteEngine
import LibraryTestSupport
import Testing
import WaymarkClient
import WaymarkObservation

/// The observable navigation model as SwiftUI would use it: the dispatcher drives it, views
/// observe it, the user's Back and swipes write through its bindings.
@Suite("Navigation model")
@MainActor
struct NavigationModelTests {
    static func model() -> NavigationModel {
        NavigationModel(selectedTab: "main", roots: ["main": Screen("root")])
    }

    @Test("The dispatcher drives it; an observer of the path is told; the path is what the planner planned")
    func driven() async {
        let model = Self.model()
        let dispatcher = RouteDispatcher(tables: FixedRouteTable(DispatcherTests.table), navigator: model, context: DispatcherTests.Preconditions())
        await dispatcher.ready()
        let changed = Changed()
        withObservationTracking { _ = model[path: "main"] } onChange: { changed.fire() }
        #expect(await dispatcher.dispatch(.link("lab://kind/a", door: .universalLink)).outcome.name == "navigated")
        #expect(changed.count == 1, "a view reading the path is told")
        #expect(model[path: "main"] == [Screen("kind", params: ["k": .string("a")])])
        #expect(model.appliedPlans == 1)
        var expected = NavigationState(selectedTab: "main", stacks: ["main": [Screen("root")]])
        let plan = NavigationPlanner.plan(from: expected, to: NavigationTarget(tab: nil, base: [Screen("root"), Screen("kind", params: ["k": .string("a")])]),
                                          source: .external)
        expected.apply(plan)
        #expect(model.shown == expected)
    }

    @Test("Back and swipes write through the bindings: the root stays, a dismissed sheet takes those above it")
    func bindings() async {
        let model = Self.model()
        let sheet = Modal(.sheet, stack: [Screen("ticket", params: ["t": .string("a")])])
        let plan = NavigationPlan(operations: [.setStack(tab: "main", screens: [Screen("root"), Screen("kind", params: ["k": .string("a")]), Screen("item")], keeping: 1),
                                               .present(sheet), .present(Modal(.fullScreen, stack: [Screen("special")]))],
                                  target: NavigationTarget(tab: "main", base: []))
        await model.apply(plan)
        #expect(model.sheet == sheet && model.fullScreenCover == nil, "the cover is above the sheet, not the bottom modal")
        model[path: "main"] = [Screen("kind", params: ["k": .string("a")])]  // Back
        #expect(model.shown.stacks["main"] == [Screen("root"), Screen("kind", params: ["k": .string("a")])])
        model.sheet = nil  // swiped down
        #expect(model.shown.modals.isEmpty)
        model[path: "other"] = [Screen("x")]
        #expect(model.shown.stacks["other"] == nil, "a tab without a root is not made up")
        model.fullScreenCover = nil
        #expect(model.shown.modals.isEmpty)
    }

    @Test("Dirty by identity: the leave gate sees it, and the path element stays the same")
    func dirty() async {
        let model = Self.model()
        await model.apply(NavigationPlan(operations: [.setStack(tab: "main", screens: [Screen("root"), Screen("item", params: ["id": .int(1)])], keeping: 1)],
                                         target: NavigationTarget(tab: "main", base: [])))
        let before = model[path: "main"]
        model.setDirty(Screen("item", params: ["id": .int(1)]))
        #expect(model[path: "main"] == before)
        #expect(model.state.allScreens.filter(\.isDirty).map(\.destination) == ["item"])
        model.setDirty(Screen("item", params: ["id": .int(1)]), false)
        #expect(model.state.allScreens.filter(\.isDirty).isEmpty)
    }
}

/// Counts observation callbacks (they may come from any thread).
final class Changed: @unchecked Sendable {
    private let lock = NSLock()
    private var fired = 0
    func fire() { lock.withLock { fired += 1 } }
    var count: Int { lock.withLock { fired } }
}
