package dev.waymark.client

import dev.waymark.engine.ParamValue
import dev.waymark.engine.Presentation
import dev.waymark.engine.ScalarOrder

/**
 * One screen the app shows — an activity, a fragment or a navigation-graph destination —
 * with its params, and whether it holds work the user has not saved (the leave gate reads it).
 */
data class Screen(val destination: String, val params: Map<String, ParamValue> = emptyMap(), val isDirty: Boolean = false) {
    /** The same screen: destination and params equal (dirtiness is not identity). */
    fun isSameScreen(other: Screen) = destination == other.destination && params == other.params

    override fun toString(): String {
        val shown = params.keys.sortedWith(ScalarOrder).joinToString(",") { "$it=${params.getValue(it)}" }
        return (if (shown.length == 0) destination else "$destination($shown)") + if (isDirty) "*" else ""
    }
}

/** A presented container on top of the tabs — a dialog, a bottom sheet or a full-screen activity — with its own stack. */
data class Modal(val style: Presentation, val stack: List<Screen>) {
    /** Same style and the same screens (by destination and params). */
    fun isSameModal(other: Modal) = style == other.style && stack.size == other.stack.size &&
        stack.zip(other.stack).all { (a, b) -> a.isSameScreen(b) }

    override fun toString() = "${style.json}[${stack.joinToString(" > ")}]"
}

/**
 * What the app shows now, as the app's `Navigator` reports it: the selected tab of a
 * bottom navigation bar, each tab's back stack root first, and the modals on top.
 */
data class NavigationState(
    val selectedTab: String? = null,
    val stacks: Map<String, List<Screen>> = emptyMap(),
    val modals: List<Modal> = emptyList()
) {
    companion object {
        /** The stack of an app (or destination) without tabs. */
        const val MAIN_STACK = ""
    }
}

/** Where a navigation came from; it decides what happens to a stack that does not hold the target. */
enum class NavigationSource(val json: String) {
    /** A link from outside (App Link, custom scheme, notification): the stack is reset to the canonical ancestry. */
    EXTERNAL("external"),
    /** A typed request from inside the app: what the user built stays where it agrees with the target. */
    IN_APP("inApp");

    companion object {
        fun named(name: String) = values().firstOrNull { it.json == name }
    }
}

/** One screen of a resolved path: what the app shows there, with the params it needs. */
data class PathStep(val destination: String, val params: Map<String, ParamValue> = emptyMap(), val presentation: Presentation = Presentation.PUSH)

/** Where a `proceed` resolution takes the app: the tab, the pushed run, then the modals. */
data class NavigationTarget(val tab: String?, val base: List<Screen>, val modals: List<Modal> = emptyList()) {
    companion object {
        /**
         * Splits [steps] (root first) into the pushed run and the modal chain: the run starts at
         * the last `tab` step (a tab's root: what was above it belongs to another tab) and ends
         * before the first `sheet` or `fullScreen` step; push steps after a modal go in its stack.
         */
        fun fromSteps(tab: String?, steps: List<PathStep>): NavigationTarget {
            var base = ArrayList<Screen>()
            var modals = ArrayList<Modal>()
            for (step in steps) {
                val screen = Screen(step.destination, step.params)
                when (step.presentation) {
                    Presentation.SHEET, Presentation.FULL_SCREEN -> modals.add(Modal(step.presentation, listOf(screen)))
                    Presentation.TAB -> { base = arrayListOf(screen); modals = ArrayList() }
                    Presentation.PUSH -> if (modals.isEmpty()) base.add(screen)
                        else modals[modals.size - 1] = modals.last().copy(stack = modals.last().stack + screen)
                }
            }
            return NavigationTarget(tab, base, modals)
        }
    }
}
