import RouteEngine
import Testing
@testable import WaymarkClient

/// The planner as a table: (label, state, target, source, expected operations, expected
/// leaving). Screens are written `name` or `name(key=value,…)`, `*` for dirty; a stack is
/// `tab: a > b > c`. Rows marked "naive:" are ones where the obvious answer is wrong.
@Suite("Navigation planner")
struct NavigationPlannerTests {
    /// `product(id=7)` → Screen; numbers become ints; a trailing `*` marks it dirty.
    static func screen(_ text: String) -> Screen {
        var text = Substring(text)
        let dirty = text.hasSuffix("*")
        if dirty { text = text.dropLast() }
        guard let open = text.firstIndex(of: "(") else { return Screen(String(text), isDirty: dirty) }
        var params: [String: ParamValue] = [:]
        for pair in text[text.index(after: open)..<text.index(before: text.endIndex)].split(separator: ",") {
            let parts = pair.split(separator: "=", maxSplits: 1).map(String.init)
            params[parts[0]] = Int(parts[1]).map(ParamValue.int) ?? .string(parts[1])
        }
        return Screen(String(text[..<open]), params: params, isDirty: dirty)
    }

    static func screens(_ text: String) -> [Screen] {
        text.isEmpty ? [] : text.split(separator: ">").map { screen($0.trimmingCharacters(in: .whitespaces)) }
    }

    /// `"home: home > orders | shop: shop"` with an optional selected tab.
    static func state(_ selected: String?, _ stacks: String, modals: [(Presentation, String)] = []) -> NavigationState {
        var result = NavigationState(selectedTab: selected)
        for part in stacks.split(separator: "|") {
            let pieces = part.split(separator: ":", maxSplits: 1, omittingEmptySubsequences: false)
            result.stacks[pieces[0].trimmingCharacters(in: .whitespaces)] = screens(String(pieces[1]))
        }
        result.modals = modals.map { Modal($0.0, stack: screens($0.1)) }
        return result
    }

    static func target(_ tab: String?, _ base: String, modals: [(Presentation, String)] = []) -> NavigationTarget {
        NavigationTarget(tab: tab, base: screens(base), modals: modals.map { Modal($0.0, stack: screens($0.1)) })
    }

    struct Row: Sendable, CustomTestStringConvertible {
        let label: String
        let state: NavigationState
        let target: NavigationTarget
        let source: NavigationSource
        let operations: [String]
        let leaving: [String]
        var testDescription: String { label }
    }

    static func row(_ label: String, _ state: NavigationState, _ target: NavigationTarget, _ source: NavigationSource,
                    _ operations: [String], leaving: [String] = []) -> Row {
        Row(label: label, state: state, target: target, source: source, operations: operations, leaving: leaving)
    }

