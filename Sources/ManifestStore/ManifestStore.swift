import CivilDate
import Foundation
import Rollout
import RouteEngine
import Synchronization
import SystemIO

/// One published routes document: immutable, numbered, content-hashed.
public struct Revision: Hashable, Sendable {
    public let number: Int
    public let parent: Int?
    public let author: String
    public let time: Date
    public let message: String
    /// SHA-256 of `routes`, hex.
    public let sha256: String
    /// The routes document exactly as published.
    public let routes: [UInt8]
    /// For a rollback: the revision whose routes this republishes.
    public let restores: Int?
    /// Set when it was published as a rollout's candidate: the stable revision and the steps.
    public var rollout: RolloutStart? = nil
    /// Set when it was published over an active rollout, asked to supersede it: that candidate.
    public var supersedes: Int? = nil
}

/// How a candidate revision's rollout began: kept in the revision's own record, so that
/// storing the candidate and starting its rollout are one durable write.
public struct RolloutStart: Hashable, Sendable {
    public let stable: Int
    public let steps: [RolloutStep]

    public init(stable: Int, steps: [RolloutStep]) {
        self.stable = stable
        self.steps = steps
    }

    var json: JSONValue {
        ["stable": .int(stable), "steps": .array(steps.map { step in
            ["percent": .int(step.percent), "minimumDuration": .int(Int(step.minimumDuration)), "minimumResolutions": .int(step.minimumResolutions)]
        })]
    }

    static func from(_ json: JSONValue?) -> RolloutStart? {
        guard let json, let stable = json["stable"]?.intValue, let steps = json["steps"]?.arrayValue else { return nil }
        let parsed = steps.compactMap { step -> RolloutStep? in
            guard let percent = step["percent"]?.intValue, let duration = step["minimumDuration"]?.intValue,
                  let resolutions = step["minimumResolutions"]?.intValue else { return nil }
            return RolloutStep(percent: percent, minimumDuration: TimeInterval(duration), minimumResolutions: resolutions)
        }
        guard parsed.count == steps.count, RolloutState.validate(parsed) == nil else { return nil }
        return RolloutStart(stable: stable, steps: parsed)
    }
}

/// Which app build a schema describes.
public struct SchemaKey: Hashable, Comparable, Sendable, CustomStringConvertible {
    public let platform: String
    public let version: String

    public init(platform: String, version: String) {
        self.platform = platform
        self.version = version
    }

    public var description: String { "\(platform) \(version)" }

    public static func < (a: SchemaKey, b: SchemaKey) -> Bool {
        (a.platform, a.version) < (b.platform, b.version)
    }
}

/// A registered app-build schema.
public struct StoredSchema: Hashable, Sendable {
    public let schema: Schema
    public let bytes: [UInt8]
    public let sha256: String
    public let author: String
    public let time: Date

    public var key: SchemaKey { SchemaKey(platform: schema.platform, version: schema.version) }
}

/// Everything the store holds at one moment; readers take one and never see a half-applied change.
public struct StoreSnapshot: Sendable {
    /// Ascending by number.
    public internal(set) var revisions: [Revision] = []
    public internal(set) var schemas: [SchemaKey: StoredSchema] = [:]
    /// Scheduled publishes, ascending by id, whatever their status.
    public internal(set) var schedules: [ScheduledPublish] = []

    /// The revision every build is served (and publishes are based on): the newest,
    /// unless the newest is a rollout's candidate that has not completed — then the
    /// rollout's stable revision (`docs/rollouts.md`).
    public var current: Revision? {
        guard let newest = revisions.last else { return nil }
        if let rollout, rollout.candidate == newest.number, rollout.status != .completed { return revision(rollout.stable) }
        return newest
    }
    /// The newest rollout: its candidate's state (running, paused, tripped, aborted,
    /// completed), or nil when no revision was ever a candidate.
    public internal(set) var rollout: RolloutState?

    /// The revisions builds are served now: the current one, and a rollout's candidate.
    public var servedRevisions: Set<Int> {
        Set([current?.number, activeRollout?.candidate].compactMap { $0 })
    }

    /// The rollout still splitting cohorts (running or paused), if any.
    public var activeRollout: RolloutState? {
        guard let rollout, rollout.status.isActive, rollout.candidate == revisions.last?.number else { return nil }
        return rollout
    }
    /// The app this data directory serves: fixed by its first schema.
    public var app: String? { schemas.values.first?.schema.app }

    public func revision(_ number: Int) -> Revision? {
        guard number >= 1, number <= revisions.count else { return nil }
        return revisions[number - 1]
    }

    /// Schemas of `app`, in key order.
    public var orderedSchemas: [StoredSchema] { schemas.keys.sorted().map { schemas[$0]! } }
}

