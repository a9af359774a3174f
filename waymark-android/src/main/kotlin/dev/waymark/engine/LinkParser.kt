package dev.waymark.engine

/** The rule a `malformed` link breaks, for people previewing links. */
class LinkDefect(message: String) : Exception(message)

/**
 * Splits an untrusted link into its origin, percent-decoded path segments and raw query
 * (`docs/resolution.md`, "Parsing a link"), on the link's characters, never through
 * `android.net.Uri` or `java.net.URI`, so every platform parses a link identically.
 */
internal class LinkParser(schema: Schema) {
    private val hosts = schema.hosts
    private val schemes = schema.schemes

    class Parsed(
        /** Index of the declared origin: hosts first, then schemes. */
        val origin: Int,
        val segments: List<String>,
        /** The raw query, without `?` and the fragment; null when there is none. */
        val query: String?
    )

    val originCount: Int get() = hosts.size + schemes.size
    fun isHost(origin: Int) = origin < hosts.size
    fun originName(origin: Int) = if (origin < hosts.size) hosts[origin] else schemes[origin - hosts.size]

    fun parse(link: String): Parsed {
        val count = link.length
        if (count == 0) throw LinkDefect("The link is empty.")
        // One pass: every character a URL character (the fragment's too), and before the
        // fragment every % starts a triplet of two hex digits (RFC 3986 §2.1).
        var end = count
        var index = 0
        while (index < count) {
            val c = link[index].toInt()
            if (c < 0x20 || c == 0x7F) throw LinkDefect("The link contains a control character.")
            if (c >= 0x80 || !isUrlByte(c)) throw LinkDefect("The link contains a character that must be percent-encoded (at $index).")
            if (c == '%'.toInt() && end == count) {
                if (index + 2 >= count || hexValue(link[index + 1].toInt()) < 0 || hexValue(link[index + 2].toInt()) < 0) {
                    throw LinkDefect("The link contains a % that is not followed by two hexadecimal digits.")
                }
                index += 3
                continue
            }
            if (c == '#'.toInt() && end == count) end = index
            index++
        }
        if (count > MAXIMUM_LENGTH) throw LinkDefect("The link is longer than $MAXIMUM_LENGTH bytes.")
        // RFC 3986 §3.1: scheme = ALPHA *( ALPHA / DIGIT / "+" / "-" / "." ), case-insensitive.
        if (!isAsciiAlphanumeric(link[0]) || link[0] in '0'..'9') throw LinkDefect("The link does not start with a scheme such as https:.")
        var cursor = 0
        while (cursor < end && link[cursor] != ':') {
            val c = link[cursor]
            if (!(isAsciiAlphanumeric(c) || c == '+' || c == '-' || c == '.')) throw LinkDefect("The link does not start with a scheme such as https:.")
            cursor++
        }
        if (cursor >= end) throw LinkDefect("The link does not start with a scheme such as https:.")
        val scheme = lowercaseAscii(link.substring(0, cursor))
        cursor++
        val hasAuthority = cursor + 1 < end && link[cursor] == '/' && link[cursor + 1] == '/'
        var authorityStart = cursor
        var authorityEnd = cursor
        if (hasAuthority) {
            cursor += 2
            authorityStart = cursor
            while (cursor < end && link[cursor] != '/' && link[cursor] != '?') cursor++
            authorityEnd = cursor
            // Userinfo is a classic way to disguise a link's real host.
            if (link.substring(authorityStart, authorityEnd).contains('@')) throw LinkDefect("The link contains a user name (an @ before the host).")
        }
        val segments = ArrayList<String>()
        val origin: Int
        if (scheme == "https") {
            if (!hasAuthority || authorityEnd == authorityStart) throw LinkDefect("The https link has no host.")
            origin = hostIndex(link.substring(authorityStart, authorityEnd))
        } else {
            val schemeIndex = schemes.indexOf(scheme)
            if (schemeIndex < 0) throw LinkDefect("The app does not answer $scheme: links.")
            origin = hosts.size + schemeIndex
            // A custom-scheme link's host is its first path segment; raw : [ ] have no meaning there
            // (their percent-encodings are text of the segment).
            val authority = link.substring(authorityStart, authorityEnd)
            if (authority.any { it == ':' || it == '[' || it == ']' }) {
                throw LinkDefect("The link's first part after scheme:// holds a port or brackets; in a custom-scheme link it is a path segment.")
            }
            if (authority.isNotEmpty()) segments.add(decodeSegment(authority))
        }
        var segmentStart = cursor
        while (cursor <= end) {
            val atBoundary = cursor == end || link[cursor] == '/' || link[cursor] == '?'
            if (atBoundary) {
                if (cursor > segmentStart) segments.add(decodeSegment(link.substring(segmentStart, cursor)))
                if (cursor == end || link[cursor] == '?') break
                segmentStart = cursor + 1
            }
            cursor++
        }
        var query: String? = null
        if (cursor < end && link[cursor] == '?') {
            query = link.substring(cursor + 1, end)
            checkQuery(query)
        }
        return Parsed(origin, segments, query)
    }

