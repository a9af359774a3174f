package androidx.appcompat.app

import android.app.Application
import android.content.Intent
import android.os.Bundle

open class AppCompatActivity : android.content.Context() {
    open var intent: Intent = Intent()
    open var application: Application = Application()
    protected open fun onCreate(savedInstanceState: Bundle?) {}
    protected open fun onNewIntent(intent: Intent) {}
    open fun setContentView(layoutResID: Int) {}
}