public enum PublishOutcome: Sendable {
    case published(Revision)
    /// The routes equal the current revision's (canonically): nothing was stored, and the
    /// current revision (and every manifest's ETag) stays as it is.
    case unchanged(Revision)
    /// The document fails validation; nothing was stored.
    case invalid(ValidationReport)
    /// `base` is not the current revision: someone else published first.
    case staleBase(current: Int?)
    case unknownRevision(Int)
    /// A rollout of this candidate is running or paused: it ends (completes, trips or is
    /// aborted) before anything else is published.
    case rolloutInProgress(candidate: Int)
    /// Asked to supersede the rollout of `candidate` with the stable revision's own routes:
    /// nothing would be published and the rollout would go on, so nothing is done — aborting
    /// it is what serves the stable routes to everyone.
    case stableOverRollout(candidate: Int)
}

public enum SchemaOutcome: Sendable {
    /// `replaced`: a schema for the same build was registered before and is replaced.
    case registered(StoredSchema, replaced: Bool)
    case invalid([ValidationProblem])
    /// The schema is for another app than this data directory serves.
    case wrongApp(expected: String)
    /// The body's platform/version disagree with the ones addressed.
    case keyMismatch(SchemaKey)
}

/// What `open` found and repaired.
public struct OpenReport: Sendable {
    public var removedTemporaries: [String] = []
    public var truncatedAuditBytes = 0
    public var recoveredAuditEntries = 0
    /// Lines of the audit log read at start that were not JSON (skipped).
    public var damagedAuditLines = 0
}

/// Durable revisions and schemas in a data directory, with an append-only audit log.
///
///     DIR/LOCK                  flock: one daemon per directory
///     DIR/revisions/00000001    a Record per revision (never overwritten)
///     DIR/schemas/ios@5.3.0     a Record per app build (replaced on re-registration)
///     DIR/schedules/00000001    a Record per scheduled publish (replaced as its status changes)
///     DIR/rollout               the newest rollout's state (replaced as it changes; docs/rollouts.md)
///     DIR/audit.log             one JSON line per change and per refused attempt
///     DIR/tokens.json           bearer tokens: names, scopes, SHA-256 hashes (`TokenStore`)
///
/// Writers are serialized; readers take `snapshot`, which is never half-applied. Every
/// change is on disk (fsynced, renamed, directory fsynced) and in the audit log before
/// the call returns, so a caller may acknowledge it.
public final class ManifestStore: Sendable {
    static let auditLog = DataDirectory.auditLog
    static let subdirectories = ["revisions", "schemas", "schedules"]

    /// The data directory, held locked for the life of the store; telemetry lives in it too.
    public let directory: DataDirectory
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

    /// Refused attempts of the current minute, written as one line per kind when it ends.
    let refusals = RefusalTally()
    /// How many different (action, actor, reason) a minute's refusal lines name; the rest
    /// are counted under the actor `(others)`.
    public static let refusalKindsPerMinute = RefusalTally.maximumKeys
    /// The audit log is moved aside (`audit-<time>.log`) before a line is added past this size.
    let auditRotationBytes: Int

    private init(directory: DataDirectory, snapshot: StoreSnapshot, auditRotationBytes: Int) throws(StoreError) {
        self.directory = directory
        self.auditRotationBytes = auditRotationBytes
        tokens = try TokenStore(directory: directory, auditRotationBytes: auditRotationBytes)
        state = Mutex(snapshot)
    }

    /// Opens (creating if needed) the data directory at `path`: removes stale temporary
    /// files, verifies every record's hash, repairs a torn audit tail. A damaged store is
    /// refused with an error naming the file, rather than served in part.
    /// `auditRotationBytes`: the size at which `audit.log` is moved aside (64 MiB).
    public static func open(at path: String, auditRotationBytes: Int = DataDirectory.defaultAuditRotationBytes) throws(StoreError) -> (store: ManifestStore, report: OpenReport) {
        let directory = try onDisk { () throws(IOError) in try DataDirectory(path: path, subdirectories: subdirectories) }
        var report = OpenReport()
        report.removedTemporaries = try onDisk { () throws(IOError) in try directory.removeStaleTemporaries(in: ["."] + subdirectories) }
        var snapshot = StoreSnapshot()

        for name in try onDisk({ () throws(IOError) in try directory.list("schemas") }) {
            let stored = try loadSchema(directory, name)
            guard stored.key == schemaKey(fileName: name) else {
                throw damaged(directory, "schemas/" + name, "it holds the schema for \(stored.key)")
            }
            if let app = snapshot.app, app != stored.schema.app {
                throw damaged(directory, "schemas/" + name, "it is for the app \(stored.schema.app), the others for \(app)")
            }
            snapshot.schemas[stored.key] = stored
        }
        let names = try onDisk { () throws(IOError) in try directory.list("revisions") }
        for (index, name) in names.enumerated() {
            guard Int(name) == index + 1 else {
                throw damaged(directory, "revisions/" + name, "revisions must be numbered 1, 2, 3… without gaps; expected \(revisionFileName(index + 1))")
            }
            snapshot.revisions.append(try loadRevision(directory, name, number: index + 1))
        }
        snapshot.rollout = try loadRollout(directory, revisions: snapshot.revisions)
        for (index, name) in try onDisk({ () throws(IOError) in try directory.list("schedules") }).enumerated() {
            let relative = "schedules/" + name
            guard Int(name) == index + 1 else {
                throw damaged(directory, relative, "schedules must be numbered 1, 2, 3… without gaps; expected \(ScheduledPublish.fileName(index + 1))")
            }
            switch ScheduledPublish.from(try loadRecord(directory, relative), id: index + 1) {
            case .success(let item): snapshot.schedules.append(item)
            case .failure(let problem): throw damaged(directory, relative, problem.message)
            }
        }

        // `waymark token` appends to the audit log under this lock: never cut its line in half.
        return try directory.withFileLock(TokenStore.lockName, failure: StoreError.init) { () throws(StoreError) in
            let store = try ManifestStore(directory: directory, snapshot: snapshot, auditRotationBytes: auditRotationBytes)
            try store.repairAudit(&report)
            try store.repairScheduleAudit(&report)
            try store.repairRolloutAudit(&report)
            return (store, report)
        }
    }

