package dev.waymark.engine

/**
 * A JSON value as the engine reads it. Android ships `org.json`, the JVM does not, so the
 * library reads JSON itself (the rules of `Sources/RouteEngine/JSONParser.swift`): strict
 * RFC 8259, whole numbers kept exact as [JsonInt], objects keyed by their members' names.
 */
sealed class JsonValue {
    object Null : JsonValue()
    data class Bool(val value: Boolean) : JsonValue()
    data class JsonInt(val value: Long) : JsonValue()
    data class JsonDouble(val value: Double) : JsonValue()
    data class Text(val value: String) : JsonValue()
    data class Array(val elements: List<JsonValue>) : JsonValue()
    /** Equality ignores member order, as the result contract does. */
    data class Object(val members: Map<String, JsonValue>) : JsonValue()

    operator fun get(key: String): JsonValue? = (this as? Object)?.members?.get(key)
    val string: String? get() = (this as? Text)?.value
    val long: Long? get() = (this as? JsonInt)?.value
    val list: List<JsonValue>? get() = (this as? Array)?.elements
    val obj: Map<String, JsonValue>? get() = (this as? Object)?.members
    val bool: Boolean? get() = (this as? Bool)?.value

    /** What a report calls this kind of value. */
    val typeName: String
        get() = when (this) {
            is Null -> "null"
            is Bool -> "true or false"
            is JsonInt -> "a whole number"
            is JsonDouble -> "a number"
            is Text -> "a string"
            is Array -> "a list"
            is Object -> "an object"
        }

    /**
     * Waymark's canonical JSON (`docs/formats.md`): no whitespace, members sorted by key
     * (by scalars; manifest keys are ASCII), `"` `\` and controls escaped, everything else
     * as its UTF-8 bytes. What `routesSha256` is computed over.
     */
    fun canonical(): String = StringBuilder().also { write(it) }.toString()

    private fun write(out: StringBuilder) {
        when (this) {
            is Null -> out.append("null")
            is Bool -> out.append(if (value) "true" else "false")
            is JsonInt -> out.append(value)
            is JsonDouble -> out.append(
                if (value.isFinite() && value == Math.rint(value) && Math.abs(value) < 1e15) value.toLong().toString()
                else if (value.isFinite()) value.toString() else "null"
            )
            is Text -> writeString(value, out)
            is Array -> {
                out.append('[')
                elements.forEachIndexed { index, element -> if (index > 0) out.append(','); element.write(out) }
                out.append(']')
            }
            is Object -> {
                out.append('{')
                members.keys.sortedWith(ScalarOrder).forEachIndexed { index, key ->
                    if (index > 0) out.append(',')
                    writeString(key, out)
                    out.append(':')
                    members.getValue(key).write(out)
                }
                out.append('}')
            }
        }
    }

    companion object {
        fun writeString(value: String, out: StringBuilder) {
            out.append('"')
            for (c in value) {
                when {
                    c == '"' -> out.append("\\\"")
                    c == '\\' -> out.append("\\\\")
                    c == '\n' -> out.append("\\n")
                    c == '\r' -> out.append("\\r")
                    c == '\t' -> out.append("\\t")
                    c.toInt() < 0x20 || c.toInt() == 0x7F -> out.append("\\u00").append(HEX[c.toInt() shr 4]).append(HEX[c.toInt() and 15])
                    else -> out.append(c)
                }
            }
            out.append('"')
        }

        private const val HEX = "0123456789abcdef"

        fun obj(vararg pairs: Pair<String, JsonValue>): Object = Object(linkedMapOf(*pairs))
    }
}

/** Orders strings by Unicode scalar values (UTF-16 order differs above U+FFFF). */
object ScalarOrder : Comparator<String> {
    override fun compare(a: String, b: String): Int {
        var i = 0
        var j = 0
        while (i < a.length && j < b.length) {
            val x = a.codePointAt(i)
            val y = b.codePointAt(j)
            if (x != y) return x.compareTo(y)
            i += Character.charCount(x)
            j += Character.charCount(y)
        }
        return (a.length - i).compareTo(b.length - j)
    }
}
