package dev.waymark.bench

import dev.waymark.engine.AppBuild
import dev.waymark.engine.JsonReader
import dev.waymark.engine.JsonValue
import dev.waymark.engine.Manifest
import dev.waymark.engine.Resolution
import dev.waymark.engine.ResolutionContext
import dev.waymark.engine.Timestamp

/**
 * make bench-android: the JVM library on the 10,000-route manifest of the Swift benches
 * (`Benchmarks/BenchSupport/GeneratedManifest.swift`, generated here by the same rules and
 * seed), on one core:
 *   decode    `Manifest.decode` of the manifest's bytes (parse, digest, schema, analysis,
 *             table), median and best of 9 after 3 warm-up runs (target < 200 ms)
 *   resolve   resolutions per second over the generated links, best of 7 rounds ≥ 0.5 s
 *             after warm-up, beside the Swift engine's figure when given (target: within 3×)
 * Usage: Bench [SWIFT_RESOLUTIONS_PER_SECOND]
 */
fun main(args: Array<String>) {
    val generated = GeneratedManifest(10_000)
    val routes = generated.routes
    val manifest = JsonValue.obj(
        "format" to JsonValue.Text("waymark.manifest/1"), "app" to JsonValue.Text("bench"), "platform" to JsonValue.Text("ios"),
        "version" to JsonValue.Text("1.0.0"), "revision" to JsonValue.JsonInt(1),
        "routesSha256" to JsonValue.Text(Manifest.canonicalRoutesDigest(JsonValue.Array(routes))), "revisionSha256" to JsonValue.Text("0"),
        "schema" to generated.schema, "routes" to JsonValue.Array(routes)
    )
    val bytes = manifest.canonical().toByteArray(Charsets.UTF_8)
    val build = AppBuild("bench", "ios", "1.0.0")
    val now = Timestamp.microseconds("2026-03-15T00:00:00Z")!!
    repeat(3) { Manifest.decode(bytes, build, now) }
    val decodeTimes = (1..9).map {
        val start = System.nanoTime()
        val decoded = Manifest.decode(bytes, build, now)
        val elapsed = (System.nanoTime() - start) / 1e6
        check(decoded.leftOut.isEmpty() && decoded.resolver.routeIds.size == 10_001) { "the generated manifest is not whole: ${decoded.leftOut.take(3)}" }
        elapsed
    }.sorted()
    val parseTimes = (1..9).map {
        val start = System.nanoTime()
        JsonReader().parse(bytes)
        (System.nanoTime() - start) / 1e6
    }.sorted()
    val resolver = Manifest.decode(bytes, build, now).resolver
    val context = ResolutionContext(setOf("auth"), now)
    val links = generated.links
    var proceeded = 0
    fun round(minimumNanos: Long): Double {
        var count = 0
        val start = System.nanoTime()
        var elapsed: Long
        do {
            for (link in links) if (resolver.resolve(link, context) is Resolution.Proceed) proceeded++
            count += links.size
            elapsed = System.nanoTime() - start
        } while (elapsed < minimumNanos)
        return count / (elapsed / 1e9)
    }
    repeat(3) { round(300_000_000) }  // the JIT compiles the hot path first
    val rates = (1..7).map { round(500_000_000) }.sorted()
    check(proceeded > 0)
    val best = rates.last()
    val median = rates[rates.size / 2]
    println("Android library (JVM ${System.getProperty("java.version")}, Kotlin ${KotlinVersion.CURRENT}): 10,000 generated routes, ${links.size} links, one core")
    println("  decode the manifest:     %.1f ms median, %.1f ms best  (${bytes.size / 1024} KB: parse, digest, schema, analysis, table; of 9)".format(decodeTimes[4], decodeTimes[0]))
    println("  parse only (the peer):   %.1f ms median".format(parseTimes[4]))
    println("  resolve:                 %,.0f resolutions/s  (%.3f µs each; median round %,.0f/s)".format(best, 1e6 / best, median))
    val swift = args.firstOrNull()?.replace(",", "")?.toDoubleOrNull()
    if (swift != null) {
        println("  Swift engine (make bench): %,.0f resolutions/s; Swift / JVM %.2f×".format(swift, swift / best))
        println("targets: decode < 200 ms ${if (decodeTimes[4] < 200) "✓" else "✗"}, resolve within 3× of Swift ${if (swift / best <= 3) "✓" else "✗"}")
    } else {
        println("targets: decode < 200 ms ${if (decodeTimes[4] < 200) "✓" else "✗"} (give the Swift figure to compare resolve)")
    }
}

