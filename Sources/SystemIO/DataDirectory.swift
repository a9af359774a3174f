#if canImport(Glibc)
import Glibc
#endif
import Synchronization

/// The files under a data directory, written the way databases write them: a new file is
/// written under a temporary name, fsynced, renamed into place, and the directory fsynced,
/// so after a crash a name holds either nothing or the whole file. Appends are fsynced
/// before they are acknowledged. A lock file keeps a second daemon out. Every failure is an
/// `IOError` naming the call and the path; the stores above say what it means.
public final class DataDirectory: Sendable {
    public static let temporaryPrefix = ".tmp-"
    public let path: String
    private let lockFD: Int32
    private let temporaryCounter = Atomic<Int>(0)

    /// - Parameter exclusive: take `DIR/LOCK` for the life of this object (the daemon);
    ///   false for a short edit beside a running daemon (`waymark token`), which must
    ///   then serialize its writes with `withFileLock`. Another process holding the lock is
    ///   `flock` with `EWOULDBLOCK`; a file where a directory should be, `mkdir` with `ENOTDIR`.
    public init(path: String, subdirectories: [String], exclusive: Bool = true) throws(IOError) {
        self.path = path
        try Self.makeDirectory(path)
        for name in subdirectories { try Self.makeDirectory(path + "/" + name) }
        guard exclusive else {
            lockFD = -1
            return
        }
        lockFD = try Self.openLocked(path + "/LOCK", wait: false)
    }

    deinit { if lockFD >= 0 { FileSystem.close(lockFD) } }

    /// Runs `body` holding an exclusive flock on `DIR/name`, waiting for other processes
    /// that hold it. Serializes writers of one file across processes; `failure` says what
    /// a failure to take the lock means to the caller.
    public func withFileLock<T, E: Error>(_ name: String, failure: (IOError) -> E, _ body: () throws(E) -> T) throws(E) -> T {
        let lockPath = path + "/" + name
        let fd = try readingIOErrors(as: failure) { () throws(IOError) in try Self.openLocked(lockPath, wait: true) }
        defer { FileSystem.close(fd) }  // closing the last descriptor releases the flock
        return try body()
    }

    /// The lock file at `lockPath` (created if missing), open and exclusively flocked.
    private static func openLocked(_ lockPath: String, wait: Bool) throws(IOError) -> Int32 {
        let fd = try FileSystem.open(lockPath, O_RDWR | O_CREAT)
        do throws(IOError) {
            try FileSystem.lock(fd, path: lockPath, wait: wait)
        } catch {
            FileSystem.close(fd)
            throw error
        }
        return fd
    }

    /// What identifies one version of a file written by `writeDurably` (every write is a
    /// new inode): nil when it does not exist.
    public func identity(_ relativePath: String) -> FileIdentity? {
        FileSystem.identity(path + "/" + relativePath)
    }

    /// Creates `DIR/name` if it does not exist (durably).
    public func makeSubdirectory(_ name: String) throws(IOError) {
        try Self.makeDirectory(path + "/" + name)
    }

    private static func makeDirectory(_ path: String) throws(IOError) {
        if try FileSystem.makeDirectory(path) {
            // The new entry must survive a crash too: fsync the parent.
            let parent = path.split(separator: "/", omittingEmptySubsequences: false).dropLast().joined(separator: "/")
            try FileSystem.syncDirectory(parent.isEmpty ? (path.hasPrefix("/") ? "/" : ".") : parent)
            return
        }
        guard FileSystem.isDirectory(path) else { throw IOError(call: "mkdir", path: path, errno: ENOTDIR) }
    }

    /// Names in `subdirectory`, without `.` and `..`, sorted.
    public func list(_ subdirectory: String) throws(IOError) -> [String] {
        try FileSystem.list(path + "/" + subdirectory)
    }

    public func read(_ relativePath: String) throws(IOError) -> [UInt8] {
        try FileSystem.readAll(path + "/" + relativePath)
    }

    /// The start of a file, up to and including the first `delimiter` (at most `maximum`
    /// bytes are read looking for it; fewer at the end of the file), and the file's size:
    /// a record's header without its body.
    public func readHead(_ relativePath: String, through delimiter: UInt8, maximum: Int) throws(IOError) -> (head: [UInt8], size: Int) {
        let full = path + "/" + relativePath
        let fd = try FileSystem.open(full, O_RDONLY)
        defer { FileSystem.close(fd) }
        let size = try FileSystem.size(fd, path: full)
        var head: [UInt8] = []
        var chunk = 4096
        while head.count < maximum {
            let piece = try FileSystem.read(fd, count: min(chunk, maximum - head.count), at: head.count, path: full)
            if let end = piece.firstIndex(of: delimiter) { return (head + piece[...end], size) }
            head += piece
            if piece.count < chunk { break }
            chunk = 64 << 10
        }
        return (head, size)
    }

    public func exists(_ relativePath: String) -> Bool {
        FileSystem.exists(path + "/" + relativePath)
    }

    /// Writes `bytes` as `subdirectory/name`: temp file, fsync, rename, fsync the directory.
    /// With `replacing: false` an existing file is `link` with `EEXIST` (revisions are
    /// immutable: an existing name is never overwritten).
    public func writeDurably(_ bytes: [UInt8], subdirectory: String, name: String, replacing: Bool) throws(IOError) {
        _ = try writeDurably(bytes, subdirectory: subdirectory, name: name, replacing: replacing) { () throws(IOError) in }
    }

