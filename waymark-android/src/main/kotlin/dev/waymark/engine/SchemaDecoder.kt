package dev.waymark.engine

/** Decodes `waymark.schema/1` with the rules of `Schema+Decoding.swift`. */
internal class SchemaDecoder {
    private val reader = FieldReader()

    fun decode(json: JsonValue): Schema {
        val root = ""
        val o = reader.obj(json, "\$") ?: throw SchemaError(reader.problems)
        reader.checkFormat(o, Schema.FORMAT)
        reader.warnUnknownKeys(o, setOf("format", "app", "platform", "version", "schemes", "hosts", "appleAppIDs",
            "android", "landing", "preconditions", "destinations"), root)
        val app = reader.requiredString(o, "app", root)
        val platform = reader.requiredString(o, "platform", root)
        if (platform != null && platform != "ios" && platform != "android") {
            reader.report("invalidFormat", "platform", "platform must be \"ios\" or \"android\", not \"$platform\".")
        }
        val version = reader.requiredString(o, "version", root)
        if (version != null && !Schema.isValidVersion(version)) {
            reader.report("invalidFormat", "version", "version is 1 to 64 letters, digits and . - + _, not \"$version\".")
        }
        val schemes = (reader.strings(o, "schemes", root) ?: emptyList()).map { lowercaseAscii(it) }
        schemes.forEachIndexed { index, scheme ->
            if (!Schema.isCustomScheme(scheme)) reader.report("invalidFormat", path("schemes", index), "\"$scheme\" is not a custom URL scheme.")
        }
        val hosts = (reader.strings(o, "hosts", root) ?: emptyList()).map { lowercaseAscii(it) }
        hosts.forEachIndexed { index, host ->
            if (!Schema.isHostName(host)) reader.report("invalidFormat", path("hosts", index), "\"$host\" is not a host name such as shop.example.")
        }
        if (schemes.isEmpty() && hosts.isEmpty()) {
            reader.report("invalidFormat", "schemes", "A schema must declare at least one scheme or host, or no link can reach the app.")
        }
        reader.strings(o, "appleAppIDs", root)
        reader.obj(o["android"], "android")?.let { android ->
            if (reader.requiredString(android, "package", "android") != null) reader.strings(android, "sha256CertFingerprints", "android")
        }
        reader.obj(o["landing"], "landing")?.let { landing ->
            reader.warnUnknownKeys(landing, LANDING_FIELDS, "landing")
            for (field in LANDING_FIELDS.sorted()) {
                val address = reader.string(landing, field, "landing") ?: continue
                if (!Schema.isSafeAddress(address)) {
                    reader.report("invalidFormat", path("landing", field), "The address $address must be an https:// address with a host (no user name).")
                }
            }
        }
        val preconditions = reader.strings(o, "preconditions", root) ?: emptyList()
        val destinations = LinkedHashMap<String, DestinationSpec>()
        reader.requiredObject(o, "destinations", root)?.let { objects ->
            if (objects.isEmpty()) reader.report("invalidFormat", "destinations", "A schema must declare at least one destination.")
            for (name in objects.keys.sortedWith(ScalarOrder)) {
                val at = path("destinations", name)
                if (!isIdentifier(name)) {
                    reader.report("invalidFormat", at, "The destination name \"$name\" must be letters, digits and _ only.")
                    continue
                }
                decodeDestination(name, objects.getValue(name), at, preconditions)?.let { destinations[name] = it }
            }
        }
        deriveAncestry(destinations)
        if (reader.problems.any { it.severity == Severity.ERROR } || app == null || platform == null || version == null) {
            throw SchemaError(reader.problems)
        }
        return Schema(app, platform, version, schemes, hosts, preconditions, destinations, reader.problems.toList())
    }

    private fun decodeDestination(name: String, value: JsonValue, at: String, declared: List<String>): DestinationSpec? {
        val o = reader.obj(value, at) ?: return null
        reader.warnUnknownKeys(o, setOf("parent", "tab", "presentation", "preconditions", "params"), at)
        val parent = reader.string(o, "parent", at)
        val tab = reader.string(o, "tab", at)
        var presentation = Presentation.PUSH
        reader.string(o, "presentation", at)?.let { text ->
            val known = Presentation.named(text)
            if (known != null) presentation = known
            else reader.report("invalidFormat", path(at, "presentation"), "presentation must be one of push, sheet, fullScreen, tab; not \"$text\".")
        }
        val preconditions = reader.strings(o, "preconditions", at) ?: emptyList()
        preconditions.forEachIndexed { index, precondition ->
            if (precondition !in declared) {
                reader.report("invalidFormat", path(path(at, "preconditions"), index), "The precondition \"$precondition\" is not declared in the schema's preconditions.")
            }
        }
        val params = LinkedHashMap<String, ParamSpec>()
        reader.obj(o["params"], path(at, "params"))?.let { objects ->
            for (paramName in objects.keys.sortedWith(ScalarOrder)) {
                val paramPath = path(path(at, "params"), paramName)
                if (!isIdentifier(paramName)) {
                    reader.report("invalidFormat", paramPath, "The param name \"$paramName\" must be letters, digits and _ only.")
                    continue
                }
                decodeParam(objects.getValue(paramName), paramPath)?.let { params[paramName] = it }
            }
        }
        return DestinationSpec(name, parent, tab, presentation, preconditions, params)
    }

