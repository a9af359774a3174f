package dev.waymark.client

import dev.waymark.engine.DestinationRequest
import dev.waymark.engine.Resolution
import dev.waymark.engine.ResolutionRequest

/**
 * The door an intent came in by; telemetry's `entry`. [DEFERRED]: a link followed before the
 * app was installed, handed to it after (the Play Install Referrer, [DeferredLinks]).
 */
enum class Door(val json: String) { UNIVERSAL_LINK("universalLink"), SCHEME("scheme"), PUSH("push"), IN_APP("inApp"), DEFERRED("deferred") }

/**
 * Something that asks the app to go somewhere — an App Link or custom-scheme `Intent`'s
 * data, a notification's payload, a typed request from the app's own screens. Every kind
 * reaches the same resolver and the same precondition policy: no door skips a gate.
 */
sealed class Intent {
    /** An untrusted link and the door it came by. */
    data class Link(val link: String, val via: Door) : Intent() {
        override fun toString() = "${via.json} link (${link.toByteArray(Charsets.UTF_8).size} bytes)"  // never the link itself
    }
    data class Request(val request: DestinationRequest) : Intent() {
        override fun toString() = "inApp request for ${request.destination}"
    }

    val door: Door get() = if (this is Link) via else Door.IN_APP
    /** From outside the app: resets stacks; a newer one may supersede it. */
    val isExternal: Boolean get() = door != Door.IN_APP
    val resolutionRequest: ResolutionRequest
        get() = when (this) {
            is Link -> ResolutionRequest.Url(link)
            is Request -> ResolutionRequest.Destination(request)
        }

    companion object {
        /**
         * The link of a Play Install Referrer string (`deeplink=https%3A…&t=…&utm_source=…`):
         * the first `deeplink` item's value, form-decoded once, as a link by the deferred
         * door; null without one. It says nothing of the referrer's age or whether it was
         * used: [DeferredLinks.fromInstallReferrer] does (`docs/android.md`, "Deferred links").
         */
        fun fromInstallReferrer(referrer: String, parameter: String = "deeplink"): Intent? =
            formItem(referrer, parameter)?.let { if (it.isEmpty()) null else Link(it, Door.DEFERRED) }

        /** The first item named [name] of form-encoded [text], decoded once; null without one or when its encoding is broken. */
        internal fun formItem(text: String, name: String): String? {
            for (item in text.split('&')) {
                val equals = item.indexOf('=')
                if (equals < 0 || item.substring(0, equals) != name) continue
                return try {
                    java.net.URLDecoder.decode(item.substring(equals + 1), "UTF-8")
                } catch (broken: IllegalArgumentException) {
                    null
                }
            }
            return null
        }

        /** The link a notification's data carries under the first of [keys] that holds a string; null when none does. */
        fun push(payload: Map<String, Any?>, keys: List<String>): Intent? {
            for (key in keys) {
                val value = payload[key]
                if (value is String) return Link(value, Door.PUSH)
            }
            return null
        }
    }
}

/** How an intent ended; every intent ends in exactly one. */
sealed class DispatchOutcome(val name: String) {
    class Navigated(val plan: NavigationPlan) : DispatchOutcome("navigated")
    /** The gate handler answered `false` (or not in time): dropped, never resumed. */
    class GateCancelled(val precondition: String) : DispatchOutcome("gateCancelled")
    /** The handler said `true` but a fresh context still gated on it, again after one retry. */
    class GateLoop(val precondition: String) : DispatchOutcome("gateLoop")
    /** Screens with unsaved work would have gone, and the leave handler kept them. */
    class LeaveCancelled(val dirty: List<Screen>) : DispatchOutcome("leaveCancelled")
    class NotFound(val notFound: Resolution.NotFound) : DispatchOutcome("notFound(${notFound.reason.json})")
    /** Pushed out of a full queue by newer intents. */
    object Dropped : DispatchOutcome("dropped")
    /** A newer external link arrived while this one waited, in the queue or at a prompt. */
    object Superseded : DispatchOutcome("superseded")
    /** The gate handler did not answer within `gateTimeoutMillis`; it was told to close. */
    class GateTimedOut(val precondition: String) : DispatchOutcome("gateTimedOut")
    /** The leave handler did not answer (or save) within `leaveTimeoutMillis`; nothing was applied. */
    class LeaveTimedOut(val dirty: List<Screen>) : DispatchOutcome("leaveTimedOut")
    /**
     * The navigator's `apply` had not completed after `applyTimeoutMillis`: the dispatcher
     * stopped waiting for it and the next intent runs, planned from what `state()` reports.
     */
    class ApplyTimedOut(val plan: NavigationPlan) : DispatchOutcome("applyTimedOut")
    /** `cancel()` ended it, waiting at a prompt or an apply, or at its next step. */
    object Cancelled : DispatchOutcome("cancelled")
    /**
     * An auth callback ([DispatcherConfiguration.authCallbackPrefixes]) that arrived while the
     * gate handler ran for [precondition]: handed to it ([GateHandler.received]), never queued
     * behind the very gate it satisfies.
     */
    class HandedToGate(val precondition: String) : DispatchOutcome("handedToGate")

    override fun toString() = name
}

/** One intent's end, as the dispatcher reports it to its caller and its observer. */
class DispatchResult(
    /** Arrival order at the dispatcher, from 1. */
    val sequence: Int,
    val intent: Intent,
    val outcome: DispatchOutcome,
    /** The engine's last answer; null when it never reached the engine (dropped, superseded). */
    val resolution: Resolution?,
    /** The revision of the table it was resolved with (0: the empty table or not resolved). */
    val revision: Long,
    /** Milliseconds since 1970, from the dispatcher's clock. */
    val timeMillis: Long,
    /**
     * For a link that ended `notFound(unknownRoute)`: its shape (`LinkShape`, with the words of
     * the table it was resolved against, so nothing the app did not know leaves the device);
     * sent only when the reporter opts in (`TelemetryConfiguration.reportsUnknownLinkShapes`).
     */
    val unknownLinkShape: String? = null
)
