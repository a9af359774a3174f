package dev.waymark.tools

import dev.waymark.engine.JsonReader
import dev.waymark.engine.JsonValue
import dev.waymark.engine.LinkShape
import dev.waymark.engine.ResolutionContext
import dev.waymark.engine.Resolver
import dev.waymark.engine.RouteAnalysis
import dev.waymark.engine.RoutesDocument
import dev.waymark.engine.Schema
import dev.waymark.engine.Timestamp
import java.io.File
import kotlin.system.exitProcess

/**
 * The JVM half of the differential test (`Tests/Scripts/android-differential.py`): what
 * `waymark resolve --links` does, for many jobs in one JVM. The argument is a JSON file of
 * jobs `{"schema", "routes", "links", "now", "satisfied": [...], "shapes"?, "out"}`; each job's table is
 * built as the build's manifest would be, and each link's result is written to `out` as one
 * line of canonical JSON (the result contract, `docs/conformance.md`).
 */
fun main(args: Array<String>) {
    if (args.size != 1) {
        System.err.println("usage: ResolveLinks JOBS.json")
        exitProcess(2)
    }
    val reader = JsonReader()
    for (job in reader.parse(File(args[0]).readBytes()).list!!) {
        val schema = Schema.decode(reader.parse(File(job["schema"]!!.string!!).readBytes()))
        val document = RoutesDocument.decode(reader.parse(File(job["routes"]!!.string!!).readBytes())).first
            ?: error("the routes file ${job["routes"]} cannot be used")
        val now = Timestamp.microseconds(job["now"]!!.string!!) ?: error("bad now ${job["now"]}")
        val resolver = Resolver(schema, RouteAnalysis(document, now))
        val context = ResolutionContext(job["satisfied"]!!.list!!.map { it.string!! }.toSet(), now)
        File(job["out"]!!.string!!).bufferedWriter().use { out ->
            for (line in File(job["links"]!!.string!!).readLines()) {
                if (line.isBlank()) continue
                val link = reader.parse(line).string!!
                val result = resolver.resolve(link, context).json
                // With "shapes": the link's shape as a phone would send it, with the table's words.
                val written = if (job["shapes"] == JsonValue.Bool(true)) {
                    JsonValue.Object(LinkedHashMap(result.obj!!).apply { put("shape", JsonValue.Text(LinkShape.of(link, resolver.vocabulary).toString())) })
                } else result
                out.write(written.canonical())
                out.write("\n")
            }
        }
    }
}
