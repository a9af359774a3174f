package dev.waymark.engine

import org.junit.jupiter.api.Assertions.assertEquals
import org.junit.jupiter.api.Assertions.assertTrue
import org.junit.jupiter.api.Test

/** The sweep over competing routes against every pair compared, on a campaign calendar. */
class RouteAnalysisTest {
    /** `count` routes on /sale/:slug, each live two weeks from its own hour, every fifth on one host; every `shadowEvery`-th lives one day within the one before it. */
    private fun calendar(count: Int, shadowEvery: Int?): RoutesDocument {
        val base = 1_790_000_000L
        val routes = (0 until count).map { index ->
            val start = base + index * 3_600L
            val days = if (shadowEvery != null && index % shadowEvery == shadowEvery - 1) 1 else 14
            val members = linkedMapOf<String, JsonValue>("id" to JsonValue.Text("campaign-$index"),
                "patterns" to JsonValue.Array(listOf(JsonValue.Text("/sale/:slug"))), "destination" to JsonValue.Text("list"),
                "validFrom" to JsonValue.Text(Timestamp.format(start * 1_000_000)),
                "validUntil" to JsonValue.Text(Timestamp.format((start + days * 86_400) * 1_000_000)))
            if (index % 5 == 4) members["hosts"] = JsonValue.Array(listOf(JsonValue.Text("www.bench.example")))
            JsonValue.Object(members)
        } + JsonValue.obj("id" to JsonValue.Text("sale"), "patterns" to JsonValue.Array(listOf(JsonValue.Text("/sale/:slug"))), "destination" to JsonValue.Text("list"))
        return RoutesDocument.decode(JsonValue.obj("format" to JsonValue.Text("waymark.routes/1"), "app" to JsonValue.Text("bench"),
            "routes" to JsonValue.Array(routes))).first!!
    }

    /** The reference: each route against every route kept before it. */
    private fun pairwise(document: RoutesDocument): Set<String> {
        val kept = ArrayList<RouteSpec>()
        val excluded = HashSet<String>()
        for (route in document.routes) {
            val start = route.window.start ?: Long.MIN_VALUE
            val end = route.window.end ?: Long.MAX_VALUE
            val taken = kept.any { other -> route.scope.isWithin(other.scope) &&
                (other.window.start ?: Long.MIN_VALUE) <= start && (other.window.end ?: Long.MAX_VALUE) >= end }
            if (taken) excluded.add(route.id) else kept.add(route)
        }
        return excluded
    }

    @Test
    fun theSweepFindsWhatEveryPairFinds() {
        val document = calendar(2_000, 7)
        val sweep = RouteAnalysis(document, 0).let { analysis -> analysis.excluded.map { document.routes[it].id }.toSet() }
        assertEquals(pairwise(document), sweep)
        assertEquals(2_000 / 7, sweep.size)
    }

    @Test
    fun aValidCalendarKeepsEveryRoute() {
        val document = calendar(3_000, null)
        val analysis = RouteAnalysis(document, 0)
        assertTrue(analysis.excluded.isEmpty(), analysis.problems.take(3).toString())
        assertTrue(pairwise(document).isEmpty())
    }

    /** Past the limit the shape's first route is named and left out, and only it (`docs/validation.md`). */
    @Test
    fun pastTheWorkLimitTheShapesFirstRouteIsRefused() {
        val document = calendar(200, null)
        val analysis = RouteAnalysis(document, 0, workLimit = 10)
        val problem = analysis.problems.single { it.code == "tooComplex" }
        val first = analysis.excluded.single()
        assertTrue(problem.path.startsWith(document.routes[first].path), "${problem.path} names the first route")
    }
}
