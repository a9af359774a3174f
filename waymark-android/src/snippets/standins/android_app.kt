package android.app

open class Application : android.content.Context() {
    open fun onCreate() {}
}
