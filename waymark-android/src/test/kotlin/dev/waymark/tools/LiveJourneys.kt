package dev.waymark.tools

import dev.waymark.client.Cohort
import dev.waymark.client.ContextProvider
import dev.waymark.client.DeferredLinks
import dev.waymark.client.DispatchObserver
import dev.waymark.client.DispatchResult
import dev.waymark.client.DispatcherConfiguration
import dev.waymark.client.Door
import dev.waymark.client.GateHandler
import dev.waymark.client.GateStash
import dev.waymark.client.Intent
import dev.waymark.client.ManifestClient
import dev.waymark.client.ManifestClientConfiguration
import dev.waymark.client.NavigationPlan
import dev.waymark.client.NavigationState
import dev.waymark.client.Navigator
import dev.waymark.client.RouteDispatcher
import dev.waymark.client.Screen
import dev.waymark.client.TelemetryConfiguration
import dev.waymark.client.TelemetryReporter
import dev.waymark.client.applying
import dev.waymark.engine.AppBuild
import dev.waymark.engine.Resolution
import dev.waymark.engine.ResolutionContext
import java.io.File
import java.util.concurrent.CompletableFuture
import java.util.concurrent.TimeUnit

/**
 * Two journeys of the Android library against a live `waymark serve`, each step a process of
 * its own as an app's launches are (`Tests/Scripts/android-live.py`):
 * - `firstTap SERVER TOKEN CACHE LINK`: a cold start whose cache holds an older revision,
 *   by a link to a campaign published since. Without waiting for the manifest the link ends
 *   notFound (printed as the control); with `ready(waitingForManifestMillis)` it opens.
 * - `gate SERVER TOKEN CACHE LINK`: logged out, the link waits at the login screen, which
 *   never answers (the process is killed there); `relaunch SERVER TOKEN CACHE`: the next
 *   launch, logged in, carries the stashed link out, once.
 * - `deferred SERVER TOKEN CACHE REFERRER`: the first launch after an install from Google
 *   Play hands Play's referrer string to [DeferredLinks]: its link is dispatched by the
 *   deferred door (telemetry sent), then the same link as a tap in the app on a fresh stack,
 *   to compare what each shows; a second hand-over in the same launch opens nothing. Run
 *   again, the referrer is remembered across launches.
 */
fun main(args: Array<String>) {
    val (mode, server, token) = Triple(args[0], args[1], args[2])
    val cache = File(args[3])
    val build = AppBuild("storefront", "android", "5.3.0")
    fun manifests() = ManifestClient(ManifestClientConfiguration(server, build, token, cache))
    var state = NavigationState("home", mapOf("home" to listOf(Screen("home"))))
    val navigator = object : Navigator {
        override fun state() = state
        override fun apply(plan: NavigationPlan): CompletableFuture<Unit> { state = state.applying(plan); return CompletableFuture.completedFuture(Unit) }
    }
    fun context(loggedIn: Boolean) = object : ContextProvider {
        override fun context() = ResolutionContext(if (loggedIn) setOf("auth") else emptySet(), System.currentTimeMillis() * 1_000)
    }
    fun shown() = state.stacks.entries.joinToString(" | ") { (tab, screens) -> "$tab: " + screens.joinToString(" > ") }
    val stash = GateStash(cache)
    when (mode) {
        "firstTap" -> {
            val link = Intent.Link(args[4], Door.UNIVERSAL_LINK)
            val control = RouteDispatcher(manifests(), navigator, context(true), configuration = DispatcherConfiguration(unknownRouteWaitMillis = null))
            control.ready()
            val before = control.dispatch(link).get(30, TimeUnit.SECONDS)
            println("control: ${before.outcome} revision ${before.revision}")
            val dispatcher = RouteDispatcher(manifests(), navigator, context(true))
            dispatcher.ready(waitingForManifestMillis = 10_000)
            val after = dispatcher.dispatch(link).get(30, TimeUnit.SECONDS)
            println("firstTap: ${after.outcome} revision ${after.revision} shown ${shown()}")
        }
        "gate" -> {
            val login = object : GateHandler {
                override fun satisfy(precondition: String, gate: Resolution.Gated): CompletableFuture<Boolean> {
                    println("login shown: $precondition")
                    System.out.flush()
                    return CompletableFuture()  // the user is still typing when the process dies
                }
            }
            val dispatcher = RouteDispatcher(manifests(), navigator, context(false), login, configuration = DispatcherConfiguration(gateStash = stash))
            dispatcher.ready()
            dispatcher.dispatch(Intent.Link(args[4], Door.UNIVERSAL_LINK))
            Thread.sleep(120_000)
        }
        "relaunch" -> {
            val ended = CompletableFuture<DispatchResult>()
            val observer = object : DispatchObserver {
                override fun dispatched(result: DispatchResult) { ended.complete(result) }
            }
            println("stash file: ${if (stash.file.exists()) "present" else "absent"}")
            val dispatcher = RouteDispatcher(manifests(), navigator, context(true), observer = observer,
                configuration = DispatcherConfiguration(gateStash = stash))
            dispatcher.ready(waitingForManifestMillis = 10_000)
            val result = try { ended.get(15, TimeUnit.SECONDS) } catch (none: java.util.concurrent.TimeoutException) { null }
            println("relaunched: ${result?.outcome ?: "nothing"} shown ${shown()}")
            println("stash file after: ${if (stash.file.exists()) "present" else "absent"}")
        }
        "deferred" -> {
            val telemetry = TelemetryReporter(TelemetryConfiguration(server, build, token, cache, cohort = manifests().cohort(), installId = Cohort.installId(cache)))
            val dispatcher = RouteDispatcher(manifests(), navigator, context(true), observer = telemetry)
            dispatcher.ready(waitingForManifestMillis = 10_000)
            val deferred = DeferredLinks(File(cache, "waymark-deferred"), listOf("storefront.example", "www.storefront.example"))
            val intent = deferred.fromInstallReferrer(args[4])
            if (intent == null) {
                println("deferred: nothing")
                return
            }
            val opened = dispatcher.dispatch(intent).get(30, TimeUnit.SECONDS)
            println("deferred: ${opened.outcome} by ${intent.door.json} shown ${shown()}")
            println("again: ${deferred.fromInstallReferrer(args[4])?.let { "opened" } ?: "nothing"}")
            println("telemetry: ${telemetry.flush()}")
            state = NavigationState("home", mapOf("home" to listOf(Screen("home"))))
            val tapped = RouteDispatcher(manifests(), navigator, context(true))
            tapped.ready(waitingForManifestMillis = 10_000)
            val link = (intent as Intent.Link).link
            val inApp = tapped.dispatch(Intent.Link(link, Door.UNIVERSAL_LINK)).get(30, TimeUnit.SECONDS)
            println("tapped: ${inApp.outcome} shown ${shown()}")
        }
        else -> throw IllegalArgumentException("mode: firstTap, gate, relaunch or deferred")
    }
}
