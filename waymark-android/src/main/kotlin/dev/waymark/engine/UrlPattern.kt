package dev.waymark.engine

/** One segment of a route's path pattern. */
sealed class PatternSegment {
    /** Matches this text, compared case-insensitively (ASCII); stored lowercased. */
    data class Literal(val text: String) : PatternSegment()
    /** `:name`: exactly one segment. */
    data class Parameter(val name: String) : PatternSegment()
    /** `*name`, last only: one or more remaining segments, joined with `/`. */
    data class Rest(val name: String) : PatternSegment()

    /** The segment's shape, capture names aside: two patterns of one shape match the same paths. */
    val shape: String get() = when (this) { is Literal -> text; is Parameter -> ":"; is Rest -> "*" }
}

/** Why a path pattern is not valid. */
class UrlPatternError(message: String) : Exception(message)

/** A route's path pattern: `/product/:id`, `/` and rest captures such as `*topic` after `help` (the rules of `URLPattern.swift`). */
class UrlPattern(val text: String) {
    val segments: List<PatternSegment>

    init {
        if (!text.startsWith("/")) throw UrlPatternError("A pattern must start with /.")
        if (text.contains('?') || text.contains('#')) throw UrlPatternError("A pattern is a path only; map query items with params instead of writing ? or #.")
        val raw = text.substring(1).split("/").toMutableList()
        if (raw.last().length == 0) raw.removeAt(raw.size - 1)  // a trailing slash does not matter
        if (raw.size > MAXIMUM_SEGMENTS) throw UrlPatternError("A pattern may have at most $MAXIMUM_SEGMENTS segments.")
        val names = HashSet<String>()
        segments = raw.mapIndexed { index, part ->
            if (part.length == 0) throw UrlPatternError("A pattern must not contain an empty segment (//).")
            when (part[0]) {
                ':', '*' -> {
                    val name = part.substring(1)
                    if (!isIdentifier(name)) throw UrlPatternError("\"$part\" must name its capture with letters, digits and _ (like :id).")
                    if (!names.add(name)) throw UrlPatternError("The capture \"$name\" appears twice in the pattern.")
                    if (part[0] == '*') {
                        if (index != raw.size - 1) throw UrlPatternError("\"$part\" captures the rest of the path, so it must be the last segment.")
                        PatternSegment.Rest(name)
                    } else PatternSegment.Parameter(name)
                }
                else -> {
                    if (part == "." || part == "..") throw UrlPatternError("A pattern must not contain . or .. segments.")
                    if (!part.all { isAsciiAlphanumeric(it) || it in "-._~!\$&'()+,;=@" }) {
                        throw UrlPatternError("\"$part\" contains a character that is not allowed in a path segment.")
                    }
                    PatternSegment.Literal(lowercaseAscii(part))
                }
            }
        }
    }

    /** The capture names in order, `*rest` last. */
    val captureNames: List<String>
        get() = segments.mapNotNull { when (it) { is PatternSegment.Literal -> null; is PatternSegment.Parameter -> it.name; is PatternSegment.Rest -> it.name } }

    val shape: String get() = segments.joinToString("/") { it.shape }

    override fun toString() = text

    companion object {
        const val MAXIMUM_SEGMENTS = 32
    }
}
