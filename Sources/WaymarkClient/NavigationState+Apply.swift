extension NavigationState {
    /// Carries out `plan` on this value: what an app's navigator does to its screens, as
    /// data. The simulator's navigator and the tests use it; an app's `apply` does the same
    /// with its view controllers or navigation paths.
    public mutating func apply(_ plan: NavigationPlan) {
        for operation in plan.operations {
            switch operation {
            case .dismissModals(let from):
                modals.removeSubrange(min(from, modals.count)...)
            case .selectTab(let tab):
                selectedTab = tab
            case .update(let tab, let index, let params):
                guard var stack = stacks[tab], stack.indices.contains(index) else { continue }
                stack[index] = Screen(stack[index].destination, params: params)
                stacks[tab] = stack
            case .popTo(let tab, let index):
                guard var stack = stacks[tab], stack.indices.contains(index) else { continue }
                stack.removeSubrange((index + 1)...)
                stacks[tab] = stack
            case .setStack(let tab, let screens, let keeping):
                let old = stacks[tab] ?? []
                stacks[tab] = Array(old.prefix(min(keeping, screens.count))) + screens.dropFirst(min(keeping, old.count))
            case .present(let modal):
                modals.append(modal)
            }
        }
    }
}
