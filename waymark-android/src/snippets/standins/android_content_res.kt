package android.content.res

import java.io.ByteArrayInputStream
import java.io.InputStream

open class AssetManager {
    open fun open(fileName: String): InputStream = ByteArrayInputStream(ByteArray(0))
}
