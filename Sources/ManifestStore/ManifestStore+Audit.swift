import CivilDate
import Foundation
import Rollout
import RouteEngine
import Synchronization
import SystemIO

/// The audit log: its repair at start, the line every change appends with it (all or
/// nothing), and refusals counted per minute rather than written one by one.
extension ManifestStore {
    /// Start-up repair, reading the log backwards only as far as it must: a torn last line
    /// (a crash mid-append, never acknowledged) is cut off, and the newest change (revision
    /// or schema) — the only one a crash can have left unaudited, since each change is
    /// audited before the next begins — gets a `recovered` entry if the log's last change
    /// entry is not its. The scan stops at that entry: refusal counts and token changes
    /// after it are all it reads. Lines that are not JSON are counted and skipped.
    func repairAudit(_ report: inout OpenReport) throws(StoreError) {
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
    static let changeActions: Set<String> = ["publish", "rollback", "route.put", "route.delete", "routes.batch", "mirror", "registerSchema", "mirrorSchema"]

    private var newestSchema: StoredSchema? { snapshot.orderedSchemas.max { $0.time < $1.time } }

    private func recoverAudit(revision: Revision?, schema: StoredSchema?, report: inout OpenReport) throws(StoreError) {
        if let revision {
            var entry: [String: JSONValue] = ["action": .string(revision.changeAction ?? (revision.restores == nil ? "publish" : "rollback")),
                                              "actor": .string(revision.author), "outcome": "ok", "revision": .int(revision.number),
                                              "sha256": .string(revision.sha256), "recovered": true]
            if let ids = revision.changedRoutes { entry["routes"] = .array(ids.prefix(100).map(JSONValue.string)) }
            if let base = revision.rebasedFrom { entry["rebasedFrom"] = .int(base) }
            try appendAudit(entry, time: revision.time)
            report.recoveredAuditEntries += 1
        }
        if let stored = schema {
            try appendAudit(["action": "registerSchema", "actor": .string(stored.author), "outcome": "ok",
                             "platform": .string(stored.key.platform), "version": .string(stored.key.version),
                             "sha256": .string(stored.sha256), "recovered": true], time: stored.time)
            report.recoveredAuditEntries += 1
        }
    }

    /// Appends one audit line, durably (a full log moved aside first, in a directory).
    func appendAudit(_ fields: [String: JSONValue], time: Date) throws(StoreError) {
        try medium.appendAudit([fields], time: time)
    }

    /// Writes a change's record and its audit entry, all or nothing (`StoreMedium.write`).
    func writeAudited(_ bytes: [UInt8], _ subdirectory: String, _ name: String, replacing: Bool,
                              _ entry: [String: JSONValue], time: Date) throws(StoreError) {
        try medium.write(bytes, kind: subdirectory, name: name, replacing: replacing, audit: entry, time: time)
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
        try? writer.withLock { _ throws(StoreError) in try medium.appendAudit(lines, time: now) }
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
        return try writer.withLock { _ throws(StoreError) in try medium.auditEntries() }
    }
}
