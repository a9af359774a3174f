import CivilDate
import Foundation
import Rollout
import RouteEngine
import Synchronization
import SystemIO

/// Durable revisions and schemas in a data directory, with an append-only audit log.
///
///     DIR/LOCK                  flock: one daemon per directory
///     DIR/revisions/00000001    a Record per revision (never overwritten)
///     DIR/schemas/ios@5.3.0     a Record per app build (replaced on re-registration)
///     DIR/schedules/00000001    a Record per scheduled publish (replaced as its status changes;
///                               the oldest ended ones removed past `maximumEndedSchedules`)
///     DIR/rollout               the newest rollout's state (replaced as it changes; docs/rollouts.md)
///     DIR/audit.log             one JSON line per change and per refused attempt
///     DIR/tokens.json           bearer tokens: names, scopes, SHA-256 hashes (`TokenStore`)
///
/// History is on disk: the snapshot holds every revision's and schedule's metadata, and
/// the documents of the current and the newest revision only (`StoreSnapshot.pinned`);
/// `routes(of:)` and `scheduledRoutes(of:)` read any other from its file, checked then.
///
/// Writers are serialized; readers take `snapshot`, which is never half-applied. Every
/// change is on disk (fsynced, renamed, directory fsynced) and in the audit log before
/// the call returns, so a caller may acknowledge it.
public final class ManifestStore: Sendable {
    static let auditLog = DataDirectory.auditLog
    static let subdirectories = ["revisions", "schemas", "schedules"]

    /// The data directory, held locked for the life of the store; telemetry lives in it too.
    /// With a database medium, the node's own directory (what is not in the database yet).
    public let directory: DataDirectory
    /// Where the records and the audit log are kept: `directory` (`DirectoryMedium`), or a database.
    public let medium: any StoreMedium
    /// What the medium's `changes(since:)` was last asked from: others' changes before it are in the snapshot.
    let marker = Mutex<Int>(0)
    /// Another node changed the tokens and they are not read again yet (`reloadTokensIfBehind`).
    let tokensBehind = Atomic<Bool>(false)
    /// The bearer tokens kept in the same directory.
    public let tokens: TokenStore
    let state: Mutex<StoreSnapshot>
    /// Held for a whole change (validation included), so changes apply one at a time.
    let writer = Mutex<Void>(())

    public var path: String { directory.path }
    public var snapshot: StoreSnapshot { state.withLock { $0 } }
    /// Bumped after every change to revisions or schemas (never to tokens): a reader that
    /// saw generation g and sees g again knows nothing it derived from the snapshot changed.
    public var generation: Int { changes.load(ordering: .acquiring) }
    let changes = Atomic<Int>(0)
    /// Told of each new generation as the change that makes it returns (`observeChanges`).
    private let observer = Mutex<(before: @Sendable (Int) -> Void, after: @Sendable (Int) -> Void)?>(nil)

    /// Once a change is applied and on disk, under the writer lock and before the change
    /// returns to its caller: `before` is called with the new generation just before readers
    /// can see it (`generation`), `after` just after. What `after` prepares for the
    /// generation is ready when the change is acknowledged, and changes wait for it one at a
    /// time. Neither may change the store. One observer; a second replaces the first.
    public func observeChanges(before: @escaping @Sendable (Int) -> Void, after: @escaping @Sendable (Int) -> Void) {
        observer.withLock { $0 = (before, after) }
    }

    /// After a change is applied (under the writer lock, so no other change moves the
    /// generation meanwhile): the generation moves on, with the observer told before and after.
    func changed() {
        let observer = observer.withLock { $0 }
        let generation = changes.load(ordering: .relaxed) + 1
        observer?.before(generation)
        changes.store(generation, ordering: .releasing)
        observer?.after(generation)
    }

    /// Refused attempts of the current minute, written as one line per kind when it ends.
    let refusals = RefusalTally()
    /// How many different (action, actor, reason) a minute's refusal lines name; the rest
    /// are counted under the actor `(others)`.
    public static let refusalKindsPerMinute = RefusalTally.maximumKeys
    /// The audit log is moved aside (`audit-<time>.log`) before a line is added past this size.
    let auditRotationBytes: Int
    /// Serializes flushes, so that once one returns every line taken before it is written
    /// (`auditEntries` reads the file right after). Taken before the writer lock, never under it.
    let flushing = Mutex<Void>(())

