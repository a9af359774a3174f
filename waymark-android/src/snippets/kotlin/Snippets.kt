// The code of docs/android.md: each region between `doc:begin` and `doc:end` is a Kotlin
// snippet of the page, character for character (Tests/Scripts/android-snippets.py checks
// both ways), compiled by a Kotlin 2 compiler, as an app team's Gradle build would, against
// the library and stand-ins for the Android SDK and kotlinx (../standins), then run
// (SnippetsKt.main: the storefront's links through the snippets' dispatcher and observer).
// Outside the regions: what the snippets take from the app (its session, navigator, login
// screen, BuildConfig and R).
package com.example.storefront

import android.app.Application
import android.content.Context
import android.content.pm.PackageManager
import android.net.Uri
import android.os.Bundle
import android.os.Handler
import android.os.Looper
import androidx.appcompat.app.AppCompatActivity
import androidx.compose.runtime.MutableState
import androidx.navigation.NavBackStackEntry
import androidx.navigation.NavHostController
import dev.waymark.client.Cohort
import dev.waymark.client.ContextProvider
import dev.waymark.client.DispatchObserver
import dev.waymark.client.DispatchOutcome
import dev.waymark.client.DispatchResult
import dev.waymark.client.DispatcherConfiguration
import dev.waymark.client.Door
import dev.waymark.client.GateHandler
import dev.waymark.client.GateStash
import dev.waymark.client.Intent
import dev.waymark.client.LeaveDecision
import dev.waymark.client.LeaveHandler
import dev.waymark.client.ManifestClient
import dev.waymark.client.ManifestClientConfiguration
import dev.waymark.client.NavigationOperation
import dev.waymark.client.NavigationPlan
import dev.waymark.client.NavigationState
import dev.waymark.client.Navigator
import dev.waymark.client.PromptEnding
import dev.waymark.client.RouteDispatcher
import dev.waymark.client.RouteTableSource
import dev.waymark.client.Screen
import dev.waymark.client.SuspendingGateHandler
import dev.waymark.client.SuspendingLeaveHandler
import dev.waymark.client.SuspendingNavigator
import dev.waymark.client.TelemetryConfiguration
import dev.waymark.client.TelemetryReporter
import dev.waymark.client.asGateHandler
import dev.waymark.client.asLeaveHandler
import dev.waymark.client.applying
import dev.waymark.client.asNavigator
import dev.waymark.engine.AppBuild
import dev.waymark.engine.NotFoundReason
import dev.waymark.engine.ParamValue
import dev.waymark.engine.Resolution
import dev.waymark.engine.ResolutionContext
import java.util.concurrent.CompletableFuture
import kotlinx.coroutines.CompletableDeferred
import kotlinx.coroutines.Dispatchers

/** What Gradle generates for the app. */
object BuildConfig {
    const val VERSION_NAME = "5.3.0"
    const val WAYMARK_READ_TOKEN = "wm_manifest_read"
    const val WAYMARK_TELEMETRY_TOKEN = "wm_telemetry_write"
}

object R {
    object layout { const val main = 1 }
}

/** The app's session: which preconditions hold. */
object session {
    @Volatile var loggedIn = false
    fun satisfied(): Set<String> = if (loggedIn) setOf("auth") else emptySet()
}

/** The login screen: signs in at once here. */
object LoginGate : GateHandler {
    override fun satisfy(precondition: String, gate: Resolution.Gated): CompletableFuture<Boolean> {
        session.loggedIn = true
        return CompletableFuture.completedFuture(true)
    }
}

/** The unsaved-work prompt: keeps the work. */
object UnsavedWork : LeaveHandler {
    override fun decide(dirty: List<Screen>, plan: NavigationPlan) = CompletableFuture.completedFuture(LeaveDecision.CANCEL)
    override fun save(dirty: List<Screen>) = CompletableFuture.completedFuture(false)
}

/** The app's crash reporter. */
object crashReporter {
    val recorded: MutableList<Throwable> = java.util.Collections.synchronizedList(ArrayList())
    fun record(failure: Throwable) { recorded.add(failure) }
}

/** The app's screens: performs one navigation operation on its activities (here: nothing to show). */
object Screens {
    fun perform(operation: NavigationOperation) {}
}

/** The app's OAuth client: the state of the request its login screen made, the code's exchange. */
object Auth {
    @Volatile var pendingState: String? = null
    suspend fun signIn(code: String) { session.loggedIn = code.isNotEmpty() }
}

