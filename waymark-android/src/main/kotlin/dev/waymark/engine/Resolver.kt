package dev.waymark.engine

/**
 * The frozen route table of one app build: resolves untrusted links and typed in-app
 * requests to a [Resolution] (`docs/resolution.md`). Immutable once built; matching never
 * throws, it returns a value.
 */
class Resolver(val schema: Schema, analysis: RouteAnalysis) {
    private val parser = LinkParser(schema)
    private val trie = RouteTrie()
    /** Ids of the routes this build resolves, in document order. */
    val routeIds: List<String>
    /** Why routes of the document were left out of this table. */
    val leftOut: List<ValidationProblem>
    /**
     * The literal words of this table's patterns (lowercased): the words an unknown link's
     * shape may keep ([LinkShape]), since the app has them already.
     */
    val vocabulary: Set<String>

    init {
        val compiler = RouteCompiler(schema, parser)
        val ids = ArrayList<String>()
        val left = ArrayList<ValidationProblem>()
        val words = HashSet<String>()
        if (analysis.excluded.isNotEmpty()) left.addAll(analysis.problems.filter { it.severity == Severity.ERROR })
        analysis.document.routes.forEachIndexed { position, spec ->
            if (position in analysis.excluded) return@forEachIndexed
            val patterns = analysis.patterns[position]
            val compiled = compiler.compile(spec, patterns)
            val bindings = compiled.bindings
            if (bindings == null || compiled.route == null) { left.addAll(compiled.problems); return@forEachIndexed }
            ids.add(spec.id)
            patterns.filterNotNull().forEachIndexed { index, pattern ->
                for (segment in pattern.segments) if (segment is PatternSegment.Literal) words.add(segment.text)
                trie.insert(pattern, CompiledPattern(compiled.route, bindings[index]))
            }
        }
        routeIds = ids
        leftOut = left
        vocabulary = words
    }

    /** Resolves an untrusted link: parse, match, extract params, validate them, then preconditions. */
    fun resolve(url: String, context: ResolutionContext): Resolution {
        val parsed = try {
            parser.parse(url)
        } catch (defect: LinkDefect) {
            return Resolution.NotFound(NotFoundReason.MALFORMED, detail = defect.message)
        }
        val now = context.nowMicroseconds
        var chosen: CompiledPattern? = null
        var notLive: CompiledPattern? = null
        // Among patterns of one shape, the first that answers the origin and is live wins; a
        // shape with none is a dead end, and the first such shape explains a link nothing answers.
        trie.match(parsed.segments) { candidates ->
            var firstAdmitted: CompiledPattern? = null
            var accepted = false
            for (candidate in candidates) {
                if (!candidate.route.admittedOrigins[parsed.origin]) continue
                if (candidate.route.window.contains(now)) { chosen = candidate; accepted = true; break }
                if (firstAdmitted == null) firstAdmitted = candidate
            }
            if (!accepted && notLive == null) notLive = firstAdmitted
            accepted
        }
        val match = chosen ?: run {
            val first = notLive?.route ?: return Resolution.NotFound(NotFoundReason.UNKNOWN_ROUTE)
            val end = first.window.end
            return if (end != null && end <= now) Resolution.NotFound(NotFoundReason.EXPIRED, first.id, "Ended ${Timestamp.format(end)}.")
            else Resolution.NotFound(NotFoundReason.UNKNOWN_ROUTE, first.id, "Not live yet.")
        }
        val route = match.route
        val params = LinkedHashMap<String, ParamValue>()
        val segments = parsed.segments
        bindings@ for (binding in match.bindings) {
            val text: String? = when (val source = binding.source) {
                is BindingSource.Constant -> { params[binding.name] = source.value; continue@bindings }
                is BindingSource.Segment -> {
                    if (segments[source.position].contains('/')) return encodedSlash(route, binding)
                    segments[source.position]
                }
                is BindingSource.Rest -> {
                    val parts = segments.subList(source.position, segments.size)
                    if (parts.any { it.contains('/') }) return encodedSlash(route, binding)
                    parts.joinToString("/")
                }
                is BindingSource.Query -> parsed.query?.let { LinkParser.queryValue(it, source.name) }
            }
            if (text == null) {
                if (binding.spec.isOptional) continue
                return Resolution.NotFound(NotFoundReason.VALIDATION_FAILED, route.id, "${binding.name} is required but missing.")
            }
            val checked = binding.spec.valueFromText(text)
            params[binding.name] = checked.value
                ?: return Resolution.NotFound(NotFoundReason.VALIDATION_FAILED, route.id, "${binding.name} \"$text\" ${checked.failure}.")
        }
        return decide(route.id, route.destination, params, ResolutionRequest.Url(url), context)
    }

    private fun encodedSlash(route: CompiledRoute, binding: Binding) = Resolution.NotFound(NotFoundReason.VALIDATION_FAILED, route.id,
        "${binding.name} contains an encoded slash (%2F), which no param accepts.")

    /** Resolves a typed in-app request through the same param checks and precondition evaluation. */
    fun resolve(request: DestinationRequest, context: ResolutionContext): Resolution {
        val destination = schema.destinations[request.destination]
            ?: return Resolution.NotFound(NotFoundReason.UNKNOWN_ROUTE, detail = "The app has no destination \"${request.destination}\".")
        for (name in request.params.keys) if (destination.params[name] == null) {
            return Resolution.NotFound(NotFoundReason.VALIDATION_FAILED, detail = "${request.destination} has no param \"$name\".")
        }
        val params = LinkedHashMap<String, ParamValue>()
        for ((name, spec) in destination.params) {
            val given = request.params[name]
            if (given == null) {
                if (spec.isOptional) continue
                return Resolution.NotFound(NotFoundReason.VALIDATION_FAILED, detail = "$name is required but missing.")
            }
            val checked = spec.valueFrom(given)
            params[name] = checked.value ?: return Resolution.NotFound(NotFoundReason.VALIDATION_FAILED, detail = "$name \"$given\" ${checked.failure}.")
        }
        return decide(null, destination, params, ResolutionRequest.Destination(request), context)
    }

    /** Resolves a gate's `resume` request again, through whichever door it came in by. */
    fun resolve(request: ResolutionRequest, context: ResolutionContext): Resolution = when (request) {
        is ResolutionRequest.Url -> resolve(request.url, context)
        is ResolutionRequest.Destination -> resolve(request.request, context)
    }

    /** The one precondition evaluation both doors share: the first unsatisfied one along the path, root first, gates. */
    private fun decide(routeId: String?, destination: DestinationSpec, params: Map<String, ParamValue>,
                       resume: ResolutionRequest, context: ResolutionContext): Resolution {
        for (precondition in destination.pathPreconditions) {
            if (precondition !in context.satisfied) return Resolution.Gated(precondition, routeId, destination.name, resume)
        }
        return Resolution.Proceed(routeId, destination.name, params, destination.path, destination.effectiveTab, destination.presentation)
    }

    companion object {
        /** Analyses [document] and builds [schema]'s table, as that build's manifest would. */
        fun build(schema: Schema, document: RoutesDocument, nowMicroseconds: Long = 0): Resolver =
            Resolver(schema, RouteAnalysis(document, nowMicroseconds))
    }
}
