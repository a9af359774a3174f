package dev.waymark.client

import org.junit.jupiter.api.Assertions.assertEquals
import org.junit.jupiter.api.Assertions.assertTrue
import org.junit.jupiter.api.DynamicNode
import org.junit.jupiter.api.DynamicTest
import org.junit.jupiter.api.TestFactory
import dev.waymark.engine.ConformanceTest
import dev.waymark.engine.JsonReader
import dev.waymark.engine.JsonValue
import dev.waymark.engine.ParamValue
import dev.waymark.engine.Presentation
import java.io.File
import java.util.concurrent.atomic.AtomicInteger

/**
 * The planner's shared table, `conformance/planner.json` (`waymark.planner/1`), read from
 * the repository's `conformance/` — the rows the Swift planner runs too. The last test
 * fails unless every row of the file ran.
 */
class PlannerConformanceTest {
    companion object {
        /** `product(id=7)*`: numbers become ints, a trailing `*` marks the screen dirty. */
        fun screen(text: String): Screen {
            val dirty = text.endsWith("*")
            val body = if (dirty) text.dropLast(1) else text
            val open = body.indexOf('(')
            if (open < 0) return Screen(body, isDirty = dirty)
            val params = body.substring(open + 1, body.length - 1).split(",").associate { pair ->
                val (key, value) = pair.split("=", limit = 2)
                key to (value.toLongOrNull()?.let { ParamValue.Integer(it) } ?: ParamValue.Text(value))
            }
            return Screen(body.substring(0, open), params, dirty)
        }

        fun screens(text: String): List<Screen> = if (text.isBlank()) emptyList() else text.split(">").map { screen(it.trim()) }

        fun modals(json: JsonValue?): List<Modal> = json?.list.orEmpty().map { pair ->
            Modal(Presentation.named(pair.list!![0].string!!)!!, screens(pair.list!![1].string!!))
        }

        /** `"home: home > orders | shop: shop"`. */
        fun state(json: JsonValue): NavigationState {
            val stacks = json["stacks"]!!.string!!.split("|").associate { part ->
                val (tab, stack) = part.split(":", limit = 2)
                tab.trim() to screens(stack)
            }
            return NavigationState(json["selectedTab"]?.string, stacks, modals(json["modals"]))
        }

        fun target(json: JsonValue) = NavigationTarget(json["tab"]?.string, screens(json["base"]!!.string!!), modals(json["modals"]))
    }

    @TestFactory
    fun everyRow(): List<DynamicNode> {
        val files = ConformanceTest.conformanceFiles().filter { JsonReader().parse(it.readBytes())["format"]?.string == "waymark.planner/1" }
        assertTrue(files.isNotEmpty(), "no planner file in conformance/")
        return files.flatMap { file -> tests(file) }
    }

    private fun tests(file: File): List<DynamicNode> {
        val text = file.readText()
        val json = JsonReader().parse(text)
        val ran = AtomicInteger()
        val plans = json["rows"]?.list.orEmpty().map { row ->
            DynamicTest.dynamicTest(row["label"]!!.string!!) {
                val source = NavigationSource.named(row["source"]!!.string!!)!!
                val plan = NavigationPlanner.plan(state(row["state"]!!), target(row["target"]!!), source)
                assertEquals(row["expect"]!!["operations"]!!.list!!.map { it.string!! }, plan.operations.map { it.toString() })
                assertEquals(row["expect"]!!["leaving"]!!.list!!.map { it.string!! }, plan.leaving.map { it.toString() })
                ran.incrementAndGet()
            }
        }
        val targets = json["targets"]?.list.orEmpty().map { row ->
            DynamicTest.dynamicTest("target: " + row["label"]!!.string!!) {
                val steps = row["steps"]!!.list!!.map { step ->
                    PathStep(step["destination"]!!.string!!,
                        step["params"]?.obj.orEmpty().mapValues { (_, v) -> v.long?.let { ParamValue.Integer(it) } ?: ParamValue.Text(v.string!!) },
                        Presentation.named(step["presentation"]!!.string!!)!!)
                }
                val made = NavigationTarget.fromSteps(row["tab"]?.string, steps)
                val expect = row["expect"]!!
                assertEquals(screens(expect["base"]!!.string!!).map { it.toString() }, made.base.map { it.toString() })
                assertEquals(modals(expect["modals"]).map { it.toString() }, made.modals.map { it.toString() })
                ran.incrementAndGet()
            }
        }
        val labels = Regex("\"label\"\\s*:").findAll(text).count()
        val complete = DynamicTest.dynamicTest("every row of ${file.name} ran ($labels)") {
            assertTrue(labels > 0)
            assertEquals(labels, ran.get(), "rows in ${file.name} that did not run or did not pass")
        }
        return plans + targets + complete
    }
}
