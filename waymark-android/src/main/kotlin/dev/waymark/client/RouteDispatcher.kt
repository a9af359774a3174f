package dev.waymark.client

import dev.waymark.engine.LinkShape
import dev.waymark.engine.NotFoundReason
import dev.waymark.engine.Resolution
import java.util.ArrayDeque
import java.util.concurrent.CompletableFuture
import java.util.concurrent.ExecutionException
import java.util.concurrent.ExecutorService
import java.util.concurrent.Executors
import java.util.concurrent.TimeUnit
import java.util.concurrent.TimeoutException
import java.util.concurrent.CompletionException
import java.util.concurrent.atomic.AtomicReference

/** What a newer external link does to older ones still waiting. */
enum class SupersedePolicy {
    /** A newer external link ends every external link still waiting (not the running one) as superseded. */
    NEWEST_EXTERNAL_LINK,
    /** Every intent is carried out in arrival order. */
    KEEP_ALL
}

/**
 * The dispatcher's bounds; every one has a default, the Swift `DispatcherConfiguration`'s
 * (`docs/client.md`, "The dispatcher's rules"; the behaviours both keep are
 * `conformance/dispatcher.json`). Times in milliseconds; null waits for ever.
 */
data class DispatcherConfiguration(
    /** Notification data keys that may carry the link, first match wins. */
    val pushLinkKeys: List<String> = listOf("deeplink", "url", "link"),
    /** Intents waiting at most; one more drops the oldest waiting one. */
    val maximumWaiting: Int = 256,
    val supersede: SupersedePolicy = SupersedePolicy.NEWEST_EXTERNAL_LINK,
    /**
     * With [SupersedePolicy.NEWEST_EXTERNAL_LINK]: a newer external link also ends the
     * external link waiting at its gate handler (the login screen) or its leave handler as
     * superseded, and that handler is told to close. An apply under way is never superseded.
     */
    val supersedesPrompts: Boolean = true,
    /** Gate handler calls one intent may make (chained gates), at most. */
    val maximumGates: Int = 8,
    /** How long a gate handler may take to answer; past it the intent ends `gateTimedOut` and the handler is told to close. */
    val gateTimeoutMillis: Long? = 300_000,
    /** The same for the leave handler's decision and save (`leaveTimedOut`). */
    val leaveTimeoutMillis: Long? = 300_000,
    /**
     * How long the navigator's apply may take; past it the intent ends `applyTimedOut` and
     * the next one runs, planned from what `state()` reports then, so an apply whose future
     * is never completed cannot stop every later link. `cancel()` ends its wait too.
     */
    val applyTimeoutMillis: Long? = 10_000,
    /**
     * The first tap on a new campaign: an external link that ended `notFound(unknownRoute)`
     * against a table a refresh in flight may replace waits for that refresh up to this long
     * and is resolved once more against the newer table, if it brought one. Once per intent.
     */
    val unknownRouteWaitMillis: Long? = 3_000,
    /** Keeps an external link waiting at a gate on disk, so a process death at the login screen does not lose it; null: memory only. */
    val gateStash: GateStash? = null,
    /**
     * Links that answer a running gate rather than go anywhere (an OAuth redirect, a magic
     * link): a link by the scheme or App Link door (never a push's) starting with one of
     * these (scheme and host compared without case, the rest exactly) that arrives while a
     * gate handler runs is handed to it ([GateHandler.received]) and ends `handedToGate`,
     * instead of waiting behind the very gate it satisfies. With no gate running it is
     * dispatched like any link.
     */
    val authCallbackPrefixes: List<String> = emptyList(),
    /**
     * Called, on the dispatcher's worker thread, with what a seam threw (a navigator, a gate
     * or leave handler, a context provider: an `Error` too) before its intent ends
     * `gateCancelled`: hand it to the app's crash reporter. Null: nowhere.
     */
    val onSeamFailure: ((Throwable) -> Unit)? = null
) {
    /** Whether [link] is one of the auth callbacks. */
    fun isAuthCallback(link: String): Boolean = authCallbackPrefixes.any { prefix ->
        if (link.length < prefix.length) return@any false
        // The scheme and authority (up to the first "/" after "://") compare without case.
        val separator = prefix.indexOf("://")
        val head = if (separator < 0) 0 else prefix.indexOf('/', separator + 3).let { if (it < 0) prefix.length else it }
        (prefix.indices).all { index ->
            val a = link[index]
            val b = prefix[index]
            if (index < head) asciiLower(a) == asciiLower(b) else a == b
        }
    }

    private fun asciiLower(c: Char): Char = if (c in 'A'..'Z') (c + 32) else c
}

