package dev.waymark.client

import dev.waymark.engine.Timestamp
import dev.waymark.engine.lowercaseAscii
import java.io.ByteArrayOutputStream
import java.io.IOException
import java.io.InputStream
import java.net.HttpURLConnection
import java.net.URL
import java.util.concurrent.ScheduledThreadPoolExecutor
import java.util.concurrent.TimeUnit

/** One request the client makes. */
data class TransportRequest(
    val method: String = "GET",
    val url: String,
    val headers: Map<String, String> = emptyMap(),
    val body: ByteArray? = null,
    /** The whole request's deadline, connecting and reading the last byte included (not an idle timeout). */
    val timeoutMillis: Int = 30_000,
    /** The most body bytes the answer may have; a longer one is abandoned unread ([BodyTooLarge]). null: no bound. */
    val maximumBodyBytes: Int? = null
)

/** The answer's body was longer than [TransportRequest.maximumBodyBytes]; the rest was not read. */
class BodyTooLarge(val limit: Int) : IOException("The answer is over the $limit bytes allowed; it was not read.")

/** The whole request took longer than [TransportRequest.timeoutMillis]. */
class DeadlineExceeded(val millis: Int) : IOException("The request took longer than $millis ms.")

/** Its answer; header names are lowercased. */
class TransportResponse(val status: Int, headers: Map<String, String> = emptyMap(), val body: ByteArray = ByteArray(0)) {
    val headers: Map<String, String> = headers.entries.associate { lowercaseAscii(it.key) to it.value }

    /** `Retry-After` in seconds, from delay-seconds or an HTTP date (RFC 9110 §10.2.3); null if absent or unreadable. */
    fun retryAfterSeconds(nowMillis: Long = System.currentTimeMillis()): Double? {
        val value = headers["retry-after"]?.trim() ?: return null
        if (value.isNotEmpty() && value.all { it in '0'..'9' }) {
            // delay-seconds; more digits than a Long holds is still "later than any bound".
            return value.toLongOrNull()?.toDouble() ?: Double.MAX_VALUE
        }
        val date = httpDateSeconds(value) ?: return null
        return maxOf(0.0, date - nowMillis / 1000.0)
    }

    companion object {
        private val DAYS = listOf("Mon", "Tue", "Wed", "Thu", "Fri", "Sat", "Sun")
        private val MONTHS = listOf("Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec")

        /**
         * An IMF-fixdate (`Sun, 06 Nov 1994 08:49:37 GMT`, RFC 9110 §5.6.7) as seconds since
         * 1970, or null. Parsed by hand: `java.time` needs API 26, and the library runs on 24.
         */
        fun httpDateSeconds(text: String): Double? {
            if (text.length != 29 || text[3] != ',' || text[4] != ' ' || text[7] != ' ' || text[11] != ' ' || text[16] != ' ' ||
                text[19] != ':' || text[22] != ':' || !text.endsWith(" GMT") || text.substring(0, 3) !in DAYS) return null
            fun number(start: Int, count: Int): Int? {
                val part = text.substring(start, start + count)
                return if (part.all { it in '0'..'9' }) part.toInt() else null
            }
            val day = number(5, 2) ?: return null
            val month = MONTHS.indexOf(text.substring(8, 11)) + 1
            val year = number(12, 4) ?: return null
            val hour = number(17, 2) ?: return null
            val minute = number(20, 2) ?: return null
            val second = number(23, 2) ?: return null
            if (month == 0 || day < 1 || day > Timestamp.daysIn(month, year) || hour > 23 || minute > 59 || second > 60) return null
            return (Timestamp.days(year, month, day) * 86_400L + hour * 3_600 + minute * 60 + minOf(second, 59)).toDouble()
        }
    }
}

/** How the client talks HTTP: [HttpUrlTransport] in an app, anything in a test. */
interface Transport {
    /** The server's answer, whatever its status; throws [IOException] only when there is none (no network, timeout). */
    fun send(request: TransportRequest): TransportResponse
}

/**
 * The transport of an app: `java.net.HttpURLConnection` (on Android, OkHttp underneath),
 * without caches — the client keeps its own, and a manifest must not come from a stale one.
 */
class HttpUrlTransport : Transport {
    override fun send(request: TransportRequest): TransportResponse {
        val connection = URL(request.url).openConnection() as HttpURLConnection
        // The whole request's deadline (readTimeout alone is per read): once it has passed, the
        // connection is closed, and again every 200 ms until the request has ended (a close
        // while still connecting does nothing), each close on a thread of its own (on the JVM
        // one can wait for the blocked read's lock); and every step checks it.
        val expired = java.util.concurrent.atomic.AtomicBoolean(false)
        val deadline = WATCHDOG.scheduleWithFixedDelay({
            expired.set(true)
            Thread({ connection.disconnect() }, "waymark-transport-close").apply { isDaemon = true }.start()
        }, request.timeoutMillis.toLong(), 200, TimeUnit.MILLISECONDS)
        fun checkDeadline() { if (expired.get()) throw DeadlineExceeded(request.timeoutMillis) }
        try {
            connection.requestMethod = request.method
            connection.useCaches = false
            connection.instanceFollowRedirects = false
            connection.connectTimeout = request.timeoutMillis
            connection.readTimeout = request.timeoutMillis
            for ((name, value) in request.headers) connection.setRequestProperty(name, value)
            request.body?.let { body ->
                connection.doOutput = true
                connection.setFixedLengthStreamingMode(body.size)
                connection.outputStream.use { it.write(body) }
            }
            val status = connection.responseCode
            checkDeadline()
            val limit = request.maximumBodyBytes
            if (limit != null && connection.contentLengthLong > limit) throw BodyTooLarge(limit)
            // The headers before the body: a close resets them.
            val headers = connection.headerFields.filterKeys { it != null }.mapValues { it.value.firstOrNull() ?: "" }
            val stream = if (status >= 400) connection.errorStream else connection.inputStream
            val body = stream?.use { read(it, limit, ::checkDeadline) } ?: ByteArray(0)
            checkDeadline()  // a body cut short by the close is no answer
            return TransportResponse(status, headers, body)
        } catch (error: IOException) {
            if (expired.get() && error !is BodyTooLarge && error !is DeadlineExceeded) throw DeadlineExceeded(request.timeoutMillis)
            throw error
        } finally {
            deadline.cancel(false)
            connection.disconnect()
        }
    }

    /** The body, counted as it arrives: past [limit] the rest is not read; [check] between reads. */
    private fun read(stream: InputStream, limit: Int?, check: () -> Unit): ByteArray {
        val out = ByteArrayOutputStream()
        val buffer = ByteArray(64 * 1024)
        while (true) {
            check()
            val count = stream.read(buffer)
            if (count < 0) return out.toByteArray()
            if (limit != null && out.size() + count > limit) throw BodyTooLarge(limit)
            out.write(buffer, 0, count)
        }
    }

    companion object {
        /** One daemon thread for every transport's deadlines; a cancelled deadline is removed at once. */
        private val WATCHDOG = ScheduledThreadPoolExecutor(1, java.util.concurrent.ThreadFactory { task ->
            Thread(task, "waymark-transport-deadline").apply { isDaemon = true }
        }).apply { setRemoveOnCancelPolicy(true) }
    }
}
