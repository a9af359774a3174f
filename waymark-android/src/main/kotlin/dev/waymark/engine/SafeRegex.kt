package dev.waymark.engine

/** Why a pattern is not in the safe subset (`docs/patterns.md`). */
class SafeRegexError(message: String) : Exception(message)

/**
 * A pattern of the safe subset, compiled to a Thompson NFA and matched by simulating it as
 * a set of states: O(value × pattern) for every input, never backtracking — so `^(a+)+$`
 * costs what `^a+$` does. The subset is compiled here, never handed to `java.util.regex`,
 * whose `\s` and anchors read differently (`docs/patterns.md`).
 */
class SafeRegex(val source: String) {
    private val program: Program

    init {
        if (source.toByteArray(Charsets.UTF_8).size > MAXIMUM_SOURCE_LENGTH) {
            throw SafeRegexError("The pattern is longer than $MAXIMUM_SOURCE_LENGTH characters.")
        }
        val scalars = source.codePoints().toArray()
        val parsed = SafeRegexParser(scalars).parsePattern()
        val compiler = SafeRegexCompiler()
        compiler.emit(parsed.node)
        compiler.program.add(Instruction.Match)
        if (compiler.program.size > MAXIMUM_PROGRAM_SIZE) {
            throw SafeRegexError("The pattern expands to more than $MAXIMUM_PROGRAM_SIZE steps; use smaller repetition counts.")
        }
        program = Program(compiler.program, parsed.anchoredAtStart, parsed.anchoredAtEnd)
    }

    /** Steps per input scalar at worst: every operation live, each set tried range by range. */
    val stepsPerScalar: Int get() = program.stepsPerScalar

    /** The most steps matching a value of [length] scalars can take. */
    fun worstCaseSteps(length: Int): Long = stepsPerScalar.toLong() * maxOf(1, length)

    /** - Complexity: O(n × m) for n scalars of input and m instructions. */
    fun matches(value: String): Boolean = program.matches(value)

    override fun toString() = source
    override fun equals(other: Any?) = other is SafeRegex && other.source == source
    override fun hashCode() = source.hashCode()

    companion object {
        const val MAXIMUM_SOURCE_LENGTH = 512
        const val MAXIMUM_REPETITION = 1000
        const val MAXIMUM_PROGRAM_SIZE = 4000
        /** The most steps matching one value may take, for patterns a schema declares. */
        const val MATCH_BUDGET = 1_000_000L
    }
}

/** A character class: inclusive ranges of scalars as (low, high) pairs, possibly negated. */
internal class ScalarSet(val ranges: MutableList<IntArray>, var negated: Boolean) {
    companion object {
        fun digit() = ScalarSet(mutableListOf(intArrayOf(0x30, 0x39)), false)
        fun word() = ScalarSet(mutableListOf(intArrayOf(0x30, 0x39), intArrayOf(0x41, 0x5A), intArrayOf(0x5F, 0x5F), intArrayOf(0x61, 0x7A)), false)
        /** Exactly U+0009–U+000D and U+0020: two ranges, ASCII only, whatever a platform's `\s` says. */
        fun space() = ScalarSet(mutableListOf(intArrayOf(0x09, 0x0D), intArrayOf(0x20, 0x20)), false)
    }
}

internal sealed class Instruction {
    class Scalar(val scalar: Int) : Instruction()
    class Set(val set: ScalarSet) : Instruction()
    object Any : Instruction()
    class Jump(var target: Int) : Instruction()
    class Split(var first: Int, var second: Int) : Instruction()
    object Match : Instruction()
}

/** The compiled program as flat arrays, and the simulation. */
private class Program(instructions: List<Instruction>, val anchoredAtStart: Boolean, val anchoredAtEnd: Boolean) {
    private val kinds = IntArray(instructions.size)
    private val a = IntArray(instructions.size)
    private val b = IntArray(instructions.size)
    private val bounds: IntArray
    val stepsPerScalar: Int

    init {
        val boundList = ArrayList<Int>()
        var steps = 0
        instructions.forEachIndexed { pc, instruction ->
            steps += 1
            when (instruction) {
                is Instruction.Scalar -> { kinds[pc] = SCALAR; a[pc] = instruction.scalar }
                is Instruction.Set -> {
                    kinds[pc] = if (instruction.set.negated) NEGATED_SET else SET
                    a[pc] = boundList.size
                    for (range in instruction.set.ranges) { boundList.add(range[0]); boundList.add(range[1]) }
                    b[pc] = boundList.size
                    steps += instruction.set.ranges.size
                }
                is Instruction.Any -> kinds[pc] = ANY
                is Instruction.Jump -> { kinds[pc] = JUMP; a[pc] = instruction.target }
                is Instruction.Split -> { kinds[pc] = SPLIT; a[pc] = instruction.first; b[pc] = instruction.second }
                is Instruction.Match -> kinds[pc] = MATCH
            }
        }
        bounds = boundList.toIntArray()
        stepsPerScalar = steps
    }