    /// Ended schedules (fired, skipped, cancelled) kept to be listed; older ones are removed
    /// as more end (`maximumEndedSchedules`; fewer in tests).
    let endedSchedulesKept: Int
    /// The bytes of routes pending schedules may hold together (`maximumPendingScheduleBytes`;
    /// less in tests, which then fill it with fewer documents).
    let pendingScheduleBytes: Int

    private init(directory: DataDirectory, medium: any StoreMedium, snapshot: StoreSnapshot, marker: Int, auditRotationBytes: Int,
                 endedSchedulesKept: Int, pendingScheduleBytes: Int) throws(StoreError) {
        self.directory = directory
        self.medium = medium
        self.marker.withLock { $0 = marker }
        self.auditRotationBytes = auditRotationBytes
        self.endedSchedulesKept = max(1, endedSchedulesKept)
        self.pendingScheduleBytes = pendingScheduleBytes
        // On a database the tokens are kept there too, beside the records.
        tokens = try TokenStore(directory: directory, medium: medium.keepsTokens ? medium : nil, auditRotationBytes: auditRotationBytes)
        state = Mutex(snapshot)
    }

    /// Opens (creating if needed) the data directory at `path`: removes stale temporary
    /// files, reads every record's header and checks its length, verifies the hashes of
    /// the schemas and of the revisions served (history's are verified when read), repairs
    /// a torn audit tail. Time and memory grow with the number of revisions, by a header
    /// each, not with their documents. A damaged store is
    /// refused with an error naming the file, rather than served in part.
    /// `auditRotationBytes`: the size at which `audit.log` is moved aside (64 MiB);
    /// `endedSchedulesKept`: ended schedules listed, at least one (`maximumEndedSchedules`);
    /// `pendingScheduleBytes`: routes pending schedules may hold (`maximumPendingScheduleBytes`).
    public static func open(at path: String, auditRotationBytes: Int = DataDirectory.defaultAuditRotationBytes,
                            endedSchedulesKept: Int = maximumEndedSchedules,
                            pendingScheduleBytes: Int = maximumPendingScheduleBytes) throws(StoreError) -> (store: ManifestStore, report: OpenReport) {
        let directory = try onDisk { () throws(IOError) in try DataDirectory(path: path, subdirectories: subdirectories) }
        var report = OpenReport()
        report.removedTemporaries = try onDisk { () throws(IOError) in try directory.removeStaleTemporaries(in: ["."] + subdirectories) }
        let store = try open(directory: directory, medium: DirectoryMedium(directory, auditRotationBytes: auditRotationBytes),
                             auditRotationBytes: auditRotationBytes, endedSchedulesKept: endedSchedulesKept, pendingScheduleBytes: pendingScheduleBytes)
        // `waymark token` appends to the audit log under this lock: never cut its line in half.
        try directory.withFileLock(TokenStore.lockName, failure: StoreError.init) { () throws(StoreError) in
            try store.repairAudit(&report)
            try store.repairScheduleAudit(&report)
            try store.repairRolloutAudit(&report)
        }
        return (store, report)
    }

