import RouteEngine

/// One thing the app's `Navigator` does to its screens. Positions are those of the state
/// the plan was made from, after the operations before it.
public enum NavigationOperation: Hashable, Sendable, CustomStringConvertible {
    /// Dismiss the modals from this position up (0: all of them), the top one first.
    case dismissModals(from: Int)
    case selectTab(String)
    /// The screen at `index` of `tab`'s stack shows other params, in place (no new screen).
    case update(tab: String, index: Int, params: [String: ParamValue])
    /// Pop `tab`'s stack back to the screen at `index`.
    case popTo(tab: String, index: Int)
    /// Replace `tab`'s stack with these screens in one step (keeping the screens of the
    /// common prefix, which the navigator may reuse).
    case setStack(tab: String, screens: [Screen], keeping: Int)
    /// Present a modal on top, after the ones before it.
    case present(Modal)

    public var description: String {
        switch self {
        case .dismissModals(let from): "dismissModals(from: \(from))"
        case .selectTab(let tab): "selectTab(\(tab))"
        case .update(let tab, let index, let params):
            "update(\(tab)[\(index)], \(params.keys.sorted().map { "\($0)=\(params[$0]!)" }.joined(separator: ",")))"
        case .popTo(let tab, let index): "popTo(\(tab)[\(index)])"
        case .setStack(let tab, let screens, let keeping):
            "setStack(\(tab): \(screens.map(\.description).joined(separator: " > ")), keeping \(keeping))"
        case .present(let modal): "present(\(modal))"
        }
    }
}

/// What to do, in order, and the screens it removes or changes (the leave gate's question).
public struct NavigationPlan: Hashable, Sendable {
    public var operations: [NavigationOperation]
    /// Screens the plan dismisses, pops, replaces or shows with other params, as they are now.
    public var leaving: [Screen]
    /// The target the plan reaches.
    public var target: NavigationTarget

    public init(operations: [NavigationOperation], leaving: [Screen] = [], target: NavigationTarget) {
        self.operations = operations
        self.leaving = leaving
        self.target = target
    }

    public var isEmpty: Bool { operations.isEmpty }
}

/// The pure half of navigation: from what the app shows and where a resolution goes, the
/// operations that get there, as if the user had navigated there cleanly — reusing what is
/// correct, never duplicating a screen, updating in place when only params differ, and
/// leaving a canonical back stack for a link from outside.
///
/// The order is fixed (`docs/client.md`): dismiss stale modals → select the tab → reconcile
/// that tab's stack → present the target's modals. A stack is never reconciled under a
/// modal: when the tab or its stack changes, every modal goes first.
public enum NavigationPlanner {
    public static func plan(from state: NavigationState, to target: NavigationTarget, source: NavigationSource) -> NavigationPlan {
        let tab = target.tab ?? state.selectedTab ?? NavigationState.mainStack
        let stack = state.stacks[tab] ?? []
        var leaving: [Screen] = []

        var baseOperations: [NavigationOperation] = []
        if let tabName = target.tab, tabName != state.selectedTab { baseOperations.append(.selectTab(tabName)) }
        baseOperations += reconcile(stack: stack, to: target.base, tab: tab, source: source, leaving: &leaving)

        // Modals: kept while they agree with the target's chain, position by position, and
        // only when nothing beneath them changes.
        var kept = 0
        if baseOperations.isEmpty {
            while kept < min(state.modals.count, target.modals.count), state.modals[kept].isSameModal(as: target.modals[kept]) { kept += 1 }
        }
        var operations: [NavigationOperation] = []
        if kept < state.modals.count {
            operations.append(.dismissModals(from: kept))
            leaving = state.modals[kept...].flatMap(\.stack) + leaving
        }
        operations += baseOperations
        operations += target.modals[kept...].map(NavigationOperation.present)
        return NavigationPlan(operations: operations, leaving: leaving, target: target)
    }

    /// The five-way stack decision for the target's pushed run.
    static func reconcile(stack: [Screen], to run: [Screen], tab: String, source: NavigationSource,
                          leaving: inout [Screen]) -> [NavigationOperation] {
        guard let leaf = run.last else { return [] }
        // 1, 2: the leaf is on top — nothing, or its params in place.
        if let top = stack.last, top.destination == leaf.destination {
            guard top.params != leaf.params else { return [] }
            leaving.append(top)
            return [.update(tab: tab, index: stack.count - 1, params: leaf.params)]
        }
        // 3: the leaf is further down — pop to it, updating it if its params differ.
        if let index = stack.lastIndex(where: { $0.destination == leaf.destination }) {
            leaving += stack[(index + 1)...]
            guard stack[index].params != leaf.params else { return [.popTo(tab: tab, index: index)] }
            leaving.append(stack[index])
            return [.popTo(tab: tab, index: index), .update(tab: tab, index: index, params: leaf.params)]
        }
        // 4: from outside — reset to the canonical ancestry (screens equal to it may be
        // reused); 5: in-app — keep the screens of the common prefix as they are and rebuild
        // the tail (see `agreeingPrefix` for what "common" means).
        let keeping = source == .external ? commonPrefix(stack, run) : agreeingPrefix(stack, run)
        leaving += stack[keeping...]
        return [.setStack(tab: tab, screens: Array(stack[..<keeping]) + run[keeping...], keeping: keeping)]
    }

    /// How many screens from the root are the same screen in both (destination and every param).
    static func commonPrefix(_ stack: [Screen], _ run: [Screen]) -> Int {
        var count = 0
        while count < min(stack.count, run.count), stack[count].isSameScreen(as: run[count]) { count += 1 }
        return count
    }

    /// How many screens from the root agree with the run: the same destination, and every
    /// param the run gives that screen equal (params the run does not give — a list's
    /// filter the user chose — do not matter). The choice between "by id" and "by id and
    /// params": by id alone would keep product A under product B's specs; by every param
    /// would throw away the user's filter on a list the link does not mention.
    static func agreeingPrefix(_ stack: [Screen], _ run: [Screen]) -> Int {
        var count = 0
        while count < min(stack.count, run.count), stack[count].destination == run[count].destination,
              run[count].params.allSatisfy({ stack[count].params[$0.key] == $0.value }) { count += 1 }
        return count
    }
}
