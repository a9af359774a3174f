package dev.waymark.client

import dev.waymark.engine.AppBuild
import dev.waymark.engine.ConformanceTest
import dev.waymark.engine.DestinationRequest
import dev.waymark.engine.JsonReader
import dev.waymark.engine.JsonValue
import dev.waymark.engine.Manifest
import dev.waymark.engine.ManifestTest
import dev.waymark.engine.ParamValue
import dev.waymark.engine.Resolution
import dev.waymark.engine.ResolutionContext
import org.junit.jupiter.api.Assertions.assertEquals
import org.junit.jupiter.api.Assertions.assertTrue
import org.junit.jupiter.api.Assertions.fail
import org.junit.jupiter.api.DynamicTest
import org.junit.jupiter.api.TestFactory
import java.io.File
import java.nio.file.Files
import java.util.Collections
import java.util.concurrent.CompletableFuture
import java.util.concurrent.TimeUnit
import java.util.concurrent.TimeoutException

/**
 * The dispatcher's shared table, `conformance/dispatcher.json` (`waymark.dispatcher/1`,
 * `docs/conformance.md`): the scripts the Swift dispatcher runs too, read from the same
 * file. Every wait is on a condition, never on time alone.
 */
class DispatcherConformanceTest {
    companion object {
        val build = AppBuild("lab", "android", "1.0.0")
        val file: JsonValue by lazy { JsonReader().parse(File(ConformanceTest.directory(), "dispatcher.json").readBytes()) }
        private val lab: JsonValue by lazy { JsonReader().parse(File(ConformanceTest.directory(), file["fixture"]!!.string!!).readBytes()) }

        fun table(revision: Long, extra: List<JsonValue> = emptyList()): RouteTable {
            val routes = lab["routes"]!!["routes"]!!.list!! + extra
            val bytes = ManifestTest.manifest(lab["schemas"]!!.list!![0], routes, revision).canonical().toByteArray()
            return RouteTable(Manifest.decode(bytes, build, ManifestTest.now), RouteTable.Origin.BUNDLED)
        }

        fun seconds(json: JsonValue?): Double? = when (json) {
            is JsonValue.JsonInt -> json.value.toDouble()
            is JsonValue.JsonDouble -> json.value
            else -> null
        }

        fun millis(json: JsonValue?): Long? = seconds(json)?.let { (it * 1000).toLong() }

        /** Waits until [condition] holds, up to a generous bound (the condition, not the bound, is the test). */
        fun eventually(condition: () -> Boolean): Boolean {
            repeat(2_000) {
                if (condition()) return true
                Thread.sleep(5)
            }
            return false
        }
    }

    /** The lab table, and a refresh in flight from the start that brings a newer one (`newerTable`). */
    class Tables(newer: JsonValue?) : RouteTableSource {
        @Volatile private var table = table(1)
        private val refresh: CompletableFuture<Unit>? = newer?.let { spec ->
            val delay = millis(spec["afterSeconds"]) ?: 0L
            val extra = spec["routes"]?.list ?: emptyList()
            CompletableFuture<Unit>().also { done ->
                Thread {
                    Thread.sleep(delay)
                    table = table(2, extra)
                    done.complete(Unit)
                }.apply { isDaemon = true }.start()
            }
        }

        override fun currentTable(): RouteTable = table

        override fun newerTable(revision: Long, withinMillis: Long): RouteTable? {
            if (table.revision > revision) return table
            val running = refresh ?: return null
            try { running.get(withinMillis, TimeUnit.MILLISECONDS) } catch (late: TimeoutException) { }
            return table.takeIf { it.revision > revision }
        }
    }

