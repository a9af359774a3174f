package dev.waymark.client

/**
 * When to try again (the Swift `Backoff`): the interval after a success, exponential backoff
 * with equal jitter after failures, never sooner than the server's `Retry-After` — up to
 * [maximum]: a proxy or a captive portal may send any number or date, and a client that
 * obeyed 10^12 s would never ask again. Pure; the random number is given. Seconds throughout.
 */
data class Backoff(val interval: Double, val minimum: Double, val maximum: Double) {
    /**
     * The wait after [failures] consecutive failures (0: after a success); [random] in 0..<1
     * picks from the upper half of the step, so a fleet that failed together does not come
     * back together; [retryAfter] is a floor, itself capped at [maximum] (and ignored
     * unless it is a finite number of seconds).
     */
    fun delay(failures: Int, retryAfter: Double? = null, random: Double): Double {
        val floor = if (retryAfter == null || retryAfter.isNaN() || retryAfter.isInfinite()) 0.0 else retryAfter.coerceIn(0.0, maximum)
        if (failures <= 0) return maxOf(interval, floor)
        val step = minOf(maximum, minimum * Math.pow(2.0, minOf(failures - 1, 30).toDouble()))
        val jittered = step / 2 + step / 2 * (if (random.isNaN()) 0.0 else random.coerceIn(0.0, 1.0))
        return maxOf(jittered, floor)
    }
}
