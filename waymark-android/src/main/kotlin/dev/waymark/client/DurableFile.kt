package dev.waymark.client

import java.io.File
import java.io.FileOutputStream
import java.io.IOException
import java.nio.channels.FileChannel
import java.nio.file.Files
import java.nio.file.StandardCopyOption
import java.nio.file.StandardOpenOption
import java.util.UUID

/**
 * Whole-file writes a crash cannot tear: the bytes go to a temporary file in the same
 * directory, are flushed to the disk, and replace the file by an atomic rename; the
 * directory is flushed after. A reader sees the old file or the new one, never a part.
 */
object DurableFile {
    fun write(bytes: ByteArray, file: File) {
        val directory = file.absoluteFile.parentFile
        if (!directory.isDirectory && !directory.mkdirs()) throw IOException("cannot make $directory")
        val temporary = File(directory, ".${file.name}.${UUID.randomUUID()}.tmp")
        try {
            FileOutputStream(temporary).use { out ->
                out.write(bytes)
                out.fd.sync()
            }
            Files.move(temporary.toPath(), file.toPath(), StandardCopyOption.ATOMIC_MOVE, StandardCopyOption.REPLACE_EXISTING)
        } finally {
            temporary.delete()
        }
        // The rename is durable once the directory is; not every platform opens one for this.
        try {
            FileChannel.open(directory.toPath(), StandardOpenOption.READ).use { it.force(true) }
        } catch (notOnThisPlatform: IOException) {
        }
    }

    fun read(file: File): ByteArray? = try { file.readBytes() } catch (missing: IOException) { null }
}
