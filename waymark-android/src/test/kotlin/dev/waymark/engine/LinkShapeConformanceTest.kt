package dev.waymark.engine

import org.junit.jupiter.api.Assertions.assertEquals
import org.junit.jupiter.api.Assertions.assertFalse
import org.junit.jupiter.api.DynamicTest
import org.junit.jupiter.api.Test
import org.junit.jupiter.api.TestFactory
import java.io.File

/** Unknown links' shapes, `conformance/shapes.json` (`waymark.shapes/1`): the Swift suite runs the same rows. */
class LinkShapeConformanceTest {
    private val file = File(ConformanceTest.directory(), "shapes.json")
    private val json = JsonReader().parse(file.readBytes())
    private val rows = json["rows"]!!.list!!

    @Test
    fun everyRowRuns() {
        assertEquals("waymark.shapes/1", json["format"]?.string)
        assertEquals(file.readText(Charsets.UTF_8).split("\"label\"").size - 1, rows.size)
    }

    @TestFactory
    fun shapes() = rows.map { row ->
        DynamicTest.dynamicTest(row["label"]!!.string!!) {
            val link = row["link"]!!.string!!
            val vocabulary = row["vocabulary"]?.list?.map { it.string!! }?.toSet()
            val shape = LinkShape.of(link, vocabulary).toString()
            assertEquals(row["shape"]!!.string, shape, link)
            row["absent"]?.string?.let { absent -> assertFalse(shape.contains(absent, ignoreCase = true), "$link → $shape") }
            assertEquals(shape, LinkShape.of(shape, vocabulary).toString(), "shaping a shape changes nothing")
        }
    }
}
