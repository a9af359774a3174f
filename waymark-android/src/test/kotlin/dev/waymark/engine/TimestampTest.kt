package dev.waymark.engine

import org.junit.jupiter.api.Assertions.assertEquals
import org.junit.jupiter.api.DynamicTest
import org.junit.jupiter.api.TestFactory

/** Instants in whole microseconds (docs/formats.md): the Swift `TimestampTests` rows, and the reader's refusals. */
class TimestampTest {
    private val rows = listOf<Pair<String, Long?>>(
        "2026-03-31T23:59:59.9999999Z" to 1_775_001_599_999_999,
        "2026-03-31T23:59:59.999999Z" to 1_775_001_599_999_999,
        "2026-03-31T23:59:59.999999999999Z" to 1_775_001_599_999_999,
        "2026-04-01T00:00:00Z" to 1_775_001_600_000_000,
        "2026-04-01T00:00:00.0000009Z" to 1_775_001_600_000_000,
        "2026-04-01T00:00:00.000001Z" to 1_775_001_600_000_001,
        "2026-04-01T00:00:00.5Z" to 1_775_001_600_500_000,
        "2026-04-01T02:00:00.0000019+02:00" to 1_775_001_600_000_001,
        "1969-12-31T23:59:59.9999999Z" to -1,
        "2026-03-31T23:59:60.9999999Z" to 1_775_001_599_999_999,
        "2016-12-31T23:59:60Z" to 1_483_228_799_000_000,
        "2000-02-29T00:00:00z" to 951_782_400_000_000,
        "2026-04-01t00:00:00Z" to 1_775_001_600_000_000,
        "2026-04-01T00:00:00.1234567xZ" to null,
        "2026-04-01T00:00:00.Z" to null,
        "2026-02-29T00:00:00Z" to null,
        "2026-04-01T24:00:00Z" to null,
        "2026-04-01T00:00:61Z" to null,
        "2026-04-01T00:00:00+24:00" to null,
        "2026-04-01T00:00:00+0100" to null,
        "2026-04-01 00:00:00Z" to null,
        "2026-04-01T00:00:00" to null,
        "2026-04-01T00:00:00Zjunk" to null,
        "２026-04-01T00:00:00Z" to null
    )

    @TestFactory
    fun microseconds() = rows.map { (text, expected) ->
        DynamicTest.dynamicTest(text) { assertEquals(expected, Timestamp.microseconds(text)) }
    }

    @TestFactory
    fun formatsWholeSecondsUtc() = listOf("1970-01-01T00:00:00Z", "2026-03-01T00:00:00Z", "2000-02-29T23:59:59Z", "1969-12-31T23:59:59Z").map { text ->
        DynamicTest.dynamicTest(text) { assertEquals(text, Timestamp.format(Timestamp.microseconds(text)!!)) }
    }

    @TestFactory
    fun aClockIsTruncatedToItsMicrosecond() = listOf(Triple(0L, 999, 0L), Triple(0L, 1_999, 1L), Triple(1L, 999_999_999, 1_999_999L), Triple(-1L, 500_000_000, -500_000L)).map { (seconds, nanos, expected) ->
        DynamicTest.dynamicTest("$seconds s + $nanos ns") { assertEquals(expected, Timestamp.microseconds(seconds, nanos)) }
    }
}
