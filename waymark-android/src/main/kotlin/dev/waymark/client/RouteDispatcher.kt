package dev.waymark.client

import dev.waymark.engine.Resolution
import java.util.ArrayDeque
import java.util.concurrent.CompletableFuture
import java.util.concurrent.ExecutorService
import java.util.concurrent.Executors
import java.util.concurrent.TimeUnit
import java.util.concurrent.TimeoutException

/** What a newer external link does to older ones still waiting. */
enum class SupersedePolicy {
    /** A newer external link ends every external link still waiting (not the running one) as superseded. */
    NEWEST_EXTERNAL_LINK,
    /** Every intent is carried out in arrival order. */
    KEEP_ALL
}

/** The dispatcher's bounds; every one has a default. */
data class DispatcherConfiguration(
    /** Notification data keys that may carry the link, first match wins. */
    val pushLinkKeys: List<String> = listOf("deeplink", "url", "link"),
    /** Intents waiting at most; one more drops the oldest waiting one. */
    val maximumWaiting: Int = 256,
    val supersede: SupersedePolicy = SupersedePolicy.NEWEST_EXTERNAL_LINK,
    /** Gate handler calls one intent may make (chained gates), at most. */
    val maximumGates: Int = 8,
    /**
     * How long a gate or leave handler, or the navigator's apply, may take before the
     * funnel moves on, so one that never answers cannot stop every later intent: a gate
     * then ends `gateCancelled`, a leave question `leaveCancelled`; an apply is taken as
     * done (the next plan is made from what the navigator reports then).
     */
    val handlerTimeoutMillis: Long = 10 * 60 * 1000
)

/**
 * The one funnel every entry point calls (`docs/client.md`, the Swift `RouteDispatcher`):
 * resolves each intent with the table in use, runs the launch, enter and leave gates as one
 * stash-and-resume loop, plans, and has the navigator apply the plan — one intent at a time,
 * in arrival order, on one worker thread of its own (handlers' futures are awaited there,
 * never on the caller's thread).
 */
