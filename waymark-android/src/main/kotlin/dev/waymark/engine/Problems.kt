package dev.waymark.engine

/** How much a problem matters: errors block publishing (and leave a route out), warnings do not. */
enum class Severity { ERROR, WARNING }

/**
 * One structured problem of a document: a code (the names of `docs/validation.md`), the
 * JSON path of the offending field (`routes[3].patterns[0]`) and a sentence for people.
 */
data class ValidationProblem(val code: String, val path: String, val message: String) {
    val severity: Severity get() = if (code in WARNINGS) Severity.WARNING else Severity.ERROR

    companion object {
        private val WARNINGS = setOf(
            "expired", "unsupportedByVersion", "unknownField", "duplicatePattern", "unreachableFallback",
            "associatedDomainMissing", "associatedDomainWrongApp", "associatedDomainNotCovering", "linksNotChecked"
        )
    }
}

/** A JSON path as reports write it: `routes[3].params.id`. */
internal fun path(base: String, key: String): String = if (base.length == 0) key else "$base.$key"
internal fun path(base: String, index: Int): String = "$base[$index]"

/**
 * Reads typed fields out of decoded JSON objects, collecting a problem for each one that
 * is missing or of the wrong type (the rules of `FieldReader.swift`).
 */
internal class FieldReader {
    val problems = ArrayList<ValidationProblem>()

    fun report(code: String, at: String, message: String) {
        problems.add(ValidationProblem(code, at, message))
    }

    fun errorsSince(count: Int) = problems.subList(count, problems.size).any { it.severity == Severity.ERROR }

    private fun wrongType(value: JsonValue, at: String, expected: String) =
        report("invalidFormat", at, "$at must be $expected, but it is ${value.typeName}.")

    fun obj(value: JsonValue?, at: String): Map<String, JsonValue>? {
        if (value == null) return null
        return value.obj ?: run { wrongType(value, at, "an object"); null }
    }

    fun requiredObject(o: Map<String, JsonValue>, key: String, at: String): Map<String, JsonValue>? {
        if (o[key] == null) { missing(key, at); return null }
        return obj(o[key], path(at, key))
    }

    fun string(o: Map<String, JsonValue>, key: String, at: String): String? {
        val value = o[key] ?: return null
        return value.string ?: run { wrongType(value, path(at, key), "a string"); null }
    }

    fun requiredString(o: Map<String, JsonValue>, key: String, at: String): String? {
        if (o[key] == null) { missing(key, at); return null }
        val text = string(o, key, at) ?: return null
        if (text.length == 0) { report("invalidFormat", path(at, key), "${path(at, key)} must not be empty."); return null }
        return text
    }

    fun int(o: Map<String, JsonValue>, key: String, at: String): Long? {
        val value = o[key] ?: return null
        return value.long ?: run { wrongType(value, path(at, key), "a whole number"); null }
    }

    fun bool(o: Map<String, JsonValue>, key: String, at: String): Boolean? {
        val value = o[key] ?: return null
        return value.bool ?: run { wrongType(value, path(at, key), "true or false"); null }
    }

    /** A list of non-empty strings; null (with a problem) if any element is not one. */
    fun strings(o: Map<String, JsonValue>, key: String, at: String): List<String>? {
        val value = o[key] ?: return null
        val elements = value.list ?: run { wrongType(value, path(at, key), "a list of strings"); return null }
        var valid = true
        val out = ArrayList<String>()
        elements.forEachIndexed { index, element ->
            val text = element.string
            if (text == null || text.length == 0) {
                report("invalidFormat", path(path(at, key), index), "${path(path(at, key), index)} must be a non-empty string.")
                valid = false
            } else out.add(text)
        }
        return if (valid) out else null
    }

    fun missing(key: String, at: String) = report("invalidFormat", path(at, key), "${path(at, key)} is required but missing.")

    fun warnUnknownKeys(o: Map<String, JsonValue>, known: Set<String>, at: String) {
        for (key in o.keys.sortedWith(ScalarOrder)) if (key !in known) {
            report("unknownField", path(at, key), "${path(at, key)} is not a field Waymark knows; it is ignored. Check its spelling.")
        }
    }

    fun checkFormat(o: Map<String, JsonValue>, expected: String): Boolean {
        val format = requiredString(o, "format", "") ?: return false
        if (format != expected) {
            report("invalidFormat", "format", "format is \"$format\", but this must be a \"$expected\" document.")
            return false
        }
        return true
    }
}

internal fun isAsciiAlphanumeric(c: Char) = c in 'a'..'z' || c in 'A'..'Z' || c in '0'..'9'

/** `[A-Za-z_][A-Za-z0-9_]*` */
internal fun isIdentifier(text: String): Boolean =
    text.isNotEmpty() && text[0] !in '0'..'9' && text.all { isAsciiAlphanumeric(it) || it == '_' }

/** ASCII lowercasing only: hosts, schemes and literals compare case-insensitively in ASCII alone. */
internal fun lowercaseAscii(text: String): String {
    if (text.none { it in 'A'..'Z' }) return text
    val chars = text.toCharArray()
    for (i in chars.indices) if (chars[i] in 'A'..'Z') chars[i] = chars[i] + 32
    return String(chars)
}

/**
 * ASCII uppercasing only (install ids). Neither the default locale (Turkish dotless i) nor
 * `toUpperCase(Locale)`, an error under Kotlin 2.1, whose `uppercase()` Kotlin 1.3 lacks.
 */
internal fun uppercaseAscii(text: String): String {
    if (text.none { it in 'a'..'z' }) return text
    val chars = text.toCharArray()
    for (i in chars.indices) if (chars[i] in 'a'..'z') chars[i] = chars[i] - 32
    return String(chars)
}

private const val HEX_DIGITS = "0123456789abcdef"

/** Lowercase hex of [bytes], ASCII digits whatever the default locale. */
internal fun hexLowercase(bytes: ByteArray): String {
    val out = StringBuilder(bytes.size * 2)
    for (b in bytes) out.append(HEX_DIGITS[(b.toInt() shr 4) and 15]).append(HEX_DIGITS[b.toInt() and 15])
    return out.toString()
}

/** [value] in decimal with at least [width] ASCII digits (zeros in front): `String.format` uses the default locale's digits. */
internal fun decimalAscii(value: Int, width: Int): String {
    val digits = Math.abs(value.toLong()).toString()
    val sign = if (value < 0) "-" else ""
    return sign + "0".repeat(maxOf(0, width - digits.length)) + digits
}