    /// Opens the store whose records and audit log `medium` keeps (a database: `DatabaseStore`),
    /// with `directory` for what the node keeps itself (tokens and telemetry, for now). Reads
    /// every record's header and checks it as `open(at:)` does; a medium that keeps a change
    /// and its audit entry together (`StoreMedium.needsRepairAtOpen` false) needs no repair.
    public static func open(directory: DataDirectory, medium: any StoreMedium,
                            auditRotationBytes: Int = DataDirectory.defaultAuditRotationBytes,
                            endedSchedulesKept: Int = maximumEndedSchedules,
                            pendingScheduleBytes: Int = maximumPendingScheduleBytes) throws(StoreError) -> ManifestStore {
        // Others' changes from here on are caught up with (`catchUp`), so the marker is taken first.
        let marker = try medium.newestMarker()
        var snapshot = StoreSnapshot()
        for name in try medium.list("schemas") {
            let stored = try loadSchema(medium, name)
            guard stored.key == schemaKey(fileName: name) else {
                throw damaged(medium, "schemas/" + name, "it holds the schema for \(stored.key)")
            }
            if let app = snapshot.app, app != stored.schema.app {
                throw damaged(medium, "schemas/" + name, "it is for the app \(stored.schema.app), the others for \(app)")
            }
            snapshot.schemas[stored.key] = stored
        }
        let names = try medium.list("revisions")
        for (index, name) in names.enumerated() {
            guard Int(name) == index + 1 else {
                throw damaged(medium, "revisions/" + name, "revisions must be numbered 1, 2, 3… without gaps; expected \(revisionFileName(index + 1))")
            }
            snapshot.revisions.append(try loadRevision(medium, name, number: index + 1))
        }
        snapshot.rollout = try loadRollout(medium, revisions: snapshot.revisions)
        // Only the documents served are read whole (and their hashes checked) at start;
        // history's are read, and checked, when asked.
        for number in snapshot.pinned.sorted() {
            let revision = snapshot.revisions[number - 1]
            snapshot.pinBodies(adding: number, try readRoutes(medium, revision))
        }
        // Ascending ids; the oldest ended ones may have been removed (`maximumEndedSchedules`).
        for name in try medium.list("schedules") {
            snapshot.schedules.append(try loadSchedule(medium, name))
        }
        return try ManifestStore(directory: directory, medium: medium, snapshot: snapshot, marker: marker, auditRotationBytes: auditRotationBytes,
                                 endedSchedulesKept: endedSchedulesKept, pendingScheduleBytes: pendingScheduleBytes)
    }

    static func loadSchedule(_ medium: any StoreMedium, _ name: String) throws(StoreError) -> ScheduledPublish {
        let relative = "schedules/" + name
        guard let id = Int(name), id >= 1, name == ScheduledPublish.fileName(id) else {
            throw damaged(medium, relative, "a schedule's file is named by its id, 8 digits such as \(ScheduledPublish.fileName(1))")
        }
        switch ScheduledPublish.from(try loadHeader(medium, relative), id: id) {
        case .success(let item): return item
        case .failure(let problem): throw damaged(medium, relative, problem.message)
        }
    }

    static func damaged(_ medium: any StoreMedium, _ relative: String, _ reason: String) -> StoreError {
        .damaged(directory: medium.location, file: relative, reason: reason)
    }

    static func revisionFileName(_ number: Int) -> String {
        zeroPadded(number, width: 8)
    }

    static func schemaFileName(_ key: SchemaKey) -> String { "\(key.platform)@\(key.version)" }

    static func schemaKey(fileName: String) -> SchemaKey? {
        guard let at = fileName.firstIndex(of: "@") else { return nil }
        return SchemaKey(platform: String(fileName[..<at]), version: String(fileName[fileName.index(after: at)...]))
    }

    static func loadRecord(_ medium: any StoreMedium, _ relative: String) throws(StoreError) -> Record {
        switch Record.decode(try medium.read(relative)) {
        case .success(let record): return record
        case .failure(let problem): throw damaged(medium, relative, problem.message)
        }
    }

    /// A stored file's header, its body's length checked against the file's size; the body
    /// is neither read nor hashed.
    static func loadHeader(_ medium: any StoreMedium, _ relative: String) throws(StoreError) -> Record.Header {
        let (head, size) = try medium.readHead(relative, maximum: Record.Header.maximumBytes)
        switch Record.Header.decode(head, fileSize: size) {
        case .success(let header): return header
        case .failure(let problem): throw damaged(medium, relative, problem.message)
        }
    }

    /// Revision `revision`'s routes document read from its file, whole, and checked: the
    /// record's own SHA-256 and the one the store opened with.
    /// - Complexity: O(the document's size).
    static func readRoutes(_ medium: any StoreMedium, _ revision: Revision) throws(StoreError) -> [UInt8] {
        let relative = "revisions/" + revisionFileName(revision.number)
        let record = try loadRecord(medium, relative)
        guard record.sha256 == revision.sha256 else {
            throw damaged(medium, relative, "its body's SHA-256 is \(record.sha256), the store opened with \(revision.sha256)")
        }
        return record.body
    }

