package dev.waymark.engine

/**
 * The schema-independent half of building a table (the rules of `RouteAnalysis.swift`):
 * patterns parsed, ids and windows checked, and routes that compete for the same links
 * compared. A route with a structural error is excluded from every table built from it.
 */
class RouteAnalysis(val document: RoutesDocument, now: Long, workLimit: Long = DEFAULT_WORK_LIMIT) {
    /** Per route (document order), its patterns; null where a pattern is invalid or repeats a shape. */
    internal val patterns = ArrayList<List<UrlPattern?>>()
    val problems = ArrayList<ValidationProblem>()
    /** Positions in `document.routes` of routes that must not be served. */
    val excluded = HashSet<Int>()

    init {
        val firstWithId = HashMap<String, Int>()
        document.routes.forEachIndexed { position, route ->
            val first = firstWithId[route.id]
            if (first != null) {
                problems.add(ValidationProblem("duplicateRouteId", path(route.path, "id"),
                    "The id \"${route.id}\" is already used by routes[${document.routes[first].index}]; every route needs its own id."))
                excluded.add(position)
            } else firstWithId[route.id] = position
            val parsed = ArrayList<UrlPattern?>()
            val shapes = HashMap<String, Int>()
            route.patterns.forEachIndexed { index, text ->
                try {
                    val pattern = UrlPattern(text)
                    val earlier = shapes[pattern.shape]
                    if (earlier != null) {
                        problems.add(ValidationProblem("duplicatePattern", path(path(route.path, "patterns"), index),
                            "$text matches the same links as ${route.patterns[earlier]} in the same route; it can be removed."))
                        parsed.add(null)
                    } else {
                        shapes[pattern.shape] = index
                        parsed.add(pattern)
                    }
                } catch (error: UrlPatternError) {
                    problems.add(ValidationProblem("invalidPattern", path(path(route.path, "patterns"), index), "The pattern $text is not valid: ${error.message}"))
                    parsed.add(null)
                    excluded.add(position)
                }
            }
            patterns.add(parsed)
            val (start, end) = route.window
            if (start != null && end != null && start >= end) {
                problems.add(ValidationProblem("invalidWindow", path(route.path, "validUntil"), "The route ends before it starts."))
                excluded.add(position)
            } else if (end != null && end <= now) {
                problems.add(ValidationProblem("expired", path(route.path, "validUntil"), "The route ended on ${Timestamp.format(end)}."))
            }
            val fallback = route.fallbackURL
            if (fallback != null && !Schema.isSafeAddress(fallback)) {
                problems.add(ValidationProblem("insecureFallback", path(route.path, "fallbackURL"), "The fallback $fallback must be an https:// address with a host."))
            }
        }
        findCompetingRoutes(workLimit)
    }

    /**
     * Routes whose patterns have one shape compete for the same paths. Each shape is swept
     * in document order (shapes in the order they first appear): a route whose links and
     * window lie within a kept earlier one's can never win (`shadowed`; `conflict` when
     * exactly the same) and is excluded; otherwise it is kept. A route excluded by one
     * shape is no competitor on the next, so the order is part of the rule. Past
     * [workLimit] scope comparisons the sweep stops: the shape's first route is named and
     * excluded (`tooComplex`), as the Swift engine does; the routes left unchecked resolve as
     * they would anyway (of two routes of one shape, the earlier wins).
     * - Complexity: O(k log k) per shape of k routes using s different scopes, times s.
     */
    private fun findCompetingRoutes(workLimit: Long) {
        val shapes = LinkedHashMap<String, MutableList<Pair<Int, Int>>>()
        patterns.forEachIndexed { position, routePatterns ->
            if (position in excluded) return@forEachIndexed
            routePatterns.forEachIndexed { index, pattern ->
                if (pattern != null) shapes.getOrPut(pattern.shape) { ArrayList() }.add(Pair(position, index))
            }
        }
        val work = LongArray(1)
        for (entries in shapes.values) {
            if (entries.size < 2) continue
            val competitors = Competitors(entries.map { document.routes[it.first] })
            entries.forEachIndexed { slot, entry ->
                if (entry.first in excluded) return@forEachIndexed
                val second = document.routes[entry.first]
                val found = competitors.holder(slot, work)
                if (found == null) { competitors.keep(slot); return@forEachIndexed }
                val holder = entries[found.first]
                val first = document.routes[holder.first]
                val at = path(path(second.path, "patterns"), entry.second)
                val firstPattern = first.patterns[holder.second]
                val secondPattern = second.patterns[entry.second]
                problems.add(
                    if (found.second) ValidationProblem("conflict", at,
                        "Routes \"${first.id}\" ($firstPattern) and \"${second.id}\" ($secondPattern) match exactly the same links.")
                    else ValidationProblem("shadowed", at,
                        "Route \"${second.id}\" ($secondPattern) can never be used: route \"${first.id}\" ($firstPattern), listed earlier, already takes every link it matches.")
                )
                excluded.add(entry.first)
            }
            if (work[0] > workLimit) {
                val route = document.routes[entries[0].first]
                problems.add(ValidationProblem("tooComplex", path(path(route.path, "patterns"), entries[0].second),
                    "The ${entries.size} routes on the pattern shape of ${route.patterns[entries[0].second]} use too many different host and scheme lists to be checked for conflicts."))
                excluded.add(entries[0].first)
                return
            }
        }
    }

    companion object {
        /** How many scope comparisons one document's conflict analysis may make (the Swift engine's `defaultWorkLimit`). */
        const val DEFAULT_WORK_LIMIT = 4_000_000L
    }
}
