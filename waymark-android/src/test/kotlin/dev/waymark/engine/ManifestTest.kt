package dev.waymark.engine

import org.junit.jupiter.api.Assertions.assertEquals
import org.junit.jupiter.api.Assertions.assertTrue
import org.junit.jupiter.api.Assertions.fail
import org.junit.jupiter.api.DynamicTest
import org.junit.jupiter.api.Test
import org.junit.jupiter.api.TestFactory
import java.io.File

/** Decoding what `GET /v1/manifest` serves: tolerant of what a newer server adds, strict about its build and digest. */
class ManifestTest {
    companion object {
        val root = File(System.getProperty("waymark.root") ?: "..")
        fun read(relative: String): JsonValue = JsonReader().parse(File(root, relative).readBytes())
        val schema = read("manifests/storefront/schema-ios-5.3.0.json")
        val routes = read("manifests/storefront/routes.json")["routes"]!!.list!!
        val build = AppBuild("storefront", "ios", "5.3.0")
        val now = Timestamp.microseconds("2026-03-15T00:00:00Z")!!

        /** A `waymark.manifest/1` as the server builds one; [digest] overrides the real one. */
        fun manifest(schema: JsonValue = this.schema, routes: List<JsonValue> = this.routes, revision: Long = 1, digest: String? = null) =
            JsonValue.obj(
                "format" to JsonValue.Text("waymark.manifest/1"), "app" to schema["app"]!!, "platform" to schema["platform"]!!,
                "version" to schema["version"]!!, "revision" to JsonValue.JsonInt(revision), "revisionSha256" to JsonValue.Text("0"),
                "routesSha256" to JsonValue.Text(digest ?: Manifest.canonicalRoutesDigest(JsonValue.Array(routes))),
                "schema" to schema, "routes" to JsonValue.Array(routes)
            )

        fun with(json: JsonValue, key: String, value: JsonValue?): JsonValue {
            val members = LinkedHashMap(json.obj!!)
            if (value == null) members.remove(key) else members[key] = value
            return JsonValue.Object(members)
        }

        fun route(index: Int, key: String, value: JsonValue?) = routes.toMutableList().also { it[index] = with(it[index], key, value) }
        private fun text(value: String) = JsonValue.Text(value)
    }

    @Test
    fun theDocumentedDigestExample() {
        val example = JsonReader().parse("""[{"destination":"home","id":"home","patterns":["/"]}]""")
        assertEquals("5dec7c899abaac8464fcb46305ff7ae1abe367696adca41279f9ac5ebef5b80e", Manifest.canonicalRoutesDigest(example))
    }

    @Test
    fun theCanonicalFormEscapesAsDocumented() {
        val value = JsonReader().parse("""{"b":"\"\\\n\r\t\u0001\u007f\u00e9\ud83d\ude00","a":[1,-2,true,false,null]}""")
        assertEquals("{\"a\":[1,-2,true,false,null],\"b\":\"\\\"\\\\\\n\\r\\t\\u0001\\u007fé😀\"}", value.canonical())
    }

    @Test
    fun agreesWithTheEngineBuiltFromTheSameDocuments() {
        val decoded = Manifest.decode(manifest().canonical().toByteArray(), build, now)
        assertEquals(1L, decoded.revision)
        val engine = Resolver(Schema.decode(schema), RouteAnalysis(RoutesDocument.decode(read("manifests/storefront/routes.json")).first!!, now))
        assertEquals(engine.routeIds, decoded.resolver.routeIds)
        val context = ResolutionContext(setOf("auth"), now)
        for (link in listOf("https://storefront.example/p/p-1", "storefront://orders/A-1", "https://storefront.example/search?q=x",
                "https://storefront.example/nope", "https://storefront.example/p/%ZZ")) {
            assertEquals(engine.resolve(link, context), decoded.resolver.resolve(link, context), link)
        }
    }

