package waymark.client

import java.io.IOException
import java.net.HttpURLConnection
import java.net.URL
import java.time.ZonedDateTime
import java.time.format.DateTimeFormatter

/** One request the client makes. */
data class TransportRequest(
    val method: String = "GET",
    val url: String,
    val headers: Map<String, String> = emptyMap(),
    val body: ByteArray? = null,
    val timeoutMillis: Int = 30_000
)

/** Its answer; header names are lowercased. */
class TransportResponse(val status: Int, headers: Map<String, String> = emptyMap(), val body: ByteArray = ByteArray(0)) {
    val headers: Map<String, String> = headers.entries.associate { it.key.toLowerCase(java.util.Locale.ROOT) to it.value }

    /** `Retry-After` in seconds, from delay-seconds or an HTTP date (RFC 9110 §10.2.3); null if absent or unreadable. */
    fun retryAfterSeconds(nowMillis: Long = System.currentTimeMillis()): Double? {
        val value = headers["retry-after"]?.trim() ?: return null
        value.toLongOrNull()?.let { return if (it >= 0) it.toDouble() else null }
        return try {
            val date = ZonedDateTime.parse(value, DateTimeFormatter.RFC_1123_DATE_TIME)
            maxOf(0.0, (date.toInstant().toEpochMilli() - nowMillis) / 1000.0)
        } catch (unreadable: Exception) {
            null
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
            val stream = if (status >= 400) connection.errorStream else connection.inputStream
            val body = stream?.use { it.readBytes() } ?: ByteArray(0)
            val headers = connection.headerFields.filterKeys { it != null }.mapValues { it.value.firstOrNull() ?: "" }
            return TransportResponse(status, headers, body)
        } finally {
            connection.disconnect()
        }
    }
}
