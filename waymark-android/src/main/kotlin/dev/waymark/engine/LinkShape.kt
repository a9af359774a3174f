package dev.waymark.engine

/**
 * The shape of a link that resolved to nothing: what is left of it once anything that could
 * name a person, an account or an order is gone (`docs/link-shapes.md`, the rules; the
 * Swift `LinkShape` and this one are held to `conformance/shapes.json`). A link is read as
 * bytes of UTF-8 and every delimiter is an ASCII byte, as in Swift.
 *
 * With a [vocabulary] (the route table's literal words, [Resolver.vocabulary]), a word is kept
 * only when it is one of them: a segment that is a plain word and also personal
 * (`/u/janedoe`, `/profile/maria-garcia`) never leaves the phone. Without one, every word
 * is kept.
 */
class LinkShape private constructor(val path: String, val queryNames: List<String>) {
    override fun toString() = if (queryNames.isEmpty()) path else path + "?" + queryNames.joinToString("&")
    override fun equals(other: Any?) = other is LinkShape && other.toString() == toString()
    override fun hashCode() = toString().hashCode()

    companion object {
        const val MAXIMUM_SEGMENTS = 8
        const val MAXIMUM_WORD_LENGTH = 23
        /** The longest part of a word, in letters: a longer run reads as a token or a name. */
        const val MAXIMUM_PART_LENGTH = 11
        val DEFAULT_ALLOWED_QUERY_NAMES: Set<String> = setOf("utm_source", "utm_medium", "utm_campaign", "utm_content", "utm_term")

        // The delimiters, as bytes (Char.toByte() is deprecated in Kotlin 2, Char.code not in 1.3).
        private const val SLASH: Byte = 0x2F
        private const val HASH: Byte = 0x23
        private const val QUESTION: Byte = 0x3F
        private const val COLON: Byte = 0x3A
        private const val AT: Byte = 0x40
        private const val DOT: Byte = 0x2E
        private const val AMPERSAND: Byte = 0x26
        private const val EQUALS: Byte = 0x3D
        private const val PERCENT: Byte = 0x25
        private const val HYPHEN: Byte = 0x2D
        private const val UNDERSCORE: Byte = 0x5F
        private const val PLUS: Byte = 0x2B
        private val VOWELS = setOf(0x61, 0x65, 0x69, 0x6F, 0x75, 0x79)
        private const val PARAM = ":param"

        fun of(link: String, vocabulary: Set<String>? = null, allowedQueryNames: Set<String> = DEFAULT_ALLOWED_QUERY_NAMES): LinkShape {
            val bytes = link.toByteArray(Charsets.UTF_8)
            var end = indexOf(bytes, HASH, 0, bytes.size).let { if (it < 0) bytes.size else it }
            var queryStart = -1
            indexOf(bytes, QUESTION, 0, end).let { mark -> if (mark >= 0) { queryStart = mark + 1 } }
            val queryEnd = end
            if (queryStart >= 0) end = queryStart - 1
            var start = 0
            val pieces = ArrayList<Pair<Int, Int>>()  // [from, to) of each path piece
            // An absolute link (RFC 3986 scheme: ASCII letters, digits, + - .): drop the scheme;
            // an http(s) link's authority goes too, a custom scheme's is its first path segment
            // (without user information or port), as the engine reads it.
            val colon = indexOf(bytes, COLON, 0, end)
            if (colon > 0 && (0 until colon).all { isSchemeByte(bytes[it]) }) {
                val scheme = String(ByteArray(colon) { asciiLower(bytes[it]) }, Charsets.UTF_8)
                start = colon + 1
                if (end - start >= 2 && bytes[start] == SLASH && bytes[start + 1] == SLASH) {
                    start += 2
                    val authorityEnd = indexOf(bytes, SLASH, start, end).let { if (it < 0) end else it }
                    var authorityStart = start
                    var authorityStop = authorityEnd
                    start = authorityEnd
                    if (scheme != "http" && scheme != "https") {
                        val at = lastIndexOf(bytes, AT, authorityStart, authorityStop)
                        if (at >= 0) authorityStart = at + 1
                        val port = indexOf(bytes, COLON, authorityStart, authorityStop)
                        if (port >= 0) authorityStop = port
                        pieces.add(authorityStart to authorityStop)
                    }
                }
            }
            var from = start
            for (index in start..end) {
                if (index == end || bytes[index] == SLASH) {
                    if (index > from) pieces.add(from to index)
                    from = index + 1
                }
            }
            val segments = ArrayList<String>()
            for ((a, b) in pieces) {
                if (b <= a) continue
                if (b - a == 1 && bytes[a] == DOT) continue
                if (b - a == 2 && bytes[a] == DOT && bytes[a + 1] == DOT) {
                    if (segments.isNotEmpty()) segments.removeAt(segments.size - 1)
                    continue
                }
                val segment = segment(bytes, a, b)
                val known = segment == PARAM || vocabulary == null || segment in vocabulary
                segments.add(if (known) segment else PARAM)
            }
            val kept = if (segments.size > MAXIMUM_SEGMENTS) segments.subList(0, MAXIMUM_SEGMENTS) + "*" else segments
            val names = HashSet<String>()
            if (queryStart >= 0) {
                var itemStart = queryStart
                for (index in queryStart..queryEnd) {
                    if (index == queryEnd || bytes[index] == AMPERSAND) {
                        if (index > itemStart) {
                            val equals = indexOf(bytes, EQUALS, itemStart, index).let { if (it < 0) index else it }
                            // Names on the allow list are ASCII: lowercased as ASCII (no other text lowercases into one).
                            percentDecoded(bytes, itemStart, equals)?.let { decoded ->
                                val lowered = String(ByteArray(decoded.size) { asciiLower(decoded[it]) }, Charsets.UTF_8)
                                if (lowered in allowedQueryNames) names.add(lowered)
                            }
                        }
                        itemStart = index + 1
                    }
                }
            }
            return LinkShape("/" + kept.joinToString("/"), names.sorted())
        }

        /** A word (kept, lowercased) or `:param`. */
        private fun segment(bytes: ByteArray, from: Int, to: Int): String {
            for (index in from until to) if (bytes[index] == PERCENT) return PARAM
            if (!isWord(bytes, from, to)) return PARAM
            return String(ByteArray(to - from) { asciiLower(bytes[from + it]) }, Charsets.UTF_8)
        }

        /** One or two parts of 1 to 11 ASCII letters joined by one `-` or `_` (`docs/link-shapes.md`, step 3). */
        private fun isWord(bytes: ByteArray, from: Int, to: Int): Boolean {
            if (to - from < 1 || to - from > MAXIMUM_WORD_LENGTH) return false
            var parts = 0
            var partStart = from
            for (index in from..to) {
                if (index == to || bytes[index] == HYPHEN || bytes[index] == UNDERSCORE) {
                    parts += 1
                    if (parts > 2 || !isPart(bytes, partStart, index)) return false
                    partStart = index + 1
                }
            }
            return true
        }

        private fun isPart(bytes: ByteArray, from: Int, to: Int): Boolean {
            val length = to - from
            if (length < 1 || length > MAXIMUM_PART_LENGTH) return false
            for (index in from until to) {
                val byte = bytes[index]
                // Lower case, or capitalised: a capital past the first letter reads as a token.
                if (!(isLower(byte) || (index == from && isUpper(byte)))) return false
            }
            // A part of four letters or more needs a vowel, one in every seven letters at
            // least, and no run of five consonants.
            if (length < 4) return true
            var vowels = 0
            var run = 0
            for (index in from until to) {
                if (asciiLower(bytes[index]).toInt() in VOWELS) { vowels += 1; run = 0 } else run += 1
                if (run >= 5) return false
            }
            return vowels > 0 && vowels * 7 >= length
        }

        /** Percent-decoded bytes; null for a bad escape. */
        private fun percentDecoded(bytes: ByteArray, from: Int, to: Int): ByteArray? {
            val out = java.io.ByteArrayOutputStream(to - from)
            var index = from
            while (index < to) {
                val byte = bytes[index]
                if (byte == PERCENT) {
                    if (index + 2 >= to) return null
                    val high = hex(bytes[index + 1])
                    val low = hex(bytes[index + 2])
                    if (high < 0 || low < 0) return null
                    out.write(high * 16 + low)
                    index += 3
                } else {
                    out.write(byte.toInt())
                    index += 1
                }
            }
            return out.toByteArray()
        }

        private fun hex(byte: Byte): Int = when (byte.toInt()) {
            in 0x30..0x39 -> byte - 0x30
            in 0x41..0x46 -> byte - 0x37
            in 0x61..0x66 -> byte - 0x57
            else -> -1
        }

        private fun isUpper(byte: Byte) = byte in 0x41..0x5A
        private fun isLower(byte: Byte) = byte in 0x61..0x7A
        private fun isSchemeByte(byte: Byte) = isUpper(byte) || isLower(byte) || byte in 0x30..0x39 || byte == PLUS || byte == HYPHEN || byte == DOT
        private fun asciiLower(byte: Byte): Byte = if (isUpper(byte)) (byte + 0x20).toByte() else byte

        private fun indexOf(bytes: ByteArray, byte: Byte, from: Int, to: Int): Int {
            for (index in from until to) if (bytes[index] == byte) return index
            return -1
        }

        private fun lastIndexOf(bytes: ByteArray, byte: Byte, from: Int, to: Int): Int {
            for (index in to - 1 downTo from) if (bytes[index] == byte) return index
            return -1
        }
    }
}
