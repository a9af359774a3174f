package kotlinx.coroutines

import kotlin.coroutines.AbstractCoroutineContextElement
import kotlin.coroutines.Continuation
import kotlin.coroutines.ContinuationInterceptor
import kotlin.coroutines.resume
import kotlin.coroutines.suspendCoroutine

/** kotlinx's CompletableDeferred: complete once, await suspends until then. */
class CompletableDeferred<T> {
    private var value: Any? = null
    private var done = false
    private val waiting = ArrayList<Continuation<T>>()
    fun complete(value: T): Boolean {
        val resumed = synchronized(this) {
            if (done) return false
            done = true
            this.value = value
            ArrayList(waiting).also { waiting.clear() }
        }
        for (continuation in resumed) continuation.resume(value)
        return true
    }
    @Suppress("UNCHECKED_CAST")
    suspend fun await(): T = suspendCoroutine { continuation ->
        val ready = synchronized(this) { if (!done) waiting.add(continuation); done }
        if (ready) continuation.resume(value as T)
    }
}

/** Dispatchers.Main.immediate: a context element that runs resumptions where they come (no Looper here). */
object Dispatchers {
    object Main : AbstractCoroutineContextElement(ContinuationInterceptor), ContinuationInterceptor {
        val immediate: Main get() = this
        override fun <T> interceptContinuation(continuation: Continuation<T>): Continuation<T> = continuation
    }
}
