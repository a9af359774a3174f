package androidx.navigation

class NavDestination(val id: Int, val route: String?)

class SavedStateHandle {
    private val values = HashMap<String, Any?>()
    operator fun <T> set(key: String, value: T?) { values[key] = value }
    @Suppress("UNCHECKED_CAST") operator fun <T> get(key: String): T? = values[key] as T?
}

class NavBackStackEntry(val destination: NavDestination) {
    val savedStateHandle = SavedStateHandle()
}

class NavOptionsBuilder {
    var launchSingleTop: Boolean = false
}

/** NavHostController's calls the snippet makes (NavController's own). */
open class NavHostController {
    fun interface OnDestinationChangedListener {
        fun onDestinationChanged(controller: NavHostController, destination: NavDestination, arguments: android.os.Bundle?)
    }
    val navigated: MutableList<String> = ArrayList()
    fun addOnDestinationChangedListener(listener: OnDestinationChangedListener) {}
    fun popBackStack(): Boolean = true
    fun popBackStack(destinationId: Int, inclusive: Boolean): Boolean = true
    fun navigate(route: String, builder: NavOptionsBuilder.() -> Unit = {}) { NavOptionsBuilder().builder(); navigated.add(route) }
}
