package dev.waymark.client

import org.junit.jupiter.api.Assertions.assertEquals
import org.junit.jupiter.api.Assertions.assertNull
import org.junit.jupiter.api.Assertions.assertTrue
import org.junit.jupiter.api.DynamicTest
import org.junit.jupiter.api.Test
import org.junit.jupiter.api.TestFactory
import dev.waymark.engine.AppBuild
import dev.waymark.engine.ManifestError
import dev.waymark.engine.ManifestTest
import java.io.File
import java.io.IOException
import java.nio.file.Files
import java.util.ArrayDeque
import java.util.Collections
import java.util.UUID
import java.util.concurrent.CountDownLatch
import java.util.concurrent.TimeUnit

/** The manifest client against a scripted server: launch order, ETag, integrity, never backwards, backoff, cohort. */
class ManifestClientTest {
    companion object {
        val build = AppBuild("storefront", "ios", "5.3.0")
        fun body(revision: Long) = ManifestTest.manifest(revision = revision).canonical().toByteArray()
        fun ok(revision: Long, etag: String = "\"r$revision\"") = TransportResponse(200, mapOf("ETag" to etag), body(revision))
    }

    /** Answers from a script, in order, and records what it was asked. */
    class Scripted(vararg answers: () -> TransportResponse) : Transport {
        private val answers = ArrayDeque(answers.toList())
        val requests: MutableList<TransportRequest> = Collections.synchronizedList(ArrayList())
        override fun send(request: TransportRequest): TransportResponse {
            requests.add(request)
            val next = synchronized(answers) { answers.removeFirst() }
            return next()
        }
    }

    private fun directory(): File = Files.createTempDirectory("waymark-client").toFile().also { it.deleteOnExit() }

    private fun client(dir: File, transport: Transport, bundled: ByteArray? = null, fixedCohort: Int? = null) = ManifestClient(
        ManifestClientConfiguration(server = "https://links.example/", build = build, token = "t", cacheDirectory = dir,
            bundledManifest = bundled?.let { bytes -> { bytes } }, fixedCohort = fixedCohort), transport, random = { 0.5 })

    /** (label, cache revision or a broken cache, bundled revision, expected origin and revision). */
    private val launches = listOf(
        listOf("nothing at all: the empty table", null, null, RouteTable.Origin.EMPTY, 0L),
        listOf("the bundled manifest", null, 3L, RouteTable.Origin.BUNDLED, 3L),
        listOf("a good cache newer than the bundle", 5L, 3L, RouteTable.Origin.CACHE, 5L),
        listOf("naive: an app update ships a newer bundle than the cache", 2L, 3L, RouteTable.Origin.BUNDLED, 3L),
        listOf("a cache that does not decode: the bundle", "garbage", 3L, RouteTable.Origin.BUNDLED, 3L),
        listOf("a cache of another build: the empty table", "other", null, RouteTable.Origin.EMPTY, 0L)
    )

    @TestFactory
    fun atLaunch() = launches.map { row ->
        DynamicTest.dynamicTest(row[0] as String) {
            val dir = directory()
            val probe = client(dir, Scripted())
            when (val cache = row[1]) {
                is Long -> Files.write(probe.cacheFile.toPath(), CacheEntry("\"e\"", body(cache)).bytes())
                "garbage" -> Files.write(probe.cacheFile.toPath(), "waymark-client-cache/1\n\"e\"\n{\"format\":".toByteArray())
                "other" -> Files.write(probe.cacheFile.toPath(), CacheEntry(null, ManifestTest.with(ManifestTest.manifest(), "app", dev.waymark.engine.JsonValue.Text("x")).canonical().toByteArray()).bytes())
            }
            val table = client(dir, Scripted(), (row[2] as Long?)?.let { body(it) }).currentTable()
            assertEquals(row[3], table.origin)
            assertEquals(row[4], table.revision)
        }
    }

    @Test
    fun aNewManifestIsUsedCachedAndAskedForConditionally() {
        val dir = directory()
        val transport = Scripted({ ok(2) }, { TransportResponse(304) })
        val client = client(dir, transport, fixedCohort = 7)
        assertEquals(RefreshOutcome.Updated(2), client.refresh())
        assertEquals(RouteTable.Origin.SERVER, client.currentTable().origin)
        assertEquals(RefreshOutcome.NotModified, client.refresh())
        assertEquals("https://links.example/v1/manifest?platform=ios&version=5.3.0&cohort=7", transport.requests[0].url)
        assertEquals("Bearer t", transport.requests[0].headers["Authorization"])
        assertNull(transport.requests[0].headers["If-None-Match"], "no ETag without a table")
        assertEquals("\"r2\"", transport.requests[1].headers["If-None-Match"])
        // A restart reads the cache, and asks with its ETag.
        val again = Scripted({ TransportResponse(304) })
        val restarted = client(dir, again)
        assertEquals(RouteTable.Origin.CACHE, restarted.currentTable().origin)
        assertEquals(2L, restarted.currentTable().revision)
        restarted.refresh()
        assertEquals("\"r2\"", again.requests[0].headers["If-None-Match"])
    }

    /** (label, the server's answer, expected outcome's kind) — the table in use (revision 4) stays. */
    private val kept = listOf<Triple<String, () -> TransportResponse, String>>(
        Triple("a tampered body", { TransportResponse(200, emptyMap(), String(body(5)).replace("\"/p/:id\"", "\"/q/:id\"").toByteArray()) }, "Rejected(INTEGRITY)"),
        Triple("a truncated body", { TransportResponse(200, emptyMap(), body(5).copyOf(1000)) }, "Rejected(NOT_JSON)"),
        Triple("another build's manifest", { TransportResponse(200, emptyMap(), ManifestTest.with(ManifestTest.manifest(revision = 5), "version", dev.waymark.engine.JsonValue.Text("5.2.0")).canonical().toByteArray()) }, "Rejected(WRONG_BUILD)"),
        Triple("naive: an older revision from a stale replica", { ok(3) }, "OlderIgnored"),
        Triple("a wrong token", { TransportResponse(401) }, "Unauthorized"),
        Triple("the server is busy", { TransportResponse(503, mapOf("Retry-After" to "120")) }, "Failed"),
        Triple("no network", { throw IOException("unreachable") }, "Unreachable")
    )

