package dev.waymark.client

import org.junit.jupiter.api.Assertions.assertEquals
import org.junit.jupiter.api.Assertions.assertFalse
import org.junit.jupiter.api.Assertions.assertTrue
import org.junit.jupiter.api.DynamicTest
import org.junit.jupiter.api.Test
import org.junit.jupiter.api.TestFactory
import dev.waymark.engine.AppBuild
import dev.waymark.engine.DestinationRequest
import dev.waymark.engine.Manifest
import dev.waymark.engine.ManifestTest
import dev.waymark.engine.Resolution
import dev.waymark.engine.ResolutionContext
import java.util.Collections
import java.util.concurrent.CompletableFuture
import java.util.concurrent.TimeUnit

/** The funnel: launch, enter and leave gates, the loop guard, timeouts, supersede, order. */
class DispatcherTest {
    companion object {
        val table = RouteTable(Manifest.decode(ManifestTest.manifest().canonical().toByteArray(),
            AppBuild("storefront", "ios", "5.3.0"), ManifestTest.now), RouteTable.Origin.SERVER)
        fun link(text: String, door: Door = Door.UNIVERSAL_LINK) = Intent.Link(text, door)
        const val PRODUCT = "https://storefront.example/p/p1"
        const val ORDER = "https://storefront.example/orders/42"
    }

    /** The app's doubles: a session, a navigator over a [NavigationState], handlers that answer as told. */
    class App(var loggedIn: Boolean = false, start: NavigationState = NavigationState("home", mapOf("home" to listOf(Screen("home"))))) {
        @Volatile var state = start
        val applied: MutableList<NavigationPlan> = Collections.synchronizedList(ArrayList())
        val observed: MutableList<DispatchResult> = Collections.synchronizedList(ArrayList())
        var gateAnswer: () -> CompletableFuture<Boolean> = { CompletableFuture.completedFuture(false) }
        var leaveAnswer: LeaveDecision? = null
        var saves = true

        val navigator = object : Navigator {
            override fun state() = state
            override fun apply(plan: NavigationPlan): CompletableFuture<Unit> {
                applied.add(plan)
                state = state.applying(plan)
                return CompletableFuture.completedFuture(Unit)
            }
        }
        val context = object : ContextProvider {
            override fun context() = ResolutionContext(if (loggedIn) setOf("auth") else emptySet(), ManifestTest.now)
        }
        val gates = object : GateHandler {
            override fun satisfy(precondition: String, gate: Resolution.Gated) = gateAnswer()
        }
        val leave = object : LeaveHandler {
            override fun decide(dirty: List<Screen>, plan: NavigationPlan) = CompletableFuture.completedFuture(leaveAnswer ?: LeaveDecision.CANCEL)
            override fun save(dirty: List<Screen>) = CompletableFuture.completedFuture(saves)
        }
        val observer = object : DispatchObserver {
            override fun dispatched(result: DispatchResult) { observed.add(result) }
        }

        fun dispatcher(configuration: DispatcherConfiguration = DispatcherConfiguration(), withGates: Boolean = true, withLeave: Boolean = true) =
            RouteDispatcher(object : RouteTableSource { override fun currentTable() = table }, navigator, context,
                if (withGates) gates else null, if (withLeave) leave else null, observer, configuration)
    }

    private fun outcome(future: CompletableFuture<DispatchResult>) = future.get(30, TimeUnit.SECONDS).outcome.name

    /** Which links are auth callbacks: the prefix, its scheme and host in any case; not another path, its path in capitals, a shorter link. */
    @Test
    fun authCallbacksMatchTheirPrefix() {
        val configuration = DispatcherConfiguration(authCallbackPrefixes = listOf("lab://kind/callback"))
        for (link in listOf("lab://kind/callback?code=1", "LAB://Kind/callback", "lab://kind/callbacks")) assertTrue(configuration.isAuthCallback(link), link)
        for (link in listOf("lab://kind/other", "lab://kind/CALLBACK", "lab://kind/", "")) assertFalse(configuration.isAuthCallback(link), link)
        assertFalse(DispatcherConfiguration().isAuthCallback("lab://kind/callback"), "no prefixes: no callbacks")
    }

