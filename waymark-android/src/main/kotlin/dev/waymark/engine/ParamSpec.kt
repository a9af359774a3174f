package dev.waymark.engine

/** The kinds of parameter a destination can declare. */
enum class ParamType(val json: String) {
    INT("int"), STRING("string"), ENUM("enum"), UUID("uuid"), SLUG("slug");

    companion object {
        fun named(name: String): ParamType? = values().firstOrNull { it.json == name }
    }
}

/** A resolved param's value: a whole number or text. */
sealed class ParamValue {
    data class Integer(val value: Long) : ParamValue() { override fun toString() = value.toString() }
    data class Text(val value: String) : ParamValue() { override fun toString() = value }

    val json: JsonValue get() = when (this) {
        is Integer -> JsonValue.JsonInt(value)
        is Text -> JsonValue.Text(value)
    }
}

/** Why a value does not fit its param: a value, so a test can match it. */
class ParamFailure(val reason: String) {
    override fun toString() = reason
}

/** The outcome of checking one value: the typed value, or why it does not fit. */
class Checked private constructor(val value: ParamValue?, val failure: ParamFailure?) {
    companion object {
        fun ok(value: ParamValue) = Checked(value, null)
        fun fail(reason: String) = Checked(null, ParamFailure(reason))
    }
}

/** A destination's declared parameter: its type and the bounds a value must respect. */
class ParamSpec(
    val type: ParamType,
    val minimum: Long? = null,
    val maximum: Long? = null,
    val minimumLength: Long? = null,
    val maximumLength: Long? = null,
    val pattern: SafeRegex? = null,
    val values: List<String>? = null,
    val isOptional: Boolean = false
) {
    /** Types a value with several path segments (a `*rest` capture) can fit. */
    val acceptsMultipleSegments: Boolean get() = type == ParamType.STRING

    /** Parses and checks text taken from a link. - Complexity: O(n) in the value's length. */
    fun valueFromText(text: String): Checked = when (type) {
        ParamType.INT -> parseCanonicalInt(text)?.let { checkBounds(it) } ?: Checked.fail("is not a whole number")
        else -> check(text)
    }

    /** Checks a value given by a typed in-app request or a route's constant. */
    fun valueFrom(value: ParamValue): Checked = when {
        type == ParamType.INT && value is ParamValue.Integer -> checkBounds(value.value)
        type == ParamType.INT -> Checked.fail("is not a whole number")
        value is ParamValue.Text -> check(value.value)
        else -> Checked.fail("must be text, not a number")
    }

    private fun checkBounds(integer: Long): Checked {
        if (integer < -LARGEST_INT) return Checked.fail("is below the minimum ${maxOf(minimum ?: -LARGEST_INT, -LARGEST_INT)}")
        if (integer > LARGEST_INT) return Checked.fail("is above the maximum ${minOf(maximum ?: LARGEST_INT, LARGEST_INT)}")
        if (minimum != null && integer < minimum) return Checked.fail("is below the minimum $minimum")
        if (maximum != null && integer > maximum) return Checked.fail("is above the maximum $maximum")
        return Checked.ok(ParamValue.Integer(integer))
    }

    private fun check(text: String): Checked {
        // The cap on every text param (docs/resolution.md): a char is at most one scalar,
        // so only text over the bound in chars needs counting.
        if (text.length > LONGEST_TEXT && text.codePointCount(0, text.length) > LONGEST_TEXT) {
            return Checked.fail("is longer than ${minOf(maximumLength ?: LONGEST_TEXT.toLong(), LONGEST_TEXT.toLong())} characters")
        }
        when (type) {
            ParamType.INT -> return Checked.fail("is not a whole number")
            ParamType.UUID -> if (!isUuid(text)) return Checked.fail("is not a UUID")
            // By Unicode scalars: Kotlin's String equality on valid UTF-16 is exactly that, no normalisation.
            ParamType.ENUM -> if (values?.contains(text) != true) return Checked.fail("is not one of ${values.orEmpty().joinToString(", ")}")
            ParamType.SLUG, ParamType.STRING -> {
                if (type == ParamType.SLUG && !isSlug(text)) return Checked.fail("is not a slug (lowercase letters, digits and single hyphens)")
                if (minimumLength != null || maximumLength != null) {
                    val length = text.codePointCount(0, text.length).toLong()
                    if (minimumLength != null && length < minimumLength) return Checked.fail("is shorter than $minimumLength characters")
                    if (maximumLength != null && length > maximumLength) return Checked.fail("is longer than $maximumLength characters")
                }
                if (pattern != null && !pattern.matches(text)) return Checked.fail("does not match the pattern ${pattern.source}")
            }
        }
        return Checked.ok(ParamValue.Text(text))
    }

    /** `a whole number from 1 to 2147483647`, `text matching ^p[0-9]{1,8}$`: the type in words. */
    fun describe(): String = when (type) {
        ParamType.INT -> when {
            minimum != null && maximum != null -> "a whole number from $minimum to $maximum"
            minimum != null -> "a whole number of at least $minimum"
            maximum != null -> "a whole number of at most $maximum"
            else -> "a whole number"
        }
        ParamType.STRING -> pattern?.let { "text matching ${it.source}" } ?: "text"
        ParamType.ENUM -> "one of ${values.orEmpty().joinToString(", ")}"
        ParamType.UUID -> "a UUID"
        ParamType.SLUG -> "a slug"
    }

    companion object {
        /** 2^53 − 1: every JSON reader, JavaScript's included, reads a resolved value exactly. */
        const val LARGEST_INT = 9_007_199_254_740_991L
        /** The longest text any param takes, in Unicode scalars (a whole link, and in-app requests alike). */
        const val LONGEST_TEXT = 2048

        /** Decimal digits with an optional leading `-`; no `+`, no leading zeros, no `-0`, no overflow. */
        fun parseCanonicalInt(text: String): Long? {
            val negative = text.startsWith("-")
            val digits = if (negative) text.substring(1) else text
            if (digits.length == 0 || !digits.all { it in '0'..'9' }) return null
            if (digits[0] == '0' && (digits.length > 1 || negative)) return null
            return text.toLongOrNull()
        }

        /** `8-4-4-4-12` hexadecimal digits, either case. */
        fun isUuid(text: String): Boolean {
            if (text.length != 36) return false
            text.forEachIndexed { index, c ->
                if (index == 8 || index == 13 || index == 18 || index == 23) { if (c != '-') return false }
                else if (hexValue(c.toInt()) < 0) return false
            }
            return true
        }

        /** Lowercase ASCII letters and digits in runs joined by single hyphens. */
        fun isSlug(text: String): Boolean {
            var previousWasHyphen = true
            for (c in text) {
                if (c == '-') {
                    if (previousWasHyphen) return false
                    previousWasHyphen = true
                } else if (c in '0'..'9' || c in 'a'..'z') previousWasHyphen = false
                else return false
            }
            return !previousWasHyphen
        }
    }
}
