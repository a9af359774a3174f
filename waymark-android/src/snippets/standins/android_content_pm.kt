package android.content.pm

import android.content.Intent

open class PackageManager {
    open fun resolveActivity(intent: Intent, flags: Int): ResolveInfo? = ResolveInfo().apply { activityInfo = ActivityInfo().apply { packageName = "com.android.chrome" } }

    companion object {
        const val MATCH_DEFAULT_ONLY = 0x00010000
    }
}

class ResolveInfo {
    var activityInfo: ActivityInfo? = null
}

class ActivityInfo {
    var packageName: String? = null
}