    private fun decodeParam(value: JsonValue, at: String): ParamSpec? {
        val o = reader.obj(value, at) ?: return null
        reader.warnUnknownKeys(o, setOf("type", "min", "max", "minLength", "maxLength", "pattern", "values", "optional"), at)
        val typeName = reader.requiredString(o, "type", at) ?: return null
        val type = ParamType.named(typeName) ?: run {
            reader.report("invalidFormat", path(at, "type"), "type must be one of int, string, enum, uuid, slug; not \"$typeName\".")
            return null
        }
        val optional = reader.bool(o, "optional", at) ?: false
        val before = reader.problems.size
        fun only(key: String, vararg types: ParamType): Boolean {
            if (o[key] == null) return false
            if (type !in types) {
                reader.report("invalidFormat", path(at, key), "$key does not apply to a param of type ${type.json}.")
                return false
            }
            return true
        }
        val minimum = if (only("min", ParamType.INT)) reader.int(o, "min", at) else null
        val maximum = if (only("max", ParamType.INT)) reader.int(o, "max", at) else null
        val minimumLength = if (only("minLength", ParamType.STRING, ParamType.SLUG)) reader.int(o, "minLength", at) else null
        val maximumLength = if (only("maxLength", ParamType.STRING, ParamType.SLUG)) reader.int(o, "maxLength", at) else null
        val values = if (only("values", ParamType.ENUM)) reader.strings(o, "values", at) else null
        var pattern: SafeRegex? = null
        if (only("pattern", ParamType.STRING)) {
            reader.string(o, "pattern", at)?.let { source ->
                try {
                    pattern = SafeRegex(source)
                } catch (error: SafeRegexError) {
                    reader.report("invalidPattern", path(at, "pattern"), "The pattern $source cannot be used: ${error.message}")
                }
            }
        }
        pattern?.let { compiled ->
            // The longest value it can be asked to match: maxLength, never past the cap on all text.
            val longest = minOf(maximumLength ?: ParamSpec.LONGEST_TEXT.toLong(), ParamSpec.LONGEST_TEXT.toLong())
            val steps = compiled.stepsPerScalar.toLong() * maxOf(1L, longest)
            if (steps > SafeRegex.MATCH_BUDGET) {
                val fits = SafeRegex.MATCH_BUDGET / compiled.stepsPerScalar
                reader.report("invalidPattern", path(at, "pattern"), "The pattern ${compiled.source} may take $steps steps on a value of $longest characters, " +
                    "over the budget of ${SafeRegex.MATCH_BUDGET}: " + if (fits >= 1) "give the param a maxLength of at most $fits, or simplify the pattern." else "simplify it.")
            }
        }
        if (minimum != null && maximum != null && minimum > maximum) reader.report("invalidFormat", path(at, "min"), "min ($minimum) is greater than max ($maximum).")
        if (minimumLength != null && minimumLength < 0) reader.report("invalidFormat", path(at, "minLength"), "minLength must not be negative.")
        if (minimumLength != null && maximumLength != null && minimumLength > maximumLength) {
            reader.report("invalidFormat", path(at, "minLength"), "minLength ($minimumLength) is greater than maxLength ($maximumLength).")
        }
        if (type == ParamType.ENUM && values.isNullOrEmpty()) reader.report("invalidFormat", path(at, "values"), "An enum param needs a non-empty list of values.")
        if (reader.errorsSince(before)) return null
        return ParamSpec(type, minimum, maximum, minimumLength, maximumLength, pattern, values, optional)
    }

    /** Fills each destination's path, tab and preconditions from its ancestry; reports unknown parents and cycles. */
    private fun deriveAncestry(destinations: Map<String, DestinationSpec>) {
        val derived = HashSet<String>()
        val broken = HashSet<String>()
        for (name in destinations.keys.sortedWith(ScalarOrder)) {
            if (name in derived || name in broken) continue
            val chain = ArrayList<String>()
            val onChain = HashSet<String>()
            var cursor = name
            var isBroken = false
            while (true) {
                if (cursor in derived) break
                if (cursor in broken) { isBroken = true; break }
                if (!onChain.add(cursor)) {
                    reader.report("invalidFormat", path(path("destinations", cursor), "parent"), "The parents of \"$cursor\" form a cycle.")
                    isBroken = true
                    break
                }
                chain.add(cursor)
                val parent = destinations.getValue(cursor).parent ?: break
                if (parent !in destinations) {
                    reader.report("invalidFormat", path(path("destinations", cursor), "parent"), "The parent \"$parent\" is not a destination of this schema.")
                    isBroken = true
                    break
                }
                cursor = parent
            }
            if (isBroken) { broken.addAll(chain); continue }
            for (member in chain.asReversed()) {
                val destination = destinations.getValue(member)
                val above = destination.parent?.let { destinations.getValue(it) }
                destination.path = (above?.path ?: emptyList()) + member
                destination.effectiveTab = destination.tab ?: above?.effectiveTab
                val preconditions = ArrayList(above?.pathPreconditions ?: emptyList())
                for (precondition in destination.preconditions) if (precondition !in preconditions) preconditions.add(precondition)
                destination.pathPreconditions = preconditions
                derived.add(member)
            }
        }
    }

    companion object {
        private val LANDING_FIELDS = setOf("appStoreURL", "playStoreURL", "webURL", "notFoundURL")
    }
}
