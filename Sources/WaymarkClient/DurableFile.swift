import Foundation

/// Whole-file writes that a crash cannot tear: the bytes go to a temporary file in the same
/// directory, are flushed to the disk (`fsync`), and replace the file by a rename; the
/// directory is flushed after. A reader sees the old file or the new one, never a part.
enum DurableFile {
    /// Foundation's atomic write does the first three steps on every platform (swift-foundation's
    /// `Data+Writing`: a temporary file beside the target, `fsync`, `rename`); the directory is
    /// flushed here. (Not `FileManager.replaceItemAt`: on Linux it removes the original and
    /// then fails.)
    static func write(_ data: Data, to url: URL) throws {
        let directory = url.deletingLastPathComponent()
        try prepare(directory)
        try data.write(to: url, options: .atomic)
        excludeFromBackup(url)
        // The rename is durable once the directory is; not every platform opens one for this.
        if let handle = try? FileHandle(forReadingFrom: directory) {
            try? handle.synchronize()
            try? handle.close()
        }
    }

    /// Writes `data` whole (as `write`) without file protection: readable and writable before
    /// the device's first unlock, for what must survive a background launch then. Whether it
    /// was written.
    static func writeUnprotected(_ data: Data, to url: URL) -> Bool {
        #if canImport(Darwin)
        let options: Data.WritingOptions = [.atomic, .noFileProtection]
        #else
        let options: Data.WritingOptions = [.atomic]
        #endif
        do {
            try prepare(url.deletingLastPathComponent())
            try data.write(to: url, options: options)
            excludeFromBackup(url)
            return true
        } catch {
            return false
        }
    }

    /// Appends `data` to `url` (made without file protection if new), flushed to the disk.
    static func appendUnprotected(_ data: Data, to url: URL) -> Bool {
        guard FileManager.default.fileExists(atPath: url.path) else { return writeUnprotected(data, to: url) }
        guard let handle = try? FileHandle(forUpdating: url) else { return false }
        defer { try? handle.close() }
        do {
            // A line a power loss cut short gets its end first, so the next line is whole.
            let end = try handle.seekToEnd()
            if end > 0 {
                try handle.seek(toOffset: end - 1)
                let last = try handle.read(upToCount: 1)
                try handle.seekToEnd()
                if last != Data([0x0A]) { try handle.write(contentsOf: Data([0x0A])) }
            }
            try handle.write(contentsOf: data)
            try handle.synchronize()
            return true
        } catch {
            return false
        }
    }

    static func read(_ url: URL) -> Data? {
        if case .data(let data) = contents(url) { return data }
        return nil
    }

    /// What reading a file found: its bytes, no file, or a file that cannot be read now —
    /// before the device's first unlock (data protection), or damaged — which a caller must
    /// not take for an empty one and write over.
    enum Contents {
        case data(Data)
        case missing
        case unreadable
    }

    static func contents(_ url: URL) -> Contents {
        do {
            return .data(try Data(contentsOf: url))
        } catch let error as CocoaError where error.code == .fileReadNoSuchFile || error.code == .fileNoSuchFile {
            return .missing
        } catch {
            return FileManager.default.fileExists(atPath: url.path) ? .unreadable : .missing
        }
    }

    /// Makes the library's directory if needed.
    static func prepare(_ directory: URL) throws {
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
    }

    /// Keeps one of the library's files out of backups: a restored or migrated device must
    /// not get this install's id (its cohort and source key) or replay its telemetry journal,
    /// and the cache is fetched again anyway. The file, not the directory: the app may have
    /// given its own Application Support.
    static func excludeFromBackup(_ file: URL) {
        #if canImport(Darwin)
        var values = URLResourceValues()
        values.isExcludedFromBackup = true
        var excluded = file
        try? excluded.setResourceValues(values)
        #endif
    }

    /// Whether `directory` can be written and read back now (a probe file): true on an
    /// unlocked device, so a file there that cannot be read is damaged, not shut.
    static func isReadableAndWritable(_ directory: URL) -> Bool {
        let probe = directory.appendingPathComponent(".waymark-probe-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: probe) }
        let bytes = Data("probe".utf8)
        guard (try? bytes.write(to: probe)) != nil else { return false }
        return (try? Data(contentsOf: probe)) == bytes
    }
}