/** The Swift benches' generated app (`GeneratedManifest.swift`): the same schema, routes and links for the same seed. */
class GeneratedManifest(routeCount: Int) {
    val schema: JsonValue = JsonReader().parse("""{"format": "waymark.schema/1", "app": "bench", "platform": "ios", "version": "1.0.0",
        "schemes": ["bench"], "hosts": ["bench.example", "www.bench.example"], "preconditions": ["auth"],
        "destinations": {"home": {"tab": "home"},
          "item": {"parent": "home", "params": {"id": {"type": "string", "pattern": "^p[0-9]{1,8}$"}}},
          "page": {"parent": "home"},
          "order": {"parent": "home", "preconditions": ["auth"], "params": {"n": {"type": "int", "min": 1, "max": 2147483647}}},
          "doc": {"parent": "home", "params": {"path": {"type": "string", "maxLength": 200}}},
          "list": {"parent": "home", "params": {"slug": {"type": "slug"}, "q": {"type": "string", "optional": true}}}}}""")
    val routes = ArrayList<JsonValue>()
    val links = ArrayList<String>()

    init {
        val random = SplitMix64(42)
        fun route(id: String, patterns: List<String>, destination: String, params: JsonValue? = null): JsonValue {
            val members = linkedMapOf<String, JsonValue>("id" to JsonValue.Text(id), "patterns" to JsonValue.Array(patterns.map { JsonValue.Text(it) }),
                "destination" to JsonValue.Text(destination))
            params?.let { members["params"] = it }
            return JsonValue.Object(members)
        }
        for (index in 0 until routeCount) {
            val id = "r$index"
            when (index % 10) {
                0, 1, 2, 3 -> {
                    routes.add(route(id, listOf("/shop/s$index/item/:id", "/s$index/:id"), "item"))
                    links.add("https://bench.example/shop/s$index/item/p${random.next() % 10_000_000}")
                    links.add("bench://s$index/p${random.next() % 1000}?utm_source=mail")
                }
                4, 5, 6 -> {
                    routes.add(route(id, listOf("/campaign/c$index/landing"), "page"))
                    links.add("https://www.bench.example/Campaign/C$index/landing/")
                }
                7, 8 -> {
                    routes.add(route(id, listOf("/account/a$index/orders/:n"), "order"))
                    links.add("https://bench.example/account/a$index/orders/${1 + random.next() % 100_000}")
                }
                else -> if (index % 20 == 9) {
                    routes.add(route(id, listOf("/docs/d$index/*path"), "doc"))
                    links.add("https://bench.example/docs/d$index/guide/intro")
                } else {
                    routes.add(route(id, listOf("/l/d$index/:slug"), "list", JsonValue.obj("q" to JsonValue.obj("query" to JsonValue.Text("q")))))
                    links.add("bench://l/d$index/summer-sale?q=red+shoes")
                }
            }
            // One link in ten fails: unknown route, bad param or malformed.
            when (index % 30) {
                3 -> links.add("https://bench.example/shop/s$index/missing/p1")
                13 -> links.add("https://bench.example/shop/s${index - 10}/item/x$index")
                23 -> links.add("https://evil.example/shop/s$index/item/p1")
            }
        }
        routes.add(0, route("home", listOf("/"), "home"))
    }
}

/** Deterministic pseudo-random numbers (SplitMix64), the Swift benches' generator, bit for bit. */
class SplitMix64(private var state: Long) {
    fun next(): Long {
        state += -0x61c8864680b583ebL  // 0x9E3779B97F4A7C15
        var z = state
        z = (z xor (z ushr 30)) * -0x40a7b892e31b1a47L  // 0xBF58476D1CE4E5B9
        z = (z xor (z ushr 27)) * -0x6b2fb644ecceee15L  // 0x94D049BB133111EB
        return (z xor (z ushr 31)) ushr 1
    }
}
