package dev.waymark.engine

import org.junit.jupiter.api.Assertions.assertEquals
import org.junit.jupiter.api.Assertions.assertTrue
import org.junit.jupiter.api.Assertions.fail
import org.junit.jupiter.api.DynamicContainer
import org.junit.jupiter.api.DynamicNode
import org.junit.jupiter.api.DynamicTest
import org.junit.jupiter.api.Test
import org.junit.jupiter.api.TestFactory
import java.io.File
import java.util.concurrent.atomic.AtomicInteger

/**
 * Every row of every file in the repository's `conformance/` (read there, never copied),
 * resolved by this library exactly as the Swift engine's runner does
 * (`Tests/RouteEngineTests/ConformanceTests.swift`, `docs/conformance.md`). Each file's
 * last test fails unless as many rows ran as the file's text holds.
 */
class ConformanceTest {
    /** The tables of one file, by build: what each build's manifest would resolve with. */
    private fun resolvers(file: JsonValue): Map<String, Resolver> {
        val document = RoutesDocument.decode(file["routes"]!!).first!!
        return file["schemas"]!!.list!!.map { Schema.decode(it) }.associate { schema ->
            schema.buildName to Resolver(schema, RouteAnalysis(document, 0))
        }
    }

    private fun request(row: JsonValue): ResolutionRequest {
        row["link"]?.string?.let { return ResolutionRequest.Url(it) }
        val request = row["request"]!!
        val params = request["params"]?.obj.orEmpty().mapValues { (_, value) ->
            value.long?.let { ParamValue.Integer(it) } ?: ParamValue.Text(value.string ?: "")
        }
        return ResolutionRequest.Destination(DestinationRequest(request["destination"]!!.string!!, params))
    }

    private fun resolves(row: JsonValue, tables: Map<String, Resolver>) {
        val build = row["build"]!!.string!!
        val resolver = tables[build] ?: fail("no schema for $build")
        val context = row["context"]!!
        val now = Timestamp.microseconds(context["now"]!!.string!!) ?: fail("bad now in ${row["label"]}")
        val satisfied = context["satisfied"]?.list.orEmpty().mapNotNull { it.string }.toSet()
        val result = resolver.resolve(request(row), ResolutionContext(satisfied, now))
        assertEquals(row["expect"], result.json)
    }

    /** A budget row's pattern, declared by a schema as a `string` param with the row's `maxLength`. */
    private fun budgetSchema(row: JsonValue): JsonValue {
        val param = linkedMapOf<String, JsonValue>("type" to JsonValue.Text("string"), "pattern" to row["pattern"]!!)
        row["budget"]!!["maxLength"]?.let { param["maxLength"] = it }
        return JsonReader().parse("""{"format": "waymark.schema/1", "app": "budget", "platform": "ios", "version": "1.0.0",
            "schemes": ["budget"], "destinations": {"d": {"params": {"p": ${JsonValue.Object(param).canonical()}}}}}""")
    }

    private fun pattern(row: JsonValue) {
        val refused = row["refused"]?.bool ?: false
        if (row["budget"] != null) {
            try {
                Schema.decode(budgetSchema(row))
                assertTrue(!refused, "accepted")
            } catch (error: SchemaError) {
                assertTrue(refused, "refused: ${error.message}")
                assertTrue(error.problems.filter { it.severity == Severity.ERROR }.all { it.code == "invalidPattern" }, "${error.problems}")
            }
            return
        }
        val compiled = try {
            SafeRegex(row["pattern"]!!.string!!)
        } catch (error: SafeRegexError) {
            assertTrue(refused, "refused: ${error.message}")
            return
        }
        assertTrue(!refused, "accepted")
        val value = row["value"]?.string
        val matches = row["matches"]?.bool
        if (value != null && matches != null) assertEquals(matches, compiled.matches(value))
    }

    @TestFactory
    fun everyRowOfEveryFile(): List<DynamicNode> = resolverFiles().map { file ->
        val text = file.readText()
        val json = JsonReader().parse(text)
        val tables = resolvers(json)
        val ran = AtomicInteger()
        val rows = json["rows"]?.list.orEmpty().map { row ->
            DynamicTest.dynamicTest(row["label"]!!.string!!) { resolves(row, tables); ran.incrementAndGet() }
        }
        val patterns = json["patterns"]?.list.orEmpty().map { row ->
            DynamicTest.dynamicTest("pattern: " + row["label"]!!.string!!) { pattern(row); ran.incrementAndGet() }
        }
        // Counted from the text, not from the parsed document: each row holds one "label" key.
        val labels = Regex("\"label\"\\s*:").findAll(text).count()
        val complete = DynamicTest.dynamicTest("every row of ${file.name} ran ($labels)") {
            assertTrue(labels > 0, "${file.name} has no rows")
            assertEquals(labels, ran.get(), "rows in ${file.name} that did not run or did not pass")
        }
        DynamicContainer.dynamicContainer(file.name, rows + patterns + complete)
    }

    /** Every file is read by this runner, the planner's or the dispatcher's (`dev.waymark.client.PlannerConformanceTest`, `DispatcherConformanceTest`); none by no runner. */
    @Test
    fun everyFileIsRead() {
        val files = conformanceFiles()
        val listed = directory().list().orEmpty().filter { it.endsWith(".json") }.sorted()
        assertEquals(listed, files.map { it.name })
        for (file in files) {
            val format = JsonReader().parse(file.readBytes())["format"]?.string
            assertTrue(format in KNOWN_FORMATS, "${file.name} has the format $format, which no runner reads")
        }
        assertTrue(resolverFiles().size >= 4, "conformance files: ${files.map { it.name }}")
    }

    companion object {
        /** The repository's `conformance/`: `-Dwaymark.conformance=DIR`, else `../conformance` from `waymark-android/`. */
        fun directory(): File {
            val dir = File(System.getProperty("waymark.conformance") ?: "../conformance")
            assertTrue(dir.isDirectory, "no conformance directory at ${dir.absolutePath}")
            return dir
        }

        fun conformanceFiles(): List<File> =
            directory().listFiles { f -> f.name.endsWith(".json") }.orEmpty().sortedBy { it.name }

        private val KNOWN_FORMATS = setOf("waymark.conformance/1", "waymark.planner/1", "waymark.dispatcher/1", "waymark.shapes/1")

        /** The resolver's files (`waymark.conformance/1`); the planner's are run by its own test. */
        fun resolverFiles(): List<File> =
            conformanceFiles().filter { JsonReader().parse(it.readBytes())["format"]?.string == "waymark.conformance/1" }
    }
}
