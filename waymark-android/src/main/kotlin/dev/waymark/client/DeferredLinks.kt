package dev.waymark.client

import dev.waymark.engine.lowercaseAscii
import java.io.File
import java.security.MessageDigest

/**
 * Deferred links on Android (`docs/landing.md`, "Deferred links"): when a landing sends a
 * phone without the app to Google Play, the store address carries the link as its Install
 * Referrer (`deeplink` = the link, `t` = when the landing made it, and the link's UTM items).
 * After the install the app reads the referrer once with Play's `InstallReferrerClient` and
 * hands the string here; what comes back is dispatched like any link, by the `deferred` door.
 *
 * A referrer opens nothing when it is longer than [MAXIMUM_REFERRER_CHARACTERS], carries no
 * `deeplink` on one of [hosts] (https, the host without case, no space, control character or
 * `#`), no `t` of 1 to 12 digits, a `t` more than
 * [maximumAgeMillis] before now or more than five minutes after it, or when it was handed
 * over before on this install: a referrer opened is remembered (a digest of it, the newest
 * [REMEMBERED]) in [file], written durably before the intent is returned, so a crash or the
 * app asking Play again never opens it twice (it reads and writes that file: call it off the
 * main thread). Nothing of the person or the device is read: the referrer is the only
 * evidence, and it is Play's own.
 */
class DeferredLinks(
    /** Where opened referrers are remembered: in the app's `noBackupFilesDir`, so a restore does not carry it to another install. */
    private val file: File,
    /** The app's universal-link hosts (the schema's `hosts`). */
    hosts: Collection<String>,
    private val clock: () -> Long = System::currentTimeMillis,
    private val maximumAgeMillis: Long = MAXIMUM_AGE_MILLIS
) {
    private val hosts = hosts.map { lowercaseAscii(it) }.toSet()
    private val lock = Any()

    companion object {
        /** A day: a person installs the app minutes after following the link, not weeks. */
        const val MAXIMUM_AGE_MILLIS = 86_400_000L
        const val MAXIMUM_REFERRER_CHARACTERS = 4_096
        const val REMEMBERED = 256
        private const val SKEW_MILLIS = 300_000L
    }

    /** The link of [referrer] as an intent by the deferred door, or null (the rules above). */
    fun fromInstallReferrer(referrer: String): Intent? {
        if (referrer.length > MAXIMUM_REFERRER_CHARACTERS) return null
        val intent = Intent.fromInstallReferrer(referrer) as? Intent.Link ?: return null
        if (!isOnHosts(intent.link)) return null
        // 1 to 12 digits, nothing else (no sign, no spaces): a bound no arithmetic below can pass.
        val digits = Intent.formItem(referrer, "t") ?: return null
        if (digits.length !in 1..12 || digits.any { it !in '0'..'9' }) return null
        val made = digits.toLong() * 1_000
        val now = clock()
        if (made > now + SKEW_MILLIS || now - made > maximumAgeMillis) return null
        return if (remember(digest(referrer))) intent else null
    }

    /// https, a host of the app's, and no space, control character or `#` anywhere (as the iOS library's rule).
    private fun isOnHosts(link: String): Boolean {
        if (link.any { it <= ' ' || it == '\u007F' || it == '#' }) return false
        if (!link.regionMatches(0, "https://", 0, 8, ignoreCase = true)) return false
        val end = link.indexOfAny(charArrayOf('/', '?', '#'), 8).let { if (it < 0) link.length else it }
        return lowercaseAscii(link.substring(8, end)) in this.hosts
    }

    /**
     * Adds [digest] to the remembered ones; false when it was there already, or when it cannot
     * be written (a full disk): a referrer that cannot be remembered is not opened, so it
     * cannot be opened twice, and nothing is thrown at the app's first launch.
     */
    private fun remember(digest: String): Boolean = synchronized(lock) {
        val known = DurableFile.read(file)?.let { String(it, Charsets.UTF_8).split('\n').filter { line -> line.length == 64 } } ?: emptyList()
        if (digest in known) return false
        try {
            DurableFile.write((known.takeLast(REMEMBERED - 1) + digest).joinToString("\n").toByteArray(Charsets.UTF_8), file)
        } catch (failed: java.io.IOException) {
            return false
        }
        true
    }

    private fun digest(text: String): String {
        val hex = "0123456789abcdef"
        val out = StringBuilder(64)
        for (byte in MessageDigest.getInstance("SHA-256").digest(text.toByteArray(Charsets.UTF_8))) {
            val value = byte.toInt() and 0xFF
            out.append(hex[value shr 4]).append(hex[value and 15])
        }
        return out.toString()
    }
}