    /** The app: a session, a login screen that answers `auth` when told, a leave prompt, a navigator that may be stuck. */
    class App(satisfied: Set<String>, dirty: Boolean, stuck: Boolean, private val leave: String?) :
        ContextProvider, GateHandler, LeaveHandler, Navigator, DispatchObserver {
        val satisfied: MutableSet<String> = Collections.synchronizedSet(HashSet(satisfied))
        val closed: MutableList<String> = Collections.synchronizedList(ArrayList())
        val callbacks: MutableList<String> = Collections.synchronizedList(ArrayList())
        val observed: MutableList<DispatchResult> = Collections.synchronizedList(ArrayList())
        @Volatile var loginShown = false
        @Volatile var saving = false
        @Volatile var applyStarted = false
        @Volatile var applied = 0
        @Volatile private var login: CompletableFuture<Boolean>? = null
        @Volatile private var stuckApplies = if (stuck) 1 else 0
        private val held: MutableList<CompletableFuture<Unit>> = Collections.synchronizedList(ArrayList())
        @Volatile private var current = NavigationState("main", mapOf("main" to listOf(Screen("root")) +
            (if (dirty) listOf(Screen("item", mapOf("id" to ParamValue.Integer(1)), isDirty = true)) else emptyList())))

        override fun context() = ResolutionContext(HashSet(satisfied), ManifestTest.now)

        override fun satisfy(precondition: String, gate: Resolution.Gated): CompletableFuture<Boolean> {
            if (precondition != "auth") {
                satisfied.add(precondition)
                return CompletableFuture.completedFuture(true)
            }
            return CompletableFuture<Boolean>().also { login = it; loginShown = true }
        }

        fun logIn() {
            satisfied.add("auth")
            login?.complete(true)
        }

        override fun close(gate: Resolution.Gated, ending: PromptEnding) { closed.add(name(ending)) }

        /** Handed an auth callback, the login screen signs in with it. */
        override fun received(callback: String, gate: Resolution.Gated): CompletableFuture<Unit> {
            callbacks.add(callback)
            logIn()
            return CompletableFuture.completedFuture(Unit)
        }

        override fun decide(dirty: List<Screen>, plan: NavigationPlan): CompletableFuture<LeaveDecision> =
            if (leave == "savesForever") CompletableFuture.completedFuture(LeaveDecision.SAVE_THEN_CONTINUE) else CompletableFuture()

        override fun save(dirty: List<Screen>): CompletableFuture<Boolean> {
            saving = true
            return CompletableFuture()
        }

        override fun close(ending: PromptEnding) { closed.add(name(ending)) }

        override fun state() = current

        override fun apply(plan: NavigationPlan): CompletableFuture<Unit> {
            applyStarted = true
            val done = CompletableFuture<Unit>()
            val apply = { current = current.applying(plan); applied += 1; done.complete(Unit) }
            if (stuckApplies > 0) {
                stuckApplies -= 1
                held.add(CompletableFuture<Unit>().also { it.thenRun { apply() } })
            } else {
                apply()
            }
            return done
        }

        fun release() {
            val all = synchronized(held) { ArrayList(held).also { held.clear() } }
            for (future in all) future.complete(Unit)
        }

        override fun dispatched(result: DispatchResult) { observed.add(result) }

        fun isTrue(condition: String) = when (condition) {
            "loginShown" -> loginShown
            "saving" -> saving
            "applyStarted" -> applyStarted
            else -> false
        }

        private fun name(ending: PromptEnding) = when (ending) {
            PromptEnding.TIMED_OUT -> "timedOut"
            PromptEnding.CANCELLED -> "cancelled"
            PromptEnding.SUPERSEDED -> "superseded"
        }
    }

    private fun configuration(json: JsonValue?, stash: GateStash): DispatcherConfiguration {
        val defaults = DispatcherConfiguration()
        if (json == null) return defaults
        fun time(key: String, keep: Long?): Long? = if (json.obj!!.containsKey(key)) millis(json[key]) else keep
        return defaults.copy(
            gateTimeoutMillis = time("gateTimeout", defaults.gateTimeoutMillis),
            leaveTimeoutMillis = time("leaveTimeout", defaults.leaveTimeoutMillis),
            applyTimeoutMillis = time("applyTimeout", defaults.applyTimeoutMillis),
            unknownRouteWaitMillis = time("unknownRouteWait", defaults.unknownRouteWaitMillis),
            supersede = when (json["supersede"]?.string) {
                null -> defaults.supersede
                "keepAll" -> SupersedePolicy.KEEP_ALL
                "newestExternalLink" -> SupersedePolicy.NEWEST_EXTERNAL_LINK
                else -> fail("unknown supersede policy")
            },
            supersedesPrompts = (json["supersedesPrompts"] as? JsonValue.Bool)?.value ?: defaults.supersedesPrompts,
            gateStash = if ((json["gateStash"] as? JsonValue.Bool)?.value == true) stash else null,
            authCallbackPrefixes = json["authCallbackPrefixes"]?.list?.map { it.string!! } ?: defaults.authCallbackPrefixes
        )
    }

