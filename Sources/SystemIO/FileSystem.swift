#if canImport(Glibc)
import Glibc
#endif

/// What identifies one version of a file (a durable rewrite is a new inode).
public struct FileIdentity: Hashable, Sendable {
    public var device: UInt64
    public var inode: UInt64
    public var size: Int64
    public var modifiedSeconds: Int64
    public var modifiedNanoseconds: Int64
}

/// File and directory operations, each one system call through `syscall` with the path in
/// its error: what `DataDirectory`, the token file and the telemetry log are made of.
public enum FileSystem {
    public static func open(_ path: String, _ flags: Int32, mode: mode_t = 0o644) throws(IOError) -> Int32 {
        try syscallBlocking("open", path: path) { Glibc.open(path, flags | O_CLOEXEC, mode) }
    }

    /// Closes `fd`. Linux releases the descriptor even when close reports an error, so
    /// there is nothing to retry; a write that mattered was fsynced before.
    public static func close(_ fd: Int32) {
        _ = Glibc.close(fd)
    }

    /// The whole file at `path`.
    public static func readAll(_ path: String) throws(IOError) -> [UInt8] {
        let fd = try open(path, O_RDONLY)
        defer { close(fd) }
        var bytes: [UInt8] = []
        var chunk = [UInt8](repeating: 0, count: 64 * 1024)
        while true {
            let count = try chunk.withUnsafeMutableBytes { buffer in
                Result { () throws(IOError) in try syscallBlocking("read", path: path) { Glibc.read(fd, buffer.baseAddress, buffer.count) } }
            }.get()
            if count == 0 { return bytes }
            bytes += chunk[0..<count]
        }
    }

    /// Writes all of `bytes` to `fd` at its offset, retrying short writes.
    public static func writeAll(_ fd: Int32, _ bytes: [UInt8], path: String) throws(IOError) {
        var done = 0
        while done < bytes.count {
            done += try bytes.withUnsafeBytes { buffer in
                Result { () throws(IOError) in try syscallBlocking("write", path: path) { Glibc.write(fd, buffer.baseAddress! + done, buffer.count - done) } }
            }.get()
        }
    }

    /// Writes all of `bytes` to `fd` at `offset` (pwrite), retrying short writes.
    public static func writeAll(_ fd: Int32, _ bytes: [UInt8], at offset: Int, path: String) throws(IOError) {
        var done = 0
        while done < bytes.count {
            done += try bytes.withUnsafeBytes { buffer in
                Result { () throws(IOError) in
                    try syscallBlocking("pwrite", path: path) { pwrite(fd, buffer.baseAddress! + done, buffer.count - done, off_t(offset + done)) }
                }
            }.get()
        }
    }

    public static func fsync(_ fd: Int32, path: String) throws(IOError) {
        try syscallBlocking("fsync", path: path) { Glibc.fsync(fd) }
    }

    /// fdatasync(2): the data, and the metadata needed to read it back.
    public static func fdatasync(_ fd: Int32, path: String) throws(IOError) {
        try syscallBlocking("fdatasync", path: path) { Glibc.fdatasync(fd) }
    }

    public static func truncate(_ fd: Int32, to length: Int, path: String) throws(IOError) {
        try syscallBlocking("ftruncate", path: path) { ftruncate(fd, off_t(length)) }
    }

    /// fsync of a directory, so the names created or removed in it survive a crash.
    public static func syncDirectory(_ path: String) throws(IOError) {
        let fd = try open(path, O_RDONLY | O_DIRECTORY)
        defer { close(fd) }
        try fsync(fd, path: path)
    }

    /// Creates the directory; false when something already has the name.
    public static func makeDirectory(_ path: String, mode: mode_t = 0o755) throws(IOError) -> Bool {
        if mkdir(path, mode) == 0 { return true }
        let code = errno
        guard code == EEXIST else { throw IOError(call: "mkdir", path: path, errno: code) }
        return false
    }

    public static func isDirectory(_ path: String) -> Bool {
        var info = stat()
        return stat(path, &info) == 0 && info.st_mode & S_IFMT == S_IFDIR
    }

    /// The size of the file at `path` in bytes, nil when it cannot be read.
    public static func size(_ path: String) -> Int? {
        var info = stat()
        return stat(path, &info) == 0 ? Int(info.st_size) : nil
    }

    /// The size of the open file `fd` in bytes.
    public static func size(_ fd: Int32, path: String) throws(IOError) -> Int {
        var info = stat()
        _ = try syscallBlocking("fstat", path: path) { Int(fstat(fd, &info)) }
        return Int(info.st_size)
    }

    /// Reads up to `count` bytes at `offset` (fewer at the end of the file).
    public static func read(_ fd: Int32, count: Int, at offset: Int, path: String) throws(IOError) -> [UInt8] {
        var bytes = [UInt8](repeating: 0, count: count)
        var done = 0
        while done < count {
            let start = done
            let got = try syscallBlocking("pread", path: path) {
                bytes.withUnsafeMutableBytes { buffer in pread(fd, buffer.baseAddress! + start, count - start, off_t(offset + start)) }
            }
            if got == 0 { break }
            done += got
        }
        return Array(bytes.prefix(done))
    }

    public static func exists(_ path: String) -> Bool {
        access(path, F_OK) == 0
    }

    /// The file's identity, nil when it does not exist.
    public static func identity(_ path: String) -> FileIdentity? {
        var info = stat()
        guard stat(path, &info) == 0 else { return nil }
        return FileIdentity(device: UInt64(info.st_dev), inode: UInt64(info.st_ino), size: Int64(info.st_size),
                            modifiedSeconds: Int64(info.st_mtim.tv_sec), modifiedNanoseconds: Int64(info.st_mtim.tv_nsec))
    }

    /// rename(2): replaces `destination` atomically.
    public static func rename(_ source: String, to destination: String) throws(IOError) {
        try syscallBlocking("rename", path: destination) { Glibc.rename(source, destination) }
    }

    /// link(2): fails with `EEXIST` rather than replace `destination`.
    public static func link(_ source: String, to destination: String) throws(IOError) {
        try syscallBlocking("link", path: destination) { Glibc.link(source, destination) }
    }

    public static func unlink(_ path: String) throws(IOError) {
        try syscallBlocking("unlink", path: path) { Glibc.unlink(path) }
    }

    /// An exclusive flock on `fd`: waiting for other holders, or failing with
    /// `EWOULDBLOCK` at once when `wait` is false.
    public static func lock(_ fd: Int32, path: String, wait: Bool) throws(IOError) {
        try syscallBlocking("flock", path: path) { flock(fd, wait ? LOCK_EX : LOCK_EX | LOCK_NB) }
    }

    /// Names in the directory, without `.` and `..`, sorted.
    public static func list(_ path: String) throws(IOError) -> [String] {
        guard let directory = opendir(path) else { throw IOError(call: "opendir", path: path, errno: errno) }
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

    public static func processID() -> Int32 { getpid() }
}