    @TestFactory
    fun aBadAnswerKeepsTheTableInUse() = kept.map { (label, answer, expected) ->
        DynamicTest.dynamicTest(label) {
            val client = client(directory(), Scripted({ ok(4) }, answer))
            client.refresh()
            val outcome = client.refresh()
            val name = outcome.javaClass.simpleName + ((outcome as? RefreshOutcome.Rejected)?.let { "(${it.error.kind})" } ?: "")
            assertEquals(expected, name, label)
            assertEquals(4L, client.currentTable().revision)
            assertEquals(outcome.isFailure, client.consecutiveFailures == 1)
        }
    }

    @Test
    fun waitsGrowAfterFailuresAndRespectTheServer() {
        val client = client(directory(), Scripted({ throw IOException("x") }, { throw IOException("x") }, { TransportResponse(503, mapOf("Retry-After" to "600")) },
            { TransportResponse(401) }, { ok(1) }))
        client.refresh(); assertEquals(3.75, client.nextDelay())       // 5 s step, upper half at 0.5
        client.refresh(); assertEquals(7.5, client.nextDelay())        // doubled
        client.refresh(); assertEquals(600.0, client.nextDelay())      // Retry-After is a floor
        client.refresh(); assertEquals(900.0, client.nextDelay())      // a wrong token waits the interval
        client.refresh(); assertEquals(900.0, client.nextDelay())      // success: the interval
        assertEquals(0, client.consecutiveFailures)
    }

    /** A proxy or a captive portal may send any Retry-After: the wait is the backoff's maximum, never years. */
    @TestFactory
    fun aHostileRetryAfterWaitsTheMaximum() = listOf("1000000000000", "99999999999999999999999", "Fri, 31 Dec 9999 23:59:59 GMT").map { value ->
        DynamicTest.dynamicTest(value) {
            val client = client(directory(), Scripted({ TransportResponse(503, mapOf("Retry-After" to value)) }, { ok(1) }))
            client.refresh()
            assertEquals(client.configuration.backoff.maximum, client.nextDelay())
            client.refresh()
            assertEquals(client.configuration.backoff.interval, client.nextDelay())
        }
    }

    @TestFactory
    fun retryAfterIsReadAsSecondsOrAnImfFixdate() = listOf(
        "120" to 120.0, "Wed, 21 Oct 2015 07:30:00 GMT" to 120.0, "Wed, 21 Oct 2015 07:27:00 GMT" to 0.0,
        "soon" to null, "-5" to null, "+5" to null, "" to null, "Wed, 32 Oct 2015 07:30:00 GMT" to null, "Wed, 21 Foo 2015 07:30:00 GMT" to null,
        "Wed, 21 Oct 2015 07:30:00 UTC" to null, "Wednesday, 21-Oct-15 07:30:00 GMT" to null
    ).map { (value, seconds) ->
        DynamicTest.dynamicTest("'$value'") {
            // Wed, 21 Oct 2015 07:28:00 GMT
            assertEquals(seconds, TransportResponse(503, mapOf("Retry-After" to value)).retryAfterSeconds(1_445_412_480_000L))
        }
    }

    @Test
    fun twoOverlappingRefreshesNeverGoBackwards() {
        val slowStarted = CountDownLatch(1)
        val release = CountDownLatch(1)
        val transport = Scripted({ slowStarted.countDown(); release.await(30, TimeUnit.SECONDS); ok(3) }, { ok(2) })
        val client = client(directory(), transport)
        val slow = Thread { client.refresh() }.also { it.start() }
        slowStarted.await(30, TimeUnit.SECONDS)
        var fast: RefreshOutcome? = null
        val second = Thread { fast = client.refresh() }.also { it.start() }
        release.countDown()
        slow.join(); second.join()
        assertEquals(RefreshOutcome.OlderIgnored(2, 3), fast)
        assertEquals(3L, client.currentTable().revision)
    }

    /** The cohort rule, shared with the Swift `Cohort`: the id's first 32 bits, unsigned, modulo 100. */
    private val cohorts = listOf(
        Pair("00000000-0000-4000-8000-000000000000", 0), Pair("00000063-0000-4000-8000-000000000000", 99),
        Pair("00000064-0000-4000-8000-000000000000", 0), Pair("FFFFFFFF-FFFF-4FFF-BFFF-FFFFFFFFFFFF", 95),
        Pair("80000000-0000-4000-8000-000000000000", 48), Pair("12345678-9ABC-4DEF-8123-456789ABCDEF", 96)
    )

    @TestFactory
    fun cohortFromTheInstallId() = cohorts.map { (id, expected) ->
        DynamicTest.dynamicTest(id) {
            assertEquals(expected, Cohort.of(UUID.fromString(id)))
        }
    }

    @Test
    fun theInstallKeepsItsCohort() {
        val dir = directory()
        val first = client(dir, Scripted({ TransportResponse(304) })).cohort()
        val second = client(dir, Scripted()).cohort()
        assertEquals(first, second)
        val id = UUID.fromString(String(Files.readAllBytes(File(dir, "install-id").toPath())).trim())
        assertEquals(Cohort.of(id), first)
        assertTrue(first!! in 0..99)
    }
}