class RouteDispatcher(
    private val tables: RouteTableSource,
    private val navigator: Navigator,
    private val contextProvider: ContextProvider,
    private val gateHandler: GateHandler? = null,
    private val leaveHandler: LeaveHandler? = null,
    private val observer: DispatchObserver? = null,
    val configuration: DispatcherConfiguration = DispatcherConfiguration(),
    private val clock: () -> Long = System::currentTimeMillis,
    private val worker: ExecutorService = Executors.newSingleThreadExecutor { Thread(it, "waymark-dispatcher").apply { isDaemon = true } }
) {
    private class Pending(val sequence: Int, val intent: Intent) {
        val result = CompletableFuture<DispatchResult>()
    }

    private val lock = Any()
    private val waiting = ArrayDeque<Pending>()
    private var isReady = false
    private var isDraining = false
    /** Intents dispatched so far (the last one's sequence). */
    var arrivals = 0
        private set

    /** The launch gate opens: the app's root activity exists. Waiting intents run, in order. */
    fun ready() {
        synchronized(lock) { isReady = true }
        startDraining()
    }

    /** Dispatches [intent]; the future completes with how it ended, after it waited its turn. */
    fun dispatch(intent: Intent): CompletableFuture<DispatchResult> {
        val ended = ArrayList<Pair<Pending, DispatchOutcome>>()
        val pending: Pending
        synchronized(lock) {
            arrivals += 1
            pending = Pending(arrivals, intent)
            if (intent.isExternal && configuration.supersede == SupersedePolicy.NEWEST_EXTERNAL_LINK) {
                val iterator = waiting.iterator()
                while (iterator.hasNext()) {
                    val older = iterator.next()
                    if (older.intent.isExternal) { iterator.remove(); ended.add(older to DispatchOutcome.Superseded) }
                }
            }
            if (waiting.size >= configuration.maximumWaiting && waiting.isNotEmpty()) ended.add(waiting.removeFirst() to DispatchOutcome.Dropped)
            waiting.addLast(pending)
        }
        for ((older, outcome) in ended) finish(older, outcome, null, 0)
        startDraining()
        return pending.result
    }

    /** Dispatches the link a notification's data carries; null, and nothing dispatched, when it carries none. */
    fun dispatchPush(payload: Map<String, Any?>): CompletableFuture<DispatchResult>? =
        Intent.push(payload, configuration.pushLinkKeys)?.let { dispatch(it) }

    private fun startDraining() {
        synchronized(lock) {
            if (!isReady || isDraining || waiting.isEmpty()) return
            isDraining = true
        }
        worker.execute { drain() }
    }

    private fun drain() {
        while (true) {
            val next = synchronized(lock) {
                if (!isReady || waiting.isEmpty()) { isDraining = false; return }
                waiting.removeFirst()
            }
            val (outcome, resolution, revision) = try {
                process(next.intent)
            } catch (error: Throwable) {
                // A handler, navigator or context that threw anything (an Error too: Kotlin's
                // TODO() is a NotImplementedError) ends its intent as the user declining; the
                // funnel goes on. Catching only Exception left this worker dead and every later
                // link waiting for good.
                Triple(DispatchOutcome.GateCancelled(error.javaClass.simpleName), null, 0L)
            }
            finish(next, outcome, resolution, revision)
        }
    }

    private fun finish(pending: Pending, outcome: DispatchOutcome, resolution: Resolution?, revision: Long) {
        val result = DispatchResult(pending.sequence, pending.intent, outcome, resolution, revision, clock())
        // The observer (telemetry) first: once a caller holds the result, it has been recorded.
        // An observer that throws loses its own record, never the caller's result or the funnel.
        try { observer?.dispatched(result) } catch (ignored: Throwable) { }
        pending.result.complete(result)
    }

    private fun <T> await(future: CompletableFuture<T>): T? = try {
        future.get(configuration.handlerTimeoutMillis, TimeUnit.MILLISECONDS)
    } catch (timeout: TimeoutException) {
        null
    }

    /** Resolves, gates (the stash-and-resume loop with its loop guard), plans and applies one intent. */
    private fun process(intent: Intent): Triple<DispatchOutcome, Resolution?, Long> {
        var table = tables.currentTable()
        var resolution = table.resolve(intent.resolutionRequest, contextProvider.context())
        val passed = HashSet<String>()
        val retried = HashSet<String>()
        var asked = 0
        while (true) {
            when (val current = resolution) {
                is Resolution.NotFound -> return Triple(DispatchOutcome.NotFound(current), current, table.revision)
                is Resolution.Gated -> {
                    if (current.precondition in passed) {
                        // The handler said yes, yet the fresh context says no: once more, then stop.
                        if (current.precondition in retried) return Triple(DispatchOutcome.GateLoop(current.precondition), current, table.revision)
                        retried.add(current.precondition)
                        Thread.yield()
                    } else {
                        val handler = gateHandler
                        if (asked >= configuration.maximumGates || handler == null) {
                            return Triple(DispatchOutcome.GateCancelled(current.precondition), current, table.revision)
                        }
                        asked += 1
                        if (await(handler.satisfy(current.precondition, current)) != true) {
                            return Triple(DispatchOutcome.GateCancelled(current.precondition), current, table.revision)
                        }
                        passed.add(current.precondition)
                    }
                    // The original request, against a fresh context and the table in use now.
                    table = tables.currentTable()
                    resolution = table.resolve(current.resume, contextProvider.context())
                }
                is Resolution.Proceed -> {
                    val source = if (intent.isExternal) NavigationSource.EXTERNAL else NavigationSource.IN_APP
                    return Triple(navigate(table.target(current), source), current, table.revision)
                }
            }
        }
    }

    /** The leave gate, then the apply. */
    private fun navigate(target: NavigationTarget, source: NavigationSource): DispatchOutcome {
        var plan = NavigationPlanner.plan(navigator.state(), target, source)
        val answered = ArrayList<Screen>()
        for (round in 0..LEAVE_ROUNDS) {
            val dirty = plan.leaving.filter { it.isDirty && it !in answered }
            if (dirty.isEmpty()) {
                if (!plan.isEmpty) await(navigator.apply(plan))
                return DispatchOutcome.Navigated(plan)
            }
            val handler = leaveHandler
            if (round == LEAVE_ROUNDS || handler == null) return DispatchOutcome.LeaveCancelled(dirty)
            when (await(handler.decide(dirty, plan))) {
                LeaveDecision.DISCARD -> answered.addAll(dirty)
                LeaveDecision.SAVE_THEN_CONTINUE -> {
                    if (await(handler.save(dirty)) != true) return DispatchOutcome.LeaveCancelled(dirty)
                    answered.addAll(dirty)
                }
                LeaveDecision.CANCEL, null -> return DispatchOutcome.LeaveCancelled(dirty)
            }
            // The user may have done something while asked: plan again from what is shown now.
            plan = NavigationPlanner.plan(navigator.state(), target, source)
        }
        return DispatchOutcome.LeaveCancelled(plan.leaving.filter { it.isDirty })
    }

    companion object {
        /** Times the leave handler is asked for one intent (new dirty screens may appear while it asks). */
        const val LEAVE_ROUNDS = 3
    }
}
