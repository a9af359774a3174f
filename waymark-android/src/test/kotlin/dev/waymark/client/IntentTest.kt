package dev.waymark.client

import org.junit.jupiter.api.Assertions.assertEquals
import org.junit.jupiter.api.DynamicTest
import org.junit.jupiter.api.TestFactory

/** The doors' small parsers: a notification's data and a Play Install Referrer string. */
class IntentTest {
    private val referrers = listOf(
        Triple("the deeplink item, decoded once", "utm_source=mail&deeplink=https%3A%2F%2Fstorefront.example%2Fp%2Fp1", "https://storefront.example/p/p1"),
        Triple("first of two wins", "deeplink=storefront%3A%2F%2Fcart&deeplink=https%3A%2F%2Fx", "storefront://cart"),
        Triple("naive: decoded once, so an encoded % in the link stays encoded", "deeplink=https%3A%2F%2Fs.example%2Fq%3Fq%3Da%2520b", "https://s.example/q?q=a%20b"),
        Triple("a hostile link is dispatched as is, for the engine to refuse", "deeplink=https%3A%2F%2Fs.example%2F%2E%2E%2Fx%00", "https://s.example/../x\u0000"),
        Triple("no deeplink item", "utm_source=mail&utm_campaign=spring", null),
        Triple("naive: a name that only starts with deeplink", "deeplinks=https%3A%2F%2Fx", null),
        Triple("an empty value", "deeplink=", null),
        Triple("no value at all", "deeplink", null),
        Triple("a broken encoding", "deeplink=https%3A%2", null),
        Triple("an empty referrer", "", null)
    )

    @TestFactory
    fun installReferrer() = referrers.map { (label, referrer, expected) ->
        DynamicTest.dynamicTest(label) {
            assertEquals(expected?.let { Intent.Link(it, Door.DEFERRED) }, Intent.fromInstallReferrer(referrer), label)
        }
    }

    private val pushes = listOf(
        Triple("the first key that holds a string", mapOf<String, Any?>("url" to "https://a.example/x", "deeplink" to "b://y"), "b://y"),
        Triple("naive: a non-string under an earlier key is skipped", mapOf<String, Any?>("deeplink" to 42, "url" to "https://a.example/x"), "https://a.example/x"),
        Triple("no link: not an intent", mapOf<String, Any?>("title" to "Sale"), null),
        Triple("a null value", mapOf<String, Any?>("deeplink" to null), null)
    )

    @TestFactory
    fun push() = pushes.map { (label, payload, expected) ->
        DynamicTest.dynamicTest(label) {
            assertEquals(expected?.let { Intent.Link(it, Door.PUSH) }, Intent.push(payload, listOf("deeplink", "url", "link")), label)
        }
    }
}
