package dev.waymark.client

import dev.waymark.engine.Resolution
import java.util.concurrent.CompletableFuture
import java.util.concurrent.CompletionException
import java.util.concurrent.ExecutionException
import kotlin.coroutines.Continuation
import kotlin.coroutines.CoroutineContext
import kotlin.coroutines.EmptyCoroutineContext
import kotlin.coroutines.resume
import kotlin.coroutines.resumeWithException
import kotlin.coroutines.startCoroutine
import kotlin.coroutines.suspendCoroutine

// The seams as suspend functions, for an app written with coroutines. Kotlin's standard library
// alone (kotlin.coroutines): no kotlinx dependency. Give the adapters the context the app's
// handlers should start in — kotlinx's `Dispatchers.Main.immediate` for UI work — and they
// start there; with no context a handler starts on the library's handler thread.
//
// A coroutine started here is not cancelled when the dispatcher stops waiting for it (a
// timeout, `cancel()`, a newer link): the standard library has no Job to cancel. The
// dispatcher says so through the handler's `close(…)` (the login screen or the "Saving…"
// sheet to dismiss), as for future-based handlers, and its late answer changes nothing.

/** A [Navigator] whose [apply] suspends until the operations are done (animations included). */
interface SuspendingNavigator {
    /** What the app shows now; synchronous, on the dispatcher's worker thread (read a snapshot). */
    fun state(): NavigationState
    suspend fun apply(plan: NavigationPlan)
}

/** A [GateHandler] whose [satisfy] suspends until the user logged in (`true`) or gave up (`false`). */
interface SuspendingGateHandler {
    suspend fun satisfy(precondition: String, gate: Resolution.Gated): Boolean
    /** As [GateHandler.close]: the intent ended without the answer; dismiss the login screen. */
    fun close(gate: Resolution.Gated, ending: PromptEnding) {}
    /**
     * As [GateHandler.received]: an auth callback for the running [satisfy], started as a
     * coroutine in the adapter's context (exchange the code, commit the session, then let
     * [satisfy] return). The default ignores it.
     */
    suspend fun received(callback: String, gate: Resolution.Gated) {}
}

/** A [LeaveHandler] whose [decide] and [save] suspend. */
interface SuspendingLeaveHandler {
    suspend fun decide(dirty: List<Screen>, plan: NavigationPlan): LeaveDecision
    suspend fun save(dirty: List<Screen>): Boolean
    /** As [LeaveHandler.close]: dismiss the prompt or the "Saving…" sheet. */
    fun close(ending: PromptEnding) {}
}

/**
 * Runs [block] as a coroutine started in [context] and returns a future of its value: what
 * the future-based seams take. A block that throws (an `Error` too) fails the future, which
 * the dispatcher treats as the seam failing (`docs/android.md`, "The dispatcher's rules").
 */
fun <T> futureOf(context: CoroutineContext = EmptyCoroutineContext, block: suspend () -> T): CompletableFuture<T> {
    val future = CompletableFuture<T>()
    try {
        block.startCoroutine(Continuation(context) { result ->
            result.fold({ future.complete(it) }, { future.completeExceptionally(it) })
        })
    } catch (failure: Throwable) {
        // An interceptor that refused to start it (a closed executor): a failed seam, not a crash.
        future.completeExceptionally(failure)
    }
    return future
}

/**
 * Suspends until the future completes: its value, or what failed it thrown (unwrapped from
 * `CompletionException`). The future is not cancelled if the coroutine is; with kotlinx,
 * `kotlinx.coroutines.future.await()` does both.
 */
suspend fun <T> CompletableFuture<T>.awaitCompletion(): T = suspendCoroutine { continuation ->
    whenComplete { value, error ->
        if (error == null) {
            continuation.resume(value)
        } else {
            continuation.resumeWithException(if ((error is CompletionException || error is ExecutionException) && error.cause != null) error.cause!! else error)
        }
    }
}

/** [RouteDispatcher.dispatch], awaited: the intent's one result (it never fails). */
suspend fun RouteDispatcher.dispatchAndAwait(intent: Intent): DispatchResult = dispatch(intent).awaitCompletion()

fun SuspendingNavigator.asNavigator(context: CoroutineContext = EmptyCoroutineContext): Navigator {
    val navigator = this
    return object : Navigator {
        override fun state() = navigator.state()
        override fun apply(plan: NavigationPlan): CompletableFuture<Unit> = futureOf(context) { navigator.apply(plan) }
    }
}

fun SuspendingGateHandler.asGateHandler(context: CoroutineContext = EmptyCoroutineContext): GateHandler {
    val handler = this
    return object : GateHandler {
        override fun satisfy(precondition: String, gate: Resolution.Gated) = futureOf(context) { handler.satisfy(precondition, gate) }
        override fun close(gate: Resolution.Gated, ending: PromptEnding) = handler.close(gate, ending)
        override fun received(callback: String, gate: Resolution.Gated) = futureOf(context) { handler.received(callback, gate) }
    }
}

fun SuspendingLeaveHandler.asLeaveHandler(context: CoroutineContext = EmptyCoroutineContext): LeaveHandler {
    val handler = this
    return object : LeaveHandler {
        override fun decide(dirty: List<Screen>, plan: NavigationPlan) = futureOf(context) { handler.decide(dirty, plan) }
        override fun save(dirty: List<Screen>) = futureOf(context) { handler.save(dirty) }
        override fun close(ending: PromptEnding) = handler.close(ending)
    }
}