    private fun intent(json: JsonValue): Intent {
        json.string?.let { link -> return Intent.Link(link, if (link.startsWith("https:")) Door.UNIVERSAL_LINK else Door.SCHEME) }
        val params = json["params"]!!.obj!!.mapValues { (_, value) ->
            value.long?.let { ParamValue.Integer(it) } ?: ParamValue.Text(value.string!!)
        }
        return Intent.Request(DestinationRequest(json["destination"]!!.string!!, params))
    }

    @org.junit.jupiter.api.Test
    fun everyRowOfTheFileRuns() {
        val text = File(ConformanceTest.directory(), "dispatcher.json").readText()
        assertEquals(text.split("\"label\"").size - 1, file["rows"]!!.list!!.size)
        assertTrue(file["rows"]!!.list!!.size >= 19)
    }

    @TestFactory
    fun scripts() = file["rows"]!!.list!!.map { row ->
        DynamicTest.dynamicTest(row["label"]!!.string!!) { run(row) }
    }

    private fun run(row: JsonValue) {
        val stash = GateStash(Files.createTempDirectory("waymark-stash").toFile())
        val tables = Tables(row["newerTable"])
        fun launch(satisfied: Set<String>): Pair<RouteDispatcher, App> {
            val app = App(satisfied, row["screens"]?.string == "dirty", row["navigator"]?.string == "stuck", row["leave"]?.string)
            return RouteDispatcher(tables, app, app, app, app, app, configuration(row["configuration"], stash)) to app
        }
        var (dispatcher, app) = launch(emptySet())
        dispatcher.ready()
        val running = HashMap<String, CompletableFuture<DispatchResult>>()
        for ((index, step) in row["steps"]!!.list!!.withIndex()) {
            val at = "step ${index + 1}"
            val members = step.obj!!
            when {
                "dispatch" in members -> running[step["as"]!!.string!!] = dispatcher.dispatch(intent(step["dispatch"]!!))
                "await" in members -> { val condition = step["await"]!!.string!!; val current = app; assertTrue(eventually { current.isTrue(condition) }, "$at: never $condition") }
                "logIn" in members -> app.logIn()
                "cancel" in members -> assertEquals((step["cancel"] as JsonValue.Bool).value, dispatcher.cancel(), "$at: cancel()")
                "release" in members -> app.release()
                "expect" in members -> {
                    val name = step["expect"]!!.string!!
                    val outcome = if (name == "stashed") {
                        val current = app
                        assertTrue(eventually { current.observed.any { it.sequence == 1 } }, "$at: the stashed link never ran")
                        synchronized(app.observed) { app.observed.first { it.sequence == 1 } }.outcome.name
                    } else {
                        running[name]!!.get(30, TimeUnit.SECONDS).outcome.name
                    }
                    assertEquals(step["outcome"]!!.string, outcome, "$at: $name")
                }
                "callbacks" in members -> assertEquals(step["callbacks"]!!.list!!.map { it.string!! }, synchronized(app.callbacks) { ArrayList(app.callbacks) }, "$at: callbacks")
                "closed" in members -> assertEquals(step["closed"]!!.list!!.map { it.string!! }, synchronized(app.closed) { ArrayList(app.closed) }, "$at: told to close")
                "applied" in members -> assertEquals(step["applied"]!!.long!!.toInt(), app.applied, "$at: applied")
                "observed" in members -> {
                    val count = step["observed"]!!.long!!.toInt()
                    val current = app
                    eventually { current.observed.size >= count }
                    assertEquals(count, app.observed.size, "$at: observed")
                }
                "relaunch" in members -> {
                    // The process dies at the login screen: nothing of it answers again; a new
                    // launch (the same files) opens the launch gate.
                    val satisfied = step["relaunch"]!!["session"]!!.list!!.map { it.string!! }.toSet()
                    val next = launch(satisfied)
                    dispatcher = next.first
                    app = next.second
                    dispatcher.ready()
                }
                else -> fail("$at: unknown step ${step.canonical()}")
            }
        }
    }
}
