#if canImport(Glibc)
import Glibc
#endif
import Synchronization

/// What went wrong with the data directory, in words an operator can act on.
public struct StoreError: Error, Hashable, Sendable, CustomStringConvertible {
    public let message: String

    public init(_ message: String) { self.message = message }

    public var description: String { message }

    public static func system(_ call: String, _ path: String, _ code: Int32 = errno) -> StoreError {
        StoreError("\(call) \(path): \(String(cString: strerror(code)))")
    }
}

struct FileIdentity: Hashable, Sendable {
    var device: UInt64
    var inode: UInt64
    var size: Int64
    var modifiedSeconds: Int64
    var modifiedNanoseconds: Int64
}

/// The files under a data directory, written the way databases write them: a new file is
/// written under a temporary name, fsynced, renamed into place, and the directory fsynced,
/// so after a crash a name holds either nothing or the whole file. Appends are fsynced
/// before they are acknowledged. A lock file keeps a second daemon out.
public final class DataDirectory: Sendable {
    static let temporaryPrefix = ".tmp-"
    public let path: String
    private let lockFD: Int32
    private let temporaryCounter = Atomic<Int>(0)

    /// - Parameter exclusive: take `DIR/LOCK` for the life of this object (the daemon);
    ///   false for a short edit beside a running daemon (`waymark token`), which must
    ///   then serialize its writes with `withFileLock`.
    public init(path: String, subdirectories: [String], exclusive: Bool = true) throws(StoreError) {
        self.path = path
        try Self.makeDirectory(path)
        for name in subdirectories { try Self.makeDirectory(path + "/" + name) }
        guard exclusive else {
            lockFD = -1
            return
        }
        let lockPath = path + "/LOCK"
        let fd = open(lockPath, O_RDWR | O_CREAT | O_CLOEXEC, 0o644)
        guard fd >= 0 else { throw .system("open", lockPath) }
        guard flock(fd, LOCK_EX | LOCK_NB) == 0 else {
            let code = errno
            close(fd)
            if code == EWOULDBLOCK { throw StoreError("\(path) is in use by another waymark process (\(lockPath) is locked).") }
            throw .system("flock", lockPath, code)
        }
        lockFD = fd
    }

    deinit { if lockFD >= 0 { close(lockFD) } }

    /// Runs `body` holding an exclusive flock on `DIR/name`, waiting for other processes
    /// that hold it. Serializes writers of one file across processes.
    func withFileLock<T>(_ name: String, _ body: () throws(StoreError) -> T) throws(StoreError) -> T {
        let lockPath = path + "/" + name
        let fd = open(lockPath, O_RDWR | O_CREAT | O_CLOEXEC, 0o644)
        guard fd >= 0 else { throw .system("open", lockPath) }
        defer { close(fd) }  // closing the last descriptor releases the flock
        while flock(fd, LOCK_EX) != 0 {
            guard errno == EINTR else { throw .system("flock", lockPath) }
        }
        return try body()
    }

    /// What identifies one version of a file written by `writeDurably` (every write is a
    /// new inode): nil when it does not exist.
    func identity(_ relativePath: String) -> FileIdentity? {
        var info = stat()
        guard stat(path + "/" + relativePath, &info) == 0 else { return nil }
        return FileIdentity(device: UInt64(info.st_dev), inode: UInt64(info.st_ino), size: Int64(info.st_size),
                            modifiedSeconds: Int64(info.st_mtim.tv_sec), modifiedNanoseconds: Int64(info.st_mtim.tv_nsec))
    }

    /// Creates `DIR/name` if it does not exist (durably).
    public func makeSubdirectory(_ name: String) throws(StoreError) {
        try Self.makeDirectory(path + "/" + name)
    }

    private static func makeDirectory(_ path: String) throws(StoreError) {
        if mkdir(path, 0o755) == 0 {
            // The new entry must survive a crash too: fsync the parent.
            let parent = path.split(separator: "/", omittingEmptySubsequences: false).dropLast().joined(separator: "/")
            try syncDirectory(parent.isEmpty ? (path.hasPrefix("/") ? "/" : ".") : parent)
            return
        }
        guard errno == EEXIST else { throw .system("mkdir", path) }
        var info = stat()
        guard stat(path, &info) == 0, info.st_mode & S_IFMT == S_IFDIR else { throw StoreError("\(path) exists and is not a directory.") }
    }

    public static func syncDirectory(_ path: String) throws(StoreError) {
        let fd = open(path, O_RDONLY | O_DIRECTORY | O_CLOEXEC)
        guard fd >= 0 else { throw .system("open", path) }
        defer { close(fd) }
        guard fsync(fd) == 0 else { throw .system("fsync", path) }
    }

    /// Names in `subdirectory`, without `.` and `..`, sorted.
    func list(_ subdirectory: String) throws(StoreError) -> [String] {
        let directoryPath = path + "/" + subdirectory
        guard let directory = opendir(directoryPath) else { throw .system("opendir", directoryPath) }
        defer { closedir(directory) }
        var names: [String] = []
        while let entry = readdir(directory) {
            let name = withUnsafePointer(to: entry.pointee.d_name) { pointer in
                pointer.withMemoryRebound(to: CChar.self, capacity: 256) { String(cString: $0) }
            }
            if name != ".", name != ".." { names.append(name) }
        }
        return names.sorted()
    }

