package dev.waymark.engine

/** Where a destination param takes its value from. */
sealed class ParamSource {
    data class Capture(val name: String) : ParamSource()
    data class Query(val item: String) : ParamSource()
    data class Constant(val value: JsonValue) : ParamSource()
}

/** `validFrom` inclusive, `validUntil` exclusive, as whole microseconds since 1970 compared as integers. */
data class ValidityWindow(val start: Long? = null, val end: Long? = null) {
    fun contains(now: Long): Boolean = (start == null || now >= start) && (end == null || now < end)
}

/** Which links a route answers: all declared ones (both null), or only the listed hosts and schemes. */
class LinkScope(hosts: Set<String>?, schemes: Set<String>?) {
    val hosts: Set<String>? = if (hosts == null && schemes == null) null else hosts ?: emptySet()
    val schemes: Set<String>? = if (hosts == null && schemes == null) null else schemes ?: emptySet()

    fun admitsHost(host: String) = hosts?.contains(host) ?: true
    fun admitsScheme(scheme: String) = schemes?.contains(scheme) ?: true

    fun isWithin(other: LinkScope): Boolean {
        val otherHosts = other.hosts ?: return true
        val otherSchemes = other.schemes ?: return true
        val hosts = hosts ?: return false
        return otherHosts.containsAll(hosts) && otherSchemes.containsAll(schemes!!)
    }

    override fun equals(other: Any?) = other is LinkScope && other.hosts == hosts && other.schemes == schemes
    override fun hashCode() = (hosts?.hashCode() ?: 0) * 31 + (schemes?.hashCode() ?: 0)
}

/** One route of a routes document, as written, with its position for report paths. */
class RouteSpec(
    val index: Int,
    val id: String,
    val patterns: List<String>,
    val destination: String,
    val params: Map<String, ParamSource>,
    val hosts: List<String>?,
    val schemes: List<String>?,
    val window: ValidityWindow,
    val fallbackURL: String?
) {
    val path: String get() = path("routes", index)
    val scope: LinkScope = LinkScope(hosts?.map { lowercaseAscii(it) }?.toSet(), schemes?.map { lowercaseAscii(it) }?.toSet())

    companion object {
        /** 1 to 128 ASCII letters, digits and `- _ .`, starting with a letter or digit. */
        fun isValidId(id: String): Boolean =
            id.length in 1..128 && isAsciiAlphanumeric(id[0]) && id.all { isAsciiAlphanumeric(it) || it in "-_." }
    }
}

/** A `waymark.routes/1` document: its routes that are well-formed enough to analyse. */
class RoutesDocument(val app: String, val routes: List<RouteSpec>) {
    companion object {
        const val FORMAT = "waymark.routes/1"
        private val ROUTE_FIELDS = setOf("id", "patterns", "destination", "params", "hosts", "schemes", "validFrom", "validUntil",
            "fallbackURL", "owner", "notes")

        /**
         * Decodes a routes document, reporting every format problem with its path. A route
         * that is not well-formed is left out (and reported); the document is null only when
         * it is unusable as a whole (`docs/resolution.md`, "Which routes a build resolves").
         */
        fun decode(json: JsonValue): Pair<RoutesDocument?, List<ValidationProblem>> {
            val reader = FieldReader()
            val o = reader.obj(json, "\$") ?: return Pair(null, reader.problems)
            val hasFormat = reader.checkFormat(o, FORMAT)
            reader.warnUnknownKeys(o, setOf("format", "app", "routes"), "")
            val app = reader.requiredString(o, "app", "")
            val routesValue = o["routes"] ?: run { reader.missing("routes", ""); return Pair(null, reader.problems) }
            val entries = routesValue.list ?: run {
                reader.report("invalidFormat", "routes", "routes must be a list, but it is ${routesValue.typeName}.")
                return Pair(null, reader.problems)
            }
            val routes = ArrayList<RouteSpec>()
            entries.forEachIndexed { index, entry -> decodeRoute(entry, index, reader)?.let { routes.add(it) } }
            if (!hasFormat || app == null) return Pair(null, reader.problems)
            return Pair(RoutesDocument(app, routes), reader.problems)
        }

        private fun decodeRoute(value: JsonValue, index: Int, reader: FieldReader): RouteSpec? {
            val at = path("routes", index)
            val o = reader.obj(value, at) ?: return null
            val before = reader.problems.size
            reader.warnUnknownKeys(o, ROUTE_FIELDS, at)
            val id = reader.requiredString(o, "id", at)
            if (id != null && !RouteSpec.isValidId(id)) {
                reader.report("invalidFormat", path(at, "id"), "A route id is 1 to 128 letters, digits and - _ ., starting with a letter or digit.")
            }
            val destination = reader.requiredString(o, "destination", at)
            var patterns: List<String>? = null
            if (o["patterns"] == null) reader.missing("patterns", at)
            else reader.strings(o, "patterns", at)?.let {
                if (it.isEmpty()) reader.report("invalidFormat", path(at, "patterns"), "A route needs at least one pattern.") else patterns = it
            }
            val params = LinkedHashMap<String, ParamSource>()
            reader.obj(o["params"], path(at, "params"))?.let { mapping ->
                for (name in mapping.keys.sortedWith(ScalarOrder)) {
                    decodeSource(mapping.getValue(name), path(path(at, "params"), name), reader)?.let { params[name] = it }
                }
            }
            val hosts = reader.strings(o, "hosts", at)
            val schemes = reader.strings(o, "schemes", at)
            fun instant(key: String): Long? {
                val text = reader.string(o, key, at) ?: return null
                return Timestamp.microseconds(text) ?: run {
                    reader.report("invalidFormat", path(at, key), "$key \"$text\" is not a date and time like 2026-03-01T00:00:00Z.")
                    null
                }
            }
            val window = ValidityWindow(instant("validFrom"), instant("validUntil"))
            val fallbackURL = reader.string(o, "fallbackURL", at)
            reader.string(o, "owner", at)
            reader.string(o, "notes", at)
            if (reader.errorsSince(before) || id == null || destination == null || patterns == null) return null
            return RouteSpec(index, id, patterns!!, destination, params, hosts, schemes, window, fallbackURL)
        }

        private fun decodeSource(value: JsonValue, at: String, reader: FieldReader): ParamSource? {
            val o = reader.obj(value, at) ?: return null
            val keys = o.keys.intersect(setOf("capture", "query", "const"))
            if (keys.size != 1) {
                reader.report("invalidFormat", at, "$at must have exactly one of capture, query or const.")
                return null
            }
            val key = keys.first()
            reader.warnUnknownKeys(o, setOf(key), at)
            return when (key) {
                "capture" -> reader.requiredString(o, "capture", at)?.let { ParamSource.Capture(it) }
                "query" -> reader.requiredString(o, "query", at)?.let { ParamSource.Query(it) }
                else -> {
                    val constant = o.getValue("const")
                    if (constant is JsonValue.Text || constant is JsonValue.JsonInt) ParamSource.Constant(constant)
                    else { reader.report("invalidFormat", path(at, "const"), "${path(at, "const")} must be a string or a whole number."); null }
                }
            }
        }
    }
}
