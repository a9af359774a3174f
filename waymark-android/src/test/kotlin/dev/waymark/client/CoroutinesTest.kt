package dev.waymark.client

import dev.waymark.engine.Resolution
import org.junit.jupiter.api.Assertions.assertEquals
import org.junit.jupiter.api.Assertions.assertTrue
import org.junit.jupiter.api.Test
import java.util.Collections
import java.util.concurrent.CompletableFuture
import java.util.concurrent.Executors
import java.util.concurrent.TimeUnit
import kotlin.coroutines.AbstractCoroutineContextElement
import kotlin.coroutines.Continuation
import kotlin.coroutines.ContinuationInterceptor
import kotlin.coroutines.CoroutineContext
import kotlin.coroutines.suspendCoroutine

/** The seams as suspend functions (Coroutines.kt), driven by the real dispatcher. */
class CoroutinesTest {
    /** What kotlinx's `Dispatchers.Main` is to an app: every resumption on one thread, "main". */
    class MainThread : AbstractCoroutineContextElement(ContinuationInterceptor), ContinuationInterceptor {
        val executor = Executors.newSingleThreadExecutor { Thread(it, "main").apply { isDaemon = true } }
        override fun <T> interceptContinuation(continuation: Continuation<T>): Continuation<T> = object : Continuation<T> {
            override val context: CoroutineContext = continuation.context
            override fun resumeWith(result: Result<T>) { executor.execute { continuation.resumeWith(result) } }
        }
    }

    class SuspendingApp(val main: MainThread = MainThread()) {
        @Volatile var state = NavigationState("home", mapOf("home" to listOf(Screen("home"))))
        @Volatile var loggedIn = false
        val threads: MutableList<String> = Collections.synchronizedList(ArrayList())
        val closed: MutableList<PromptEnding> = Collections.synchronizedList(ArrayList())
        var login: suspend () -> Boolean = { false }
        var applying: suspend (NavigationPlan) -> Unit = { plan -> state = state.applying(plan) }

        val navigator = object : SuspendingNavigator {
            override fun state() = state
            override suspend fun apply(plan: NavigationPlan) {
                threads.add(Thread.currentThread().name)
                applying(plan)
            }
        }
        val answer = CompletableFuture<Boolean>()
        val gates = object : SuspendingGateHandler {
            override suspend fun satisfy(precondition: String, gate: Resolution.Gated): Boolean {
                threads.add(Thread.currentThread().name)
                return login().also { if (it) loggedIn = true }
            }
            override suspend fun received(callback: String, gate: Resolution.Gated) {
                threads.add(Thread.currentThread().name)
                if (!callback.endsWith("state=mine")) return             // not this screen's request
                suspendCoroutine<Unit> { continuation -> Thread { continuation.resumeWith(Result.success(Unit)) }.start() }  // the code's exchange
                loggedIn = true
                answer.complete(true)
            }
            override fun close(gate: Resolution.Gated, ending: PromptEnding) { closed.add(ending) }
        }
        val leave = object : SuspendingLeaveHandler {
            override suspend fun decide(dirty: List<Screen>, plan: NavigationPlan) = LeaveDecision.DISCARD
            override suspend fun save(dirty: List<Screen>) = true
        }
        val context = object : ContextProvider {
            override fun context() = dev.waymark.engine.ResolutionContext(if (loggedIn) setOf("auth") else emptySet(), dev.waymark.engine.ManifestTest.now)
        }

        fun dispatcher(configuration: DispatcherConfiguration = DispatcherConfiguration()) =
            RouteDispatcher(object : RouteTableSource { override fun currentTable() = DispatcherTest.table }, navigator.asNavigator(main),
                context, gates.asGateHandler(main), leave.asLeaveHandler(main), null, configuration).apply { ready() }
    }

    private fun outcome(future: CompletableFuture<DispatchResult>) = future.get(30, TimeUnit.SECONDS).outcome.name

    /** Handlers start in the context given (the app's main thread); a login answered later, from elsewhere, resumes the link. */
    @Test
    fun suspendingHandlersRunInTheAppsContextAndTheLinkGoesOn() {
        val app = SuspendingApp()
        val answer = CompletableFuture<Boolean>()
        app.login = { answer.awaitCompletion() }
        val dispatcher = app.dispatcher()
        val order = dispatcher.dispatch(Intent.Link(DispatcherTest.ORDER, Door.UNIVERSAL_LINK))
        Thread { Thread.sleep(50); answer.complete(true) }.start()
        assertEquals("navigated", outcome(order))
        assertEquals("navigated", futureOf { dispatcher.dispatchAndAwait(Intent.Link(DispatcherTest.PRODUCT, Door.UNIVERSAL_LINK)) }
            .get(30, TimeUnit.SECONDS).outcome.name)
        assertTrue(app.threads.isNotEmpty() && app.threads.all { it == "main" }, "every handler ran on main: ${app.threads}")
    }