    /// Revision `revision`'s routes document exactly as published: from memory for the
    /// current and the newest revision, otherwise read from `DIR/revisions/N` and checked
    /// against its SHA-256 (a damaged file is `StoreError.damaged` naming it, and nothing
    /// else is affected). Not cached here: callers keep what they derive from it
    /// (`WaymarkAPI`'s `RevisionDocuments`).
    /// - Complexity: O(1) for a pinned revision, else O(the document's size), from disk.
    public func routes(of revision: Revision) throws(StoreError) -> [UInt8] {
        if let routes = snapshot.pinnedRoutes(revision.number) { return routes }
        return try Self.readRoutes(medium, revision)
    }

    static func loadSchema(_ medium: any StoreMedium, _ name: String) throws(StoreError) -> StoredSchema {
        let relative = "schemas/" + name
        switch schema(from: try loadRecord(medium, relative)) {
        case .success(let stored): return stored
        case .failure(let problem): throw damaged(medium, relative, problem.message)
        }
    }

    static func schema(from record: Record) -> Result<StoredSchema, RecordError> {
        guard let json = try? JSONParser().parse(record.body), case .success(let decoded) = Schema.decode(json) else {
            return .failure(.content("the stored schema no longer decodes"))
        }
        guard let author = record.metadata["author"]?.stringValue, let time = record.metadata["time"]?.stringValue.flatMap(Timestamp.parse) else {
            return .failure(.content("the header lacks author or time"))
        }
        return .success(StoredSchema(schema: decoded.schema, bytes: record.body, sha256: record.sha256, author: author, time: time))
    }

    /// Revision `number` from its header alone: O(header), whatever the document's size.
    static func loadRevision(_ medium: any StoreMedium, _ name: String, number: Int) throws(StoreError) -> Revision {
        let relative = "revisions/" + name
        let header = try loadHeader(medium, relative)
        switch revision(from: header.metadata, sha256: header.sha256, bytes: header.bodyLength, number: number) {
        case .success(let revision): return revision
        case .failure(let problem): throw damaged(medium, relative, problem.message)
        }
    }

    static func revision(from record: Record, number: Int) -> Result<Revision, RecordError> {
        revision(from: record.metadata, sha256: record.sha256, bytes: record.body.count, number: number)
    }

    static func revision(from metadata: [String: JSONValue], sha256: String, bytes: Int, number: Int) -> Result<Revision, RecordError> {
        guard metadata["number"]?.intValue == number,
              let author = metadata["author"]?.stringValue,
              let time = metadata["time"]?.stringValue.flatMap(Timestamp.parse),
              let message = metadata["message"]?.stringValue
        else { return .failure(.content("the header's number, author, time or message is missing or wrong")) }
        let parent = metadata["parent"]?.intValue
        guard parent == (number > 1 ? number - 1 : nil) else {
            return .failure(.content("its parent is \(parent.map(String.init) ?? "none"), expected \(number > 1 ? String(number - 1) : "none")"))
        }
        var revision = Revision(number: number, parent: parent, author: author, time: time, message: message,
                                sha256: sha256, bytes: bytes, restores: metadata["restores"]?.intValue)
        if let rollout = metadata["rollout"] {
            guard let start = RolloutStart.from(rollout), start.stable >= 1, start.stable < number else {
                return .failure(.content("its rollout (stable revision and steps) is not readable"))
            }
            revision.rollout = start
        }
        if let supersedes = metadata["supersedes"] {
            guard let candidate = supersedes.intValue, candidate >= 1, candidate < number else {
                return .failure(.content("the candidate it supersedes is not a revision before it"))
            }
            revision.supersedes = candidate
        }
        if let change = metadata["change"] {
            guard let action = change["action"]?.stringValue, change["on"].map({ $0.intValue.map { $0 >= 1 && $0 < number } ?? false }) ?? true else {
                return .failure(.content("its change's action or the revision it was applied to is not readable"))
            }
            revision.changeAction = action
            revision.changedOn = change["on"]?.intValue
            // The ids of a change of at most `maximumKeptRouteIDs` routes (null past them: not rebased over).
            if let list = change["routes"]?.arrayValue {
                let ids = list.compactMap(\.stringValue)
                guard ids.count == list.count else { return .failure(.content("the routes its change names are not readable")) }
                revision.changedRoutes = ids
            }
        }
        if let base = metadata["rebasedFrom"] {
            guard let number = base.intValue, number >= 1, number < revision.number else {
                return .failure(.content("the base it was rebased from is not a revision before it"))
            }
            revision.rebasedFrom = number
        }
        return .success(revision)
    }

}