/** The Compose app's routes: one per destination, its params as arguments. */
fun Screen.route(): String = destination + params.entries.sortedBy { it.key }.joinToString("") { "/${it.value}" }
fun Map<String, ParamValue>.encoded(): String = entries.sortedBy { it.key }.joinToString("&") { "${it.key}=${it.value}" }

// doc:begin activity
class App : Application() {
    lateinit var dispatcher: RouteDispatcher
    override fun onCreate() {
        super.onCreate()
        val build = AppBuild("storefront", "android", BuildConfig.VERSION_NAME)
        val manifests = ManifestClient(ManifestClientConfiguration(server = "https://links.storefront.example",
            build = build, token = BuildConfig.WAYMARK_READ_TOKEN, cacheDirectory = noBackupFilesDir,
            bundledManifest = { assets.open("waymark-manifest.json").readBytes() }))
        val telemetry = TelemetryReporter(TelemetryConfiguration("https://links.storefront.example", build,
            BuildConfig.WAYMARK_TELEMETRY_TOKEN, noBackupFilesDir, cohort = manifests.cohort(), installId = Cohort.installId(noBackupFilesDir)))
        // refresh() and flushAll() block: run them on a background schedule (WorkManager, an executor).
        dispatcher = RouteDispatcher(
            tables = manifests,
            navigator = MainNavigator,          // yours: below
            contextProvider = object : ContextProvider {
                override fun context() = ResolutionContext(session.satisfied(), System.currentTimeMillis() * 1_000)
            },
            gateHandler = LoginGate, leaveHandler = UnsavedWork,
            observer = telemetry, observers = listOf(OpenInBrowser(this, manifests)),   // below
            configuration = DispatcherConfiguration(gateStash = GateStash(noBackupFilesDir),
                authCallbackPrefixes = listOf("storefront://auth/callback"),
                onSeamFailure = { crashReporter.record(it) }))  // what a seam threw (the outcome names its class only)
    }
}

class MainActivity : AppCompatActivity() {
    override fun onCreate(state: Bundle?) {
        super.onCreate(state)
        setContentView(R.layout.main)
        // The launch gate opens once the first refresh has ended, 1.5 s at most (returns at once).
        (application as App).dispatcher.ready(waitingForManifestMillis = 1_500)
        if (state == null) handle(intent)                    // a cold start by a link
    }

    override fun onNewIntent(intent: android.content.Intent) { // a link while running (singleTask/singleTop)
        super.onNewIntent(intent)
        handle(intent)
    }

    private fun handle(intent: android.content.Intent) {
        val dispatcher = (application as App).dispatcher
        val data = intent.dataString
        when {
            data != null && intent.action == android.content.Intent.ACTION_VIEW ->
                dispatcher.dispatch(Intent.Link(data, if (data.startsWith("https:")) Door.UNIVERSAL_LINK else Door.SCHEME))
            intent.extras != null ->                             // a notification's data
                dispatcher.dispatchPush(intent.extras!!.keySet().associateWith { intent.extras!!.get(it) })
        }
    }
}
// doc:end

// doc:begin open-in-browser
class OpenInBrowser(private val context: Context, private val tables: RouteTableSource) : DispatchObserver {
    override fun dispatched(result: DispatchResult) {
        val link = (result.intent as? Intent.Link)?.link ?: return
        val notFound = result.outcome as? DispatchOutcome.NotFound ?: return
        if (notFound.notFound.reason != NotFoundReason.UNKNOWN_ROUTE) return
        val uri = Uri.parse(link)
        val hosts = tables.currentTable().manifest?.resolver?.schema?.hosts ?: return
        if (uri.scheme != "https" || uri.host?.lowercase() !in hosts) return
        // The default browser, not whoever claims the link (this app): needs
        // <queries><intent><action android:name="android.intent.action.VIEW"/>
        // <category android:name="android.intent.category.BROWSABLE"/><data android:scheme="https"/></intent></queries>
        val probe = android.content.Intent(android.content.Intent.ACTION_VIEW, Uri.parse("https://example.com"))
            .addCategory(android.content.Intent.CATEGORY_BROWSABLE)
        val browser = context.packageManager.resolveActivity(probe, PackageManager.MATCH_DEFAULT_ONLY)?.activityInfo?.packageName
        val open = android.content.Intent(android.content.Intent.ACTION_VIEW, uri)
            .addCategory(android.content.Intent.CATEGORY_BROWSABLE).addFlags(android.content.Intent.FLAG_ACTIVITY_NEW_TASK)
        if (browser != null && browser != "android" && browser != context.packageName) open.setPackage(browser)  // "android": no default, the chooser
        Handler(Looper.getMainLooper()).post { context.startActivity(open) }
    }
}
// doc:end

