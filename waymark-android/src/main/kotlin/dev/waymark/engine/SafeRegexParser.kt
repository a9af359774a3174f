package dev.waymark.engine

/** The pattern's syntax tree. */
internal sealed class RegexNode {
    object Empty : RegexNode()
    class Scalar(val scalar: Int) : RegexNode()
    class Set(val set: ScalarSet) : RegexNode()
    object Any : RegexNode()
    class Concatenation(val items: List<RegexNode>) : RegexNode()
    class Alternation(val branches: List<RegexNode>) : RegexNode()
    class Repetition(val inner: RegexNode, val minimum: Int, val maximum: Int?) : RegexNode()
}

/**
 * Recursive descent over the subset (the rules of `SafeRegex+Parsing.swift`):
 * `alternation := concat ('|' concat)*`, `concat := (atom quantifier?)*`,
 * `atom := scalar | '.' | class | escape | '(' alternation ')' | '(?:' alternation ')'`;
 * `^` only first, `$` only last, and no anchor beside a `|` outside every group.
 */
internal class SafeRegexParser(private val scalars: IntArray, private var position: Int = 0) {
    private var hasTopLevelAlternation = false

    class Parsed(val node: RegexNode, val anchoredAtStart: Boolean, val anchoredAtEnd: Boolean)

    private fun unsupported(feature: String, at: Int) =
        SafeRegexError("$feature (at position $at) is not supported; see docs/patterns.md.")
    private fun unexpected(at: Int) =
        SafeRegexError("Unexpected '${String(Character.toChars(scalars[at]))}' at position $at of the pattern.")
    private fun unexpectedEnd() = SafeRegexError("The pattern ends too early (an unclosed group, class or escape).")
    private fun invalidRepetition(at: Int) = SafeRegexError(
        "The repetition at position $at is not valid (use {n}, {n,} or {n,m} with n ≤ m ≤ ${SafeRegex.MAXIMUM_REPETITION})."
    )

    fun parsePattern(): Parsed {
        var anchoredAtStart = false
        var end = scalars.size
        if (scalars.isNotEmpty() && scalars[0] == '^'.toInt()) { anchoredAtStart = true; position = 1 }
        var anchoredAtEnd = false
        if (end > position && scalars[end - 1] == '$'.toInt() && !isEscaped(end - 1)) { anchoredAtEnd = true; end -= 1 }
        val bounded = SafeRegexParser(scalars.copyOfRange(0, end), position)
        val node = bounded.parseAlternation(0)
        if (bounded.position < end) throw unexpected(bounded.position)
        if ((anchoredAtStart || anchoredAtEnd) && bounded.hasTopLevelAlternation) {
            throw unsupported("An anchored pattern with '|' outside a group, such as ^ab|cd$ (write ^(ab|cd)$)", maxOf(0, scalars.indexOf('|'.toInt())))
        }
        return Parsed(node, anchoredAtStart, anchoredAtEnd)
    }

    private fun isEscaped(index: Int): Boolean {
        var count = 0
        var cursor = index - 1
        while (cursor >= 0 && scalars[cursor] == '\\'.toInt()) { count++; cursor-- }
        return count % 2 == 1
    }

    private val current: Int? get() = if (position < scalars.size) scalars[position] else null

    fun parseAlternation(depth: Int): RegexNode {
        if (depth >= 32) throw SafeRegexError("The pattern expands to more than ${SafeRegex.MAXIMUM_PROGRAM_SIZE} steps; use smaller repetition counts.")
        val branches = arrayListOf(parseConcatenation(depth))
        while (current == '|'.toInt()) {
            if (depth == 0) hasTopLevelAlternation = true
            position++
            branches.add(parseConcatenation(depth))
        }
        return if (branches.size == 1) branches[0] else RegexNode.Alternation(branches)
    }

    private fun parseConcatenation(depth: Int): RegexNode {
        val items = ArrayList<RegexNode>()
        while (true) {
            val scalar = current ?: break
            if (scalar == '|'.toInt() || scalar == ')'.toInt()) break
            var atom = parseAtom(depth)
            parseQuantifier(atom)?.let { atom = it }
            val next = current
            if (next != null && next in QUANTIFIERS) {
                throw unsupported("A second quantifier ('${next.toChar()}') in a row", position)
            }
            items.add(atom)
        }
        return when (items.size) { 0 -> RegexNode.Empty; 1 -> items[0]; else -> RegexNode.Concatenation(items) }
    }

    private fun parseAtom(depth: Int): RegexNode {
        val start = position
        val scalar = scalars[position]
        position++
        return when (scalar) {
            '.'.toInt() -> RegexNode.Any
            '['.toInt() -> RegexNode.Set(parseClass())
            '\\'.toInt() -> parseEscape(start).first
            '('.toInt() -> {
                if (current == '?'.toInt()) {
                    if (!(position + 1 < scalars.size && scalars[position + 1] == ':'.toInt())) {
                        throw unsupported("Lookaround and group options", start)
                    }
                    position += 2
                }
                val inner = parseAlternation(depth + 1)
                if (current != ')'.toInt()) throw unexpectedEnd()
                position++
                inner
            }
            '*'.toInt(), '+'.toInt(), '?'.toInt(), '{'.toInt() -> throw unexpected(start)
            '^'.toInt(), '$'.toInt() -> throw unsupported("'${scalar.toChar()}' in the middle of a pattern", start)
            ')'.toInt() -> throw unexpected(start)
            else -> RegexNode.Scalar(scalar)
        }
    }

