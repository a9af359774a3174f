package android.os

open class Bundle {
    private val values = LinkedHashMap<String, Any?>()
    fun keySet(): Set<String> = values.keys
    @Deprecated("Deprecated in API 33: use the typed getters")
    fun get(key: String): Any? = values[key]
    fun putString(key: String, value: String?) { values[key] = value }
}

class Looper private constructor() {
    companion object {
        private val main = Looper()
        fun getMainLooper(): Looper = main
    }
}

open class Handler(val looper: Looper) {
    open fun post(r: Runnable): Boolean { r.run(); return true }
}