    static func damaged(_ directory: DataDirectory, _ relative: String, _ reason: String) -> StoreError {
        .damaged(directory: directory.path, file: relative, reason: reason)
    }

    static func revisionFileName(_ number: Int) -> String {
        zeroPadded(number, width: 8)
    }

    static func schemaFileName(_ key: SchemaKey) -> String { "\(key.platform)@\(key.version)" }

    private static func schemaKey(fileName: String) -> SchemaKey? {
        guard let at = fileName.firstIndex(of: "@") else { return nil }
        return SchemaKey(platform: String(fileName[..<at]), version: String(fileName[fileName.index(after: at)...]))
    }

    static func loadRecord(_ directory: DataDirectory, _ relative: String) throws(StoreError) -> Record {
        switch Record.decode(try onDisk { () throws(IOError) in try directory.read(relative) }) {
        case .success(let record): return record
        case .failure(let problem): throw damaged(directory, relative, problem.message)
        }
    }

    private static func loadSchema(_ directory: DataDirectory, _ name: String) throws(StoreError) -> StoredSchema {
        let relative = "schemas/" + name
        switch schema(from: try loadRecord(directory, relative)) {
        case .success(let stored): return stored
        case .failure(let problem): throw damaged(directory, relative, problem.message)
        }
    }

    private static func schema(from record: Record) -> Result<StoredSchema, RecordError> {
        guard let json = try? JSONParser().parse(record.body), case .success(let decoded) = Schema.decode(json) else {
            return .failure(.content("the stored schema no longer decodes"))
        }
        guard let author = record.metadata["author"]?.stringValue, let time = record.metadata["time"]?.stringValue.flatMap(Timestamp.parse) else {
            return .failure(.content("the header lacks author or time"))
        }
        return .success(StoredSchema(schema: decoded.schema, bytes: record.body, sha256: record.sha256, author: author, time: time))
    }

    private static func loadRevision(_ directory: DataDirectory, _ name: String, number: Int) throws(StoreError) -> Revision {
        let relative = "revisions/" + name
        switch revision(from: try loadRecord(directory, relative), number: number) {
        case .success(let revision): return revision
        case .failure(let problem): throw damaged(directory, relative, problem.message)
        }
    }

