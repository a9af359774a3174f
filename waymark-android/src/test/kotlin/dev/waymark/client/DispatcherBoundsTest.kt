package dev.waymark.client

import dev.waymark.engine.Resolution
import org.junit.jupiter.api.Assertions.assertEquals
import org.junit.jupiter.api.Assertions.assertTrue
import org.junit.jupiter.api.Test
import java.util.Collections
import java.util.concurrent.CompletableFuture
import java.util.concurrent.CountDownLatch
import java.util.concurrent.TimeUnit

/**
 * What a review found could still hold the Android funnel past its bounds: a caller that
 * cancels its future, a ready() during ready(waitingForManifestMillis), a table source that
 * throws an Error there, a handler that blocks before returning its future, a close() that
 * throws. Each ends as the Swift dispatcher's would.
 */
class DispatcherBoundsTest {
    private val table = object : RouteTableSource { override fun currentTable() = DispatcherTest.table }
    private val order = DispatcherTest.link(DispatcherTest.ORDER)       // gated on auth
    private val product = DispatcherTest.link(DispatcherTest.PRODUCT)   // proceeds

    /** A login screen that never answers, and what it was told to close. */
    private class Silent(private val closeThrows: Boolean = false) : GateHandler {
        val shown = CountDownLatch(1)
        val closed: MutableList<PromptEnding> = Collections.synchronizedList(ArrayList())
        override fun satisfy(precondition: String, gate: Resolution.Gated): CompletableFuture<Boolean> {
            shown.countDown()
            return CompletableFuture()
        }
        override fun close(gate: Resolution.Gated, ending: PromptEnding) {
            closed.add(ending)
            if (closeThrows) throw IllegalStateException("the screen was gone")
        }
    }

    private fun outcome(future: CompletableFuture<DispatchResult>) = future.get(30, TimeUnit.SECONDS).outcome.name

    @Test
    fun aCallerCancellingItsFutureEndsTheIntentCancelled() {
        val app = DispatcherTest.App()
        val login = Silent()
        val observed = CompletableFuture<DispatchResult>()
        val observer = object : DispatchObserver { override fun dispatched(result: DispatchResult) { observed.complete(result) } }
        val dispatcher = RouteDispatcher(table, app.navigator, app.context, login, observer = observer,
            configuration = DispatcherConfiguration(gateTimeoutMillis = null))
        dispatcher.ready()
        val waiting = dispatcher.dispatch(order)
        assertTrue(login.shown.await(30, TimeUnit.SECONDS))
        waiting.cancel(true)  // the activity went: its coroutine cancelled the future
        assertEquals("cancelled", observed.get(30, TimeUnit.SECONDS).outcome.name, "the observer still hears how it ended")
        assertEquals(listOf(PromptEnding.CANCELLED), login.closed)
        assertEquals("navigated", outcome(dispatcher.dispatch(product)), "the funnel goes on")
    }

    @Test
    fun readyDuringTheLaunchWaitOpensAtOnce() {
        val slow = object : RouteTableSource {
            override fun currentTable() = DispatcherTest.table
            override fun tableAfterFirstRefresh(withinMillis: Long): RouteTable { Thread.sleep(withinMillis); return currentTable() }
        }
        val app = DispatcherTest.App()
        val dispatcher = RouteDispatcher(slow, app.navigator, app.context)
        dispatcher.ready(waitingForManifestMillis = 60_000)
        val link = dispatcher.dispatch(product)
        dispatcher.ready()
        assertEquals("navigated", outcome(link))
    }

    @Test
    fun anErrorWhileWaitingForTheManifestStillOpensTheGate() {
        val broken = object : RouteTableSource {
            override fun currentTable() = DispatcherTest.table
            override fun tableAfterFirstRefresh(withinMillis: Long): RouteTable = TODO("a table source in progress")
        }
        val app = DispatcherTest.App()
        val dispatcher = RouteDispatcher(broken, app.navigator, app.context)
        dispatcher.ready(waitingForManifestMillis = 1_000)
        assertEquals("navigated", outcome(dispatcher.dispatch(product)))
    }

    @Test
    fun aHandlerThatBlocksBeforeAnsweringStillTimesOut() {
        val release = CountDownLatch(1)
        val blocking = object : GateHandler {
            override fun satisfy(precondition: String, gate: Resolution.Gated): CompletableFuture<Boolean> {
                release.await(60, TimeUnit.SECONDS)  // work on the calling thread, then the future
                return CompletableFuture.completedFuture(true)
            }
        }
        val app = DispatcherTest.App()
        val dispatcher = RouteDispatcher(table, app.navigator, app.context, blocking, configuration = DispatcherConfiguration(gateTimeoutMillis = 100))
        dispatcher.ready()
        assertEquals("gateTimedOut", outcome(dispatcher.dispatch(order)))
        assertEquals("navigated", outcome(dispatcher.dispatch(product)))
        release.countDown()
    }

    @Test
    fun aCloseThatThrowsKeepsTheOutcome() {
        val app = DispatcherTest.App()
        val login = Silent(closeThrows = true)
        val dispatcher = RouteDispatcher(table, app.navigator, app.context, login, configuration = DispatcherConfiguration(gateTimeoutMillis = 100))
        dispatcher.ready()
        assertEquals("gateTimedOut", outcome(dispatcher.dispatch(order)))
        assertEquals(listOf(PromptEnding.TIMED_OUT), login.closed)
    }
}