    /** An auth callback is handed to the suspending gate in the app's context: a foreign state is ignored, its own signs in. */
    @Test
    fun aSuspendingGateTakesItsAuthCallbackInTheAppsContext() {
        val app = SuspendingApp()
        app.login = { app.answer.awaitCompletion() }
        val dispatcher = RouteDispatcher(object : RouteTableSource { override fun currentTable() = DispatcherTest.table }, app.navigator.asNavigator(app.main),
            app.context, app.gates.asGateHandler(app.main), null, null, DispatcherConfiguration(authCallbackPrefixes = listOf("storefront://auth/callback")))
        dispatcher.ready()
        val order = dispatcher.dispatch(Intent.Link(DispatcherTest.ORDER, Door.UNIVERSAL_LINK))
        while (app.threads.isEmpty()) Thread.sleep(5)                       // the login is up
        assertEquals("handedToGate", outcome(dispatcher.dispatch(Intent.Link("storefront://auth/callback?code=1&state=theirs", Door.SCHEME))))
        assertTrue(!order.isDone, "a foreign state signs nobody in")
        assertEquals("handedToGate", outcome(dispatcher.dispatch(Intent.Link("storefront://auth/callback?code=2&state=mine", Door.SCHEME))))
        assertEquals("navigated", outcome(order))
        assertTrue(app.threads.all { it == "main" }, "satisfy and received ran on main: ${app.threads}")
    }

    /** What a seam threw reaches onSeamFailure, and every observer hears every result, one that throws too. */
    @Test
    fun seamFailuresAreReportedAndEveryObserverHears() {
        val app = SuspendingApp()
        app.login = { throw IllegalStateException("the login screen broke") }
        val failures = Collections.synchronizedList(ArrayList<Throwable>())
        val heard = Collections.synchronizedList(ArrayList<String>())
        val throwing = object : DispatchObserver { override fun dispatched(result: DispatchResult) { throw IllegalStateException("observer") } }
        val logging = object : DispatchObserver { override fun dispatched(result: DispatchResult) { heard.add(result.outcome.name) } }
        val dispatcher = RouteDispatcher(object : RouteTableSource { override fun currentTable() = DispatcherTest.table }, app.navigator.asNavigator(app.main),
            app.context, app.gates.asGateHandler(app.main), null, throwing, DispatcherConfiguration(onSeamFailure = { failures.add(it) }),
            observers = listOf(logging))
        dispatcher.ready()
        assertTrue(outcome(dispatcher.dispatch(Intent.Link(DispatcherTest.ORDER, Door.UNIVERSAL_LINK))).startsWith("gateCancelled"))
        assertEquals("navigated", outcome(dispatcher.dispatch(Intent.Link(DispatcherTest.PRODUCT, Door.UNIVERSAL_LINK))))
        assertEquals(listOf("the login screen broke"), failures.map { it.message })
        assertEquals(listOf("gateCancelled", "navigated"), heard.toList())
    }

    /** A suspend handler that throws (TODO(): an Error) ends its intent as a failed seam, and the funnel goes on. */
    @Test
    fun aSuspendingHandlerThatThrowsStopsNothing() {
        val app = SuspendingApp()
        app.login = { TODO("login screen") }
        val dispatcher = app.dispatcher()
        assertTrue(outcome(dispatcher.dispatch(Intent.Link(DispatcherTest.ORDER, Door.UNIVERSAL_LINK))).startsWith("gateCancelled"))
        assertEquals("navigated", outcome(dispatcher.dispatch(Intent.Link(DispatcherTest.PRODUCT, Door.UNIVERSAL_LINK))))
    }

    /** An apply that never resumes ends applyTimedOut; a login nobody answers is told to close; the next link navigates. */
    @Test
    fun aSuspendingHandlerThatNeverResumesStallsNothing() {
        val app = SuspendingApp()
        app.login = { suspendCoroutine<Boolean> { } }
        val stuck = CompletableFuture<Unit>()
        app.applying = { plan -> if (plan.operations.isNotEmpty() && !stuck.isDone) { stuck.complete(Unit); suspendCoroutine<Unit> { } } else app.state = app.state.applying(plan) }
        val dispatcher = app.dispatcher(DispatcherConfiguration(applyTimeoutMillis = 200, gateTimeoutMillis = 200))
        assertEquals("applyTimedOut", outcome(dispatcher.dispatch(Intent.Link(DispatcherTest.PRODUCT, Door.UNIVERSAL_LINK))))
        assertEquals("gateTimedOut", outcome(dispatcher.dispatch(Intent.Link(DispatcherTest.ORDER, Door.UNIVERSAL_LINK))))
        assertEquals(listOf(PromptEnding.TIMED_OUT), app.closed.toList())
        app.loggedIn = true
        assertEquals("navigated", outcome(dispatcher.dispatch(Intent.Link(DispatcherTest.ORDER, Door.UNIVERSAL_LINK))))
    }

    /** awaitCompletion gives the value, or throws what failed the future (not its CompletionException). */
    @Test
    fun awaitCompletionUnwrapsTheFailure() {
        assertEquals(7, futureOf { CompletableFuture.completedFuture(7).awaitCompletion() }.get(5, TimeUnit.SECONDS))
        val failed = CompletableFuture<Int>().apply { completeExceptionally(IllegalStateException("no")) }
        val caught = futureOf { try { failed.thenApply { it + 1 }.awaitCompletion(); "none" } catch (error: IllegalStateException) { error.message } }
        assertEquals("no", caught.get(5, TimeUnit.SECONDS))
    }
}