    public func read(_ relativePath: String) throws(StoreError) -> [UInt8] {
        let filePath = path + "/" + relativePath
        let fd = open(filePath, O_RDONLY | O_CLOEXEC)
        guard fd >= 0 else { throw .system("open", filePath) }
        defer { close(fd) }
        var bytes: [UInt8] = []
        var chunk = [UInt8](repeating: 0, count: 64 * 1024)
        while true {
            let count = chunk.withUnsafeMutableBytes { Glibc.read(fd, $0.baseAddress, $0.count) }
            if count < 0 {
                if errno == EINTR { continue }
                throw .system("read", filePath)
            }
            if count == 0 { return bytes }
            bytes += chunk[0..<count]
        }
    }

    public func exists(_ relativePath: String) -> Bool {
        access(path + "/" + relativePath, F_OK) == 0
    }

    /// Writes `bytes` as `subdirectory/name`: temp file, fsync, rename, fsync the directory.
    /// With `replacing: false` an existing file is an error (revisions are immutable).
    public func writeDurably(_ bytes: [UInt8], subdirectory: String, name: String, replacing: Bool) throws(StoreError) {
        let directoryPath = path + "/" + subdirectory
        let counter = temporaryCounter.add(1, ordering: .relaxed).newValue
        let temporaryPath = "\(directoryPath)/\(Self.temporaryPrefix)\(name)-\(getpid())-\(counter)"
        let finalPath = directoryPath + "/" + name
        let fd = open(temporaryPath, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0o644)
        guard fd >= 0 else { throw .system("open", temporaryPath) }
        do throws(StoreError) {
            try Self.writeAll(fd, bytes, temporaryPath)
            guard fsync(fd) == 0 else { throw StoreError.system("fsync", temporaryPath) }
            close(fd)
        } catch {
            close(fd)
            unlink(temporaryPath)
            throw error
        }
        if replacing {
            guard rename(temporaryPath, finalPath) == 0 else {
                let code = errno
                unlink(temporaryPath)
                throw .system("rename", finalPath, code)
            }
        } else {
            // link(2) fails with EEXIST instead of replacing: an immutable name is never overwritten.
            guard link(temporaryPath, finalPath) == 0 else {
                let code = errno
                unlink(temporaryPath)
                if code == EEXIST { throw StoreError("\(finalPath) already exists; stored files are never overwritten.") }
                throw .system("link", finalPath, code)
            }
            unlink(temporaryPath)
        }
        try Self.syncDirectory(directoryPath)
    }

    /// Appends `bytes` to `name` and fsyncs before returning.
    func appendDurably(_ bytes: [UInt8], to name: String) throws(StoreError) {
        let filePath = path + "/" + name
        let created = !exists(name)
        let fd = open(filePath, O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC, 0o644)
        guard fd >= 0 else { throw .system("open", filePath) }
        defer { close(fd) }
        try Self.writeAll(fd, bytes, filePath)
        guard fdatasync(fd) == 0 else { throw .system("fdatasync", filePath) }
        if created { try Self.syncDirectory(path) }
    }

    /// Cuts `name` to its first `length` bytes (a torn append after a crash) and fsyncs it.
    public func truncate(_ name: String, to length: Int) throws(StoreError) {
        let filePath = path + "/" + name
        let fd = open(filePath, O_WRONLY | O_CLOEXEC)
        guard fd >= 0 else { throw .system("open", filePath) }
        defer { close(fd) }
        guard ftruncate(fd, off_t(length)) == 0, fsync(fd) == 0 else { throw .system("ftruncate", filePath) }
    }

    /// Removes temporary files a crash left behind; they were never acknowledged.
    /// Returns their paths relative to the data directory.
    public func removeStaleTemporaries(in subdirectories: [String]) throws(StoreError) -> [String] {
        var removed: [String] = []
        for subdirectory in subdirectories {
            let before = removed.count
            for name in try list(subdirectory) where name.hasPrefix(Self.temporaryPrefix) {
                let relative = subdirectory + "/" + name
                guard unlink(path + "/" + relative) == 0 else { throw .system("unlink", path + "/" + relative) }
                removed.append(relative)
            }
            if removed.count > before { try Self.syncDirectory(path + "/" + subdirectory) }
        }
        return removed
    }

    /// Writes all of `bytes` to `fd`, retrying short writes and EINTR.
    static func writeAll(_ fd: Int32, _ bytes: [UInt8], _ filePath: String) throws(StoreError) {
        var offset = 0
        while offset < bytes.count {
            let written = bytes.withUnsafeBytes { Glibc.write(fd, $0.baseAddress! + offset, $0.count - offset) }
            if written < 0 {
                if errno == EINTR { continue }
                throw .system("write", filePath)
            }
            offset += written
        }
    }
}