    /** A declared host, with no port or port 443 exactly. */
    private fun hostIndex(authority: String): Int {
        var host = authority
        val colon = authority.lastIndexOf(':')
        if (colon >= 0) {
            val port = authority.substring(colon + 1)
            if (port != "443") throw LinkDefect("The link names port ${if (port.length == 0) "(empty)" else port}; only 443 or none is the app's.")
            host = authority.substring(0, colon)
        }
        val index = hosts.indexOf(lowercaseAscii(host))
        if (index < 0) throw LinkDefect("The app does not answer links on ${lowercaseAscii(host)}.")
        return index
    }

    companion object {
        /** Links longer than this are `malformed` (bytes of UTF-8; a valid link is ASCII). */
        const val MAXIMUM_LENGTH = 2048

        /** RFC 3986 unreserved, reserved and `%`; everything else must be percent-encoded. */
        private val URL_BYTES = BooleanArray(128).also { table ->
            for (c in "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-._~:/?#[]@!\$&'()*+,;=%") table[c.toInt()] = true
        }

        fun isUrlByte(c: Int) = c in 0..127 && URL_BYTES[c]

        /** Percent-decodes raw text (checked by [parse]) into bytes; `+` is a space when [plusIsSpace]. */
        fun percentDecode(raw: String, plusIsSpace: Boolean): ByteArray {
            val out = java.io.ByteArrayOutputStream(raw.length)
            var index = 0
            while (index < raw.length) {
                val c = raw[index]
                if (c == '%') {
                    out.write(hexValue(raw[index + 1].toInt()) * 16 + hexValue(raw[index + 2].toInt()))
                    index += 3
                } else {
                    out.write(if (plusIsSpace && c == '+') ' '.toInt() else c.toInt())
                    index++
                }
            }
            return out.toByteArray()
        }

        /**
         * Percent-decodes one raw segment (after splitting, so `%2F` never splits) and refuses
         * what decodes to a control, invalid UTF-8, an invisible control, `.` or `..`.
         */
        fun decodeSegment(raw: String): String {
            val bytes = percentDecode(raw, plusIsSpace = false)
            for (b in bytes) if ((b.toInt() and 0xFF) < 0x20 || b.toInt() == 0x7F) throw LinkDefect("The link contains a control character.")
            val text = strictUtf8(bytes) ?: throw LinkDefect("The link's percent-encoding does not decode to valid UTF-8 text.")
            if (hasInvisibleControl(text)) throw LinkDefect("The link contains a control character, a line separator or a bidirectional formatting character.")
            if (text == "." || text == "..") throw LinkDefect("The link contains a . or .. path segment.")
            return text
        }

        /** Every query item's name and value must decode to UTF-8 text without invisible controls. */
        fun checkQuery(query: String) {
            for (item in query.split('&')) for (component in item.split('=')) {
                val bytes = percentDecode(component, plusIsSpace = false)
                for (b in bytes) if ((b.toInt() and 0xFF) < 0x20 || b.toInt() == 0x7F) throw LinkDefect("The link contains a control character.")
                val text = strictUtf8(bytes) ?: throw LinkDefect("The link's percent-encoding does not decode to valid UTF-8 text.")
                if (hasInvisibleControl(text)) throw LinkDefect("The link contains a control character, a line separator or a bidirectional formatting character.")
            }
        }

        /**
         * The decoded value of the first query item named [name]: items split on `&` (empty
         * ones skipped), the name up to the first `=`, `+` a space. Empty counts as absent.
         */
        fun queryValue(query: String, name: String): String? {
            for (item in query.split('&')) {
                if (item.length == 0) continue
                val equals = item.indexOf('=')
                val rawName = if (equals < 0) item else item.substring(0, equals)
                if (String(percentDecode(rawName, plusIsSpace = true), Charsets.UTF_8) == name) {
                    val value = if (equals < 0) "" else String(percentDecode(item.substring(equals + 1), plusIsSpace = true), Charsets.UTF_8)
                    return if (value.length == 0) null else value
                }
            }
            return null
        }

        /**
         * Beyond ASCII's controls, the scalars a link may not decode to: C1 (U+0080–U+009F),
         * U+2028, U+2029 and the bidirectional formatting characters U+061C, U+200E, U+200F,
         * U+202A–U+202E and U+2066–U+2069.
         */
        fun hasInvisibleControl(text: String): Boolean = text.any { c ->
            val v = c.toInt()
            v in 0x80..0x9F || v == 0x061C || v == 0x200E || v == 0x200F || v == 0x2028 || v == 0x2029 ||
                v in 0x202A..0x202E || v in 0x2066..0x2069
        }
    }
}