    /** A seam that throws an Error (Kotlin's TODO()) ends its intent, and the next link runs. */
    @TestFactory
    fun aSeamThatThrowsAnErrorStopsNothing() = listOf<Pair<String, (App) -> Unit>>(
        "a gate handler's TODO()" to { app -> app.gateAnswer = { TODO("login") } },
        "a gate handler's StackOverflowError" to { app -> app.gateAnswer = { throw StackOverflowError() } },
        "a gate whose future failed with an Error" to { app -> app.gateAnswer = { CompletableFuture<Boolean>().apply { completeExceptionally(NotImplementedError()) } } }
    ).map { (label, setUp) ->
        DynamicTest.dynamicTest(label) {
            val app = App()
            setUp(app)
            val dispatcher = app.dispatcher()
            dispatcher.ready()
            assertTrue(outcome(dispatcher.dispatch(link(ORDER))).startsWith("gateCancelled"), label)
            assertEquals("navigated", outcome(dispatcher.dispatch(link(PRODUCT))), "the funnel goes on")
        }
    }

    @Test
    fun anObserverThatThrowsStopsNothing() {
        val app = App()
        var calls = 0
        val throwing = object : DispatchObserver {
            override fun dispatched(result: DispatchResult) { calls += 1; TODO("telemetry") }
        }
        val dispatcher = RouteDispatcher(object : RouteTableSource { override fun currentTable() = table }, app.navigator, app.context,
            app.gates, app.leave, throwing)
        dispatcher.ready()
        assertEquals("navigated", outcome(dispatcher.dispatch(link(PRODUCT))))
        assertEquals("navigated", outcome(dispatcher.dispatch(link(PRODUCT))))
        assertEquals(2, calls)
    }

    @Test
    fun theLaunchGateHoldsIntentsUntilReady() {
        val app = App()
        val dispatcher = app.dispatcher()
        val first = dispatcher.dispatch(link(PRODUCT))
        assertFalse(first.isDone, "ran before ready()")
        dispatcher.ready()
        assertEquals("navigated", outcome(first))
        assertEquals("product(id=p1)", app.state.stacks["home"]!!.last().toString())
    }

    /** (label, set-up, intent, expected outcome). */
    private val gateRows = listOf<Triple<String, (App) -> Unit, String>>(
        Triple("the gate handler logs in: the original link resumes", { app -> app.gateAnswer = { app.loggedIn = true; CompletableFuture.completedFuture(true) } }, "navigated"),
        Triple("the user cancels the login", { app -> app.gateAnswer = { CompletableFuture.completedFuture(false) } }, "gateCancelled"),
        Triple("naive: a handler that says yes before the session does is a loop, not a hang", { app -> app.gateAnswer = { CompletableFuture.completedFuture(true) } }, "gateLoop"),
        Triple("a handler that fails ends the intent", { app -> app.gateAnswer = { CompletableFuture<Boolean>().also { it.completeExceptionally(IllegalStateException()) } } }, "gateCancelled"),
        Triple("a handler that never answers times out", { app -> app.gateAnswer = { CompletableFuture() } }, "gateTimedOut"),
        Triple("already logged in: no gate", { app -> app.loggedIn = true }, "navigated")
    )

    @TestFactory
    fun theEnterGate() = gateRows.map { (label, setUp, expected) ->
        DynamicTest.dynamicTest(label) {
            val app = App()
            setUp(app)
            val dispatcher = app.dispatcher(DispatcherConfiguration(gateTimeoutMillis = 200))
            dispatcher.ready()
            assertEquals(expected, outcome(dispatcher.dispatch(link(ORDER))), label)
        }
    }

    @Test
    fun withoutAGateHandlerAGateIsCancelledAndNothingMoves() {
        val app = App()
        val dispatcher = app.dispatcher(withGates = false)
        dispatcher.ready()
        assertEquals("gateCancelled", outcome(dispatcher.dispatch(link(ORDER))))
        assertTrue(app.applied.isEmpty())
    }

    @Test
    fun brokenLinksEndAsTheEngineSays() {
        val app = App()
        val dispatcher = app.dispatcher()
        dispatcher.ready()
        assertEquals("notFound(malformed)", outcome(dispatcher.dispatch(link("https://storefront.example/p/%ZZ"))))
        assertEquals("notFound(unknownRoute)", outcome(dispatcher.dispatch(link("storefront://nope", Door.SCHEME))))
        assertEquals("notFound(validationFailed)", outcome(dispatcher.dispatch(Intent.Request(DestinationRequest("product")))))
        assertTrue(app.applied.isEmpty())
    }

