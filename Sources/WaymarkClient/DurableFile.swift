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
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        try data.write(to: url, options: .atomic)
        // The rename is durable once the directory is; not every platform opens one for this.
        if let handle = try? FileHandle(forReadingFrom: directory) {
            try? handle.synchronize()
            try? handle.close()
        }
    }

    static func read(_ url: URL) -> Data? {
        try? Data(contentsOf: url)
    }
}
