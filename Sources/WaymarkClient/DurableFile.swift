import Foundation

/// Whole-file writes that a crash cannot tear: the bytes go to a temporary file in the same
/// directory, are flushed to the disk (`fsync`), and replace the file by a rename; the
/// directory is flushed after. A reader sees the old file or the new one, never a part.
enum DurableFile {
    static func write(_ data: Data, to url: URL) throws {
        let directory = url.deletingLastPathComponent()
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        let temporary = directory.appendingPathComponent(".\(url.lastPathComponent).\(UUID().uuidString).tmp")
        guard FileManager.default.createFile(atPath: temporary.path, contents: nil) else {
            throw CocoaError(.fileWriteUnknown, userInfo: [NSFilePathErrorKey: temporary.path])
        }
        do {
            let handle = try FileHandle(forWritingTo: temporary)
            defer { try? handle.close() }
            try handle.write(contentsOf: data)
            try handle.synchronize()
        } catch {
            try? FileManager.default.removeItem(at: temporary)
            throw error
        }
        do {
            if FileManager.default.fileExists(atPath: url.path) {
                _ = try FileManager.default.replaceItemAt(url, withItemAt: temporary)
            } else {
                try FileManager.default.moveItem(at: temporary, to: url)
            }
        } catch {
            try? FileManager.default.removeItem(at: temporary)
            throw error
        }
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
