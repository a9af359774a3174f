package dev.waymark.client

import org.junit.jupiter.api.Assertions.assertEquals
import org.junit.jupiter.api.Assertions.assertNotEquals
import org.junit.jupiter.api.Assertions.assertTrue
import org.junit.jupiter.api.DynamicTest
import org.junit.jupiter.api.Test
import org.junit.jupiter.api.TestFactory
import dev.waymark.engine.AppBuild
import dev.waymark.engine.DestinationRequest
import dev.waymark.engine.JsonReader
import dev.waymark.engine.JsonValue
import dev.waymark.engine.NotFoundReason
import dev.waymark.engine.Resolution
import java.io.File
import java.io.IOException
import java.nio.file.Files
import java.security.MessageDigest
import java.util.ArrayDeque
import java.util.UUID

/** The reporter against a scripted server: the envelope, the bounds, retries with the same batch, the journal. */
class TelemetryReporterTest {
    companion object {
        val build = AppBuild("storefront", "android", "5.3.0")
        val install: UUID = UUID.fromString("3B6C0F5E-9A1D-47C2-8E0B-5F6A7D9C1E24")
        const val NOW = 1_795_000_000_000L  // 2026-11-18T11:06:40Z
        fun event(route: String = "product", minute: Long = NOW / 60_000 * 60, outcome: String = "proceed") =
            TelemetryEvent("android", "5.3.0", 7, minute, Door.UNIVERSAL_LINK, outcome, route = route, destination = route)
    }

    class Scripted(vararg answers: () -> TransportResponse) : Transport {
        private val answers = ArrayDeque(answers.toList())
        val bodies = ArrayList<String>()
        override fun send(request: TransportRequest): TransportResponse {
            bodies.add(String(request.body!!, Charsets.UTF_8))
            return answers.removeFirst()()
        }
        fun json(index: Int) = JsonReader().parse(bodies[index])
    }

    private fun directory(): File = Files.createTempDirectory("waymark-telemetry").toFile()
    private fun reporter(dir: File, transport: Transport, maximumPending: Int = 5_000) = TelemetryReporter(
        TelemetryConfiguration("https://links.example", build, "t", dir, maximumPending = maximumPending, cohort = 42, installId = install),
        transport, random = { 0.5 }, clock = { NOW })
    private fun accepted() = TransportResponse(202, emptyMap(), "{\"accepted\":1,\"rejected\":[]}".toByteArray())

    @Test
    fun theEnvelope() {
        val transport = Scripted({ accepted() })
        val reporter = reporter(directory(), transport)
        val result = DispatchResult(1, Intent.Link("https://storefront.example/p/p1", Door.UNIVERSAL_LINK), DispatchOutcome.NotFound(
            Resolution.NotFound(NotFoundReason.VALIDATION_FAILED, "product")), Resolution.NotFound(NotFoundReason.VALIDATION_FAILED, "product"), 7, NOW)
        reporter.dispatched(result)
        reporter.dispatched(result)
        reporter.dispatched(DispatchResult(2, Intent.Request(DestinationRequest("home")), DispatchOutcome.Superseded, null, 0, NOW))
        assertEquals(TelemetryPostOutcome.Delivered::class, reporter.flush()::class)
        val body = transport.json(0)
        assertTrue(Regex("[0-9a-f]{32}").matches(body["batch"]!!.string!!), body["batch"].toString())
        val expectedSource = MessageDigest.getInstance("SHA-256").digest("waymark-source/1|3B6C0F5E-9A1D-47C2-8E0B-5F6A7D9C1E24|2026-11-18".toByteArray())
            .copyOf(16).joinToString("") { "%02x".format(it.toInt() and 0xFF) }
        assertEquals(JsonReader().parse("""{"platform":"android","appVersion":"5.3.0","revision":7,"cohort":42,"source":"$expectedSource"}"""), body["client"])
        assertEquals(JsonReader().parse("""[{"ts":"2026-11-18T11:06:00Z","entry":"universalLink","outcome":"notFound","reason":"validationFailed","route":"product","count":2}]"""),
            body["events"])
        assertEquals(0L, reporter.pendingResolutions)
    }

    /**
     * Unknown links' shapes, opt-in: the dispatcher's shape (made with its table's words) is
     * sent; a result made elsewhere sends the link's shape with no word kept; off, no shape.
     */
    @Test
    fun unknownLinkShapesAreSentOnlyWhenOptedIn() {
        val link = Intent.Link("https://storefront.example/u/janedoe/orders?email=jane%40example.com", Door.UNIVERSAL_LINK)
        val unknown = Resolution.NotFound(NotFoundReason.UNKNOWN_ROUTE)
        fun events(optIn: Boolean, shape: String?): JsonValue {
            val transport = Scripted({ accepted() })
            val reporter = TelemetryReporter(TelemetryConfiguration("https://links.example", build, "t", directory(), reportsUnknownLinkShapes = optIn),
                transport, random = { 0.5 }, clock = { NOW })
            reporter.dispatched(DispatchResult(1, link, DispatchOutcome.NotFound(unknown), unknown, 7, NOW, shape))
            reporter.flush()
            return transport.json(0)["events"]!!
        }
        assertEquals("/u/:param/orders", events(true, "/u/:param/orders").list!![0]["shape"]?.string)
        assertEquals("/:param/:param/:param", events(true, null).list!![0]["shape"]?.string)
        assertEquals(null, events(false, "/u/:param/orders").list!![0]["shape"])
    }

