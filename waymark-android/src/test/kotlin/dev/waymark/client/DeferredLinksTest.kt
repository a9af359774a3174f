package dev.waymark.client

import org.junit.jupiter.api.Assertions.assertEquals
import org.junit.jupiter.api.Assertions.assertNull
import org.junit.jupiter.api.DynamicTest
import org.junit.jupiter.api.Test
import org.junit.jupiter.api.TestFactory
import java.io.File
import java.nio.file.Files

/** Deferred links from the Play Install Referrer: on the app's hosts, young enough, once per install. */
class DeferredLinksTest {
    private val now = 1_796_000_000_000L
    private fun made(secondsAgo: Long) = (now / 1_000 - secondsAgo).toString()
    private fun referrer(link: String, t: String?, extra: String = "") =
        "deeplink=" + java.net.URLEncoder.encode(link, "UTF-8") + (t?.let { "&t=$it" } ?: "") + extra
    private fun links(file: File = File(Files.createTempDirectory("waymark-deferred").toFile(), "deferred")) =
        DeferredLinks(file, listOf("storefront.example", "Links.Storefront.example"), { now })

    private val rows = listOf(
        Triple("a link made a minute ago", referrer("https://storefront.example/sale/spring?code=SPRING", made(60), "&utm_source=mail"),
               "https://storefront.example/sale/spring?code=SPRING"),
        Triple("a host without case", referrer("https://LINKS.storefront.example/p/p1", made(1)), "https://LINKS.storefront.example/p/p1"),
        Triple("a day old, just", referrer("https://storefront.example/p/p1", made(86_400)), "https://storefront.example/p/p1"),
        Triple("older than a day", referrer("https://storefront.example/p/p1", made(86_401)), null),
        Triple("made in the future past the skew", referrer("https://storefront.example/p/p1", made(-301)), null),
        Triple("no time", referrer("https://storefront.example/p/p1", null), null),
        Triple("a time that is not a number", referrer("https://storefront.example/p/p1", "soon"), null),
        Triple("a huge time", referrer("https://storefront.example/p/p1", "99999999999999999"), null),
        Triple("a negative time that would wrap the age", referrer("https://storefront.example/p/p1", "-9223372036000000"), null),
        Triple("a time that wraps once multiplied", referrer("https://storefront.example/p/p1", (now / 1_000 - (1L shl 61)).toString()), null),
        Triple("a signed time", referrer("https://storefront.example/p/p1", "+" + made(1)), null),
        Triple("13 digits", referrer("https://storefront.example/p/p1", "000" + made(1)), null),
        Triple("a space in the link", referrer("https://storefront.example/p/p 1", made(1)), null),
        Triple("a fragment in the link", referrer("https://storefront.example/p/p1#x", made(1)), null),
        Triple("a control character in the link", referrer("https://storefront.example/p/p1\u0000", made(1)), null),
        Triple("another host", referrer("https://evil.example/p/p1", made(1)), null),
        Triple("a lookalike host", referrer("https://storefront.example.evil.example/p/p1", made(1)), null),
        Triple("a user name before the host", referrer("https://storefront.example@evil.example/p/p1", made(1)), null),
        Triple("not https", referrer("http://storefront.example/p/p1", made(1)), null),
        Triple("a custom scheme", referrer("storefront://cart", made(1)), null),
        Triple("no link", "t=${made(1)}&utm_source=mail", null),
        Triple("a broken encoding", "deeplink=https%3A%2&t=${made(1)}", null),
        Triple("over 4,096 characters", referrer("https://storefront.example/p/p1", made(1), "&utm_term=" + "x".repeat(4_096)), null),
        Triple("an empty referrer", "", null)
    )

    @TestFactory
    fun referrers() = rows.map { (label, referrer, expected) ->
        DynamicTest.dynamicTest(label) {
            assertEquals(expected?.let { Intent.Link(it, Door.DEFERRED) }, links().fromInstallReferrer(referrer), label)
        }
    }

    @Test
    fun aReferrerOpensOncePerInstallEvenAfterARestart() {
        val file = File(Files.createTempDirectory("waymark-deferred").toFile(), "deferred")
        val given = referrer("https://storefront.example/p/p1", made(5))
        assertEquals(Intent.Link("https://storefront.example/p/p1", Door.DEFERRED), links(file).fromInstallReferrer(given))
        assertNull(links(file).fromInstallReferrer(given), "handed over again, after a restart")
        val other = referrer("https://storefront.example/p/p2", made(5))
        assertEquals(Intent.Link("https://storefront.example/p/p2", Door.DEFERRED), links(file).fromInstallReferrer(other), "another referrer still opens")
        assertNull(links(file).fromInstallReferrer(given), "the first is still remembered")
    }

    @Test
    fun whatIsRememberedIsBounded() {
        val file = File(Files.createTempDirectory("waymark-deferred").toFile(), "deferred")
        val deferred = links(file)
        for (index in 0 until DeferredLinks.REMEMBERED + 10) {
            assertEquals(Door.DEFERRED, deferred.fromInstallReferrer(referrer("https://storefront.example/p/p$index", made(1)))?.door)
        }
        assertEquals(DeferredLinks.REMEMBERED, String(file.readBytes(), Charsets.UTF_8).split('\n').size)
        assertNull(deferred.fromInstallReferrer(referrer("https://storefront.example/p/p${DeferredLinks.REMEMBERED + 9}", made(1))))
    }

    @Test
    fun aReferrerThatCannotBeRememberedOpensNothingAndThrowsNothing() {
        val blocked = File(Files.createTempDirectory("waymark-deferred").toFile(), "not-a-directory")
        blocked.writeText("a file where the directory would be")
        assertNull(links(File(blocked, "deferred")).fromInstallReferrer(referrer("https://storefront.example/p/p1", made(1))))
    }

    @Test
    fun aRefusedReferrerIsNotRemembered() {
        val file = File(Files.createTempDirectory("waymark-deferred").toFile(), "deferred")
        assertNull(links(file).fromInstallReferrer(referrer("https://evil.example/p/p1", made(1))))
        assertEquals(false, file.exists())
    }
}