    static let rows: [Row] = [
        // 1. Already on top with equal params: nothing.
        row("on top, same params: nothing", state("home", "home: home > orders > order(id=7)"),
            target("home", "home > orders > order(id=7)"), .external, []),
        row("naive: on top, same params, external: still nothing (no reset of an equal stack)",
            state("home", "home: home > search > order(id=7)"), target("home", "home > orders > order(id=7)"), .external, []),
        // 2. On top with other params: update in place.
        row("on top, other params: update in place", state("home", "home: home > orders > order(id=7)"),
            target("home", "home > orders > order(id=8)"), .inApp, ["update(home[2], id=8)"], leaving: ["order(id=7)"]),
        row("naive: on top, other params: no push of a second order screen",
            state("home", "home: home > order(id=7)"), target("home", "home > orders > order(id=8)"), .external,
            ["update(home[1], id=8)"], leaving: ["order(id=7)"]),
        // 3. Further down: pop to it, updating if needed.
        row("further down, same params: pop to it", state("home", "home: home > orders > order(id=7) > invoice"),
            target("home", "home > orders"), .external, ["popTo(home[1])"], leaving: ["order(id=7)", "invoice"]),
        row("further down, other params: pop, then update", state("home", "home: home > order(id=7) > invoice"),
            target("home", "home > order(id=9)"), .inApp, ["popTo(home[1])", "update(home[1], id=9)"],
            leaving: ["invoice", "order(id=7)"]),
        row("naive: the nearest one down wins, not the first", state("home", "home: home > product(id=1) > related > product(id=2) > reviews"),
            target("home", "home > product(id=2)"), .external, ["popTo(home[3])"], leaving: ["reviews"]),
        // 4. External link, not in the stack: reset to the canonical ancestry.
        row("external: reset to the canonical ancestry", state("home", "home: home > search > results"),
            target("home", "home > orders > order(id=7)"), .external,
            ["setStack(home: home > orders > order(id=7), keeping 1)"], leaving: ["search", "results"]),
        row("naive: external does not keep a filtered list the link does not mention",
            state("home", "home: home > orders(filter=open)"), target("home", "home > orders > order(id=7)"), .external,
            ["setStack(home: home > orders > order(id=7), keeping 1)"], leaving: ["orders(filter=open)"]),
        row("external into an empty tab", state("home", "home: home"), target("shop", "shop > product(id=3)"), .external,
            ["selectTab(shop)", "setStack(shop: shop > product(id=3), keeping 0)"]),
        // 5. In-app: keep the agreeing prefix, rebuild the tail.
        row("in-app: keep the common prefix, rebuild the tail", state("home", "home: home > search > results"),
            target("home", "home > orders > order(id=7)"), .inApp,
            ["setStack(home: home > orders > order(id=7), keeping 1)"], leaving: ["search", "results"]),
        row("naive: in-app keeps the user's filter on a list the request does not mention",
            state("home", "home: home > orders(filter=open) > help"), target("home", "home > orders > order(id=7)"), .inApp,
            ["setStack(home: home > orders(filter=open) > order(id=7), keeping 2)"], leaving: ["help"]),
        row("naive: in-app does not keep another product as the ancestor",
            state("shop", "shop: shop > product(id=1) > gallery"), target("shop", "shop > product(id=2) > specs(id=2)"), .inApp,
            ["setStack(shop: shop > product(id=2) > specs(id=2), keeping 1)"], leaving: ["product(id=1)", "gallery"]),
        // Tabs: select first, then reconcile the target tab's stack (not the selected one's).
        row("another tab: select it, its stack is reconciled", state("home", "home: home > orders | shop: shop > product(id=1)"),
            target("shop", "shop > product(id=1)"), .external, ["selectTab(shop)"]),
        row("naive: the other tab's stack, not the selected one's, is popped",
            state("home", "home: home > orders | shop: shop > product(id=1) > reviews"),
            target("shop", "shop > product(id=1)"), .external, ["selectTab(shop)", "popTo(shop[1])"], leaving: ["reviews"]),
        row("naive: no tab on the destination selects nothing; the selected tab's stack", state("shop", "home: home | shop: shop"),
            target(nil, "settings"), .inApp, ["setStack(shop: settings, keeping 0)"], leaving: ["shop"]),
        row("an app without tabs: the main stack", state(nil, ": home > a"), target(nil, "home > b"), .external,
            ["setStack(: home > b, keeping 1)"], leaving: ["a"]),
        // Modals: stale ones first, targets' last.
        row("a stale modal is dismissed before the tab changes",
            state("home", "home: home | shop: shop", modals: [(.sheet, "filters")]), target("shop", "shop > product(id=2)"), .external,
            ["dismissModals(from: 0)", "selectTab(shop)", "setStack(shop: shop > product(id=2), keeping 1)"], leaving: ["filters"]),
        row("naive: a modal over the right stack is still dismissed when the target has none",
            state("home", "home: home > orders", modals: [(.sheet, "filters")]), target("home", "home > orders"), .external,
            ["dismissModals(from: 0)"], leaving: ["filters"]),
        row("the target's modal is presented last", state("home", "home: home"),
            target("shop", "shop > product(id=2)", modals: [(.sheet, "share(id=2)")]), .external,
            ["selectTab(shop)", "setStack(shop: shop > product(id=2), keeping 0)", "present(sheet[share(id=2)])"]),
        row("the same modal already shown: nothing", state("shop", "shop: shop > product(id=2)", modals: [(.sheet, "share(id=2)")]),
            target("shop", "shop > product(id=2)", modals: [(.sheet, "share(id=2)")]), .external, []),
        row("naive: a modal with other params is dismissed and presented again, not updated",
            state("shop", "shop: shop > product(id=2)", modals: [(.sheet, "share(id=2)")]),
            target("shop", "shop > product(id=2)", modals: [(.sheet, "share(id=3)")]), .external,
            ["dismissModals(from: 0)", "present(sheet[share(id=3)])"], leaving: ["share(id=2)"]),
        row("the matching lower modal is kept, the one above it goes",
            state("shop", "shop: shop", modals: [(.fullScreen, "checkout > address"), (.sheet, "help")]),
            target("shop", "shop", modals: [(.fullScreen, "checkout > address")]), .external,
            ["dismissModals(from: 1)"], leaving: ["help"]),
        row("naive: a kept modal is not kept when the stack beneath it changes",
            state("shop", "shop: shop > product(id=1)", modals: [(.fullScreen, "checkout")]),
            target("shop", "shop > product(id=2)", modals: [(.fullScreen, "checkout")]), .external,
            ["dismissModals(from: 0)", "update(shop[1], id=2)", "present(fullScreen[checkout])"],
            leaving: ["checkout", "product(id=1)"]),
        row("naive: an external link to the tab's root pops to it, it does not rebuild it", state("home", "home: home > search > results"),
            target("home", "home"), .external, ["popTo(home[0])"], leaving: ["search", "results"]),
        row("naive: the same screen under a stale modal: only the modal goes",
            state("shop", "shop: shop > product(id=1)", modals: [(.sheet, "share(id=1)")]), target("shop", "shop > product(id=1)"), .inApp,
            ["dismissModals(from: 0)"], leaving: ["share(id=1)"]),
        row("naive: another modal is dismissed before the target's is presented, not stacked on it",
            state("shop", "shop: shop", modals: [(.sheet, "filters")]), target("shop", "shop", modals: [(.sheet, "share(id=1)")]), .external,
            ["dismissModals(from: 0)", "present(sheet[share(id=1)])"], leaving: ["filters"]),
        row("naive: in-app keeps a dirty ancestor the request agrees with (no leave prompt for it)",
            state("home", "home: home > orders(filter=open)* > order(id=1)"), target("home", "home > orders > invoice(id=2)"), .inApp,
            ["setStack(home: home > orders(filter=open)* > invoice(id=2), keeping 2)"], leaving: ["order(id=1)"]),
        row("an external link resets a dirty ancestor that differs from the canonical one",
            state("home", "home: home > orders(filter=open)* > order(id=1)"), target("home", "home > orders > invoice(id=2)"), .external,
            ["setStack(home: home > orders > invoice(id=2), keeping 1)"], leaving: ["orders(filter=open)*", "order(id=1)"]),
        row("dirty screens are named in leaving, as they are now", state("home", "home: home > orders > edit(id=3)*"),
            target("home", "home > orders"), .external, ["popTo(home[1])"], leaving: ["edit(id=3)*"]),
        row("naive: switching tabs leaves nothing, even a dirty screen on the other tab",
            state("home", "home: home > edit*| shop: shop"), target("shop", "shop"), .external, ["selectTab(shop)"]),
    ]

