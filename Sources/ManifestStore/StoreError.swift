#if canImport(Glibc)
import Glibc
#endif
import SystemIO

/// What went wrong with the data directory or a change to it: a case a caller (or a test)
/// can match, and a `message` in words an operator can act on.
public enum StoreError: Error, Hashable, Sendable, CustomStringConvertible {
    /// A system call failed: a full disk, a permission, a vanished file.
    case io(IOError)
    /// Another process holds the directory's `LOCK` (a second daemon).
    case inUse(directory: String)
    /// Something that is not a directory has a name the store needs as one.
    case notADirectory(String)
    /// An immutable file (a revision) already exists: stored files are never overwritten.
    case alreadyExists(String)
    /// A stored file is damaged; the store will not be served in part.
    case damaged(directory: String, file: String, reason: String)
    /// A record, schema or token file from the primary was refused (replication).
    case refusedMirror(String)
    /// A token change was refused: its name, its scopes, or a live token of that name.
    case refusedToken(String)
    /// The seed directory cannot seed an empty store.
    case badSeed(String)
    /// The database the store keeps its records in is unreachable or refused a statement;
    /// nothing was changed (a change is one transaction). It may succeed once it is back.
    case database(String)

    /// The store's reading of a failed system call: the lock held elsewhere, a file where a
    /// directory belongs, an immutable name taken, or plainly the call.
    public init(_ error: IOError) {
        switch (error.call, error.errno) {
        case ("flock", EWOULDBLOCK) where error.path?.hasSuffix("/LOCK") == true:
            let lock = error.path ?? ""
            self = .inUse(directory: String(lock.dropLast("/LOCK".count)))
        case ("mkdir", ENOTDIR): self = .notADirectory(error.path ?? "")
        case ("link", EEXIST): self = .alreadyExists(error.path ?? "")
        default: self = .io(error)
        }
    }

    public var message: String {
        switch self {
        case .io(let error): error.description
        case .inUse(let directory): "\(directory) is in use by another waymark process (\(directory)/LOCK is locked)."
        case .notADirectory(let path): "\(path) exists and is not a directory."
        case .alreadyExists(let path): "\(path) already exists; stored files are never overwritten."
        case .damaged(let directory, let file, let reason):
            // (A database medium's location is "the database".)
            "\(directory == "the database" ? "The database" : "The data directory \(directory)") is damaged and will not be served: \(file): \(reason). "
                + "Restore it from a backup or a follower; Waymark will not serve part of a store."
        case .refusedMirror(let reason), .refusedToken(let reason), .badSeed(let reason): reason
        case .database(let reason): "The database is unavailable: \(reason)"
        }
    }

    public var description: String { message }

    /// The message for a client: no path of the server's (the data directory, its files'
    /// absolute names) in it.
    public var clientMessage: String {
        switch self {
        case .io(let error): error.withoutPath
        case .inUse: "the data directory is in use by another waymark process"
        case .notADirectory: "a file is where the store needs a directory"
        case .alreadyExists: "a stored file of that name already exists; stored files are never overwritten"
        case .damaged(_, let file, let reason): "the stored file \(file) is damaged: \(reason)"
        case .refusedMirror(let reason), .refusedToken(let reason), .badSeed(let reason): reason
        case .database: "the database is unavailable"
        }
    }

    /// Whether the database is away: the change may succeed once it is back (`503`).
    public var isDatabaseAway: Bool {
        if case .database = self { return true }
        return false
    }

    /// Whether the change failed for want of disk space, and may succeed once it is freed.
    public var isNoSpace: Bool {
        if case .io(let error) = self { return error.isNoSpace }
        return false
    }
}

/// Runs file operations for the store, reading their failure as a `StoreError`.
@inline(__always)
func onDisk<T>(_ body: () throws(IOError) -> T) throws(StoreError) -> T {
    try readingIOErrors(as: StoreError.init, body)
}
