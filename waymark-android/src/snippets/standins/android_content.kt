// Stand-ins for the few Android SDK types docs/android.md's snippets use, with their
// signatures as the SDK declares them (developer.android.com reference), so the snippets
// compile here without the SDK (build.sh snippets). Bodies do the least that lets the
// snippets run; they are not Android.
package android.content

import android.content.pm.PackageManager
import android.content.res.AssetManager
import android.net.Uri
import android.os.Bundle
import java.io.File

open class Context {
    open val packageName: String get() = "com.example.storefront"
    open val packageManager: PackageManager get() = PackageManager()
    open val noBackupFilesDir: File get() = File(System.getProperty("java.io.tmpdir"), "no-backup")
    open val assets: AssetManager get() = AssetManager()
    val started: MutableList<Intent> = ArrayList()
    open fun startActivity(intent: Intent) { started.add(intent) }
}

open class Intent(var action: String? = null, var data: Uri? = null) {
    var extras: Bundle? = null
    var `package`: String? = null
    val categories: MutableSet<String> = LinkedHashSet()
    var flags: Int = 0
    val dataString: String? get() = data?.toString()
    fun addCategory(category: String): Intent { categories.add(category); return this }
    fun addFlags(flags: Int): Intent { this.flags = this.flags or flags; return this }
    fun setPackage(packageName: String?): Intent { `package` = packageName; return this }

    companion object {
        const val ACTION_VIEW = "android.intent.action.VIEW"
        const val CATEGORY_BROWSABLE = "android.intent.category.BROWSABLE"
        const val FLAG_ACTIVITY_NEW_TASK = 0x10000000
    }
}