// doc:begin navigator
object MainNavigator : Navigator {
    @Volatile private var shown = NavigationState("home", mapOf("home" to listOf(Screen("home"))))

    override fun state() = shown                                   // the worker thread: the snapshot

    override fun apply(plan: NavigationPlan): CompletableFuture<Unit> {
        val done = CompletableFuture<Unit>()
        Handler(Looper.getMainLooper()).post {                    // the views are the main thread's
            try {
                for (operation in plan.operations) Screens.perform(operation)   // yours: the table above
                shown = shown.applying(plan)
                done.complete(Unit)
            } catch (failure: Throwable) {
                done.completeExceptionally(failure)               // a failed seam: gateCancelled, onSeamFailure
            }
        }
        return done
    }
}
// doc:end

// doc:begin compose
class ComposeNavigator(private val nav: NavHostController, private val tabs: MutableState<String>) : SuspendingNavigator {
    @Volatile private var shown = snapshot()                       // written on the main thread only
    init { nav.addOnDestinationChangedListener { _, _, _ -> shown = snapshot() } }

    override fun state() = shown                                   // the worker thread: a snapshot, never the controller

    override suspend fun apply(plan: NavigationPlan) {             // on Dispatchers.Main.immediate
        for (operation in plan.operations) when (operation) {
            is NavigationOperation.DismissModals -> repeat(modals().size - operation.from) { nav.popBackStack() }
            is NavigationOperation.SelectTab -> tabs.value = operation.tab
            is NavigationOperation.Update -> stack(operation.tab)[operation.index].savedStateHandle["params"] = operation.params.encoded()
            is NavigationOperation.PopTo -> nav.popBackStack(stack(operation.tab)[operation.index].destination.id, inclusive = false)
            is NavigationOperation.SetStack -> {
                val keep = stack(operation.tab).getOrNull(operation.keeping - 1)
                if (keep != null) nav.popBackStack(keep.destination.id, inclusive = false)
                for (screen in operation.screens.drop(operation.keeping)) nav.navigate(screen.route()) { launchSingleTop = true }
            }
            is NavigationOperation.Present -> for (screen in operation.modal.stack) nav.navigate(screen.route())
        }
        shown = snapshot()                                         // NavController applies at once on the main thread
    }

    private fun snapshot(): NavigationState = TODO("tabs.value, each tab's entries as Screen(route, params, isDirty), the dialogs on top")
    private fun stack(tab: String): List<NavBackStackEntry> = TODO("the entries of tab's nested graph, root first")
    private fun modals(): List<NavBackStackEntry> = TODO("the dialog destinations on top")
}

/** The login screen as a gate: shown until the user answers or the dispatcher closes it. */
class ComposeLoginGate(private val showing: MutableState<CompletableDeferred<Boolean>?>) : SuspendingGateHandler {
    override suspend fun satisfy(precondition: String, gate: Resolution.Gated): Boolean =
        CompletableDeferred<Boolean>().also { showing.value = it }.await()   // the login composable completes it
    override suspend fun received(callback: String, gate: Resolution.Gated) {   // on the main thread too
        val answer = Uri.parse(callback)           // a callback's query is read, never dispatched from this
        if (answer.getQueryParameter("state") != Auth.pendingState) return     // not this screen's request
        Auth.signIn(answer.getQueryParameter("code") ?: return)                // exchanges it; commits the session
        showing.value?.complete(true)
    }
    override fun close(gate: Resolution.Gated, ending: PromptEnding) {
        Handler(Looper.getMainLooper()).post { showing.value = null }   // close() comes on the worker thread
    }
}

/** The dispatcher of a Compose app, made once the NavHostController exists (setContent). */
fun composeDispatcher(context: Context, nav: NavHostController, tab: MutableState<String>,
                      loginPrompt: MutableState<CompletableDeferred<Boolean>?>, manifests: ManifestClient,
                      session: ContextProvider, unsavedWork: SuspendingLeaveHandler, telemetry: TelemetryReporter): RouteDispatcher {
    val main = Dispatchers.Main.immediate
    return RouteDispatcher(manifests, ComposeNavigator(nav, tab).asNavigator(main), session,
        ComposeLoginGate(loginPrompt).asGateHandler(main), unsavedWork.asLeaveHandler(main), telemetry,
        DispatcherConfiguration(gateStash = GateStash(context.noBackupFilesDir)))
}
// doc:end

