package dev.waymark.client

import dev.waymark.engine.JsonReader
import dev.waymark.engine.JsonValue
import java.io.File
import java.io.IOException

/**
 * Where an external link waiting at a gate (the login activity) is kept, so that it
 * survives the process being killed there — by the system while the user fetched a
 * password, or by the user — and is carried out after the next launch's `ready()`, if that
 * comes soon enough (the Swift `GateStash`, the same file format). One link at most (the
 * newest waiting one), in one file, written durably; removed as soon as the intent ends,
 * whatever its end. The link may carry personal data: it stays in the app's own
 * directory (`noBackupFilesDir`), for [lifetimeMillis] at most.
 */
class GateStash(
    /** The directory of the stash file (`gate-stash.json`): the manifest client's. */
    val directory: File,
    /** How long a stashed link stays worth resuming (default 10 minutes); older, it is dropped. */
    val lifetimeMillis: Long = 10 * 60 * 1000L,
    private val clock: () -> Long = System::currentTimeMillis
) {
    val file: File get() = File(directory, "gate-stash.json")

    /** Keeps [link] (arrived by [door]) now. A full disk keeps nothing, and changes nothing else. */
    fun keep(link: String, door: Door) {
        val json = JsonValue.obj("format" to JsonValue.Text(FORMAT), "link" to JsonValue.Text(link), "door" to JsonValue.Text(door.json),
            "time" to JsonValue.JsonInt(Math.floorDiv(clock(), 1000L)))
        try { DurableFile.write(json.canonical().toByteArray(Charsets.UTF_8), file) } catch (error: IOException) { }
    }

    fun clear() {
        file.delete()
    }

    /**
     * The stashed intent, if one is there and was kept within [lifetimeMillis]; the file is
     * removed either way (a link resumed once is not resumed again by a crash loop).
     */
    fun take(): Intent? {
        val bytes = DurableFile.read(file) ?: return null
        clear()
        if (bytes.size > 4_096) return null
        val json = try { JsonReader().parse(bytes) } catch (unreadable: Exception) { return null }
        if (json["format"]?.string != FORMAT) return null
        val link = json["link"]?.string ?: return null
        val door = Door.values().firstOrNull { it.json == json["door"]?.string && it != Door.IN_APP } ?: return null
        val time = json["time"]?.long ?: return null
        val age = Math.floorDiv(clock(), 1000L) - time
        // A clock set back a little is forgiven.
        if (age < -60 || age * 1000 > lifetimeMillis) return null
        return Intent.Link(link, door)
    }

    companion object {
        const val FORMAT = "waymark-gate-stash/1"
    }
}
