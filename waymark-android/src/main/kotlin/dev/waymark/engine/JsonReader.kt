package dev.waymark.engine

import java.nio.ByteBuffer
import java.nio.charset.CharacterCodingException
import java.nio.charset.CodingErrorAction
import java.nio.charset.StandardCharsets

/** Why a document is not JSON; [offset] is the byte where reading stopped. */
class JsonError(message: String, val offset: Int) : Exception("$message (byte $offset)")

/**
 * A strict RFC 8259 reader over UTF-8 bytes: no comments, no trailing commas, no duplicate
 * keys, no lone surrogates, valid UTF-8 only, nesting at most [maximumDepth].
 * - Complexity: O(bytes).
 */
class JsonReader(private val maximumDepth: Int = 64) {
    fun parse(text: String): JsonValue = parse(text.toByteArray(StandardCharsets.UTF_8))

    fun parse(bytes: ByteArray): JsonValue {
        val cursor = Cursor(bytes)
        cursor.skipWhitespace()
        val value = cursor.readValue(0)
        cursor.skipWhitespace()
        if (cursor.offset != bytes.size) throw JsonError("Unexpected data after the value", cursor.offset)
        return value
    }

    private inner class Cursor(val bytes: ByteArray) {
        var offset = 0

        fun peek(): Int {
            if (offset >= bytes.size) throw JsonError("Unexpected end of the document", offset)
            return bytes[offset].toInt() and 0xFF
        }

        fun skipWhitespace() {
            while (offset < bytes.size) {
                val b = bytes[offset].toInt()
                if (b == 0x20 || b == 0x09 || b == 0x0A || b == 0x0D) offset++ else return
            }
        }

        fun expect(literal: String, value: JsonValue): JsonValue {
            for (c in literal) {
                if (offset >= bytes.size || bytes[offset].toInt() != c.toInt()) throw JsonError("Invalid literal", offset)
                offset++
            }
            return value
        }

        fun readValue(depth: Int): JsonValue = when (peek()) {
            '{'.toInt() -> readObject(depth + 1)
            '['.toInt() -> readArray(depth + 1)
            '"'.toInt() -> JsonValue.Text(readString())
            't'.toInt() -> expect("true", JsonValue.Bool(true))
            'f'.toInt() -> expect("false", JsonValue.Bool(false))
            'n'.toInt() -> expect("null", JsonValue.Null)
            else -> readNumber()
        }

        fun readObject(depth: Int): JsonValue {
            if (depth > maximumDepth) throw JsonError("Nested too deeply", offset)
            offset++
            val members = LinkedHashMap<String, JsonValue>()
            skipWhitespace()
            if (peek() == '}'.toInt()) { offset++; return JsonValue.Object(members) }
            while (true) {
                skipWhitespace()
                if (peek() != '"'.toInt()) throw JsonError("Expected a key", offset)
                val keyOffset = offset
                val key = readString()
                skipWhitespace()
                if (peek() != ':'.toInt()) throw JsonError("Expected :", offset)
                offset++
                skipWhitespace()
                val value = readValue(depth)
                if (members.put(key, value) != null) throw JsonError("The key \"$key\" appears twice in one object", keyOffset)
                skipWhitespace()
                when (peek()) {
                    ','.toInt() -> offset++
                    '}'.toInt() -> { offset++; return JsonValue.Object(members) }
                    else -> throw JsonError("Expected , or }", offset)
                }
            }
        }

        fun readArray(depth: Int): JsonValue {
            if (depth > maximumDepth) throw JsonError("Nested too deeply", offset)
            offset++
            val elements = ArrayList<JsonValue>()
            skipWhitespace()
            if (peek() == ']'.toInt()) { offset++; return JsonValue.Array(elements) }
            while (true) {
                skipWhitespace()
                elements.add(readValue(depth))
                skipWhitespace()
                when (peek()) {
                    ','.toInt() -> offset++
                    ']'.toInt() -> { offset++; return JsonValue.Array(elements) }
                    else -> throw JsonError("Expected , or ]", offset)
                }
            }
        }

        /** RFC 8259 §6: `-? (0 | [1-9][0-9]*) (. [0-9]+)? ([eE] [+-]? [0-9]+)?` */
        fun readNumber(): JsonValue {
            val start = offset
            if (offset < bytes.size && bytes[offset] == '-'.toByte()) offset++
            if (offset >= bytes.size || !isDigit(bytes[offset])) throw JsonError("Invalid number", start)
            if (bytes[offset] == '0'.toByte()) offset++ else while (offset < bytes.size && isDigit(bytes[offset])) offset++
            var integral = true
            if (offset < bytes.size && bytes[offset] == '.'.toByte()) {
                integral = false
                offset++
                if (offset >= bytes.size || !isDigit(bytes[offset])) throw JsonError("Invalid number", start)
                while (offset < bytes.size && isDigit(bytes[offset])) offset++
            }
            if (offset < bytes.size && (bytes[offset].toInt() or 0x20) == 'e'.toInt()) {
                integral = false
                offset++
                if (offset < bytes.size && (bytes[offset] == '+'.toByte() || bytes[offset] == '-'.toByte())) offset++
                if (offset >= bytes.size || !isDigit(bytes[offset])) throw JsonError("Invalid number", start)
                while (offset < bytes.size && isDigit(bytes[offset])) offset++
            }
            val text = String(bytes, start, offset - start, StandardCharsets.US_ASCII)
            if (integral) text.toLongOrNull()?.let { return JsonValue.JsonInt(it) }
            return JsonValue.JsonDouble(text.toDouble())
        }

        fun readString(): String {
            offset++
            val out = StringBuilder()
            var runStart = offset
            fun flush() {
                if (offset > runStart) out.append(decodeUtf8(bytes, runStart, offset, runStart))
            }
            while (true) {
                if (offset >= bytes.size) throw JsonError("Unterminated string", offset)
                val b = bytes[offset].toInt() and 0xFF
                when {
                    b == '"'.toInt() -> { flush(); offset++; return out.toString() }
                    b < 0x20 -> throw JsonError("A control character in a string", offset)
                    b == '\\'.toInt() -> {
                        flush()
                        offset++
                        val e = peek()
                        offset++
                        when (e) {
                            '"'.toInt() -> out.append('"')
                            '\\'.toInt() -> out.append('\\')
                            '/'.toInt() -> out.append('/')
                            'b'.toInt() -> out.append('\b')
                            'f'.toInt() -> out.append('\u000C')
                            'n'.toInt() -> out.append('\n')
                            'r'.toInt() -> out.append('\r')
                            't'.toInt() -> out.append('\t')
                            'u'.toInt() -> {
                                val unit = readHex4()
                                if (unit in 0xD800..0xDBFF) {
                                    if (offset + 1 < bytes.size && bytes[offset] == '\\'.toByte() && bytes[offset + 1] == 'u'.toByte()) {
                                        offset += 2
                                        val low = readHex4()
                                        if (low !in 0xDC00..0xDFFF) throw JsonError("A lone surrogate", offset)
                                        out.append(unit.toChar()).append(low.toChar())
                                    } else throw JsonError("A lone surrogate", offset)
                                } else if (unit in 0xDC00..0xDFFF) {
                                    throw JsonError("A lone surrogate", offset)
                                } else out.append(unit.toChar())
                            }
                            else -> throw JsonError("An invalid escape", offset - 1)
                        }
                        runStart = offset
                    }
                    else -> offset++
                }
            }
        }

        fun readHex4(): Int {
            if (offset + 4 > bytes.size) throw JsonError("Unexpected end of the document", offset)
            var value = 0
            for (i in 0 until 4) {
                val h = hexValue(bytes[offset + i].toInt() and 0xFF)
                if (h < 0) throw JsonError("An invalid \\u escape", offset)
                value = value * 16 + h
            }
            offset += 4
            return value
        }
    }

    companion object {
        private fun isDigit(b: Byte) = b >= '0'.toByte() && b <= '9'.toByte()

        fun decodeUtf8(bytes: ByteArray, from: Int, to: Int, offset: Int): String =
            strictUtf8(bytes, from, to) ?: throw JsonError("Invalid UTF-8", offset)
    }
}

/** -1 unless [b] is an ASCII hex digit. */
internal fun hexValue(b: Int): Int = when (b) {
    in '0'.toInt()..'9'.toInt() -> b - '0'.toInt()
    in 'a'.toInt()..'f'.toInt() -> b - 'a'.toInt() + 10
    in 'A'.toInt()..'F'.toInt() -> b - 'A'.toInt() + 10
    else -> -1
}

/** The text of UTF-8 [bytes], or null when they are not valid UTF-8 (no replacement characters). */
internal fun strictUtf8(bytes: ByteArray, from: Int = 0, to: Int = bytes.size): String? = try {
    StandardCharsets.UTF_8.newDecoder()
        .onMalformedInput(CodingErrorAction.REPORT)
        .onUnmappableCharacter(CodingErrorAction.REPORT)
        .decode(ByteBuffer.wrap(bytes, from, to - from)).toString()
} catch (error: CharacterCodingException) {
    null
}
