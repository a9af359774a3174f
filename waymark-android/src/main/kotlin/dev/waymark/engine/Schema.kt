package dev.waymark.engine

/** How a destination appears when navigated to. */
enum class Presentation(val json: String) {
    PUSH("push"), SHEET("sheet"), FULL_SCREEN("fullScreen"), TAB("tab");

    companion object {
        fun named(name: String): Presentation? = values().firstOrNull { it.json == name }
    }
}

/** A screen the app build can show, as its schema declares it, with what its ancestry derives. */
class DestinationSpec(
    val name: String,
    val parent: String?,
    val tab: String?,
    val presentation: Presentation,
    val preconditions: List<String>,
    val params: Map<String, ParamSpec>
) {
    /** Root first, this destination last. */
    var path: List<String> = emptyList()
        internal set
    /** The nearest tab declared on this destination or an ancestor. */
    var effectiveTab: String? = null
        internal set
    /** Every precondition along the path, root first, without repeats. */
    var pathPreconditions: List<String> = emptyList()
        internal set
}

/** A schema document that cannot be used, with every problem found in it. */
class SchemaError(val problems: List<ValidationProblem>) :
    Exception(problems.firstOrNull { it.severity == Severity.ERROR }?.let { "${it.path}: ${it.message}" } ?: "invalid schema")

/**
 * One app build's routing-engine schema (`waymark.schema/1`, `docs/formats.md`): the
 * destinations the build can show and the links it answers to.
 */
class Schema(
    val app: String,
    val platform: String,
    val version: String,
    /** Custom schemes, lowercased. */
    val schemes: List<String>,
    /** Universal-link (App Links) hosts, lowercased. */
    val hosts: List<String>,
    val preconditions: List<String>,
    val destinations: Map<String, DestinationSpec>,
    /** Warnings (unknown fields) found while decoding. */
    val warnings: List<ValidationProblem>
) {
    /** `android 5.3.0`, how reports name a build. */
    val buildName: String get() = "$platform $version"

    /** Root first, [name] last; empty for an unknown name. */
    fun path(to: String): List<String> = destinations[to]?.path ?: emptyList()

    companion object {
        const val FORMAT = "waymark.schema/1"

        /** Decodes and checks a schema; any error makes the whole schema unusable. */
        fun decode(json: JsonValue): Schema = SchemaDecoder().decode(json)

        /** 1 to 64 ASCII letters, digits and `. - + _`, starting and ending with a letter or digit. */
        fun isValidVersion(version: String): Boolean =
            version.length in 1..64 && isAsciiAlphanumeric(version.first()) && isAsciiAlphanumeric(version.last()) &&
                version.all { isAsciiAlphanumeric(it) || it in ".-+_" }

        /** RFC 3986 §3.1 scheme syntax, without the web schemes that go through `hosts`. */
        fun isCustomScheme(scheme: String): Boolean =
            scheme.isNotEmpty() && isAsciiAlphanumeric(scheme[0]) && scheme[0] !in '0'..'9' &&
                scheme.all { isAsciiAlphanumeric(it) || it in "+-." } && scheme != "http" && scheme != "https"

        /** Lowercase DNS names of two or more labels, the last not all digits (no IP literals). */
        fun isHostName(host: String): Boolean {
            val labels = host.split(".")
            if (labels.size < 2 || host.toByteArray(Charsets.UTF_8).size > 253 || labels.last().all { it in '0'..'9' }) return false
            return labels.all { label ->
                label.isNotEmpty() && label.length <= 63 && label.first() != '-' && label.last() != '-' &&
                    label.all { it in '0'..'9' || it in 'a'..'z' || it == '-' }
            }
        }

        /** A fallback or landing address: `https://` with a host and no user name, URL characters only. */
        fun isSafeAddress(text: String): Boolean {
            val lowered = lowercaseAscii(text)
            if (!lowered.startsWith("https://")) return false
            val host = lowered.substring(8).takeWhile { it != '/' && it != '?' && it != '#' }
            return host.isNotEmpty() && !host.contains('@') && text.all { it.toInt() < 128 && LinkParser.isUrlByte(it.toInt()) }
        }
    }
}
