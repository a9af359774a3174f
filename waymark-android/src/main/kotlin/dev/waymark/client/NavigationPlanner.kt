package dev.waymark.client

import dev.waymark.engine.ParamValue
import dev.waymark.engine.ScalarOrder

/** One thing the app's `Navigator` does to its screens; positions are those after the operations before it. */
sealed class NavigationOperation {
    /** Dismiss the modals from this position up (0: all of them), the top one first. */
    data class DismissModals(val from: Int) : NavigationOperation() { override fun toString() = "dismissModals(from: $from)" }
    data class SelectTab(val tab: String) : NavigationOperation() { override fun toString() = "selectTab($tab)" }
    /** The screen at [index] of [tab]'s stack shows other params, in place (no new screen). */
    data class Update(val tab: String, val index: Int, val params: Map<String, ParamValue>) : NavigationOperation() {
        override fun toString() = "update($tab[$index], ${params.keys.sortedWith(ScalarOrder).joinToString(",") { "$it=${params.getValue(it)}" }})"
    }
    /** Pop [tab]'s stack back to the screen at [index]. */
    data class PopTo(val tab: String, val index: Int) : NavigationOperation() { override fun toString() = "popTo($tab[$index])" }
    /** Replace [tab]'s stack in one step, keeping the first [keeping] screens (the navigator may reuse them). */
    data class SetStack(val tab: String, val screens: List<Screen>, val keeping: Int) : NavigationOperation() {
        override fun toString() = "setStack($tab: ${screens.joinToString(" > ")}, keeping $keeping)"
    }
    /** Present a modal on top, after the ones before it. */
    data class Present(val modal: Modal) : NavigationOperation() { override fun toString() = "present($modal)" }
}

/** What to do, in order, and the screens it removes or changes (the leave gate's question). */
data class NavigationPlan(val operations: List<NavigationOperation>, val leaving: List<Screen>, val target: NavigationTarget) {
    val isEmpty: Boolean get() = operations.isEmpty()
}

/**
 * The pure half of navigation (`docs/client.md`, the rules and table of the Swift
 * `NavigationPlanner`, shared as `conformance/planner.json`): from what the app shows and
 * where a resolution goes, the operations that get there as if the user had navigated
 * cleanly. The order is fixed: dismiss stale modals → select the tab → reconcile that
 * tab's back stack → present the target's modals.
 */
object NavigationPlanner {
    fun plan(state: NavigationState, target: NavigationTarget, source: NavigationSource): NavigationPlan {
        val tab = target.tab ?: state.selectedTab ?: NavigationState.MAIN_STACK
        val stack = state.stacks[tab] ?: emptyList()
        var leaving = ArrayList<Screen>()
        val baseOperations = ArrayList<NavigationOperation>()
        if (target.tab != null && target.tab != state.selectedTab) baseOperations.add(NavigationOperation.SelectTab(target.tab))
        baseOperations.addAll(reconcile(stack, target.base, tab, source, leaving))
        // Modals are kept while they agree with the target's chain, and only when nothing beneath them changes.
        var kept = 0
        if (baseOperations.isEmpty()) {
            while (kept < minOf(state.modals.size, target.modals.size) && state.modals[kept].isSameModal(target.modals[kept])) kept++
        }
        val operations = ArrayList<NavigationOperation>()
        if (kept < state.modals.size) {
            operations.add(NavigationOperation.DismissModals(kept))
            leaving = ArrayList(state.modals.drop(kept).flatMap { it.stack } + leaving)
        }
        operations.addAll(baseOperations)
        operations.addAll(target.modals.drop(kept).map { NavigationOperation.Present(it) })
        return NavigationPlan(operations, leaving, target)
    }

    /** The five-way decision for the target's pushed run. */
    private fun reconcile(stack: List<Screen>, run: List<Screen>, tab: String, source: NavigationSource,
                          leaving: MutableList<Screen>): List<NavigationOperation> {
        val leaf = run.lastOrNull() ?: return emptyList()
        val top = stack.lastOrNull()
        // 1, 2: the leaf is on top — nothing, or its params in place.
        if (top != null && top.destination == leaf.destination) {
            if (top.params == leaf.params) return emptyList()
            leaving.add(top)
            return listOf(NavigationOperation.Update(tab, stack.size - 1, leaf.params))
        }
        // 3: further down — pop to the nearest one, updating it if its params differ.
        val index = stack.indexOfLast { it.destination == leaf.destination }
        if (index >= 0) {
            leaving.addAll(stack.subList(index + 1, stack.size))
            if (stack[index].params == leaf.params) return listOf(NavigationOperation.PopTo(tab, index))
            leaving.add(stack[index])
            return listOf(NavigationOperation.PopTo(tab, index), NavigationOperation.Update(tab, index, leaf.params))
        }
        // 4: from outside — the canonical ancestry, reusing equal screens; 5: in-app — keep the agreeing prefix.
        val keeping = if (source == NavigationSource.EXTERNAL) commonPrefix(stack, run) else agreeingPrefix(stack, run)
        leaving.addAll(stack.subList(keeping, stack.size))
        return listOf(NavigationOperation.SetStack(tab, stack.subList(0, keeping) + run.subList(keeping, run.size), keeping))
    }

    /** How many screens from the root are the same screen in both. */
    private fun commonPrefix(stack: List<Screen>, run: List<Screen>): Int {
        var count = 0
        while (count < minOf(stack.size, run.size) && stack[count].isSameScreen(run[count])) count++
        return count
    }

    /**
     * How many screens from the root agree with the run: same destination, and every param
     * the run gives equal (a list's filter the link does not mention does not matter).
     */
    private fun agreeingPrefix(stack: List<Screen>, run: List<Screen>): Int {
        var count = 0
        while (count < minOf(stack.size, run.size) && stack[count].destination == run[count].destination &&
            run[count].params.all { (key, value) -> stack[count].params[key] == value }) count++
        return count
    }
}

/**
 * This state with [plan] carried out: what an app's navigator does to its screens, as data.
 * The tests' navigator uses it; an app's `apply` does the same with its activities or graph.
 */
fun NavigationState.applying(plan: NavigationPlan): NavigationState {
    var selected = selectedTab
    val stacks = LinkedHashMap(this.stacks)
    val modals = ArrayList(this.modals)
    operations@ for (operation in plan.operations) {
        when (operation) {
            is NavigationOperation.DismissModals -> while (modals.size > operation.from) modals.removeAt(modals.size - 1)
            is NavigationOperation.SelectTab -> selected = operation.tab
            is NavigationOperation.Update -> {
                val stack = stacks[operation.tab]?.toMutableList() ?: continue@operations
                if (operation.index !in stack.indices) continue@operations
                stack[operation.index] = Screen(stack[operation.index].destination, operation.params)
                stacks[operation.tab] = stack
            }
            is NavigationOperation.PopTo -> {
                val stack = stacks[operation.tab] ?: continue@operations
                if (operation.index !in stack.indices) continue@operations
                stacks[operation.tab] = stack.subList(0, operation.index + 1).toList()
            }
            is NavigationOperation.SetStack -> {
                val old = stacks[operation.tab] ?: emptyList()
                stacks[operation.tab] = old.take(minOf(operation.keeping, operation.screens.size)) + operation.screens.drop(minOf(operation.keeping, old.size))
            }
            is NavigationOperation.Present -> modals.add(operation.modal)
        }
    }
    return NavigationState(selected, stacks, modals)
}
