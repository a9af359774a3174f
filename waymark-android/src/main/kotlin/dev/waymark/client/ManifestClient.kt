package dev.waymark.client

import dev.waymark.engine.AppBuild
import dev.waymark.engine.Manifest
import dev.waymark.engine.ManifestError
import java.io.File
import java.io.IOException
import java.net.URLEncoder
import java.util.concurrent.CompletableFuture
import java.util.concurrent.TimeUnit
import java.util.concurrent.TimeoutException

/** The manifest client's settings; every bound has a default. */
data class ManifestClientConfiguration(
    /** The Waymark server, e.g. `https://links.storefront.example`. */
    val server: String,
    /** This app build: the manifest must be for exactly it. */
    val build: AppBuild,
    /** A `manifest:read` token, unless the server's reads are public. */
    val token: String? = null,
    /** Where the last good manifest and the install id are kept: the app's no-backup files directory (`Context.getNoBackupFilesDir()`). */
    val cacheDirectory: File,
    /** The manifest the app ships (its bytes, from the APK's assets), used when no good cached one is newer. */
    val bundledManifest: (() -> ByteArray?)? = null,
    /** Seconds: every 15 minutes; after failures 5 s doubling to 1 h. */
    val backoff: Backoff = Backoff(15 * 60.0, 5.0, 60 * 60.0),
    /** A manifest body larger than this is refused unread, by its `Content-Length` or as it arrives (32 MiB). */
    val maximumManifestBytes: Int = 32 shl 20,
    /** The whole refresh's deadline, reading the last byte included. */
    val requestTimeoutMillis: Int = 30_000,
    /** The cohort sent with every fetch: this install's (null in [fixedCohort] and [sendCohort] true), none, or a fixed one. */
    val sendCohort: Boolean = true,
    val fixedCohort: Int? = null
)

/** How one refresh ended; only [Updated] changes the table. */
sealed class RefreshOutcome(val isFailure: Boolean) {
    /** 200 with a good manifest of a newer revision (or another at the same revision): in use, and cached. */
    data class Updated(val revision: Long) : RefreshOutcome(false)
    /** 304, or 200 with the manifest already in use. */
    object NotModified : RefreshOutcome(false) { override fun toString() = "NotModified" }
    /** 200 with an older revision than the one in use (a stale cache or replica): kept ours. */
    data class OlderIgnored(val served: Long, val inUse: Long) : RefreshOutcome(false)
    /** 200 whose body is not a good manifest for this build (truncated, tampered, another build, too big). */
    data class Rejected(val error: ManifestError) : RefreshOutcome(true)
    /** 401 or 403: the token is wrong; retried only after the long wait. */
    data class Unauthorized(val status: Int) : RefreshOutcome(true)
    /** Any other status, with the server's `Retry-After`. */
    data class Failed(val status: Int, val retryAfter: Double?) : RefreshOutcome(true)
    /** No answer: no network, a timeout, a refused connection. */
    data class Unreachable(val reason: String) : RefreshOutcome(true)
}

/**
 * Where the app's table comes from (`docs/client.md`, "The manifest client"): at launch the
 * last good manifest from its directory, else the bundled one (the newer of the two
 * when both are good), else the empty table; then `GET /v1/manifest` conditional on the
 * ETag. A manifest is decoded and checked before it replaces anything and cached
 * atomically; a bad one is reported and the last good table stays; revisions only move
 * forward. Thread-safe: one refresh at a time (a second caller waits, then asks afresh
 * with what the first left), and [currentTable] never waits for the network.
 */