    private fun parseQuantifier(atom: RegexNode): RegexNode? {
        val scalar = current ?: return null
        val start = position
        when (scalar) {
            '*'.toInt() -> { position++; return RegexNode.Repetition(atom, 0, null) }
            '+'.toInt() -> { position++; return RegexNode.Repetition(atom, 1, null) }
            '?'.toInt() -> { position++; return RegexNode.Repetition(atom, 0, 1) }
            '{'.toInt() -> {
                position++
                val minimum = parseNumber() ?: throw invalidRepetition(start)
                var maximum: Int? = minimum
                if (current == ','.toInt()) {
                    position++
                    maximum = if (current == '}'.toInt()) null else parseNumber()
                    if (maximum == null && current != '}'.toInt()) throw invalidRepetition(start)
                }
                if (current != '}'.toInt()) throw invalidRepetition(start)
                position++
                if (minimum > SafeRegex.MAXIMUM_REPETITION || (maximum ?: minimum) > SafeRegex.MAXIMUM_REPETITION ||
                    minimum > (maximum ?: minimum)) throw invalidRepetition(start)
                return RegexNode.Repetition(atom, minimum, maximum)
            }
            else -> return null
        }
    }

    private fun parseNumber(): Int? {
        var value = 0
        var digits = 0
        while (true) {
            val scalar = current ?: break
            if (scalar !in '0'.toInt()..'9'.toInt() || digits >= 5) break
            value = value * 10 + (scalar - '0'.toInt())
            digits++
            position++
        }
        return if (digits == 0) null else value
    }

    private fun parseClass(): ScalarSet {
        val set = ScalarSet(ArrayList(), false)
        if (current == '^'.toInt()) { set.negated = true; position++ }
        var first = true
        while (true) {
            val scalar = current ?: throw unexpectedEnd()
            if (scalar == ']'.toInt() && !first) { position++; break }
            first = false
            val itemStart = position
            val low: Int
            if (scalar == '\\'.toInt()) {
                position++
                val escape = parseEscape(itemStart)
                val single = escape.second
                if (single == null) {
                    val inner = (escape.first as RegexNode.Set).set
                    if (!inner.negated) { set.ranges.addAll(inner.ranges); continue }
                    throw unsupported("A negated class escape inside [...]", itemStart)
                }
                low = single
            } else if (scalar == '['.toInt()) {
                throw unsupported("A nested '[' in a class (escape it as \\[)", itemStart)
            } else {
                position++
                low = scalar
            }
            // A '-' between two items makes a range; first or last it is literal.
            if (current == '-'.toInt() && position + 1 < scalars.size && scalars[position + 1] != ']'.toInt()) {
                position++
                val highScalar = current ?: throw unexpectedEnd()
                var high = highScalar
                if (highScalar == '\\'.toInt()) {
                    val escapeStart = position
                    position++
                    high = parseEscape(escapeStart).second ?: throw SafeRegexError("The character range at position $itemStart runs backwards.")
                } else position++
                if (low > high) throw SafeRegexError("The character range at position $itemStart runs backwards.")
                set.ranges.add(intArrayOf(low, high))
            } else set.ranges.add(intArrayOf(low, low))
        }
        return set
    }

    /** After a backslash: a class shorthand (no single scalar) or an escaped character. */
    private fun parseEscape(start: Int): Pair<RegexNode, Int?> {
        val scalar = current ?: throw unexpectedEnd()
        position++
        return when (scalar) {
            'd'.toInt() -> Pair(RegexNode.Set(ScalarSet.digit()), null)
            'D'.toInt() -> Pair(RegexNode.Set(ScalarSet.digit().also { it.negated = true }), null)
            'w'.toInt() -> Pair(RegexNode.Set(ScalarSet.word()), null)
            'W'.toInt() -> Pair(RegexNode.Set(ScalarSet.word().also { it.negated = true }), null)
            's'.toInt() -> Pair(RegexNode.Set(ScalarSet.space()), null)
            'S'.toInt() -> Pair(RegexNode.Set(ScalarSet.space().also { it.negated = true }), null)
            'n'.toInt() -> Pair(RegexNode.Scalar(0x0A), 0x0A)
            't'.toInt() -> Pair(RegexNode.Scalar(0x09), 0x09)
            else -> {
                if (scalar !in ESCAPABLE) throw unsupported("The escape \\${String(Character.toChars(scalar))}", start)
                Pair(RegexNode.Scalar(scalar), scalar)
            }
        }
    }

    companion object {
        private val QUANTIFIERS = setOf('*'.toInt(), '+'.toInt(), '?'.toInt(), '{'.toInt())
        private val ESCAPABLE = "\\.^$|?*+()[]{}-/".map { it.toInt() }.toSet()
    }
}
