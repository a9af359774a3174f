package dev.waymark.client

import dev.waymark.engine.uppercaseAscii
import java.io.File
import java.io.IOException
import java.util.UUID

/**
 * The install's cohort, 0…99, which a staged rollout uses (`docs/rollouts.md`): the first 32
 * bits of a random per-install id's 128, big-endian, unsigned, modulo 100 — the Swift
 * `Cohort`'s rule, so an install keeps its cohort whichever library reads the id.
 */
object Cohort {
    fun of(installId: UUID): Int = ((installId.mostSignificantBits ushr 32) % 100).toInt()

    /**
     * The install id kept in [directory] (`install-id`, made once with a random UUID and
     * written durably); null if it can neither be read nor made. Keep it in the app's files
     * directory (`Context.getNoBackupFilesDir()`), not its cache (installs would change cohort)
     * nor one Auto Backup copies (a restored device would share this install's id).
     */
    fun installId(directory: File): UUID? {
        val file = File(directory, "install-id")
        DurableFile.read(file)?.let { bytes ->
            try { return UUID.fromString(String(bytes, Charsets.UTF_8).trim()) } catch (unreadable: IllegalArgumentException) { }
        }
        val id = UUID.randomUUID()
        return try { DurableFile.write((uppercaseAscii(id.toString()) + "\n").toByteArray(), file); id } catch (error: IOException) { null }
    }
}
