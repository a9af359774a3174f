package dev.waymark.client

import dev.waymark.engine.AppBuild
import dev.waymark.engine.JsonReader
import org.junit.jupiter.api.AfterAll
import org.junit.jupiter.api.Assertions.assertEquals
import org.junit.jupiter.api.Assertions.assertTrue
import org.junit.jupiter.api.BeforeAll
import org.junit.jupiter.api.Test
import org.junit.jupiter.api.TestInstance
import java.io.BufferedReader
import java.io.File
import java.io.InputStreamReader
import java.nio.file.Files

/**
 * The manifest client and the reporter over [HttpUrlTransport] against
 * `Tests/Scripts/hostile-origin.py`: 400 MB with a length, an endless chunked body, a byte at a
 * time. Before, a 400 MB manifest threw OutOfMemoryError out of refresh() and a drip held it
 * past its timeout.
 */
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
class HostileServerTest {
    private lateinit var origin: Process
    private var port = 0
    private val build = AppBuild("storefront", "android", "5.3.0")

    @BeforeAll
    fun start() {
        val root = File(System.getProperty("waymark.root") ?: "..")
        origin = ProcessBuilder("python3", File(root, "Tests/Scripts/hostile-origin.py").path).redirectErrorStream(true).start()
        port = BufferedReader(InputStreamReader(origin.inputStream)).readLine().trim().toInt()
    }

    @AfterAll
    fun stop() {
        origin.destroy()
    }

    private fun base(kind: String) = "http://127.0.0.1:$port/$kind/"

    private fun sent(kind: String): Long =
        JsonReader().parse(HttpUrlTransport().send(TransportRequest(url = "http://127.0.0.1:$port/stats")).body)[kind]?.long ?: 0

    private fun client(kind: String, timeoutMillis: Int = 30_000) = ManifestClient(ManifestClientConfiguration(base(kind), build, "t",
        Files.createTempDirectory("waymark-hostile").toFile(), requestTimeoutMillis = timeoutMillis))

    @Test
    fun fourHundredMegabytesWithALengthAreRefusedUnread() {
        val outcome = client("big").refresh()
        assertTrue(outcome is RefreshOutcome.Rejected, "$outcome")
        assertTrue((outcome as RefreshOutcome.Rejected).error.message!!.contains("not read"), "${outcome.error}")
    }

    @Test
    fun anEndlessBodyIsAbandonedPastTheLimitAndTheTransferStops() {
        val outcome = client("chunked").refresh()
        assertTrue(outcome is RefreshOutcome.Rejected, "$outcome")
        // The transfer stops once the connection is closed (the server's socket buffer aside).
        val samples = arrayListOf(sent("chunked"))
        while (samples.size < 50 && (samples.size < 2 || samples[samples.size - 1] != samples[samples.size - 2])) {
            Thread.sleep(200)
            samples.add(sent("chunked"))
        }
        assertEquals(samples[samples.size - 2], samples[samples.size - 1], "still sending: $samples")
        assertTrue(samples.last() < 256L shl 20, "read far past the limit: $samples")
    }

    @Test
    fun aByteAtATimeEndsAtTheWholeRequestsDeadline() {
        for (kind in listOf("trickle", "drip")) {
            val started = System.nanoTime()
            val outcome = client(kind, timeoutMillis = 1_000).refresh()
            val seconds = (System.nanoTime() - started) / 1e9
            assertTrue(outcome is RefreshOutcome.Unreachable && outcome.reason.contains("longer than 1000 ms"), "$kind: $outcome")
            assertTrue(seconds < 8, "$kind: $seconds s, past the deadline")
        }
    }

    @Test
    fun theReporterKeepsItsBatchThroughEach() {
        for ((kind, timeout) in listOf("big" to 30_000, "chunked" to 30_000, "trickle" to 1_000)) {
            val directory = Files.createTempDirectory("waymark-hostile-telemetry").toFile()
            val reporter = TelemetryReporter(TelemetryConfiguration(base(kind), build, "w", directory, requestTimeoutMillis = timeout))
            reporter.record(TelemetryReporterTest.event("product", minute = System.currentTimeMillis() / 60_000 * 60), 1)
            val outcome = reporter.flush()
            assertTrue(outcome is TelemetryPostOutcome.RetryLater, "$kind: $outcome")
            assertEquals(1L, reporter.pendingResolutions, "$kind: kept")
        }
    }
}