    @Test
    fun aNewerExternalLinkSupersedesWaitingOnesButNotInAppRequests() {
        val app = App()
        val dispatcher = app.dispatcher()
        val a = dispatcher.dispatch(link(PRODUCT))
        val request = dispatcher.dispatch(Intent.Request(DestinationRequest("home")))
        val b = dispatcher.dispatch(link("https://storefront.example/p/p2", Door.PUSH))
        dispatcher.ready()
        assertEquals(listOf("superseded", "navigated", "navigated"), listOf(a, request, b).map { outcome(it) })
        assertEquals(listOf(1, 2, 3), app.observed.map { it.sequence }.sorted())
    }

    @Test
    fun keepAllRunsEveryIntentInArrivalOrder() {
        val app = App()
        val dispatcher = app.dispatcher(DispatcherConfiguration(supersede = SupersedePolicy.KEEP_ALL))
        val futures = (1..5).map { dispatcher.dispatch(link("https://storefront.example/p/p$it")) }
        dispatcher.ready()
        assertEquals(List(5) { "navigated" }, futures.map { outcome(it) })
        assertEquals((1..5).map { "product(id=p$it)" }, app.applied.map { it.target.base.last().toString() })
    }

    @Test
    fun aFullQueueDropsTheOldestWaitingIntent() {
        val app = App()
        val dispatcher = app.dispatcher(DispatcherConfiguration(maximumWaiting = 2, supersede = SupersedePolicy.KEEP_ALL))
        val futures = (1..3).map { dispatcher.dispatch(link("https://storefront.example/p/p$it")) }
        dispatcher.ready()
        assertEquals(listOf("dropped", "navigated", "navigated"), futures.map { outcome(it) })
    }

    /** (label, leave handler present, its answer, save succeeds, expected outcome). */
    private val leaveRows = listOf(
        listOf("no leave handler: unsaved work is never lost silently", false, null, true, "leaveCancelled"),
        listOf("the user keeps the work", true, LeaveDecision.CANCEL, true, "leaveCancelled"),
        listOf("the user discards it", true, LeaveDecision.DISCARD, true, "navigated"),
        listOf("saved, then navigated", true, LeaveDecision.SAVE_THEN_CONTINUE, true, "navigated"),
        listOf("naive: a failed save stays", true, LeaveDecision.SAVE_THEN_CONTINUE, false, "leaveCancelled")
    )

    @TestFactory
    fun theLeaveGate() = leaveRows.map { row ->
        DynamicTest.dynamicTest(row[0] as String) {
            val app = App(start = NavigationState("home", mapOf("home" to listOf(Screen("home"), Screen("search", isDirty = true)))))
            app.leaveAnswer = row[2] as LeaveDecision?
            app.saves = row[3] as Boolean
            val dispatcher = app.dispatcher(withLeave = row[1] as Boolean)
            dispatcher.ready()
            assertEquals(row[4], outcome(dispatcher.dispatch(link(PRODUCT))))
            assertEquals(row[4] == "navigated", app.state.stacks["home"]!!.none { it.destination == "search" })
        }
    }

    @Test
    fun intentsFromManyThreadsRunOneAtATime() {
        val app = App()
        var running = 0
        var overlapped = false
        val navigator = object : Navigator {
            override fun state() = app.state
            override fun apply(plan: NavigationPlan): CompletableFuture<Unit> {
                synchronized(this) { running += 1; if (running > 1) overlapped = true }
                Thread.yield()
                app.state = app.state.applying(plan)
                synchronized(this) { running -= 1 }
                return CompletableFuture.completedFuture(Unit)
            }
        }
        val dispatcher = RouteDispatcher(object : RouteTableSource { override fun currentTable() = table }, navigator, app.context,
            observer = app.observer, configuration = DispatcherConfiguration(supersede = SupersedePolicy.KEEP_ALL))
        dispatcher.ready()
        val futures = Collections.synchronizedList(ArrayList<CompletableFuture<DispatchResult>>())
        val threads = (1..4).map { t -> Thread { repeat(25) { i -> futures.add(dispatcher.dispatch(link("https://storefront.example/p/p$t$i"))) } } }
        threads.forEach { it.start() }
        threads.forEach { it.join() }
        futures.forEach { assertEquals("navigated", outcome(it)) }
        assertFalse(overlapped, "two plans were applied at once")
        assertEquals(100, app.observed.size)
        assertEquals((1..100).toList(), app.observed.map { it.sequence })
    }
}
