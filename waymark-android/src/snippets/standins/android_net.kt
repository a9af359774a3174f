package android.net

/** android.net.Uri: parse, scheme, host (the host as written; the snippet lowercases it). */
abstract class Uri {
    abstract val scheme: String?
    abstract val host: String?

    companion object {
        fun parse(uriString: String): Uri = object : Uri() {
            private val parsed = try { java.net.URI(uriString) } catch (ignored: Exception) { null }
            override val scheme: String? get() = parsed?.scheme
            override val host: String? get() = parsed?.host
            override fun toString() = uriString
        }
    }
}