    /// What became of a write whose `confirm` step (the audit entry) failed.
    public enum Confirmation: Sendable {
        /// The write and its confirmation both hold.
        case confirmed
        /// `confirm` failed and the write could not be undone either: the file is in place
        /// and must be treated as made.
        case unconfirmed(IOError)
    }

    /// Writes `bytes` as `subdirectory/name` durably, then runs `confirm` (the change's
    /// audit entry): all or nothing. When `confirm` throws, the file is put back as it was —
    /// removed, or the version it replaced renamed back from a hard link kept for the purpose,
    /// which needs no free space — and the error is rethrown: nothing changed. Only when that
    /// undo fails too does it return `.unconfirmed`: the change stands, unaudited.
    public func writeDurably(_ bytes: [UInt8], subdirectory: String, name: String, replacing: Bool,
                             confirm: () throws(IOError) -> Void) throws(IOError) -> Confirmation {
        let directoryPath = path + "/" + subdirectory
        let counter = temporaryCounter.add(1, ordering: .relaxed).newValue
        let temporaryPath = "\(directoryPath)/\(Self.temporaryPrefix)\(name)-\(FileSystem.processID())-\(counter)"
        let previousPath = "\(directoryPath)/\(Self.temporaryPrefix)previous-\(name)-\(FileSystem.processID())-\(counter)"
        let finalPath = directoryPath + "/" + name
        let fd = try FileSystem.open(temporaryPath, O_WRONLY | O_CREAT | O_EXCL)
        do throws(IOError) {
            defer { FileSystem.close(fd) }
            try FileSystem.writeAll(fd, bytes, path: temporaryPath)
            try FileSystem.fsync(fd, path: temporaryPath)
        } catch {
            try? FileSystem.unlink(temporaryPath)
            throw error
        }
        // The version being replaced keeps a second name until the change is confirmed.
        let hasPrevious = replacing && FileSystem.exists(finalPath)
        do throws(IOError) {
            if hasPrevious { try FileSystem.link(finalPath, to: previousPath) }
            if replacing {
                try FileSystem.rename(temporaryPath, to: finalPath)
            } else {
                try FileSystem.link(temporaryPath, to: finalPath)
                try? FileSystem.unlink(temporaryPath)
            }
        } catch {
            try? FileSystem.unlink(temporaryPath)
            if hasPrevious { try? FileSystem.unlink(previousPath) }
            throw error
        }
        do throws(IOError) {
            try FileSystem.syncDirectory(directoryPath)
            try confirm()
        } catch {
            let failure = error
            do throws(IOError) {
                if hasPrevious {
                    try FileSystem.rename(previousPath, to: finalPath)
                } else {
                    try FileSystem.unlink(finalPath)
                }
                try FileSystem.syncDirectory(directoryPath)
            } catch {
                if hasPrevious { try? FileSystem.unlink(previousPath) }
                return .unconfirmed(failure)
            }
            throw failure
        }
        if hasPrevious { try? FileSystem.unlink(previousPath) }  // a crash leaves it for removeStaleTemporaries
        return .confirmed
    }

    /// Appends `bytes` to `name` and fsyncs before returning.
    public func appendDurably(_ bytes: [UInt8], to name: String) throws(IOError) {
        let filePath = path + "/" + name
        let created = !exists(name)
        let fd = try FileSystem.open(filePath, O_WRONLY | O_APPEND | O_CREAT)
        defer { FileSystem.close(fd) }
        try FileSystem.writeAll(fd, bytes, path: filePath)
        try FileSystem.fdatasync(fd, path: filePath)
        if created { try FileSystem.syncDirectory(path) }
    }

    /// Cuts `name` to its first `length` bytes (a torn append after a crash) and fsyncs it.
    public func truncate(_ name: String, to length: Int) throws(IOError) {
        let filePath = path + "/" + name
        let fd = try FileSystem.open(filePath, O_WRONLY)
        defer { FileSystem.close(fd) }
        try FileSystem.truncate(fd, to: length, path: filePath)
        try FileSystem.fsync(fd, path: filePath)
    }

    /// Removes `name` (durably).
    public func remove(_ name: String) throws(IOError) {
        try FileSystem.unlink(path + "/" + name)
        try FileSystem.syncDirectory(path)
    }

    /// Removes `names` from `subdirectory`, then makes that durable with one sync of it.
    /// Returns the names no longer there (removed, or already gone); one that could not be
    /// removed is left out, and the others are still removed.
    public func remove(_ names: [String], in subdirectory: String) throws(IOError) -> [String] {
        var gone: [String] = []
        for name in names {
            do throws(IOError) {
                try FileSystem.unlink(path + "/" + subdirectory + "/" + name)
                gone.append(name)
            } catch {
                if error.errno == ENOENT { gone.append(name) }
            }
        }
        if !gone.isEmpty { try FileSystem.syncDirectory(path + "/" + subdirectory) }
        return gone
    }

    /// Removes temporary files a crash left behind; they were never acknowledged.
    /// Returns their paths relative to the data directory.
    public func removeStaleTemporaries(in subdirectories: [String]) throws(IOError) -> [String] {
        var removed: [String] = []
        for subdirectory in subdirectories {
            let before = removed.count
            for name in try list(subdirectory) where name.hasPrefix(Self.temporaryPrefix) {
                let relative = subdirectory + "/" + name
                try FileSystem.unlink(path + "/" + relative)
                removed.append(relative)
            }
            if removed.count > before { try FileSystem.syncDirectory(path + "/" + subdirectory) }
        }
        return removed
    }
}
