import Foundation
import RouteEngine
import SystemIO

/// Where a `ManifestStore` keeps its records and its audit log: a data directory
/// (`DirectoryMedium`, the default) or a database (`DatabaseStore`'s `DatabaseMedium`).
/// Everything above it — validation, rebasing, rollouts, schedules, the snapshot readers
/// take — is the store's, the same on both.
///
/// Records are named as files are in a data directory: `revisions/00000001`,
/// `schemas/ios@5.3.0`, `schedules/00000001`, and `rollout`; each is a `Record`'s bytes.
/// A medium keeps them byte for byte: what `read` answers is what `write` was given.
public protocol StoreMedium: Sendable {
    /// What errors name as the store: the data directory's path, or the database.
    var location: String { get }
    /// Whether a crash can leave a change half made (a file written, its audit line not),
    /// so that opening the store must look for it: true for a directory, false for a
    /// database, whose transaction holds a change and its audit entry together.
    var needsRepairAtOpen: Bool { get }
    /// Whether the tokens (`tokens.json`) are kept here too, changed under `exclusively`: a
    /// database's are; a directory's are its own file, with its own lock (`TokenStore`).
    var keepsTokens: Bool { get }
    /// Whether a change (`exclusively`) is kept whole or not at all: a database's is one
    /// transaction, so a change that fails leaves nothing and the store puts its snapshot
    /// back; a directory's writes are each durable as they are made.
    var changeIsOneTransaction: Bool { get }

    /// The names in `kind` (`revisions`, `schemas`, `schedules`), ascending.
    func list(_ kind: String) throws(StoreError) -> [String]
    /// A record's bytes, whole.
    func read(_ name: String) throws(StoreError) -> [UInt8]
    /// A record's first bytes, through its header's newline at least (at most `maximum`
    /// bytes are read for it), and the record's whole size.
    func readHead(_ name: String, maximum: Int) throws(StoreError) -> (head: [UInt8], size: Int)
    func exists(_ name: String) throws(StoreError) -> Bool
    /// Stores `bytes` as `kind/name` (`kind` "." for `rollout`) with its audit entry: both or
    /// neither, durable before it returns. `replacing`: false for a name that must be new
    /// (a revision), refused with `StoreError.alreadyExists` if it is not.
    func write(_ bytes: [UInt8], kind: String, name: String, replacing: Bool, audit entry: [String: JSONValue], time: Date) throws(StoreError)
    /// Appends audit entries (refusals, repairs) durably.
    func appendAudit(_ entries: [[String: JSONValue]], time: Date) throws(StoreError)
    /// Removes the named records of `kind`; answers those that are gone.
    func remove(_ names: [String], in kind: String) -> [String]
    /// The audit log's entries, oldest first (for tests and tools: it reads them all).
    func auditEntries() throws(StoreError) -> [JSONValue]
    /// Runs `body` excluding every other change to this medium's records, by this process or
    /// any other sharing them (the store also holds its own writer lock around it). `body`
    /// is first told what others changed since `marker` (`MediumChanges`), to bring the
    /// store's snapshot up to date before it decides anything.
    func exclusively<T>(since marker: Int, _ body: (MediumChanges) throws(StoreError) -> T) throws(StoreError) -> T
    /// What others changed since `marker`, outside any change (a notification's or a poll's
    /// catch-up).
    func changes(since marker: Int) throws(StoreError) -> MediumChanges
    /// The marker of the newest change now: what a store opening asks from next.
    func newestMarker() throws(StoreError) -> Int

    /// Moving a store (`StoreCopy`): `bytes` stored as `kind/name` as they are, with no audit
    /// entry of its own (the source's entries are copied after), into a medium no store has open.
    func copyIn(_ bytes: [UInt8], kind: String, name: String) throws(StoreError)
    /// Moving a store: audit entries appended as they are, each with its own `time`.
    func copyInAudit(_ entries: [JSONValue]) throws(StoreError)
    /// Every audit entry ever kept, oldest first, handed to `visit` a part at a time (a
    /// directory's logs moved aside, then `audit.log`; a database's rows in pages), so a long
    /// history is never in memory whole.
    func auditHistory(_ visit: ([JSONValue]) throws(StoreError) -> Void) throws(StoreError)
}

/// What other processes changed in a medium's records since a marker.
public struct MediumChanges: Sendable, Equatable {
    /// The marker to ask from next time.
    public var marker: Int
    /// The records written or removed since, by name (`revisions/00000007`, `rollout`).
    public var names: [String]

    public init(marker: Int, names: [String]) {
        self.marker = marker
        self.names = names
    }
}