    private class StateList(size: Int) {
        val states = IntArray(size)
        val stamps = IntArray(size)
        var count = 0
        var containsMatch = false
    }

    fun matches(value: String): Boolean {
        val size = kinds.size
        var current = StateList(size)
        var next = StateList(size)
        val stack = IntArray(size)
        var generation = 1
        addState(0, current, generation, stack)
        if (current.containsMatch && !anchoredAtEnd) return true
        var index = 0
        while (index < value.length) {
            val input = value.codePointAt(index)
            index += Character.charCount(input)
            generation++
            next.count = 0
            next.containsMatch = false
            for (i in 0 until current.count) {
                val pc = current.states[i]
                val consumes = when (kinds[pc]) {
                    SCALAR -> a[pc] == input
                    ANY -> true
                    SET, NEGATED_SET -> {
                        var found = false
                        var cursor = a[pc]
                        while (cursor < b[pc]) {
                            if (input >= bounds[cursor] && input <= bounds[cursor + 1]) { found = true; break }
                            cursor += 2
                        }
                        found != (kinds[pc] == NEGATED_SET)
                    }
                    else -> false
                }
                if (consumes) addState(pc + 1, next, generation, stack)
            }
            // Unanchored: a match may start at any position.
            if (!anchoredAtStart) addState(0, next, generation, stack)
            val swap = current; current = next; next = swap
            if (current.containsMatch && !anchoredAtEnd) return true
            if (current.count == 0 && !current.containsMatch) return false
        }
        return current.containsMatch
    }

    /** Follows jumps and splits; each state is marked once per generation. */
    private fun addState(start: Int, list: StateList, generation: Int, stack: IntArray) {
        var depth = 0
        fun push(pc: Int) {
            if (list.stamps[pc] == generation) return
            list.stamps[pc] = generation
            stack[depth++] = pc
        }
        push(start)
        while (depth > 0) {
            val pc = stack[--depth]
            when (kinds[pc]) {
                JUMP -> push(a[pc])
                SPLIT -> { push(b[pc]); push(a[pc]) }
                MATCH -> list.containsMatch = true
                else -> { list.states[list.count++] = pc }
            }
        }
    }

    companion object {
        const val SCALAR = 0
        const val SET = 1
        const val NEGATED_SET = 2
        const val ANY = 3
        const val JUMP = 4
        const val SPLIT = 5
        const val MATCH = 6
    }
}

/** Thompson's construction: each node becomes a fragment of jumps and splits. */
internal class SafeRegexCompiler {
    val program = ArrayList<Instruction>()

    fun emit(node: RegexNode) {
        if (program.size > SafeRegex.MAXIMUM_PROGRAM_SIZE) {
            throw SafeRegexError("The pattern expands to more than ${SafeRegex.MAXIMUM_PROGRAM_SIZE} steps; use smaller repetition counts.")
        }
        when (node) {
            is RegexNode.Empty -> Unit
            is RegexNode.Scalar -> program.add(Instruction.Scalar(node.scalar))
            is RegexNode.Set -> program.add(Instruction.Set(node.set))
            is RegexNode.Any -> program.add(Instruction.Any)
            is RegexNode.Concatenation -> node.items.forEach { emit(it) }
            is RegexNode.Alternation -> {
                val jumps = ArrayList<Instruction.Jump>()
                node.branches.forEachIndexed { index, branch ->
                    if (index < node.branches.size - 1) {
                        val split = Instruction.Split(program.size + 1, -1)
                        program.add(split)
                        emit(branch)
                        val jump = Instruction.Jump(-1)
                        jumps.add(jump)
                        program.add(jump)
                        split.second = program.size
                    } else emit(branch)
                }
                for (jump in jumps) jump.target = program.size
            }
            is RegexNode.Repetition -> {
                repeat(node.minimum) { emit(node.inner) }
                val maximum = node.maximum
                if (maximum != null) {
                    val splits = ArrayList<Instruction.Split>()
                    for (copy in node.minimum until maximum) {
                        val split = Instruction.Split(program.size + 1, -1)
                        splits.add(split)
                        program.add(split)
                        emit(node.inner)
                    }
                    for (split in splits) split.second = program.size
                } else {
                    val loop = program.size
                    val split = Instruction.Split(loop + 1, -1)
                    program.add(split)
                    emit(node.inner)
                    program.add(Instruction.Jump(loop))
                    split.second = program.size
                }
            }
        }
    }
}
