package android.net

/** android.net.Uri: parse, scheme, host (the host as written; the snippet lowercases it), getQueryParameter. */
abstract class Uri {
    abstract val scheme: String?
    abstract val host: String?
    abstract fun getQueryParameter(key: String): String?

    companion object {
        fun parse(uriString: String): Uri = object : Uri() {
            private val parsed = try { java.net.URI(uriString) } catch (ignored: Exception) { null }
            override val scheme: String? get() = parsed?.scheme
            override val host: String? get() = parsed?.host
            override fun getQueryParameter(key: String): String? = parsed?.rawQuery?.split("&")
                ?.map { it.split("=", limit = 2) }?.firstOrNull { java.net.URLDecoder.decode(it[0], "UTF-8") == key }
                ?.let { if (it.size > 1) java.net.URLDecoder.decode(it[1], "UTF-8") else "" }
            override fun toString() = uriString
        }
    }
}