/// A data directory as a store's medium: records are files written durably (fsynced,
/// renamed, the directory fsynced) and the audit log is `audit.log`, one JSON line per
/// entry, moved aside past `auditRotationBytes`. One process at a time holds the directory
/// (`DIR/LOCK`), so nothing changes behind the store's back: `exclusively` only runs its body.
public final class DirectoryMedium: StoreMedium {
    public let directory: DataDirectory
    let auditRotationBytes: Int

    public init(_ directory: DataDirectory, auditRotationBytes: Int) {
        self.directory = directory
        self.auditRotationBytes = auditRotationBytes
    }

    public var location: String { directory.path }
    public var needsRepairAtOpen: Bool { true }
    public var keepsTokens: Bool { false }
    public var changeIsOneTransaction: Bool { false }

    public func list(_ kind: String) throws(StoreError) -> [String] {
        try onDisk { () throws(IOError) in try directory.list(kind) }
    }

    public func read(_ name: String) throws(StoreError) -> [UInt8] {
        try onDisk { () throws(IOError) in try directory.read(name) }
    }

    public func readHead(_ name: String, maximum: Int) throws(StoreError) -> (head: [UInt8], size: Int) {
        try onDisk { () throws(IOError) in try directory.readHead(name, through: UInt8(ascii: "\n"), maximum: maximum) }
    }

    public func exists(_ name: String) -> Bool { directory.exists(name) }

    /// All or nothing (`DataDirectory.writeDurably`): if the entry cannot be written the file
    /// is put back and the error thrown; only if that fails too does the change stand
    /// unaudited (the next start adds its entry).
    public func write(_ bytes: [UInt8], kind: String, name: String, replacing: Bool, audit entry: [String: JSONValue], time: Date) throws(StoreError) {
        _ = try onDisk { () throws(IOError) in
            try directory.writeDurably(bytes, subdirectory: kind, name: name, replacing: replacing) { () throws(IOError) in
                try directory.appendAudit(entry, time: time, rotateAt: auditRotationBytes)
            }
        }
    }

    public func appendAudit(_ entries: [[String: JSONValue]], time: Date) throws(StoreError) {
        try onDisk { () throws(IOError) in
            for entry in entries { try directory.appendAudit(entry, time: time, rotateAt: auditRotationBytes) }
        }
    }

    /// A sync that failed: the files are gone from the directory this process sees.
    public func remove(_ names: [String], in kind: String) -> [String] {
        (try? directory.remove(names, in: kind)) ?? names.filter { !directory.exists(kind + "/" + $0) }
    }

    public func auditEntries() throws(StoreError) -> [JSONValue] {
        guard directory.exists(DataDirectory.auditLog) else { return [] }
        return try read(DataDirectory.auditLog).split(separator: UInt8(ascii: "\n")).compactMap { try? JSONParser().parse($0) }
    }

    public func exclusively<T>(since marker: Int, _ body: (MediumChanges) throws(StoreError) -> T) throws(StoreError) -> T {
        try body(MediumChanges(marker: marker, names: []))
    }

    public func changes(since marker: Int) -> MediumChanges { MediumChanges(marker: marker, names: []) }

    public func newestMarker() -> Int { 0 }

    public func auditHistory(_ visit: ([JSONValue]) throws(StoreError) -> Void) throws(StoreError) {
        for name in try Self.rotatedLogs(try list(".")) {
            try visit(try read(name).split(separator: UInt8(ascii: "\n")).compactMap { try? JSONParser().parse($0) })
        }
        try visit(try auditEntries())
    }

    /// The logs moved aside (`audit-<time>[-N].log`), oldest first: by time, then by N (1 when absent).
    static func rotatedLogs(_ names: [String]) -> [String] {
        func key(_ name: String) -> (String, Int) {
            let stem = String(name.dropFirst("audit-".count).dropLast(".log".count))
            guard let z = stem.firstIndex(of: "Z") else { return (stem, 1) }
            let time = String(stem[...z]), rest = stem[stem.index(after: z)...]
            return (time, rest.hasPrefix("-") ? Int(rest.dropFirst()) ?? 1 : 1)
        }
        return names.filter { $0.hasPrefix("audit-") && $0.hasSuffix(".log") }.sorted { key($0) < key($1) }
    }

    public func copyIn(_ bytes: [UInt8], kind: String, name: String) throws(StoreError) {
        try onDisk { () throws(IOError) in
            if kind != "." { try directory.makeSubdirectory(kind) }
            try directory.writeDurably(bytes, subdirectory: kind, name: name, replacing: false)
        }
    }

    public func copyInAudit(_ entries: [JSONValue]) throws(StoreError) {
        guard !entries.isEmpty else { return }
        var lines: [UInt8] = []
        for entry in entries { lines += entry.serializedBytes() + [UInt8(ascii: "\n")] }
        try onDisk { () throws(IOError) in try directory.appendDurably(lines, to: DataDirectory.auditLog) }
    }
}