    /** The dispatcher shapes an unknown link with the words of its table: nothing else of the link. */
    @Test
    fun theDispatcherShapesUnknownLinksWithItsTablesWords() {
        val app = DispatcherTest.App()
        val dispatcher = app.dispatcher()
        dispatcher.ready()
        val result = dispatcher.dispatch(Intent.Link("https://storefront.example/orders/42/janedoe/reviews?utm_source=mail&token=s3cr3t", Door.UNIVERSAL_LINK))
            .get(30, java.util.concurrent.TimeUnit.SECONDS)
        assertEquals("notFound(unknownRoute)", result.outcome.name)
        assertEquals("/orders/:param/:param/:param?utm_source", result.unknownLinkShape)
        val found = dispatcher.dispatch(Intent.Link(DispatcherTest.PRODUCT, Door.UNIVERSAL_LINK)).get(30, java.util.concurrent.TimeUnit.SECONDS)
        assertEquals(null, found.unknownLinkShape)
    }

    /** (label, counts recorded for distinct events, expected event counts of the first batch). */
    private val bounds = listOf(
        Triple("a count of 2,500 is split into events of at most 1,000", listOf(2_500L), listOf(1_000L, 1_000L, 500L)),
        Triple("naive: a batch claims at most 10,000; the rest waits", listOf(12_000L), List(10) { 1_000L }),
        Triple("exactly 10,000 over two events", listOf(6_000L, 4_000L), List(10) { 1_000L }),
        Triple("the batch cap splits the event that crosses it", listOf(9_500L, 800L), List(9) { 1_000L } + listOf(500L, 500L)),
        Triple("small counts stay one event each", listOf(1L, 999L, 1_000L), listOf(1L, 999L, 1_000L))
    )

    @TestFactory
    fun countsAreBounded() = bounds.map { (label, counts, expected) ->
        DynamicTest.dynamicTest(label) {
            val transport = Scripted({ accepted() }, { accepted() })
            val reporter = reporter(directory(), transport)
            counts.forEachIndexed { index, count -> reporter.record(event("r$index"), count) }
            reporter.flush()
            val events = transport.json(0)["events"]!!.list!!.map { it["count"]!!.long!! }
            assertEquals(expected, events, label)
            assertEquals(counts.sum() - expected.sum(), reporter.pendingResolutions)
        }
    }

    @Test
    fun aRetrySendsTheSameBatchWithTheSameIdEvenAfterARestart() {
        val dir = directory()
        val transport = Scripted({ TransportResponse(503, mapOf("Retry-After" to "30")) }, { throw IOException("offline") })
        val reporter = reporter(dir, transport)
        reporter.record(event("a"), 3)
        assertEquals(TelemetryPostOutcome.RetryLater(503, 30.0), reporter.flush())
        reporter.record(event("b"), 1)  // recorded after the batch was formed: not in it
        assertEquals(TelemetryPostOutcome.RetryLater(null, null), reporter.flush())
        assertEquals(transport.bodies[0], transport.bodies[1])
        // The app is killed: a new reporter reads the journal, sends the same batch, then the rest.
        val again = Scripted({ accepted() }, { accepted() })
        val restarted = reporter(dir, again)
        assertEquals(4L, restarted.pendingResolutions)
        restarted.flushAll()
        assertEquals(transport.bodies[0], again.bodies[0])
        assertNotEquals(again.json(0)["batch"], again.json(1)["batch"])
        assertEquals("b", again.json(1)["events"]!!.list!![0]["route"]!!.string)
        assertEquals(0L, restarted.pendingResolutions)
    }

    @Test
    fun aRefusedBatchIsDroppedNotRetried() {
        val transport = Scripted({ TransportResponse(400, emptyMap(), "{\"message\":\"batchTooLarge\"}".toByteArray()) })
        val reporter = reporter(directory(), transport)
        reporter.record(event(), 2)
        val outcome = reporter.flush() as TelemetryPostOutcome.Refused
        assertEquals(Pair(2L, "batchTooLarge"), Pair(outcome.resolutions, outcome.message))
        assertEquals(TelemetryPostOutcome.Idle, reporter.flush())
    }

    @Test
    fun theStorageBoundDropsTheOldestAndSaysSo() {
        val transport = Scripted({ accepted() })
        val reporter = reporter(directory(), transport, maximumPending = 10)
        (0 until 11).forEach { reporter.record(event("r$it"), 5) }
        assertEquals(10L, reporter.dropped)  // down to 9 distinct events: the two oldest go
        reporter.flush()
        assertEquals(10L, transport.json(0)["client"]!!["dropped"]!!.long)
        assertEquals(0L, reporter.dropped)
    }

    @Test
    fun aTornJournalTailIsSkipped() {
        val dir = directory()
        reporter(dir, Scripted()).record(event("a"), 2)
        File(dir, "telemetry-android.jsonl").appendText("{\"platform\":\"andr")
        assertEquals(2L, reporter(dir, Scripted()).pendingResolutions)
    }

    @Test
    fun theSourceKeyChangesEveryDay() {
        val monday = TelemetryReporter.sourceKey(install, "2026-11-23")
        assertEquals(32, monday.length)
        assertNotEquals(monday, TelemetryReporter.sourceKey(install, "2026-11-24"))
        assertNotEquals(monday, TelemetryReporter.sourceKey(UUID.randomUUID(), "2026-11-23"))
        // However the id was written (Swift writes uppercase), the key is of the UUID.
        assertEquals(monday, TelemetryReporter.sourceKey(UUID.fromString(install.toString().map { if (it in 'a'..'z') it - 32 else it }.joinToString("")), "2026-11-23"))
    }
}
