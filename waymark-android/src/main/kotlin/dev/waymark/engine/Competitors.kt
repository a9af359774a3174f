package dev.waymark.engine

/**
 * The routes of one pattern shape kept so far by the analysis's sweep (the Swift
 * `Competitors`), indexed so that "does a kept route take every link of this one?" costs
 * O(log k) per scope in use rather than one comparison per kept route: per scope (hosts and
 * schemes list), a Fenwick tree over the distinct start times holds the latest end (and its
 * route); the prefix up to a route's start answers with the longest-living route that
 * started no later.
 */
internal class Competitors(routes: List<RouteSpec>) {
    private class Group(val scope: LinkScope) {
        var starts = LongArray(0)
        var treeEnds = LongArray(0)
        var treeSlots = IntArray(0)
    }

    private data class Window(val group: Int, val start: Long, val end: Long)

    private val groups = ArrayList<Group>()
    private val windows = ArrayList<Window>()
    private val scopes = routes.map { it.scope }
    private val exact = HashMap<Window, Int>()
    /** The groups of the routes checked so far, in the order first seen: a route is compared with these alone. */
    private val checked = ArrayList<Int>()
    private lateinit var isChecked: BooleanArray

    init {
        val groupOfScope = HashMap<LinkScope, Int>()
        val starts = ArrayList<MutableSet<Long>>()
        for (route in routes) {
            val group = groupOfScope.getOrPut(route.scope) { groups.add(Group(route.scope)); starts.add(HashSet()); groups.size - 1 }
            val window = Window(group, route.window.start ?: Long.MIN_VALUE, route.window.end ?: Long.MAX_VALUE)
            windows.add(window)
            starts[group].add(window.start)
        }
        groups.forEachIndexed { index, group ->
            group.starts = starts[index].sorted().toLongArray()
            group.treeEnds = LongArray(group.starts.size) { Long.MIN_VALUE }
            group.treeSlots = IntArray(group.starts.size) { Int.MAX_VALUE }
        }
        isChecked = BooleanArray(groups.size)
    }

    /**
     * The kept route that takes every link of the route at [slot] (exactly the same first),
     * and whether exactly. Each call is a route checked: [work] grows by the number of
     * different scopes among the routes checked before it (`docs/validation.md`), whatever
     * the answer.
     */
    fun holder(slot: Int, work: LongArray): Pair<Int, Boolean>? {
        val window = windows[slot]
        work[0] += checked.size.toLong()
        try {
            return find(slot, window)
        } finally {
            if (!isChecked[window.group]) { isChecked[window.group] = true; checked.add(window.group) }
        }
    }

    private fun find(slot: Int, window: Window): Pair<Int, Boolean>? {
        exact[window]?.let { return Pair(it, true) }
        val scope = scopes[slot]
        if (scope.hosts?.isEmpty() == true && scope.schemes?.isEmpty() == true) return null  // matches no link
        var bestSlot = -1
        for (index in checked) {
            val group = groups[index]
            if (!scope.isWithin(group.scope)) continue
            val (end, found) = latestEnd(group, window.start)
            if (found >= 0 && end >= window.end && (bestSlot < 0 || found < bestSlot)) bestSlot = found
        }
        return if (bestSlot >= 0) Pair(bestSlot, false) else null
    }

    /** Keeps the route at [slot] for the routes after it. */
    fun keep(slot: Int) {
        val window = windows[slot]
        if (window !in exact) exact[window] = slot
        val group = groups[window.group]
        var index = count(group.starts, window.start)
        while (index <= group.treeEnds.size) {
            val heldEnd = group.treeEnds[index - 1]
            if (window.end > heldEnd || (window.end == heldEnd && slot < group.treeSlots[index - 1])) {
                group.treeEnds[index - 1] = window.end
                group.treeSlots[index - 1] = slot
            }
            index += index and -index
        }
    }

    private fun latestEnd(group: Group, start: Long): Pair<Long, Int> {
        var bestEnd = Long.MIN_VALUE
        var bestSlot = Int.MAX_VALUE
        var index = count(group.starts, start)
        while (index > 0) {
            val end = group.treeEnds[index - 1]
            val slot = group.treeSlots[index - 1]
            if (end > bestEnd || (end == bestEnd && slot < bestSlot)) { bestEnd = end; bestSlot = slot }
            index -= index and -index
        }
        return Pair(bestEnd, if (bestSlot == Int.MAX_VALUE) -1 else bestSlot)
    }

    /** How many of the ascending [starts] are at most [start]. */
    private fun count(starts: LongArray, start: Long): Int {
        var low = 0
        var high = starts.size
        while (low < high) {
            val middle = (low + high) / 2
            if (starts[middle] <= start) low = middle + 1 else high = middle
        }
        return low
    }
}