    private static func revision(from record: Record, number: Int) -> Result<Revision, RecordError> {
        let metadata = record.metadata
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
                                sha256: record.sha256, routes: record.body, restores: metadata["restores"]?.intValue)
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
        return .success(revision)
    }

    // MARK: Audit

    /// Start-up repair, reading the log backwards only as far as it must: a torn last line
    /// (a crash mid-append, never acknowledged) is cut off, and the newest change (revision
    /// or schema) — the only one a crash can have left unaudited, since each change is
    /// audited before the next begins — gets a `recovered` entry if the log's last change
    /// entry is not its. The scan stops at that entry: refusal counts and token changes
    /// after it are all it reads. Lines that are not JSON are counted and skipped.
    private func repairAudit(_ report: inout OpenReport) throws(StoreError) {
        let log = Self.auditLog
        guard directory.exists(log) else { return try recoverAudit(revision: snapshot.revisions.last, schema: newestSchema, report: &report) }
        // A torn tail: the bytes after the last newline.
        var torn = 0
        try onDisk { () throws(IOError) in
            let size = FileSystem.size(directory.path + "/" + log) ?? 0
            let fd = try FileSystem.open(directory.path + "/" + log, O_RDONLY)
            defer { FileSystem.close(fd) }
            var end = size
            while end > 0 {
                let start = max(0, end - (64 << 10))
                let piece = try FileSystem.read(fd, count: end - start, at: start, path: log)
                if let newline = piece.lastIndex(of: UInt8(ascii: "\n")) {
                    torn = size - (start + newline + 1)
                    break
                }
                end = start
                torn = size - end
            }
            if torn > 0 { try directory.truncate(log, to: size - torn) }
        }
        report.truncatedAuditBytes = torn
        // Changes are audited one at a time, each before the next begins, so the last
        // change entry in the log must be the newest change's; if it is another's, the
        // newest one's entry is missing.
        let revision = snapshot.revisions.last
        let schema = newestSchema
        let newestIsRevision = revision.map { current in schema.map { current.time >= $0.time } ?? true } ?? false
        guard revision != nil || schema != nil else { return }
        var lastChange: JSONValue?
        try onDisk { () throws(IOError) in
            try directory.scanBackwards(log) { line in
                guard let entry = try? JSONParser().parse(line) else {
                    report.damagedAuditLines += 1
                    return true
                }
                guard entry["outcome"]?.stringValue == "ok", Self.changeActions.contains(entry["action"]?.stringValue ?? "") else { return true }
                lastChange = entry
                return false
            }
        }
        let recorded: Bool
        if let lastChange {
            recorded = newestIsRevision ? lastChange["revision"]?.intValue == revision?.number : lastChange["sha256"]?.stringValue == schema?.sha256
        } else {
            // No change in this file: its entry is in a log moved aside, if there is one.
            recorded = (try? directory.list(".").contains { $0.hasPrefix("audit-") }) ?? false
        }
        guard !recorded else { return }
        try recoverAudit(revision: newestIsRevision ? revision : nil, schema: newestIsRevision ? nil : schema, report: &report)
    }

    /// The audit actions of changes to revisions and schemas.
    static let changeActions: Set<String> = ["publish", "rollback", "mirror", "registerSchema", "mirrorSchema"]

    private var newestSchema: StoredSchema? { snapshot.orderedSchemas.max { $0.time < $1.time } }

    private func recoverAudit(revision: Revision?, schema: StoredSchema?, report: inout OpenReport) throws(StoreError) {
        if let revision {
            try appendAudit(["action": revision.restores == nil ? "publish" : "rollback", "actor": .string(revision.author),
                             "outcome": "ok", "revision": .int(revision.number), "sha256": .string(revision.sha256),
                             "recovered": true], time: revision.time)
            report.recoveredAuditEntries += 1
        }
        if let stored = schema {
            try appendAudit(["action": "registerSchema", "actor": .string(stored.author), "outcome": "ok",
                             "platform": .string(stored.key.platform), "version": .string(stored.key.version),
                             "sha256": .string(stored.sha256), "recovered": true], time: stored.time)
            report.recoveredAuditEntries += 1
        }
    }

    /// Appends one audit line, durably, moving a full log aside first.
    func appendAudit(_ fields: [String: JSONValue], time: Date) throws(StoreError) {
        try onDisk { () throws(IOError) in try appendAuditLine(fields, time: time) }
    }

    private func appendAuditLine(_ fields: [String: JSONValue], time: Date) throws(IOError) {
        try directory.appendAudit(fields, time: time, rotateAt: auditRotationBytes)
    }

    /// Writes a change's file and its audit entry, all or nothing (`DataDirectory.writeDurably`):
    /// if the entry cannot be written the file is put back and the error thrown; only if
    /// that fails too does the change stand unaudited (the next start adds its entry).
    func writeAudited(_ bytes: [UInt8], _ subdirectory: String, _ name: String, replacing: Bool,
                              _ entry: [String: JSONValue], time: Date) throws(StoreError) {
        _ = try onDisk { () throws(IOError) in
            try directory.writeDurably(bytes, subdirectory: subdirectory, name: name, replacing: replacing) { () throws(IOError) in
                try appendAuditLine(entry, time: time)
            }
        }
    }

    /// Counts a refused attempt for this minute's audit lines (see `RefusalTally`); the lines
    /// of a minute are written when it ends, by the next refusal or by a timer.
    func tallyRefusal(action: String, actor: String, reason: String, peer: String? = nil, now: Date) {
        // Counting only: this runs under the writer lock too (a refused publish), so the
        // lines of a minute that has ended are written from elsewhere, never from here.
        let (opened, ready) = refusals.add(RefusalTally.Key(action: action, actor: actor, reason: reason, peer: peer), now: now)
        if ready {
            DispatchQueue.global(qos: .utility).async { [weak self] in self?.flushRefusals() }
        }
        if opened {
            let untilNextMinute = 60 - now.timeIntervalSince1970.truncatingRemainder(dividingBy: 60)
            DispatchQueue.global(qos: .utility).asyncAfter(deadline: .now() + untilNextMinute + 0.5) { [weak self] in
                self?.flushRefusals()
            }
        }
    }

    /// Serializes flushes, so that once one returns every line taken before it is written
    /// (`auditEntries` reads the file right after). Taken before the writer lock, never under it.
    private let flushing = Mutex<Void>(())

    /// Writes the refusal lines of minutes that have ended (all of them with `all`).
    public func flushRefusals(all: Bool = false) {
        flushing.withLock { _ in
            let due = refusals.take(before: Date(), all: all)
            if !due.isEmpty { writeRefusals(due) }
        }
    }

    private func writeRefusals(_ lines: [[String: JSONValue]]) {
        // Refusals are not acknowledged changes: one that cannot be written (a full disk) is
        // dropped rather than failing the request it describes.
        let now = Date()
        try? writer.withLock { _ throws(IOError) in
            for line in lines { try appendAuditLine(line, time: now) }
        }
    }

    /// Records a refused attempt (bad token, wrong scope, …) that never reached the store's
    /// own checks: counted, and written with the minute's others when it ends.
    public func recordRefusal(action: String, actor: String, reason: String, peer: String? = nil, now: Date = Date()) {
        tallyRefusal(action: action, actor: actor, reason: reason, peer: peer, now: now)
    }

    /// The entries of the current audit log, oldest first, with this minute's refusals
    /// written first. For tests and tools: it reads the whole file.
    public func auditEntries() throws(StoreError) -> [JSONValue] {
        flushRefusals(all: true)
        return try writer.withLock { _ throws(StoreError) in
            guard directory.exists(Self.auditLog) else { return [] }
            return try onDisk { () throws(IOError) in try directory.read(Self.auditLog) }.split(separator: UInt8(ascii: "\n")).compactMap { try? JSONParser().parse($0) }
        }
    }

    // MARK: Changes

    /// Validates `routes` against every registered schema and, if valid and `base` is the
    /// current revision (nil: there is none yet), stores it as the next revision.
    /// `findings`: problems found outside the store (the link checks), counted with the
    /// validator's. Refusals are audited and change nothing else.
    ///
    /// The document is validated before the writer lock is taken, against the schemas of
    /// that moment, so a large document never holds up other changes; under the lock the
    /// base is checked, and the document is validated again only if a schema changed
    /// meanwhile.
    /// `supersede`: publish even while a rollout is active, ending it (status `superseded`).
    public func publish(routes: [UInt8], base: Int?, author: String, message: String, findings: [ValidationProblem] = [],
                        supersede: Bool = false, now: Date = Date()) throws(StoreError) -> PublishOutcome {
        let seen = snapshot
        // Revisions only grow: a base that is stale now stays stale, so it is not validated.
        let checked = base == seen.current?.number ? Checked(routes: routes, against: seen, findings: findings, now: now) : nil
        return try writer.withLock { _ throws(StoreError) in
            try publishLocked(routes: routes, base: base, author: author, message: message, restores: nil, checked: checked, now: now,
                              supersede: supersede)
        }
    }

    /// Publishes revision `number`'s routes again as a new revision (validated against the
    /// schemas registered now, outside the lock as a publish is).
    public func rollback(to number: Int, base: Int?, author: String, message: String, now: Date = Date()) throws(StoreError) -> PublishOutcome {
        let seen = snapshot
        let checked = seen.revision(number).map { Checked(routes: $0.routes, against: seen, findings: [], now: now) }
        return try writer.withLock { _ throws(StoreError) in
            guard let old = snapshot.revision(number), let checked else {
                tallyRefusal(action: "rollback", actor: author, reason: "unknownRevision", now: now)
                return .unknownRevision(number)
            }
            return try publishLocked(routes: old.routes, base: base, author: author, message: message, restores: number, checked: checked, now: now)
        }
    }

    /// Whether two routes documents are the same content: equal bytes, or equal once both
    /// are parsed and written in canonical JSON (sorted keys, no whitespace) — key order,
    /// spacing and escapes do not make a new revision.
    static func canonicallyEqual(_ first: [UInt8], _ second: [UInt8]) -> Bool {
        if first == second { return true }
        guard let a = try? JSONParser().parse(first), let b = try? JSONParser().parse(second) else { return false }
        return a.serializedBytes() == b.serializedBytes()
    }

    /// A validation report and the schemas it was made against.
    struct Checked {
        let report: ValidationReport
        let schemas: [SchemaKey: String]
        let findings: [ValidationProblem]
        /// The number of the snapshot's current revision when `routes` equal its routes canonically.
        let sameAs: Int?

        init(routes: [UInt8], against snapshot: StoreSnapshot, findings: [ValidationProblem], now: Date) {
            var report = ManifestStore.validate(routes, against: snapshot, now: now)
            report.append(contentsOf: findings)
            self.report = report
            schemas = snapshot.schemas.mapValues(\.sha256)
            self.findings = findings
            sameAs = snapshot.current.flatMap { ManifestStore.canonicallyEqual(routes, $0.routes) ? $0.number : nil }
        }

        /// The report, made again if the schemas are no longer those it was made against.
        func report(for routes: [UInt8], against snapshot: StoreSnapshot, now: Date) -> ValidationReport {
            guard snapshot.schemas.mapValues(\.sha256) != schemas else { return report }
            return Checked(routes: routes, against: snapshot, findings: findings, now: now).report
        }
    }

    func publishLocked(routes: [UInt8], base: Int?, author: String, message: String, restores: Int?,
                       checked: Checked?, now: Date, rollout: RolloutStart? = nil, supersede: Bool = false) throws(StoreError) -> PublishOutcome {
        let action: JSONValue = restores == nil ? "publish" : "rollback"
        let current = snapshot
        // A publish that asks to supersede the active rollout ends it in the same durable
        // write as the new revision (whose record names it): never one without the other.
        let superseded = supersede ? current.activeRollout?.candidate : nil
        if let active = current.activeRollout, superseded == nil {
            tallyRefusal(action: action.stringValue!, actor: author, reason: "rolloutInProgress", now: now)
            return .rolloutInProgress(candidate: active.candidate)
        }
        guard base == current.current?.number else {
            tallyRefusal(action: action.stringValue!, actor: author, reason: "staleBase", now: now)
            return .staleBase(current: current.current?.number)
        }
        let checked = checked ?? Checked(routes: routes, against: current, findings: [], now: now)
        // The same routes again (a pipeline publishing on every merge): nothing to store, and
        // no phone downloads its manifest again. Checked against what was current when the
        // comparison was made outside the lock, which `base` has just shown is still current.
        if let revision = current.current, checked.sameAs == revision.number {
            if let superseded {
                tallyRefusal(action: action.stringValue!, actor: author, reason: "stableOverRollout", now: now)
                return .stableOverRollout(candidate: superseded)
            }
            return .unchanged(revision)
        }
        let report = checked.report(for: routes, against: current, now: now)
        guard report.isValid else {
            tallyRefusal(action: action.stringValue!, actor: author, reason: "invalid", now: now)
            return .invalid(report)
        }
        // Numbered after every stored revision (a tripped candidate keeps its number), parented on the one before.
        let number = current.revisions.count + 1
        var metadata: [String: JSONValue] = ["kind": "revision", "number": .int(number), "author": .string(author),
                                             "time": .string(Timestamp.format(now)), "message": .string(message)]
        if number > 1 { metadata["parent"] = .int(number - 1) }
        if let restores { metadata["restores"] = .int(restores) }
        if let rollout { metadata["rollout"] = rollout.json }
        if let superseded { metadata["supersedes"] = .int(superseded) }
        let record = Record(metadata: metadata, body: routes)
        var revision = Revision(number: number, parent: number > 1 ? number - 1 : nil, author: author,
                                time: Timestamp.parse(Timestamp.format(now)) ?? now, message: message,
                                sha256: record.sha256, routes: routes, restores: restores)
        revision.rollout = rollout
        revision.supersedes = superseded
        var entry: [String: JSONValue] = ["action": action, "actor": .string(author), "outcome": "ok",
                                          "revision": .int(number), "sha256": .string(record.sha256)]
        if let restores { entry["restores"] = .int(restores) }
        if let rollout { entry["rollout"] = ["stable": .int(rollout.stable), "steps": .array(rollout.steps.map { .int($0.percent) })] }
        if let superseded { entry["supersedes"] = .int(superseded) }
        try writeAudited(record.encoded, "revisions", Self.revisionFileName(number), replacing: false, entry, time: now)
        state.withLock { snapshot in
            snapshot.revisions.append(revision)
            if superseded != nil { snapshot.rollout?.supersede() }
            if let rollout { snapshot.rollout = RolloutState(candidate: number, stable: rollout.stable, steps: rollout.steps, now: revision.time) }
        }
        changes.add(1, ordering: .releasing)
        return .published(revision)
    }

    /// The validator's report for `routes` against every schema registered in `snapshot`.
    public static func validate(_ routes: [UInt8], against snapshot: StoreSnapshot, now: Date = Date()) -> ValidationReport {
        let json: JSONValue
        do {
            json = try JSONParser().parse(routes)
        } catch {
            return ValidationReport([ValidationProblem(.invalidFormat, at: .root, "The routes document is not valid JSON: \(error.message)")])
        }
        let schemas = snapshot.orderedSchemas.map(\.schema)
        guard !schemas.isEmpty else {
            return ValidationReport([ValidationProblem(.invalidFormat, at: .root,
                "No app-build schema is registered yet; register one (PUT /v1/schemas/PLATFORM/VERSION) before publishing routes.")])
        }
        return Validator.validate(json, against: schemas, now: now)
    }

    /// Registers (or replaces) the schema for one app build. `expected`: the platform and
    /// version the caller addressed, which the body must agree with.
    public func registerSchema(_ bytes: [UInt8], expected: SchemaKey?, author: String, now: Date = Date()) throws(StoreError) -> SchemaOutcome {
        // Parsed and decoded before the writer lock is taken.
        let decoding: Result<(schema: Schema, warnings: [ValidationProblem]), SchemaError>
        switch Result(catching: { () throws(JSONParseError) in try JSONParser().parse(bytes) }) {
        case .success(let json): decoding = Schema.decode(json)
        case .failure(let error):
            decoding = .failure(SchemaError(problems: [ValidationProblem(.invalidFormat, at: .root, "The schema is not valid JSON: \(error.message)")]))
        }
        return try writer.withLock { _ throws(StoreError) in
            func refuse(_ reason: String) {
                tallyRefusal(action: "registerSchema", actor: author, reason: reason, now: now)
            }
            let decoded: (schema: Schema, warnings: [ValidationProblem])
            switch decoding {
            case .success(let value): decoded = value
            case .failure(let error):
                refuse("invalid")
                return .invalid(error.problems)
            }
            let key = SchemaKey(platform: decoded.schema.platform, version: decoded.schema.version)
            if let expected, expected != key {
                refuse("keyMismatch")
                return .keyMismatch(key)
            }
            let current = snapshot
            if let app = current.app, app != decoded.schema.app {
                refuse("wrongApp")
                return .wrongApp(expected: app)
            }
            let record = Record(metadata: ["kind": "schema", "author": .string(author), "time": .string(Timestamp.format(now)),
                                           "platform": .string(key.platform), "version": .string(key.version)], body: bytes)
            let stored = StoredSchema(schema: decoded.schema, bytes: bytes, sha256: record.sha256, author: author,
                                      time: Timestamp.parse(Timestamp.format(now)) ?? now)
            let replaced = current.schemas[key] != nil
            try writeAudited(record.encoded, "schemas", Self.schemaFileName(key), replacing: true,
                             ["action": "registerSchema", "actor": .string(author), "outcome": "ok", "platform": .string(key.platform),
                              "version": .string(key.version), "sha256": .string(record.sha256), "replaced": .bool(replaced)], time: now)
            state.withLock { $0.schemas[key] = stored }
            changes.add(1, ordering: .releasing)
            return .registered(stored, replaced: replaced)
        }
    }

    // MARK: Mirroring

    /// Revision `number` as stored (its record: header line and body), for a follower.
    public func revisionRecord(_ number: Int) throws(StoreError) -> [UInt8]? {
        guard snapshot.revision(number) != nil else { return nil }
        return try onDisk { () throws(IOError) in try directory.read("revisions/" + Self.revisionFileName(number)) }
    }

    /// The schema of `key` as stored, for a follower. Re-registration replaces the file, so
    /// the bytes may be newer than a snapshot the caller read a moment ago.
    public func schemaRecord(_ key: SchemaKey) throws(StoreError) -> [UInt8]? {
        guard snapshot.schemas[key] != nil else { return nil }
        return try onDisk { () throws(IOError) in try directory.read("schemas/" + Self.schemaFileName(key)) }
    }

    /// A follower's copy of the primary's revision `number`: `record` exactly as the primary
    /// stores it, checked (its body's SHA-256 against its header and against `sha256`, the
    /// number and parent) before it is stored the same way as a publish and served.
    /// Revisions are mirrored in order; anything else is refused and changes nothing.
    @discardableResult
    public func mirrorRevision(_ record: [UInt8], number: Int, sha256: String, actor: String) throws(StoreError) -> Revision {
        try writer.withLock { _ throws(StoreError) in
            let next = snapshot.revisions.count + 1
            guard number == next else { throw StoreError.refusedMirror("Revision \(number) cannot be mirrored here: the next is \(next).") }
            let decoded: Record
            switch Record.decode(record) {
            case .success(let value): decoded = value
            case .failure(let problem): throw StoreError.refusedMirror("The primary's revision \(number) is damaged: \(problem.message).")
            }
            guard decoded.sha256 == sha256 else {
                throw StoreError.refusedMirror("The primary's revision \(number) has SHA-256 \(decoded.sha256), its list says \(sha256).")
            }
            let revision: Revision
            switch Self.revision(from: decoded, number: number) {
            case .success(let value): revision = value
            case .failure(let problem): throw StoreError.refusedMirror("The primary's revision \(number) is not valid: \(problem.message).")
            }
            try writeAudited(record, "revisions", Self.revisionFileName(number), replacing: false,
                             ["action": "mirror", "actor": .string(actor), "outcome": "ok", "revision": .int(number), "sha256": .string(sha256)],
                             time: Date())
            state.withLock { snapshot in
                snapshot.revisions.append(revision)
                // A candidate's rollout starts as it did on the primary; a follower never moves it on its own.
                if let start = revision.rollout {
                    snapshot.rollout = RolloutState(candidate: number, stable: start.stable, steps: start.steps, now: revision.time)
                }
                if revision.supersedes != nil, snapshot.rollout?.candidate == revision.supersedes { snapshot.rollout?.supersede() }
            }
            changes.add(1, ordering: .releasing)
            return revision
        }
    }

    /// A follower's copy of the primary's schema for `key`, checked the same way; replaces
    /// the schema it had for that build.
    @discardableResult
    public func mirrorSchema(_ record: [UInt8], key: SchemaKey, sha256: String, actor: String) throws(StoreError) -> StoredSchema {
        try writer.withLock { _ throws(StoreError) in
            let decoded: Record
            switch Record.decode(record) {
            case .success(let value): decoded = value
            case .failure(let problem): throw StoreError.refusedMirror("The primary's schema for \(key) is damaged: \(problem.message).")
            }
            guard decoded.sha256 == sha256 else {
                throw StoreError.refusedMirror("The primary's schema for \(key) has SHA-256 \(decoded.sha256), its list says \(sha256).")
            }
            let stored: StoredSchema
            switch Self.schema(from: decoded) {
            case .success(let value): stored = value
            case .failure(let problem): throw StoreError.refusedMirror("The primary's schema for \(key) is not valid: \(problem.message).")
            }
            guard stored.key == key else { throw StoreError.refusedMirror("The primary's schema for \(key) holds the schema for \(stored.key).") }
            let current = snapshot
            if let app = current.app, app != stored.schema.app, current.schemas.count > (current.schemas[key] == nil ? 0 : 1) {
                throw StoreError.refusedMirror("The primary's schema for \(key) is for the app \(stored.schema.app); this data directory serves \(app).")
            }
            try writeAudited(record, "schemas", Self.schemaFileName(key), replacing: true,
                             ["action": "mirrorSchema", "actor": .string(actor), "outcome": "ok", "platform": .string(key.platform),
                              "version": .string(key.version), "sha256": .string(sha256)], time: Date())
            state.withLock { $0.schemas[key] = stored }
            changes.add(1, ordering: .releasing)
            return stored
        }
    }

    /// `DIR/FOLLOWING` holds the primary's URL while the directory is a follower's, so that
    /// `waymark token` refuses changes the next mirror would overwrite.
    static let followingName = "FOLLOWING"

    /// The primary the data directory at `path` follows, if it is a follower's.
    public static func following(dataDirectory path: String) -> String? {
        guard let data = FileManager.default.contents(atPath: path + "/" + followingName) else { return nil }
        return String(decoding: data, as: UTF8.self).trimmingCharacters(in: .whitespacesAndNewlines)
    }

    /// Marks the directory as following `primary`, or (nil) as a primary again.
    public func setFollowing(_ primary: String?) throws(StoreError) {
        if let primary {
            try onDisk { () throws(IOError) in try directory.writeDurably(Array((primary + "\n").utf8), subdirectory: ".", name: Self.followingName, replacing: true) }
        } else if directory.exists(Self.followingName) {
            try onDisk { () throws(IOError) in try directory.remove(Self.followingName) }
        }
    }

    // MARK: Tokens

    /// The tokens of the data directory at `path` for `waymark token`, which may run while a
    /// daemon serves the directory (see `TokenStore`). Creates the directory if missing.
    public static func openTokens(at path: String) throws(StoreError) -> TokenStore {
        try TokenStore(directory: onDisk { () throws(IOError) in try DataDirectory(path: path, subdirectories: [], exclusive: false) })
    }

    // MARK: Seeding

    /// On a store with no revisions: registers every `schema-*.json` in `seedDirectory` not
    /// registered yet and publishes its `routes.json` as revision 1, through the same
    /// checks as any publish. Returns false when the store already had revisions.
    @discardableResult
    public func seedIfEmpty(from seedDirectory: String, now: Date = Date()) throws(StoreError) -> Bool {
        guard snapshot.current == nil else { return false }
        let names: [String]
        do {
            names = try FileManager.default.contentsOfDirectory(atPath: seedDirectory).sorted()
        } catch {
            throw StoreError.badSeed("Cannot read the seed directory \(seedDirectory): \(error.localizedDescription)")
        }
        for name in names where name.hasPrefix("schema-") && name.hasSuffix(".json") {
            let bytes = try readSeed(seedDirectory + "/" + name)
            switch try registerSchema(bytes, expected: nil, author: "seed", now: now) {
            case .registered: break
            case .invalid(let problems):
                throw StoreError.badSeed("The seed schema \(name) is invalid: \(problems.map(\.message).joined(separator: "; "))")
            case .wrongApp(let app): throw StoreError.badSeed("The seed schema \(name) is not for the app \(app).")
            case .keyMismatch: break
            }
        }
        let routes = try readSeed(seedDirectory + "/routes.json")
        switch try publish(routes: routes, base: nil, author: "seed", message: "Seeded from \(seedDirectory)", now: now) {
        case .published: return true
        case .unchanged: return false
        case .invalid(let report):
            throw StoreError.badSeed("The seed routes \(seedDirectory)/routes.json are invalid: \(report.errors.map(\.message).joined(separator: "; "))")
        case .staleBase, .unknownRevision, .rolloutInProgress, .stableOverRollout: return false  // published concurrently: nothing to seed
        }
    }

    private func readSeed(_ path: String) throws(StoreError) -> [UInt8] {
        guard let data = FileManager.default.contents(atPath: path) else { throw StoreError.badSeed("Cannot read the seed file \(path).") }
        return [UInt8](data)
    }
}
