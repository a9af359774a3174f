package dev.waymark.tools

import dev.waymark.client.ContextProvider
import dev.waymark.client.Cohort
import dev.waymark.client.DispatcherConfiguration
import dev.waymark.client.Door
import dev.waymark.client.GateHandler
import dev.waymark.client.HttpUrlTransport
import dev.waymark.client.Intent
import dev.waymark.client.ManifestClient
import dev.waymark.client.ManifestClientConfiguration
import dev.waymark.client.NavigationPlan
import dev.waymark.client.NavigationState
import dev.waymark.client.Navigator
import dev.waymark.client.RouteDispatcher
import dev.waymark.client.Screen
import dev.waymark.client.SupersedePolicy
import dev.waymark.client.TelemetryConfiguration
import dev.waymark.client.TelemetryReporter
import dev.waymark.client.Transport
import dev.waymark.client.TransportRequest
import dev.waymark.client.TransportResponse
import dev.waymark.client.applying
import dev.waymark.engine.AppBuild
import dev.waymark.engine.DestinationRequest
import dev.waymark.engine.ParamValue
import dev.waymark.engine.Resolution
import dev.waymark.engine.ResolutionContext
import dev.waymark.engine.Timestamp
import java.io.File
import java.io.IOException
import java.time.Instant
import java.util.concurrent.CompletableFuture
import java.util.concurrent.TimeUnit

/**
 * The Android library's whole loop against a live `waymark serve` (`Tests/Scripts/android-live.py`):
 * the manifest over HTTP (then 304 by its ETag), links through the dispatcher with a login
 * gate, and telemetry posted with the batch envelope — the first `202` lost on the way back,
 * so the same batch is sent again and the server must count it once.
 * Usage: LiveClient SERVER TOKEN CACHE_DIRECTORY LINK...  (`app:DEST?k=v` is an in-app request)
 */
fun main(args: Array<String>) {
    val (server, token, cache) = Triple(args[0], args[1], File(args[2]))
    val build = AppBuild("storefront", "android", "5.3.0")
    val manifests = ManifestClient(ManifestClientConfiguration(server, build, token, cache))
    println("manifest: ${manifests.refresh()}")
    println("manifest again: ${manifests.refresh()}")
    var loggedIn = false
    var state = NavigationState("home", mapOf("home" to listOf(Screen("home"))))
    val navigator = object : Navigator {
        override fun state() = state
        override fun apply(plan: NavigationPlan): CompletableFuture<Unit> { state = state.applying(plan); return CompletableFuture.completedFuture(Unit) }
    }
    val context = object : ContextProvider {
        override fun context() = ResolutionContext(if (loggedIn) setOf("auth") else emptySet(), Instant.now().let { Timestamp.microseconds(it.epochSecond, it.nano) })
    }
    val gates = object : GateHandler {
        override fun satisfy(precondition: String, gate: Resolution.Gated): CompletableFuture<Boolean> {
            println("gate: $precondition for ${gate.destination}")
            loggedIn = true
            return CompletableFuture.completedFuture(true)
        }
    }
    // The first 202 is lost on the way back: the reporter must send the same batch again.
    var lost = false
    val lossy = object : Transport {
        val real = HttpUrlTransport()
        override fun send(request: TransportRequest): TransportResponse {
            val response = real.send(request)
            if (!lost && response.status == 202) { lost = true; throw IOException("the answer was lost") }
            return response
        }
    }
    val installId = Cohort.installId(cache)
    val telemetry = TelemetryReporter(TelemetryConfiguration(server, build, token, cache, cohort = manifests.cohort(), installId = installId), lossy)
    val dispatcher = RouteDispatcher(manifests, navigator, context, gates, observer = telemetry,
        configuration = DispatcherConfiguration(supersede = SupersedePolicy.KEEP_ALL))
    dispatcher.ready()
    for (link in args.drop(3)) {
        val intent = when {
            link.startsWith("app:") -> {
                val (destination, query) = link.removePrefix("app:").split("?", limit = 2).let { it[0] to it.getOrElse(1) { "" } }
                val params = query.split("&").filter { it.contains("=") }.associate { it.substringBefore("=") to (ParamValue.Text(it.substringAfter("=")) as ParamValue) }
                Intent.Request(DestinationRequest(destination, params))
            }
            link.startsWith("push:") -> Intent.Link(link.removePrefix("push:"), Door.PUSH)
            link.startsWith("https:") -> Intent.Link(link, Door.UNIVERSAL_LINK)
            else -> Intent.Link(link, Door.SCHEME)
        }
        val result = dispatcher.dispatch(intent).get(30, TimeUnit.SECONDS)
        println("result: $link ${result.outcome}")
    }
    println("telemetry first: ${telemetry.flush()}")
    println("telemetry again: ${telemetry.flush()}")
    println("telemetry pending: ${telemetry.pendingResolutions}")
}
