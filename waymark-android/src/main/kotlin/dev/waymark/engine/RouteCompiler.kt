package dev.waymark.engine

/**
 * Checks one route against one schema and compiles its params into bindings (the rules of
 * `RouteCompiler.swift`); the problems it reports depend on the app build, and leave the
 * route out of that build's table only.
 */
internal class RouteCompiler(private val schema: Schema, private val parser: LinkParser) {
    class Compiled(val route: CompiledRoute?, val bindings: List<List<Binding>>?, val problems: List<ValidationProblem>)

    fun compile(route: RouteSpec, patterns: List<UrlPattern?>): Compiled {
        val problems = ArrayList<ValidationProblem>()
        val at = route.path
        val destination = schema.destinations[route.destination]
            ?: return Compiled(null, null, listOf(ValidationProblem("unknownDestination", path(at, "destination"),
                "The destination \"${route.destination}\" does not exist in the app (${schema.buildName}).")))
        route.hosts.orEmpty().forEachIndexed { index, host ->
            if (lowercaseAscii(host) !in schema.hosts) problems.add(ValidationProblem("undeclaredHost", path(path(at, "hosts"), index),
                "The app (${schema.buildName}) does not answer links on $host."))
        }
        route.schemes.orEmpty().forEachIndexed { index, scheme ->
            if (lowercaseAscii(scheme) !in schema.schemes) problems.add(ValidationProblem("undeclaredScheme", path(path(at, "schemes"), index),
                "The app (${schema.buildName}) does not answer $scheme:// links."))
        }
        val paramNames = route.params.keys.sortedWith(ScalarOrder)
        for (name in paramNames) if (destination.params[name] == null) {
            problems.add(ValidationProblem("unknownParam", path(path(at, "params"), name), "${route.destination} has no param \"$name\" in ${schema.buildName}."))
        }
        val constants = HashMap<String, ParamValue>()
        for (name in paramNames) {
            val source = route.params.getValue(name) as? ParamSource.Constant ?: continue
            val spec = destination.params[name] ?: continue
            val value: ParamValue = source.value.long?.let { ParamValue.Integer(it) } ?: ParamValue.Text(source.value.string ?: "")
            val checked = spec.valueFrom(value)
            if (checked.value != null) constants[name] = checked.value
            else problems.add(ValidationProblem("paramTypeMismatch", path(path(path(at, "params"), name), "const"),
                "The fixed value ${source.value.canonical()} for $name ${checked.failure} (${name} is ${spec.describe()})."))
        }
        val bindings = ArrayList<List<Binding>>()
        val missingEverywhere = HashMap<String, Int>()
        val valid = patterns.withIndex().filter { it.value != null }
        val declared = destination.params.keys.sortedWith(ScalarOrder)
        for ((patternIndex, patternOrNull) in valid) {
            val pattern = patternOrNull!!
            val patternPath = path(path(at, "patterns"), patternIndex)
            val patternBindings = ArrayList<Binding>()
            val consumed = HashSet<String>()
            val captures = pattern.captureNames
            names@ for (name in declared) {
                val spec = destination.params.getValue(name)
                val source = route.params[name] ?: if (name in captures) ParamSource.Capture(name) else null
                when (source) {
                    null -> if (!spec.isOptional) missingEverywhere[name] = (missingEverywhere[name] ?: 0) + 1
                    is ParamSource.Capture -> {
                        consumed.add(source.name)
                        val position = pattern.segments.indexOfFirst {
                            it == PatternSegment.Parameter(source.name) || it == PatternSegment.Rest(source.name)
                        }
                        if (position < 0) {
                            problems.add(ValidationProblem("missingParam", patternPath, "The pattern $pattern has no capture :${source.name}, which $name is taken from."))
                            continue@names
                        }
                        if (pattern.segments[position] is PatternSegment.Rest) {
                            if (!spec.acceptsMultipleSegments) {
                                problems.add(ValidationProblem("paramTypeMismatch", patternPath, "*${source.name} in $pattern captures several path segments, which can never be ${spec.describe()}."))
                                continue@names
                            }
                            patternBindings.add(Binding(name, spec, BindingSource.Rest(position)))
                        } else patternBindings.add(Binding(name, spec, BindingSource.Segment(position)))
                    }
                    is ParamSource.Query -> patternBindings.add(Binding(name, spec, BindingSource.Query(source.item)))
                    is ParamSource.Constant -> constants[name]?.let { patternBindings.add(Binding(name, spec, BindingSource.Constant(it))) }
                }
            }
            for (capture in captures) if (capture !in consumed) {
                problems.add(ValidationProblem("unknownParam", patternPath, "The capture :$capture in $pattern fills no param of ${route.destination} (${schema.buildName})."))
            }
            bindings.add(patternBindings)
        }
        for (name in missingEverywhere.keys.sortedWith(ScalarOrder)) {
            problems.add(ValidationProblem("missingParam", path(path(at, "params"), name),
                "${route.destination} requires $name (${destination.params.getValue(name).describe()}), but this route does not provide it."))
        }
        val admitted = BooleanArray(parser.originCount) { origin ->
            if (parser.isHost(origin)) route.scope.admitsHost(parser.originName(origin)) else route.scope.admitsScheme(parser.originName(origin))
        }
        val compiled = CompiledRoute(route.id, destination, admitted, route.window)
        return Compiled(compiled, if (problems.isEmpty()) bindings else null, problems)
    }
}
