package androidx.compose.runtime

interface MutableState<T> {
    var value: T
}

fun <T> mutableStateOf(value: T): MutableState<T> = object : MutableState<T> {
    override var value: T = value
}
