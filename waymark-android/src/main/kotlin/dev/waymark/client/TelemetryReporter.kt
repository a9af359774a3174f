package dev.waymark.client

import dev.waymark.engine.AppBuild
import dev.waymark.engine.JsonReader
import dev.waymark.engine.JsonValue
import dev.waymark.engine.hexLowercase
import dev.waymark.engine.uppercaseAscii
import java.io.File
import java.io.FileOutputStream
import java.io.IOException
import java.security.MessageDigest
import java.security.SecureRandom
import java.util.UUID

/** The reporter's settings; every bound has a default. */
data class TelemetryConfiguration(
    val server: String,
    val build: AppBuild,
    /** A `telemetry:write` token. */
    val token: String?,
    /** Where pending events and the formed batch are kept until the server has them (the manifest client's directory). */
    val cacheDirectory: File,
    /** Distinct events per batch (the server takes 1,000 at most). */
    val batchSize: Int = 200,
    /** Seconds between posts, and the backoff after failures. */
    val backoff: Backoff = Backoff(60.0, 5.0, 30 * 60.0),
    /** Distinct pending events kept at most; past it the oldest are dropped and counted. */
    val maximumPending: Int = 5_000,
    /** The install's cohort, sent as `client.cohort` (the manifest client's); null sends none. */
    val cohort: Int? = null,
    /** The install id the cohort comes from; `client.source` is derived from it per day; null sends none. */
    val installId: UUID? = null,
    val requestTimeoutMillis: Int = 30_000,
    /**
     * Opt-in: a link that ended `notFound(unknownRoute)` is reported with its shape
     * (`docs/link-shapes.md`: ids, addresses, tokens and any word the route table does not
     * have become `:param`, query values dropped), for the server's unknown-links list. Off,
     * nothing of the link leaves the device.
     */
    val reportsUnknownLinkShapes: Boolean = false
)

/** How one post ended. */
sealed class TelemetryPostOutcome(val isFailure: Boolean) {
    object Idle : TelemetryPostOutcome(false) { override fun toString() = "Idle" }
    /** 202: the server has them (or had them: a duplicate batch id). */
    data class Delivered(val batch: String, val events: Int, val resolutions: Long, val rejected: Int) : TelemetryPostOutcome(false)
    /** 400: refused as invalid; dropped, never retried. */
    data class Refused(val batch: String, val resolutions: Long, val message: String) : TelemetryPostOutcome(false)
    /** Kept, and sent again — the same batch, the same id — after the backoff. */
    data class RetryLater(val status: Int?, val retryAfter: Double?) : TelemetryPostOutcome(true)
}

/**
 * Turns every dispatch result into the server's telemetry event, adds equal events up, keeps
 * them in a journal as they are recorded, and posts them in batches with the envelope of
 * `docs/api.md` "POST /v1/telemetry": a `batch` id made once when the batch is formed and
 * kept with it in the journal, so a retry (after a lost `202`, or a killed app) sends the same
 * id with exactly the same events and the server counts it once; `client.source`, the
 * install's key for the day; `client.cohort`. Counts are split so no event claims more than
 * 1,000 and no batch more than 10,000; `client.dropped` is at most 100,000.
 */