    @Test(arguments: rows)
    func plan(_ row: Row) {
        let plan = NavigationPlanner.plan(from: row.state, to: row.target, source: row.source)
        #expect(plan.operations.map(\.description) == row.operations, "\(row.label)")
        #expect(plan.leaving.map(\.description) == row.leaving, "\(row.label)")
    }

    /// Every plan, applied to its state by the reference navigator, reaches the target.
    @Test(arguments: rows)
    func planReachesTarget(_ row: Row) {
        var state = row.state
        let plan = NavigationPlanner.plan(from: state, to: row.target, source: row.source)
        state.apply(plan)
        let tab = row.target.tab ?? row.state.selectedTab ?? NavigationState.mainStack
        #expect(state.stacks[tab]?.last?.isSameScreen(as: row.target.base.last!) == true, "\(row.label)")
        #expect(state.modals.map(\.description) == row.target.modals.map(\.description), "\(row.label)")
        #expect(NavigationPlanner.plan(from: state, to: row.target, source: row.source).operations.isEmpty,
                "\(row.label): planning again from the result does nothing")
    }

    @Test("As many rows where the naive answer is wrong as where it is right")
    func naiveRows() {
        let naive = Self.rows.filter { $0.label.hasPrefix("naive:") }.count
        #expect(naive * 2 >= Self.rows.count, "\(naive) of \(Self.rows.count)")
    }

    @Test("Steps are split into the pushed run and the modal chain")
    func targetFromSteps() {
        let steps = [PathStep(destination: "shop", presentation: .tab), PathStep(destination: "product", params: ["id": .int(2)]),
                     PathStep(destination: "checkout", presentation: .fullScreen), PathStep(destination: "address"),
                     PathStep(destination: "help", presentation: .sheet)]
        let target = NavigationTarget(tab: "shop", steps: steps)
        #expect(target.base.map(\.description) == ["shop", "product(id=2)"])
        #expect(target.modals.map(\.description) == ["fullScreen[checkout > address]", "sheet[help]"])
        // naive: a tab root below another tab root is not part of that tab's stack
        let nested = NavigationTarget(tab: "account", steps: [PathStep(destination: "home", presentation: .tab),
                                                              PathStep(destination: "orders", presentation: .tab),
                                                              PathStep(destination: "orderDetail", params: ["orderId": .int(4)])])
        #expect(nested.base.map(\.description) == ["orders", "orderDetail(orderId=4)"])
    }
}
