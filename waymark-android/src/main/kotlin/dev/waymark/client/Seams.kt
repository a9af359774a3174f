package dev.waymark.client

import dev.waymark.engine.ResolutionContext
import dev.waymark.engine.Resolution
import java.util.concurrent.CompletableFuture

/**
 * The app's screens as the dispatcher sees them; the app implements it over its activities,
 * fragments or navigation graph. [apply]'s future completes when the operations are done
 * (animations included): the next plan is not made before.
 */
interface Navigator {
    /** What the app shows now, with each screen's dirty flag. */
    fun state(): NavigationState
    fun apply(plan: NavigationPlan): CompletableFuture<Unit>
}

/**
 * Satisfies a precondition the engine gated on (shows the login activity…): `true` only once
 * the session says so — a context read right after must see it — `false` when the user
 * cancelled: the intent is dropped, never resumed.
 */
interface GateHandler {
    fun satisfy(precondition: String, gate: Resolution.Gated): CompletableFuture<Boolean>
    /**
     * The intent [satisfy] was asked for ended without its answer ([PromptEnding]): close the
     * login screen. [satisfy]'s future is cancelled too; a late answer changes nothing.
     * Called on the dispatcher's worker thread.
     */
    fun close(gate: Resolution.Gated, ending: PromptEnding) {}
    /**
     * A link configured as an auth callback ([DispatcherConfiguration.authCallbackPrefixes])
     * arrived while [satisfy] runs for [gate]: finish the sign-in with it — only if it
     * answers this screen's own request (OAuth's `state`): anyone can send the app a link
     * that looks like a callback — commit the session, then complete [satisfy]'s future.
     * Called on a thread of the library's; the callback's intent ends `handedToGate` once the
     * future returned completes (or fails), or after `gateTimeoutMillis`. The default ignores
     * the callback.
     */
    fun received(callback: String, gate: Resolution.Gated): CompletableFuture<Unit> = CompletableFuture.completedFuture(Unit)
}

/** Why the dispatcher stopped waiting for a handler's answer. */
enum class PromptEnding {
    /** It took longer than the configured timeout. */
    TIMED_OUT,
    /** `cancel()`. */
    CANCELLED,
    /** A newer external link arrived (`DispatcherConfiguration.supersedesPrompts`). */
    SUPERSEDED
}

/** The user's state as the engine needs it, read fresh for every resolution. */
interface ContextProvider {
    fun context(): ResolutionContext
}

/** What to do with screens holding unsaved work that a plan would remove. */
enum class LeaveDecision { DISCARD, CANCEL, SAVE_THEN_CONTINUE }

/** Asks the user about unsaved work before a plan removes it. */
interface LeaveHandler {
    fun decide(dirty: List<Screen>, plan: NavigationPlan): CompletableFuture<LeaveDecision>
    /** Saves the screens' work; `false` if it could not (the plan is then not applied). */
    fun save(dirty: List<Screen>): CompletableFuture<Boolean>
    /** The intent ended while [decide] or [save] was asked ([PromptEnding]): close the prompt (a "Saving…" sheet too). */
    fun close(ending: PromptEnding) {}
}

/** Receives every intent's one result (the telemetry reporter is one). */
interface DispatchObserver {
    fun dispatched(result: DispatchResult)
}
