package dev.waymark.engine

/**
 * RFC 3339 date-times to the instants the engine compares: whole microseconds since 1970
 * (`docs/formats.md`, "Timestamps"). The digits of a fraction past the sixth are dropped,
 * not rounded; `:60` (a leap second) reads as `:59`; offsets `Z`, `z` or `±HH:MM`.
 */
object Timestamp {
    /** Microseconds since 1970, or null unless [text] is an RFC 3339 date-time. */
    fun microseconds(text: String): Long? {
        val b = text
        if (b.length < 20) return null
        fun digits(start: Int, count: Int): Int? {
            var value = 0
            for (index in start until start + count) {
                val c = b[index]
                if (c !in '0'..'9') return null
                value = value * 10 + (c - '0')
            }
            return value
        }
        val year = digits(0, 4) ?: return null
        if (b[4] != '-' || b[7] != '-') return null
        val month = digits(5, 2) ?: return null
        val day = digits(8, 2) ?: return null
        if (month !in 1..12 || day < 1 || day > daysIn(month, year)) return null
        if (b[10] != 'T' && b[10] != 't') return null
        val hour = digits(11, 2) ?: return null
        if (b[13] != ':' || b[16] != ':') return null
        val minute = digits(14, 2) ?: return null
        val second = digits(17, 2) ?: return null
        if (hour > 23 || minute > 59 || second > 60) return null
        var index = 19
        var micros = 0L
        if (b[index] == '.') {
            index++
            val start = index
            var scale = 100_000L
            while (index < b.length && b[index] in '0'..'9') {
                // Whole microseconds: later digits must be digits, and are dropped.
                micros += (b[index] - '0') * scale
                scale /= 10
                index++
            }
            if (index == start) return null
        }
        if (index >= b.length) return null
        var offset = 0
        when (b[index]) {
            'Z', 'z' -> index++
            '+', '-' -> {
                if (index + 6 != b.length) return null
                val hours = digits(index + 1, 2) ?: return null
                if (b[index + 3] != ':') return null
                val minutes = digits(index + 4, 2) ?: return null
                if (hours > 23 || minutes > 59) return null
                offset = (hours * 60 + minutes) * 60 * (if (b[index] == '+') 1 else -1)
                index += 6
            }
            else -> return null
        }
        if (index != b.length) return null
        val seconds = days(year, month, day) * 86_400L + hour * 3_600 + minute * 60 + minOf(second, 59) - offset
        return seconds * 1_000_000 + micros
    }

    /** An instant from a clock with nanoseconds (`java.time.Instant`), truncated to its microsecond. */
    fun microseconds(epochSecond: Long, nano: Int): Long = epochSecond * 1_000_000 + nano / 1_000

    /** `2026-11-21T10:00:00Z` for microseconds since 1970 (whole seconds, rounded down, UTC). */
    fun format(microseconds: Long): String {
        val seconds = Math.floorDiv(microseconds, 1_000_000L)
        val dayNumber = Math.floorDiv(seconds, 86_400L)
        val second = Math.floorMod(seconds, 86_400L).toInt()
        val (year, month, day) = civil(dayNumber)
        return decimalAscii(year, 4) + "-" + decimalAscii(month, 2) + "-" + decimalAscii(day, 2) + "T" + decimalAscii(second / 3600, 2) + ":" +
            decimalAscii(second / 60 % 60, 2) + ":" + decimalAscii(second % 60, 2) + "Z"
    }

    private fun isLeap(year: Int) = year % 4 == 0 && (year % 100 != 0 || year % 400 == 0)

    fun daysIn(month: Int, year: Int): Int = when (month) {
        2 -> if (isLeap(year)) 29 else 28
        4, 6, 9, 11 -> 30
        else -> 31
    }

    /** Days since 1970-01-01 of a Gregorian date (Howard Hinnant's `days_from_civil`). */
    fun days(year: Int, month: Int, day: Int): Long {
        val y = (if (month <= 2) year - 1 else year).toLong()
        val era = Math.floorDiv(y, 400L)
        val yoe = y - era * 400
        val mp = (month + 9) % 12
        val doy = (153 * mp + 2) / 5 + day - 1
        val doe = yoe * 365 + yoe / 4 - yoe / 100 + doy
        return era * 146_097 + doe - 719_468
    }

    private fun civil(days: Long): Triple<Int, Int, Int> {
        val z = days + 719_468
        val era = Math.floorDiv(z, 146_097L)
        val doe = z - era * 146_097
        val yoe = (doe - doe / 1460 + doe / 36524 - doe / 146_096) / 365
        val doy = doe - (365 * yoe + yoe / 4 - yoe / 100)
        val mp = (5 * doy + 2) / 153
        val day = (doy - (153 * mp + 2) / 5 + 1).toInt()
        val month = (if (mp < 10) mp + 3 else mp - 9).toInt()
        val year = (yoe + era * 400 + if (month <= 2) 1 else 0).toInt()
        return Triple(year, month, day)
    }
}