class ManifestClient(
    val configuration: ManifestClientConfiguration,
    private val transport: Transport = HttpUrlTransport(),
    private val random: () -> Double = { Math.random() },
    private val report: (RefreshOutcome) -> Unit = {}
) : RouteTableSource {
    private val lock = Any()
    private val refreshLock = Any()
    @Volatile private var table: RouteTable? = null
    @Volatile private var etag: String? = null
    /** Failures since the last success: the backoff's exponent. */
    @Volatile var consecutiveFailures = 0
        private set
    @Volatile var lastOutcome: RefreshOutcome? = null
        private set
    @Volatile private var lastRetryAfter: Double? = null
    private var installCohort: Int? = null
    private var cohortKnown = false
    /** Refreshes ended in this run, and the one running now (completed as it ends). */
    @Volatile private var refreshesEnded = 0
    @Volatile private var inFlight: CompletableFuture<RefreshOutcome>? = null

    /** `manifest-<platform>-<version>.cache` in the cache directory. */
    val cacheFile: File get() = File(configuration.cacheDirectory, "manifest-${configuration.build.platform}-${configuration.build.version}.cache")

    /** The table in use, loaded at the first call (cache, bundled, empty). */
    override fun currentTable(): RouteTable {
        table?.let { return it }
        synchronized(lock) {
            table?.let { return it }
            return loadAtLaunch().also { table = it }
        }
    }

    private fun decodeOrNull(bytes: ByteArray?): Manifest? = bytes?.let {
        try { Manifest.decode(it, configuration.build) } catch (refused: ManifestError) { null }
    }

    private fun loadAtLaunch(): RouteTable {
        val entry = DurableFile.read(cacheFile)?.let { CacheEntry.parse(it) }
        val cached = decodeOrNull(entry?.manifest)
        // The app's function may throw anything (an asset that is not there): no bundled manifest then.
        val bundled = decodeOrNull(try { configuration.bundledManifest?.invoke() } catch (error: Exception) { null })
        if (cached != null && cached.revision >= (bundled?.revision ?: 0)) {
            etag = entry?.etag
            return RouteTable(cached, RouteTable.Origin.CACHE)
        }
        if (bundled != null) return RouteTable(bundled, RouteTable.Origin.BUNDLED)
        return RouteTable.EMPTY
    }

    /** Asks the server once. Never throws: every way it can end is an outcome. */
    fun refresh(): RefreshOutcome = synchronized(refreshLock) {
        val running = CompletableFuture<RefreshOutcome>()
        inFlight = running
        var outcome: RefreshOutcome = RefreshOutcome.Unreachable("refresh did not end")
        try {
            outcome = fetch()
        } catch (error: Exception) {
            outcome = RefreshOutcome.Unreachable(error.toString())
        } finally {
            refreshesEnded += 1
            inFlight = null
            running.complete(outcome)
        }
        outcome
    }

    /**
     * The first tap on a new campaign (`docs/client.md`, "The first tap"): the table in use
     * once the first refresh of this run has ended, waiting for it at most [withinMillis] (one
     * is started on a thread of its own, or the one in flight joined, if none has ended).
     * Past the bound, the table in use then; the refresh goes on.
     */
    override fun tableAfterFirstRefresh(withinMillis: Long): RouteTable {
        if (refreshesEnded == 0) {
            val running = inFlight ?: CompletableFuture<RefreshOutcome>().also { started ->
                Thread({
                    // Nothing may escape this thread: an uncaught throwable would end the app.
                    var outcome: RefreshOutcome = RefreshOutcome.Unreachable("the first refresh did not end")
                    try { outcome = refresh() } catch (ignored: Throwable) { } finally { started.complete(outcome) }
                }, "waymark-first-refresh").apply { isDaemon = true }.start()
            }
            waitFor(running, withinMillis)
        }
        return currentTable()
    }

    /** A table newer than [revision]: the one in use if it is, else the one a refresh in flight brings within [withinMillis]. */
    override fun newerTable(revision: Long, withinMillis: Long): RouteTable? {
        currentTable().let { if (it.revision > revision) return it }
        // A refresh that ended just now has left its table in use, and no longer shows in flight.
        val running = inFlight ?: return currentTable().takeIf { it.revision > revision }
        waitFor(running, withinMillis)
        return currentTable().takeIf { it.revision > revision }
    }

    private fun waitFor(future: CompletableFuture<RefreshOutcome>, millis: Long) {
        try {
            future.get(maxOf(0L, millis), TimeUnit.MILLISECONDS)
        } catch (late: TimeoutException) {
        }
    }

    private fun fetch(): RefreshOutcome {
        // Read under the refresh lock: an overlapping refresh that finished first is seen here.
        val inUse = currentTable()
        val query = StringBuilder("platform=").append(encode(configuration.build.platform)).append("&version=").append(encode(configuration.build.version))
        cohort()?.let { query.append("&cohort=").append(it) }
        val headers = LinkedHashMap<String, String>()
        headers["Accept"] = "application/json"
        val currentEtag = etag
        if (currentEtag != null && inUse.manifest != null) headers["If-None-Match"] = currentEtag
        configuration.token?.let { headers["Authorization"] = "Bearer $it" }
        val url = configuration.server.trimEnd('/') + "/v1/manifest?" + query
        val outcome = try {
            val response = transport.send(TransportRequest(url = url, headers = headers, timeoutMillis = configuration.requestTimeoutMillis,
                maximumBodyBytes = configuration.maximumManifestBytes))
            lastRetryAfter = response.retryAfterSeconds()
            accept(response, inUse)
        } catch (tooLarge: BodyTooLarge) {
            lastRetryAfter = null
            RefreshOutcome.Rejected(ManifestError(ManifestError.Kind.WRONG_FORMAT, "The manifest is over the ${tooLarge.limit} bytes allowed; it was not read."))
        } catch (error: Exception) {
            // IOException from the network; anything else a transport throws (no INTERNET
            // permission, a bad server address) ends the refresh the same way, never the app.
            lastRetryAfter = null
            RefreshOutcome.Unreachable(error.toString())
        }
        consecutiveFailures = if (outcome.isFailure) consecutiveFailures + 1 else 0
        lastOutcome = outcome
        try { report(outcome) } catch (ignored: Exception) { }
        return outcome
    }

    private fun accept(response: TransportResponse, inUse: RouteTable): RefreshOutcome {
        when (response.status) {
            304 -> return RefreshOutcome.NotModified
            200 -> Unit
            401, 403 -> return RefreshOutcome.Unauthorized(response.status)
            else -> return RefreshOutcome.Failed(response.status, response.retryAfterSeconds())
        }
        if (response.body.size > configuration.maximumManifestBytes) {
            return RefreshOutcome.Rejected(ManifestError(ManifestError.Kind.WRONG_FORMAT,
                "The manifest is ${response.body.size} bytes, over the ${configuration.maximumManifestBytes} allowed."))
        }
        val manifest = try {
            Manifest.decode(response.body, configuration.build)
        } catch (error: ManifestError) {
            return RefreshOutcome.Rejected(error)
        }
        if (manifest.revision < inUse.revision) return RefreshOutcome.OlderIgnored(manifest.revision, inUse.revision)
        val newEtag = response.headers["etag"]?.takeIf { tag -> tag.none { it == '\n' || it == '\r' } && tag.toByteArray().size <= 256 }
        if (manifest.revision == inUse.revision && manifest.routesSha256 == inUse.manifest?.routesSha256) {
            if (newEtag != null && newEtag != etag) {
                etag = newEtag
                writeCache(newEtag, response.body)
            }
            return RefreshOutcome.NotModified
        }
        table = RouteTable(manifest, RouteTable.Origin.SERVER)
        etag = newEtag
        // In use even if the cache cannot be written (a full disk): the next launch reads the older one.
        writeCache(newEtag, response.body)
        return RefreshOutcome.Updated(manifest.revision)
    }

    private fun writeCache(etag: String?, body: ByteArray) {
        try { DurableFile.write(CacheEntry(etag, body).bytes(), cacheFile) } catch (error: IOException) { }
    }

    /** The cohort to send: none, a fixed one (0…99), or the install's, worked out once. */
    fun cohort(): Int? {
        if (!configuration.sendCohort) return null
        configuration.fixedCohort?.let { return if (it in 0..99) it else null }
        synchronized(lock) {
            if (!cohortKnown) {
                installCohort = Cohort.installId(configuration.cacheDirectory)?.let { Cohort.of(it) }
                cohortKnown = true
            }
            return installCohort
        }
    }

    /** Seconds to wait before the next refresh, after the last outcome. */
    fun nextDelay(): Double = when (lastOutcome) {
        // A wrong token does not heal by asking again soon: at least the interval.
        is RefreshOutcome.Unauthorized -> maxOf(configuration.backoff.interval, configuration.backoff.delay(consecutiveFailures, null, random()))
        else -> configuration.backoff.delay(consecutiveFailures, lastRetryAfter, random())
    }

    private fun encode(text: String) = URLEncoder.encode(text, "UTF-8")
}

/** The cache file: `waymark-client-cache/1`, the ETag line, then the manifest's bytes as served (the Swift client's format). */
class CacheEntry(val etag: String?, val manifest: ByteArray) {
    fun bytes(): ByteArray = (MAGIC + "\n" + (etag ?: "") + "\n").toByteArray(Charsets.UTF_8) + manifest

    companion object {
        const val MAGIC = "waymark-client-cache/1"

        fun parse(bytes: ByteArray): CacheEntry? {
            val first = bytes.indexOf('\n'.toByte())
            if (first < 0 || String(bytes, 0, first, Charsets.UTF_8) != MAGIC) return null
            var second = first + 1
            while (second < bytes.size && bytes[second] != '\n'.toByte()) second++
            if (second >= bytes.size) return null
            val tag = String(bytes, first + 1, second - first - 1, Charsets.UTF_8)
            return CacheEntry(if (tag.length == 0) null else tag, bytes.copyOfRange(second + 1, bytes.size))
        }
    }
}
