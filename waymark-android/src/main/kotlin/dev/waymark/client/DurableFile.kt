package dev.waymark.client

import java.io.File
import java.io.FileOutputStream
import java.io.IOException
import java.nio.channels.FileChannel
import java.nio.file.StandardOpenOption
import java.util.UUID

/**
 * Whole-file writes a crash cannot tear: the bytes go to a temporary file in the same
 * directory, are flushed to the disk, and replace the file by an atomic rename (`rename(2)`,
 * which `File.renameTo` is on Android and Linux); the directory is flushed after where the
 * platform can (below). A reader sees the old file or the new one, never a part.
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
            if (!temporary.renameTo(file)) throw IOException("cannot replace $file")
        } finally {
            temporary.delete()
        }
        DirectorySync.force(directory)
    }

    fun read(file: File): ByteArray? = try { file.readBytes() } catch (missing: IOException) { null }
}

/**
 * The rename is durable once its directory is flushed. `java.nio.file` opens a directory
 * for that, and exists on every JVM and on Android from API 26; on API 24 and 25 the entry
 * reaches the disk with the file system's next commit (seconds), and a power cut before it
 * leaves the previous file whole. The class that uses `java.nio.file` is loaded only when
 * the platform has it (`Tests/Scripts/android-api-level.py` allows it there alone).
 */
internal object DirectorySync {
    private val available: Boolean = try {
        Class.forName("java.nio.file.Files")
        true
    } catch (missing: ClassNotFoundException) {
        false
    }

    fun force(directory: File) {
        if (available) NioDirectorySync.force(directory)
    }
}

/** Only reached through [DirectorySync] where `java.nio.file` exists. */
internal object NioDirectorySync {
    fun force(directory: File) {
        try {
            FileChannel.open(directory.toPath(), StandardOpenOption.READ).use { it.force(true) }
        } catch (notOnThisPlatform: IOException) {
        } catch (notOnThisPlatform: UnsupportedOperationException) {
        }
    }
}