/**
 * The one funnel every entry point calls (`docs/client.md`, the Swift `RouteDispatcher`):
 * resolves each intent with the table in use, runs the launch, enter and leave gates as one
 * stash-and-resume loop, plans, and has the navigator apply the plan — one intent at a time,
 * in arrival order, on one worker thread of its own (handlers' futures are awaited there,
 * never on the caller's thread).
 *
 * Nothing waits for ever: a handler or an apply that does not answer in time ends its
 * intent (`gateTimedOut`, `leaveTimedOut`, `applyTimedOut`); `cancel()` ends the running one
 * (`cancelled`) at its prompt or apply at once; a newer external link ends one waiting at a
 * prompt (`superseded`); a seam that throws anything ends its intent (`gateCancelled`) and
 * the next one runs.
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
    private val worker: ExecutorService = Executors.newSingleThreadExecutor { Thread(it, "waymark-dispatcher").apply { isDaemon = true } },
    /** More observers, after [observer], in order (the app's own logging, `OpenInBrowser`). */
    private val observers: List<DispatchObserver> = emptyList()
) {
    private class Pending(val sequence: Int, val intent: Intent) {
        val result = CompletableFuture<DispatchResult>()
        /** Set when it is cancelled or superseded while it runs: it stops at its next step (or its prompt ends at once). */
        @Volatile var interruption: DispatchOutcome? = null
    }

    /** How a prompt (a handler's answer, or the navigator's apply) ended. */
    private sealed class PromptEnd {
        class Answered(val value: Any?) : PromptEnd()
        class Failed(val error: Throwable) : PromptEnd()
        object TimedOut : PromptEnd()
        class Interrupted(val outcome: DispatchOutcome) : PromptEnd()

        /** The handler's own end (an answer or its failure), not the dispatcher's. */
        val isAnswer: Boolean get() = this is Answered || this is Failed
    }

    /** One prompt in progress: whichever ending comes first completes it, once. [gate]: a gate handler's. */
    private class Prompt(val isApply: Boolean, val gate: Resolution.Gated? = null) {
        val ending = CompletableFuture<PromptEnd>()
    }

    private val lock = Any()
    private val waiting = ArrayDeque<Pending>()
    private var isReady = false
    private var isOpening = false
    private var isDraining = false
    private var current: Pending? = null
    private var prompt: Prompt? = null
    /** Intents dispatched so far (the last one's sequence). */
    var arrivals = 0
        private set

    /**
     * The launch gate opens: the app's root activity exists. Waiting intents run, in order —
     * after a link the last process left waiting at a gate ([DispatcherConfiguration.gateStash]),
     * if it is recent enough.
     */
    fun ready() {
        open()
        startDraining()
    }

    /**
     * The launch gate opens once the first refresh of the manifest has ended, or
     * [boundMillis] has passed, whichever is first: a cold-start link taps into the newest
     * table the launch could get. Returns at once (call it from `onCreate`); the wait is the
     * worker's, and intents queue meanwhile.
     */
    fun ready(waitingForManifestMillis: Long) {
        synchronized(lock) {
            if (isReady || isOpening) return
            isOpening = true
        }
        // On a thread of its own, not the worker: a ready() meanwhile opens the gate at once.
        Thread({
            try {
                tables.tableAfterFirstRefresh(waitingForManifestMillis)
            } catch (ignored: Throwable) {
            } finally {
                ready()
            }
        }, "waymark-launch-gate").apply { isDaemon = true }.start()
    }

    private fun open() {
        val stash = synchronized(lock) {
            if (isReady) return
            isOpening = false
            val found = configuration.gateStash
            // With a stash, it is read first, on the worker (disk, never the caller's thread).
            if (found == null) isReady = true else isDraining = true
            found
        } ?: return startDraining()
        worker.execute {
            val stashed = try { stash.take() } catch (ignored: Exception) { null }
            synchronized(lock) {
                if (stashed != null) {
                    arrivals += 1
                    waiting.addFirst(Pending(arrivals, stashed))
                }
                isReady = true
                isDraining = false
            }
            startDraining()
        }
    }

    /** Dispatches [intent]; the future completes with how it ended, after it waited its turn. */
    fun dispatch(intent: Intent): CompletableFuture<DispatchResult> {
        val ended = ArrayList<Pair<Pending, DispatchOutcome>>()
        val pending: Pending
        var handedTo: Resolution.Gated? = null
        synchronized(lock) {
            arrivals += 1
            pending = Pending(arrivals, intent)
            val gate = prompt?.gate
            if (gate != null && gateHandler != null && intent is Intent.Link && intent.via != Door.PUSH &&
                configuration.isAuthCallback(intent.link)) {
                handedTo = gate
            } else {
                queue(pending, ended)
            }
        }
        val gate = handedTo
        val handler = gateHandler
        if (gate != null && handler != null) {
            // The answer to the running gate: handed to it on a thread of the library's (never
            // the caller's, which may be the main thread), never queued behind it.
            val link = (intent as Intent.Link).link
            HANDLERS.execute {
                // Ends handedToGate once the handler is done with it, or after the gate's
                // timeout: a received that never completes holds this thread, never the funnel.
                quietly {
                    val done = handler.received(link, gate)
                    val timeout = configuration.gateTimeoutMillis
                    if (timeout == null) done.get() else done.get(maxOf(0L, timeout), TimeUnit.MILLISECONDS)
                }
                finish(pending, DispatchOutcome.HandedToGate(gate.precondition), null, 0)
            }
            return pending.result.thenApply { it }
        }
        for ((older, outcome) in ended) finish(older, outcome, null, 0)
        startDraining()
        // The caller's own future: cancelling it ends the intent `cancelled`, waiting or
        // running (as cancelling the dispatching task does in Swift), and never the result the
        // dispatcher and its observer keep.
        val handed = pending.result.thenApply { it }
        handed.whenComplete { _, error -> if (error is java.util.concurrent.CancellationException) interrupt(pending, DispatchOutcome.Cancelled) }
        return handed
    }

    /** Under [lock]: supersedes what [pending] ends, drops the oldest past the bound, queues it. */
    private fun queue(pending: Pending, ended: MutableList<Pair<Pending, DispatchOutcome>>) {
        val intent = pending.intent
        if (intent.isExternal && configuration.supersede == SupersedePolicy.NEWEST_EXTERNAL_LINK) {
            val iterator = waiting.iterator()
            while (iterator.hasNext()) {
                val older = iterator.next()
                if (older.intent.isExternal) { iterator.remove(); ended.add(older to DispatchOutcome.Superseded) }
            }
            val running = current
            val at = prompt
            if (configuration.supersedesPrompts && running != null && running.intent.isExternal && at != null && !at.isApply) {
                interruptRunning(running, DispatchOutcome.Superseded)
            }
        }
        if (waiting.size >= configuration.maximumWaiting && waiting.isNotEmpty()) ended.add(waiting.removeFirst() to DispatchOutcome.Dropped)
        waiting.addLast(pending)
    }

    /** Ends [pending] as [outcome]: at once if it waits, at its prompt or next step if it runs. */
    private fun interrupt(pending: Pending, outcome: DispatchOutcome) {
        val waited = synchronized(lock) {
            if (waiting.remove(pending)) true else { if (current === pending) interruptRunning(pending, outcome); false }
        }
        if (waited) finish(pending, outcome, null, 0)
    }

    /** Dispatches the link a notification's data carries; null, and nothing dispatched, when it carries none. */
    fun dispatchPush(payload: Map<String, Any?>): CompletableFuture<DispatchResult>? =
        Intent.push(payload, configuration.pushLinkKeys)?.let { dispatch(it) }

    /**
     * Ends the running intent as `cancelled`: at its prompt or its apply at once (the
     * handler's or the apply's future is cancelled, and no longer awaited), else at its next
     * step. False when nothing runs.
     */
    fun cancel(): Boolean = synchronized(lock) {
        val running = current ?: return false
        if (running.result.isDone) return false
        interruptRunning(running, DispatchOutcome.Cancelled)
        true
    }

    /** Under [lock]: [running] stops at its next step; a prompt it waits at ends now. */
    private fun interruptRunning(running: Pending, outcome: DispatchOutcome) {
        if (running.interruption != null) return
        running.interruption = outcome
        prompt?.ending?.complete(PromptEnd.Interrupted(outcome))
    }

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
                waiting.removeFirst().also { current = it }
            }
            val (outcome, resolution, revision) = try {
                process(next)
            } catch (error: Throwable) {
                // A handler, navigator or context that threw anything (an Error too: Kotlin's
                // TODO() is a NotImplementedError) ends its intent as the user declining; the
                // funnel goes on. Catching only Exception left this worker dead and every later
                // link waiting for good.
                val cause = (error as? ExecutionException)?.cause ?: error
                // What threw, for the app's crash reporter (the outcome names only its class,
                // which R8 may rename); a hook that throws changes nothing.
                configuration.onSeamFailure?.let { hook -> quietly { hook(cause) } }
                Triple(DispatchOutcome.GateCancelled(cause.javaClass.simpleName), null, 0L)
            }
            synchronized(lock) { current = null }
            if (stashedFor === next) {
                stashedFor = null
                try { configuration.gateStash?.clear() } catch (ignored: Exception) { }
            }
            finish(next, outcome, resolution, revision)
        }
    }

    /** The intent whose link is in the gate stash now (touched on the worker only). */
    private var stashedFor: Pending? = null

    private fun finish(pending: Pending, outcome: DispatchOutcome, resolution: Resolution?, revision: Long) {
        if (pending.result.isDone) return
        val intent = pending.intent
        // The shape is made here, with the words of the table in use (never the link itself).
        val shape = if (outcome is DispatchOutcome.NotFound && outcome.notFound.reason == NotFoundReason.UNKNOWN_ROUTE && intent is Intent.Link) {
            try {
                LinkShape.of(intent.link, tables.currentTable().manifest?.resolver?.vocabulary ?: emptySet()).toString()
            } catch (ignored: Throwable) { null }
        } else null
        val result = DispatchResult(pending.sequence, intent, outcome, resolution, revision, clock(), shape)
        // The observer (telemetry) first: once a caller holds the result, it has been recorded.
        // An observer that throws loses its own record, never the caller's result or the funnel.
        for (each in listOfNotNull(observer) + observers) {
            try { each.dispatched(result) } catch (ignored: Throwable) { }
        }
        pending.result.complete(result)
    }

    /**
     * Asks a handler (or the navigator) through [start], for at most [timeoutMillis]; the
     * first of its answer, the timeout and an interruption ends the prompt. A future that
     * loses is cancelled (a hint to the handler; its late answer changes nothing).
     */
    private fun <T> ask(pending: Pending, timeoutMillis: Long?, isApply: Boolean, gate: Resolution.Gated? = null,
                        start: () -> CompletableFuture<T>): PromptEnd {
        val prompt = Prompt(isApply, gate)
        synchronized(lock) {
            pending.interruption?.let { return PromptEnd.Interrupted(it) }
            this.prompt = prompt
        }
        // Started on a thread of the library's, not the worker: a handler that blocks before it
        // returns its future (or waits on a dispatch's future) holds that thread, never the
        // timeout or cancel().
        val started = AtomicReference<CompletableFuture<T>?>()
        HANDLERS.execute {
            if (prompt.ending.isDone) return@execute  // ended before it began: never shown
            try {
                val future = start()
                started.set(future)
                future.whenComplete { value, error ->
                    prompt.ending.complete(if (error != null) PromptEnd.Failed((error as? CompletionException)?.cause ?: error) else PromptEnd.Answered(value))
                }
                if (prompt.ending.isDone && !prompt.ending.get().isAnswer) future.cancel(true)
            } catch (error: Throwable) {
                prompt.ending.complete(PromptEnd.Failed(error))
            }
        }
        try {
            val end = try {
                if (timeoutMillis == null) prompt.ending.get() else prompt.ending.get(maxOf(0L, timeoutMillis), TimeUnit.MILLISECONDS)
            } catch (late: TimeoutException) {
                prompt.ending.complete(PromptEnd.TimedOut)
                prompt.ending.get()
            }
            if (!end.isAnswer) started.get()?.cancel(true)
            return end
        } finally {
            synchronized(lock) { if (this.prompt === prompt) this.prompt = null }
        }
    }

    private fun ending(outcome: DispatchOutcome) = if (outcome === DispatchOutcome.Superseded) PromptEnding.SUPERSEDED else PromptEnding.CANCELLED

    /** A handler's `close` that throws changes nothing of how its intent ended. */
    private inline fun quietly(close: () -> Unit) {
        try { close() } catch (ignored: Throwable) { }
    }

    /** Resolves, gates (the stash-and-resume loop with its loop guard), plans and applies one intent. */
    private fun process(pending: Pending): Triple<DispatchOutcome, Resolution?, Long> {
        val intent = pending.intent
        var table = tables.currentTable()
        var resolution = table.resolve(intent.resolutionRequest, contextProvider.context())
        val passed = HashSet<String>()
        val retried = HashSet<String>()
        var triedNewer = false
        var asked = 0
        steps@ while (true) {
            pending.interruption?.let { return Triple(it, resolution, table.revision) }
            when (val current = resolution) {
                is Resolution.NotFound -> {
                    // A link to a route newer than the table: once, the table a refresh in flight brings.
                    val wait = configuration.unknownRouteWaitMillis
                    if (current.reason == NotFoundReason.UNKNOWN_ROUTE && intent.isExternal && !triedNewer && wait != null) {
                        triedNewer = true
                        val newer = tables.newerTable(table.revision, wait)
                        if (newer != null) {
                            table = newer
                            resolution = table.resolve(intent.resolutionRequest, contextProvider.context())
                            continue@steps
                        }
                    }
                    return Triple(DispatchOutcome.NotFound(current), current, table.revision)
                }
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
                        val stash = configuration.gateStash
                        if (stash != null && stashedFor !== pending && intent is Intent.Link) {
                            stash.keep(intent.link, intent.via)
                            stashedFor = pending
                        }
                        when (val end = ask(pending, configuration.gateTimeoutMillis, false, current) { handler.satisfy(current.precondition, current) }) {
                            is PromptEnd.Answered -> if (end.value == true) passed.add(current.precondition)
                                else return Triple(DispatchOutcome.GateCancelled(current.precondition), current, table.revision)
                            is PromptEnd.TimedOut -> {
                                quietly { handler.close(current, PromptEnding.TIMED_OUT) }
                                return Triple(DispatchOutcome.GateTimedOut(current.precondition), current, table.revision)
                            }
                            is PromptEnd.Interrupted -> {
                                quietly { handler.close(current, ending(end.outcome)) }
                                return Triple(end.outcome, current, table.revision)
                            }
                            is PromptEnd.Failed -> throw end.error
                        }
                    }
                    // The original request, against a fresh context and the table in use now.
                    table = tables.currentTable()
                    resolution = table.resolve(current.resume, contextProvider.context())
                }
                is Resolution.Proceed -> {
                    val source = if (intent.isExternal) NavigationSource.EXTERNAL else NavigationSource.IN_APP
                    return Triple(navigate(pending, table.target(current), source), current, table.revision)
                }
            }
        }
    }

    /** The leave gate, then the apply. */
    private fun navigate(pending: Pending, target: NavigationTarget, source: NavigationSource): DispatchOutcome {
        var plan = NavigationPlanner.plan(navigator.state(), target, source)
        val answered = ArrayList<Screen>()
        for (round in 0..LEAVE_ROUNDS) {
            pending.interruption?.let { return it }
            val dirty = plan.leaving.filter { it.isDirty && it !in answered }
            if (dirty.isEmpty()) return if (plan.isEmpty) DispatchOutcome.Navigated(plan) else apply(pending, plan)
            val handler = leaveHandler
            if (round == LEAVE_ROUNDS || handler == null) return DispatchOutcome.LeaveCancelled(dirty)
            val currentPlan = plan
            when (val end = ask(pending, configuration.leaveTimeoutMillis, false) { handler.decide(dirty, currentPlan) }) {
                is PromptEnd.Answered -> when (end.value) {
                    LeaveDecision.DISCARD -> answered.addAll(dirty)
                    LeaveDecision.SAVE_THEN_CONTINUE -> {
                        when (val saved = ask(pending, configuration.leaveTimeoutMillis, false) { handler.save(dirty) }) {
                            is PromptEnd.Answered -> if (saved.value == true) answered.addAll(dirty) else return DispatchOutcome.LeaveCancelled(dirty)
                            is PromptEnd.TimedOut -> {
                                // The "Saving…" sheet is the handler's: told to close, as for its decision.
                                quietly { handler.close(PromptEnding.TIMED_OUT) }
                                return DispatchOutcome.LeaveTimedOut(dirty)
                            }
                            is PromptEnd.Interrupted -> { quietly { handler.close(ending(saved.outcome)) }; return saved.outcome }
                            is PromptEnd.Failed -> return DispatchOutcome.LeaveCancelled(dirty)  // a failed save keeps the work
                        }
                    }
                    else -> return DispatchOutcome.LeaveCancelled(dirty)
                }
                is PromptEnd.TimedOut -> { quietly { handler.close(PromptEnding.TIMED_OUT) }; return DispatchOutcome.LeaveTimedOut(dirty) }
                is PromptEnd.Interrupted -> { quietly { handler.close(ending(end.outcome)) }; return end.outcome }
                is PromptEnd.Failed -> return DispatchOutcome.LeaveCancelled(dirty)
            }
            // The user may have done something while asked: plan again from what is shown now.
            plan = NavigationPlanner.plan(navigator.state(), target, source)
        }
        return DispatchOutcome.LeaveCancelled(plan.leaving.filter { it.isDirty })
    }

    /** The navigator applies [plan], for at most `applyTimeoutMillis`; never superseded, ended by `cancel()`. */
    private fun apply(pending: Pending, plan: NavigationPlan): DispatchOutcome =
        when (val end = ask(pending, configuration.applyTimeoutMillis, true) { navigator.apply(plan) }) {
            is PromptEnd.Answered -> DispatchOutcome.Navigated(plan)
            is PromptEnd.TimedOut -> DispatchOutcome.ApplyTimedOut(plan)
            is PromptEnd.Interrupted -> end.outcome
            is PromptEnd.Failed -> throw end.error
        }

    companion object {
        /** Times the leave handler is asked for one intent (new dirty screens may appear while it asks). */
        const val LEAVE_ROUNDS = 3

        /** Where prompts are started: daemon threads, made as needed, kept a minute when idle. */
        private val HANDLERS = Executors.newCachedThreadPool { Thread(it, "waymark-handler").apply { isDaemon = true } }
    }
}
