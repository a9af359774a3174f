// Runs docs/android.md's snippets (Snippets.kt) on the storefront's manifest, given as the
// one argument (build.sh snippets makes it with `waymark manifest`): the Application wires its
// dispatcher; OpenInBrowser opens an unknown link of the app's own host in the default
// browser, by name, and nothing of another host. The Compose sketch is compiled only.
package com.example.storefront

import android.content.Context
import java.io.File
import dev.waymark.client.DispatchOutcome
import dev.waymark.client.DispatchResult
import dev.waymark.client.Door
import dev.waymark.client.Intent
import dev.waymark.client.RouteTable
import dev.waymark.client.RouteTableSource
import dev.waymark.engine.AppBuild
import dev.waymark.engine.Manifest
import dev.waymark.engine.NotFoundReason
import dev.waymark.engine.Resolution
import java.util.concurrent.TimeUnit
import kotlin.system.exitProcess

fun main(args: Array<String>) {
    val build = AppBuild("storefront", "android", BuildConfig.VERSION_NAME)
    // The storefront example ships iOS schemas only; its hosts are the same on Android.
    val table = RouteTable(Manifest.decode(File(args[0]).readBytes(), AppBuild("storefront", "ios", "5.3.0"), System.currentTimeMillis() * 1_000), RouteTable.Origin.BUNDLED)
    val tables = object : RouteTableSource { override fun currentTable() = table }
    var failures = 0
    fun check(condition: Boolean, what: String) { if (!condition) { System.err.println("snippets: $what"); failures += 1 } }

    val app = App()
    app.noBackupFilesDir.deleteRecursively()
    app.onCreate()
    app.dispatcher.ready()
    val cold = app.dispatcher.dispatch(Intent.Link("https://storefront.example/definitely-not-a-route", Door.UNIVERSAL_LINK)).get(30, TimeUnit.SECONDS)
    check(cold.outcome.name.startsWith("notFound"), "the App's dispatcher answered ${cold.outcome.name}")

    val context = Context()
    val browser = OpenInBrowser(context, tables)
    val unknown = Resolution.NotFound(NotFoundReason.UNKNOWN_ROUTE)
    fun notFound(link: String) = DispatchResult(1, Intent.Link(link, Door.UNIVERSAL_LINK), DispatchOutcome.NotFound(unknown), unknown, 1, 0)
    browser.dispatched(notFound("https://STOREFRONT.example/spring-launch"))
    check(context.started.size == 1 && context.started[0].`package` == "com.android.chrome", "an unknown link of the app's host was not opened in the browser: ${context.started.map { it.dataString }}")
    browser.dispatched(notFound("https://evil.example/login"))
    browser.dispatched(notFound("http://storefront.example/spring-launch"))
    check(context.started.size == 1, "a link of another host or scheme was opened: ${context.started.map { it.dataString }}")

    // The Compose sketch is compiled, not run: its snapshot, stack and modals are the app's to write (TODO()).
    if (failures > 0) exitProcess(1)
    println("snippets: the Application's dispatcher runs; OpenInBrowser opened the app's own unknown link in the browser (${context.started[0].`package`}) and nothing of evil.example or http; the Compose sketch compiles")
}
