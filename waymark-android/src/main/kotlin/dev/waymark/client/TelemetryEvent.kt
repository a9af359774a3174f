package dev.waymark.client

import dev.waymark.engine.AppBuild
import dev.waymark.engine.JsonValue
import dev.waymark.engine.LinkShape
import dev.waymark.engine.NotFoundReason
import dev.waymark.engine.Resolution
import dev.waymark.engine.Timestamp

/**
 * One kind of resolution in one minute, as `POST /v1/telemetry` counts it (`docs/api.md`):
 * the build and revision it was resolved with, the door, the outcome and its names. Never
 * the link.
 */
data class TelemetryEvent(
    val platform: String,
    val appVersion: String,
    val revision: Long,
    /** The start of the minute, seconds since 1970. */
    val minute: Long,
    val entry: Door,
    /** `proceed`, `gated` or `notFound`. */
    val outcome: String,
    val reason: String? = null,
    val route: String? = null,
    val destination: String? = null,
    val precondition: String? = null,
    /** A `notFound(unknownRoute)` link's shape (`docs/link-shapes.md`), when the app opts in; never the link. */
    val shape: String? = null
) {
    /** The client a batch is posted under: events of different builds or revisions go in different batches. */
    val client: Triple<String, String, Long> get() = Triple(platform, appVersion, revision)

    /** The event as the server takes it, with its count (1…1,000). */
    fun json(count: Int): JsonValue {
        val members = linkedMapOf<String, JsonValue>(
            "ts" to JsonValue.Text(Timestamp.format(minute * 1_000_000)), "entry" to JsonValue.Text(entry.json),
            "outcome" to JsonValue.Text(outcome), "count" to JsonValue.JsonInt(count.toLong())
        )
        reason?.let { members["reason"] = JsonValue.Text(it) }
        route?.let { members["route"] = JsonValue.Text(it) }
        destination?.let { members["destination"] = JsonValue.Text(it) }
        precondition?.let { members["precondition"] = JsonValue.Text(it) }
        shape?.let { members["shape"] = JsonValue.Text(it) }
        return JsonValue.Object(members)
    }

    /** The journal's line: the event, its client and a count. */
    fun journalJson(count: Long): JsonValue {
        val members = LinkedHashMap(json(1).obj!!)
        members["count"] = JsonValue.JsonInt(count)
        members["platform"] = JsonValue.Text(platform)
        members["appVersion"] = JsonValue.Text(appVersion)
        members["revision"] = JsonValue.JsonInt(revision)
        members["minute"] = JsonValue.JsonInt(minute)
        return JsonValue.Object(members)
    }

    companion object {
        /** The event a dispatch result counts as; null for one that never reached the engine (dropped, superseded). */
        fun of(result: DispatchResult, build: AppBuild, shapes: Boolean = false): TelemetryEvent? {
            val resolution = result.resolution ?: return null
            val minute = Math.floorDiv(result.timeMillis, 60_000L) * 60
            val base = TelemetryEvent(build.platform, build.version, result.revision, minute, result.intent.door, resolution.outcome)
            return when (resolution) {
                is Resolution.Proceed -> base.copy(route = resolution.routeId, destination = resolution.destination)
                is Resolution.Gated -> base.copy(route = resolution.routeId, destination = resolution.destination, precondition = resolution.precondition)
                is Resolution.NotFound -> base.copy(reason = resolution.reason.json, route = resolution.routeId,
                    shape = if (shapes && resolution.reason == NotFoundReason.UNKNOWN_ROUTE) shapeOf(result) else null)
            }
        }

        /** The dispatcher's shape; for a result made elsewhere, the link's shape with no words kept. */
        private fun shapeOf(result: DispatchResult): String? {
            val link = (result.intent as? Intent.Link)?.link ?: return null
            return (result.unknownLinkShape ?: LinkShape.of(link, emptySet()).toString()).takeIf { it.toByteArray(Charsets.UTF_8).size in 1..512 }
        }

        /** Back from a journal line; null for a line that is not one. */
        fun fromJournal(json: JsonValue): Pair<TelemetryEvent, Long>? {
            val entry = Door.values().firstOrNull { it.json == json["entry"]?.string } ?: return null
            val count = json["count"]?.long ?: return null
            if (count <= 0) return null
            val event = TelemetryEvent(
                json["platform"]?.string ?: return null, json["appVersion"]?.string ?: return null, json["revision"]?.long ?: return null,
                json["minute"]?.long ?: return null, entry, json["outcome"]?.string ?: return null, json["reason"]?.string,
                json["route"]?.string, json["destination"]?.string, json["precondition"]?.string, json["shape"]?.string
            )
            return Pair(event, count)
        }
    }
}
