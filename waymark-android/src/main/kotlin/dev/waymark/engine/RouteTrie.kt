package dev.waymark.engine

/** Where a compiled binding reads its value. */
internal sealed class BindingSource {
    class Segment(val position: Int) : BindingSource()
    class Rest(val position: Int) : BindingSource()
    class Query(val name: String) : BindingSource()
    class Constant(val value: ParamValue) : BindingSource()
}

/** One destination param of one pattern: its name, type and source. */
internal class Binding(val name: String, val spec: ParamSpec, val source: BindingSource)

/** A route ready to match for one schema. */
internal class CompiledRoute(
    val id: String,
    val destination: DestinationSpec,
    /** Per declared origin index, whether the route answers it. */
    val admittedOrigins: BooleanArray,
    val window: ValidityWindow
)

/** One pattern of a compiled route, with its bindings: what a trie terminal holds. */
internal class CompiledPattern(val route: CompiledRoute, val bindings: List<Binding>)

/**
 * The frozen matching structure: a trie over path segments, literal edges keyed by the
 * lowercased segment. Precedence per segment, left to right: literal, then `:param`, then
 * `*rest`, backtracking when a branch dead-ends.
 */
internal class RouteTrie {
    class Node {
        val literals = HashMap<String, Node>()
        var parameter: Node? = null
        /** The patterns ending here, in document order. */
        var terminal: MutableList<CompiledPattern>? = null
        /** The `*rest` patterns starting below this node, in document order. */
        var rest: MutableList<CompiledPattern>? = null
    }

    private val root = Node()

    fun insert(pattern: UrlPattern, payload: CompiledPattern) {
        var node = root
        for (segment in pattern.segments) {
            when (segment) {
                is PatternSegment.Literal -> node = node.literals.getOrPut(segment.text) { Node() }
                is PatternSegment.Parameter -> node = node.parameter ?: Node().also { node.parameter = it }
                is PatternSegment.Rest -> {
                    (node.rest ?: ArrayList<CompiledPattern>().also { node.rest = it }).add(payload)
                    return
                }
            }
        }
        (node.terminal ?: ArrayList<CompiledPattern>().also { node.terminal = it }).add(payload)
    }

    /**
     * The first terminal, in precedence order, that [accepts] (the resolver's: a route of it
     * answers the origin and is live now). A refused terminal is a dead end like any other.
     * - Complexity: O(segments) for typical tables; each node is visited at most once.
     */
    fun match(segments: List<String>, accepts: (List<CompiledPattern>) -> Boolean): List<CompiledPattern>? =
        walk(root, 0, segments.map { lowercaseAscii(it) }, accepts)

    private fun walk(node: Node, depth: Int, segments: List<String>, accepts: (List<CompiledPattern>) -> Boolean): List<CompiledPattern>? {
        if (depth == segments.size) {
            val terminal = node.terminal
            return if (terminal != null && accepts(terminal)) terminal else null
        }
        node.literals[segments[depth]]?.let { child -> walk(child, depth + 1, segments, accepts)?.let { return it } }
        node.parameter?.let { child -> walk(child, depth + 1, segments, accepts)?.let { return it } }
        val rest = node.rest
        if (rest != null && accepts(rest)) return rest
        return null
    }
}