    private val refusals: List<Triple<String, Pair<JsonValue, AppBuild>, ManifestError.Kind>> = listOf(
        Triple("another app", Pair(with(manifest(), "app", text("other")), build), ManifestError.Kind.WRONG_BUILD),
        Triple("another platform", Pair(manifest(), AppBuild("storefront", "android", "5.3.0")), ManifestError.Kind.WRONG_BUILD),
        Triple("another version", Pair(manifest(), AppBuild("storefront", "ios", "5.2.0")), ManifestError.Kind.WRONG_BUILD),
        Triple("a changed route", Pair(manifest(routes = route(1, "destination", text("home")),
            digest = Manifest.canonicalRoutesDigest(JsonValue.Array(routes))), build), ManifestError.Kind.INTEGRITY),
        Triple("a route left out", Pair(manifest(routes = routes.dropLast(1),
            digest = Manifest.canonicalRoutesDigest(JsonValue.Array(routes))), build), ManifestError.Kind.INTEGRITY),
        Triple("no digest", Pair(with(manifest(), "routesSha256", null), build), ManifestError.Kind.WRONG_FORMAT),
        Triple("another format", Pair(with(manifest(), "format", text("waymark.manifest/2")), build), ManifestError.Kind.WRONG_FORMAT),
        Triple("revision 0", Pair(manifest(revision = 0), build), ManifestError.Kind.WRONG_FORMAT),
        Triple("revision as a string", Pair(with(manifest(), "revision", text("7")), build), ManifestError.Kind.WRONG_FORMAT),
        Triple("routes not a list", Pair(with(manifest(), "routes", JsonValue.obj()), build), ManifestError.Kind.WRONG_FORMAT),
        Triple("no schema", Pair(with(manifest(), "schema", null), build), ManifestError.Kind.WRONG_FORMAT),
        Triple("a broken schema", Pair(with(manifest(), "schema", JsonValue.obj("format" to text("waymark.schema/1"))), build), ManifestError.Kind.INVALID_SCHEMA),
        Triple("the schema of another build", Pair(with(manifest(), "schema", with(schema, "version", text("5.2.0"))), build), ManifestError.Kind.INVALID_SCHEMA),
        Triple("a list", Pair(JsonValue.Array(emptyList()), build), ManifestError.Kind.NOT_JSON)
    )

    @TestFactory
    fun refusedWhole() = refusals.map { (label, input, kind) ->
        DynamicTest.dynamicTest(label) {
            try {
                Manifest.decode(input.first.canonical().toByteArray(), input.second, now)
                fail<Unit>("$label: accepted")
            } catch (error: ManifestError) {
                assertEquals(kind, error.kind, "$label: ${error.message}")
            }
        }
    }

    /** Kept, with what was left out named: (label, routes, the left-out path, a link that must still resolve). */
    private val tolerated = listOf(
        Triple("an unknown route field", route(0, "badge", text("new")), null),
        Triple("a route field of the wrong type", route(1, "patterns", text("/p/:id")), "routes[1].patterns"),
        Triple("a param source it does not know", route(1, "params", JsonValue.obj("id" to JsonValue.obj("header" to text("x")))), "routes[1].params.id"),
        Triple("a destination the build lacks", route(1, "destination", text("wishlist")), "routes[1].destination")
    )

    @TestFactory
    fun toleratedAndNamed() = tolerated.map { (label, changed, leftOut) ->
        DynamicTest.dynamicTest(label) {
            val decoded = Manifest.decode(manifest(routes = changed).canonical().toByteArray(), build, now)
            if (leftOut == null) assertTrue(decoded.leftOut.isEmpty(), "${decoded.leftOut}")
            else assertTrue(decoded.leftOut.any { it.path == leftOut }, "$label: ${decoded.leftOut}")
            val home = decoded.resolver.resolve("storefront://", ResolutionContext(emptySet(), now))
            assertEquals("proceed", home.outcome)
        }
    }

    @Test
    fun aTruncatedBodyIsRefusedAtEveryLength() {
        val bytes = manifest().canonical().toByteArray()
        var length = 0
        while (length < bytes.size) {
            try {
                Manifest.decode(bytes.copyOf(length), build, now)
                fail<Unit>("accepted $length of ${bytes.size} bytes")
            } catch (error: ManifestError) {
                assertTrue(error.kind == ManifestError.Kind.NOT_JSON, "$length: ${error.message}")
            }
            length += maxOf(1, bytes.size / 200)
        }
        Manifest.decode(bytes, build, now)
    }
}
