package dev.waymark.client

import dev.waymark.engine.Manifest
import dev.waymark.engine.NotFoundReason
import dev.waymark.engine.ParamValue
import dev.waymark.engine.Resolution
import dev.waymark.engine.ResolutionContext
import dev.waymark.engine.ResolutionRequest
import dev.waymark.engine.Schema

/** The route table an app resolves with, and where it came from. */
class RouteTable(
    /** null for the empty table. */
    val manifest: Manifest?,
    val origin: Origin
) {
    enum class Origin {
        /** Fetched from the server in this run. */
        SERVER,
        /** The last good manifest, read from the app's no-backup files directory at launch. */
        CACHE,
        /** The manifest the app ships in its assets. */
        BUNDLED,
        /** No manifest at all: nothing resolves, nothing crashes. */
        EMPTY
    }

    /** The revision the table is from; 0 for the empty table. */
    val revision: Long get() = manifest?.revision ?: 0

    fun resolve(request: ResolutionRequest, context: ResolutionContext): Resolution =
        manifest?.resolver?.resolve(request, context)
            ?: Resolution.NotFound(NotFoundReason.UNKNOWN_ROUTE, detail = "There is no route table yet.")

    /** Where a `proceed` of this table goes, screen by screen. */
    fun target(proceed: Resolution.Proceed): NavigationTarget {
        val schema = manifest?.resolver?.schema
            ?: return NavigationTarget(proceed.tab, listOf(Screen(proceed.destination, proceed.params)))
        return NavigationTarget.fromSteps(proceed.tab, steps(schema, proceed))
    }

    companion object {
        val EMPTY = RouteTable(null, Origin.EMPTY)

        /**
         * The screens of `proceed.path`, root first (`docs/resolution.md`, "Ancestors' params"):
         * the leaf gets the resolution's params; an ancestor gets, of those, the ones it
         * declares by the same name whose value fits its own type; nothing else.
         */
        fun steps(schema: Schema, proceed: Resolution.Proceed): List<PathStep> = proceed.path.mapIndexed { position, name ->
            val spec = schema.destinations[name]
            val params: Map<String, ParamValue> = when {
                position == proceed.path.size - 1 -> proceed.params
                spec == null -> emptyMap()
                else -> spec.params.mapNotNull { (key, declared) ->
                    val value = proceed.params[key] ?: return@mapNotNull null
                    if (declared.valueFrom(value).value != null) key to value else null
                }.toMap()
            }
            PathStep(name, params, spec?.presentation ?: dev.waymark.engine.Presentation.PUSH)
        }
    }
}

/** Whatever holds the table in use (`ManifestClient`, or a fixed table in tests). */
interface RouteTableSource {
    fun currentTable(): RouteTable
    /**
     * The table once the first refresh of this run has ended, waiting at most [withinMillis]
     * (`RouteDispatcher.ready(waitingForManifestMillis)`). Blocks; a fixed table: at once.
     */
    fun tableAfterFirstRefresh(withinMillis: Long): RouteTable = currentTable()
    /**
     * A table newer than [revision], if one is in use or a refresh in flight brings one
     * within [withinMillis]; null otherwise. Blocks; a fixed table: null.
     */
    fun newerTable(revision: Long, withinMillis: Long): RouteTable? = null
}