class TelemetryReporter(
    val configuration: TelemetryConfiguration,
    private val transport: Transport = HttpUrlTransport(),
    private val random: () -> Double = { Math.random() },
    private val clock: () -> Long = System::currentTimeMillis,
    private val report: (TelemetryPostOutcome) -> Unit = {}
) : DispatchObserver {
    private val lock = Any()
    private val pending = LinkedHashMap<TelemetryEvent, Long>()
    /** The formed batch, exactly as it is (re)sent, until the server answers 202 or 400. */
    private var formed: JsonValue.Object? = null
    /** Resolutions dropped (storage bound) and not yet reported in a batch. */
    var dropped = 0L
        private set
    private var loaded = false
    private var journalLines = 0
    var consecutiveFailures = 0
        private set
    private var lastRetryAfter: Double? = null

    /** `telemetry-<platform>.jsonl` in the cache directory. */
    val journalFile: File get() = File(configuration.cacheDirectory, "telemetry-${configuration.build.platform}.jsonl")

    /** Resolutions recorded and not yet delivered, the formed batch's included. */
    val pendingResolutions: Long
        get() = synchronized(lock) {
            loadIfNeeded()
            pending.values.sum() + (formed?.get("events")?.list.orEmpty().map { it["count"]?.long ?: 0 }.sum())
        }

    override fun dispatched(result: DispatchResult) {
        TelemetryEvent.of(result, configuration.build, configuration.reportsUnknownLinkShapes)?.let { record(it, 1) }
    }

    /** Adds [count] resolutions of [event], in the journal before it returns. */
    fun record(event: TelemetryEvent, count: Long) = synchronized(lock) {
        loadIfNeeded()
        pending[event] = (pending[event] ?: 0) + count
        append(event.journalJson(count))
        if (pending.size > configuration.maximumPending) {
            // The oldest go, down to nine tenths of the bound, counted in `dropped`.
            val excess = pending.size - configuration.maximumPending * 9 / 10
            val iterator = pending.entries.iterator()
            repeat(excess) { dropped += iterator.next().value; iterator.remove() }
            rewriteJournal()
        } else if (journalLines > 4 * configuration.maximumPending) rewriteJournal()
    }

    /** Posts one batch: the formed one again, or a new one of the oldest client's events. Never throws. */
    fun flush(): TelemetryPostOutcome {
        val body = synchronized(lock) {
            loadIfNeeded()
            formed ?: form()?.also { formed = it; rewriteJournal() }  // on disk before it is sent
        } ?: return finish(TelemetryPostOutcome.Idle)
        val batchId = body["batch"]!!.string!!
        val resolutions = body["events"]!!.list!!.map { it["count"]!!.long!! }.sum()
        val headers = linkedMapOf("Content-Type" to "application/json")
        configuration.token?.let { headers["Authorization"] = "Bearer $it" }
        val response = try {
            // The server's answer is a few hundred bytes: a longer one is not read, and the batch stays.
            transport.send(TransportRequest("POST", configuration.server.trimEnd('/') + "/v1/telemetry", headers,
                body.canonical().toByteArray(Charsets.UTF_8), configuration.requestTimeoutMillis, MAXIMUM_ANSWER_BYTES))
        } catch (error: Exception) {
            return finish(TelemetryPostOutcome.RetryLater(null, null))
        }
        val answer = try { JsonReader().parse(response.body) } catch (error: Exception) { JsonValue.Null }
        val outcome = when (response.status) {
            202 -> TelemetryPostOutcome.Delivered(batchId, body["events"]!!.list!!.size, resolutions, answer["rejected"]?.list?.size ?: 0)
            400 -> TelemetryPostOutcome.Refused(batchId, resolutions, answer["message"]?.string ?: "400")
            else -> return finish(TelemetryPostOutcome.RetryLater(response.status, response.retryAfterSeconds(clock())))
        }
        synchronized(lock) {
            if (formed === body) { formed = null; rewriteJournal() }
        }
        return finish(outcome)
    }

    /** Posts batches until nothing is pending or a post fails. */
    fun flushAll(): TelemetryPostOutcome {
        var outcome = flush()
        while (outcome is TelemetryPostOutcome.Delivered || outcome is TelemetryPostOutcome.Refused) outcome = flush()
        return outcome
    }

    /** Seconds to wait before the next post. */
    fun nextDelay(): Double = configuration.backoff.delay(consecutiveFailures, lastRetryAfter, random())

    private fun finish(outcome: TelemetryPostOutcome): TelemetryPostOutcome {
        consecutiveFailures = if (outcome.isFailure) consecutiveFailures + 1 else 0
        lastRetryAfter = (outcome as? TelemetryPostOutcome.RetryLater)?.retryAfter
        if (outcome !is TelemetryPostOutcome.Idle) report(outcome)
        return outcome
    }

    /** A new batch from the oldest client's pending events, taken off `pending`; null when nothing is pending. */
    private fun form(): JsonValue.Object? {
        val first = pending.keys.firstOrNull() ?: return null
        val events = ArrayList<JsonValue>()
        var total = 0L
        val iterator = pending.entries.iterator()
        while (iterator.hasNext() && events.size < configuration.batchSize && total < MAXIMUM_BATCH_COUNT) {
            val entry = iterator.next()
            if (entry.key.client != first.client) continue
            // An event claims at most 1,000 resolutions and a batch 10,000: larger counts are split, the rest waits.
            while (entry.value > 0 && events.size < configuration.batchSize && total < MAXIMUM_BATCH_COUNT) {
                val count = minOf(entry.value, MAXIMUM_EVENT_COUNT, MAXIMUM_BATCH_COUNT - total)
                events.add(entry.key.json(count.toInt()))
                entry.setValue(entry.value - count)
                total += count
            }
            if (entry.value == 0L) iterator.remove()
        }
        val client = linkedMapOf<String, JsonValue>("platform" to JsonValue.Text(first.platform),
            "appVersion" to JsonValue.Text(first.appVersion), "revision" to JsonValue.JsonInt(first.revision))
        configuration.cohort?.takeIf { it in 0..99 }?.let { client["cohort"] = JsonValue.JsonInt(it.toLong()) }
        configuration.installId?.let { client["source"] = JsonValue.Text(sourceKey(it, dev.waymark.engine.Timestamp.format(clock() * 1000).substring(0, 10))) }
        val reported = minOf(dropped, MAXIMUM_DROPPED)
        if (reported > 0) { client["dropped"] = JsonValue.JsonInt(reported); dropped -= reported }
        return JsonValue.obj("batch" to JsonValue.Text(newBatchId()), "client" to JsonValue.Object(client), "events" to JsonValue.Array(events))
    }

    private fun newBatchId(): String {
        val bytes = ByteArray(16).also { SecureRandom().nextBytes(it) }
        return hexLowercase(bytes)
    }

    // The journal: one JSON object per line — an event with its client and count, `{"dropped": n}`,
    // or `{"formed": batch}`; lines add up, the last `formed` (or `{"formed": null}`) holds, and a
    // line that does not parse (the tail of a killed write) is skipped.

    private fun loadIfNeeded() {
        if (loaded) return
        loaded = true
        DurableFile.read(journalFile)?.let { bytes ->
            for (line in String(bytes, Charsets.UTF_8).split('\n')) {
                if (line.isBlank()) continue
                val json = try { JsonReader().parse(line) } catch (torn: Exception) { continue }
                when {
                    json.obj?.containsKey("formed") == true -> formed = json["formed"] as? JsonValue.Object
                    json["dropped"]?.long != null -> dropped += json["dropped"]!!.long!!
                    else -> TelemetryEvent.fromJournal(json)?.let { (event, count) -> pending[event] = (pending[event] ?: 0) + count }
                }
            }
        }
        rewriteJournal()
    }

    private fun append(line: JsonValue) {
        try {
            FileOutputStream(journalFile, true).use { it.write((line.canonical() + "\n").toByteArray(Charsets.UTF_8)) }
            journalLines++
        } catch (error: IOException) {
            // A full disk: the event stays in memory and is posted with the rest; a rewrite retries the file.
        }
    }

    /** The whole pending state as a fresh journal, replacing the old one atomically. */
    private fun rewriteJournal() {
        val text = StringBuilder()
        formed?.let { text.append(JsonValue.obj("formed" to it).canonical()).append('\n') }
        if (dropped > 0) text.append(JsonValue.obj("dropped" to JsonValue.JsonInt(dropped)).canonical()).append('\n')
        for ((event, count) in pending) text.append(event.journalJson(count).canonical()).append('\n')
        try {
            DurableFile.write(text.toString().toByteArray(Charsets.UTF_8), journalFile)
            journalLines = pending.size
        } catch (error: IOException) {
        }
    }

    companion object {
        /** The longest answer to a post that is read (64 KiB). */
        const val MAXIMUM_ANSWER_BYTES = 64 shl 10

        const val MAXIMUM_EVENT_COUNT = 1_000L
        const val MAXIMUM_BATCH_COUNT = 10_000L
        const val MAXIMUM_DROPPED = 100_000L

        /**
         * The install's source key for [day] (`YYYY-MM-DD`, UTC): the first 16 bytes of
         * SHA-256 of `waymark-source/1|<install id>|<day>`, lowercase hex. The install id as
         * the client keeps it (the Swift client writes `UUID().uuidString`: uppercase).
         */
        fun sourceKey(installId: UUID, day: String): String {
            val text = "waymark-source/1|${uppercaseAscii(installId.toString())}|$day"
            val hash = MessageDigest.getInstance("SHA-256").digest(text.toByteArray(Charsets.UTF_8))
            return hexLowercase(hash.copyOf(16))
        }
    }
}
