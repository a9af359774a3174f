import CivilDate
import Foundation
import Rollout
import RouteEngine
import SystemIO
#if canImport(Glibc)
import Glibc
#endif

/// Scheduled publishing: a publish set for a time, validated when scheduled and again when
/// it fires, durable like every change (its record and its audit entry, all or nothing).
extension ManifestStore {
    /// How far ahead a publish may be scheduled.
    public static let maximumScheduleAhead: TimeInterval = 366 * 86_400
    /// Pending scheduled publishes at once: a calendar, not a queue anyone can fill.
    public static let maximumPendingSchedules = 100
    /// Bytes of routes all pending schedules may hold together, on disk (each is read from
    /// its file when it fires or is asked for, never kept in memory): four of the largest documents.
    public static let maximumPendingScheduleBytes = 64 << 20
    /// Ended schedules (fired, skipped, cancelled) kept to be listed: as more end, those that
    /// ended first are removed (record and file; the audit log keeps their history).
    /// A token that schedules and cancels in a loop cannot grow the list, the directory or
    /// the memory that holds them. Ids are never reused: the highest is always kept.
    public static let maximumEndedSchedules = 1_000

    /// Schedules `routes` to be published at `at` on top of `base` (the current revision's
    /// number, nil before the first): refused now if they do not validate, if `base` is
    /// stale, or if `at` is not in the future (within `maximumScheduleAhead`).
    /// With `rollout`, it starts a rollout over `base` through those steps when it fires.
    /// `parsed`: `routes` already parsed, as `publish` takes it.
    public func schedule(routes: [UInt8], parsed: JSONValue? = nil, at: Date, base: Int?, author: String, message: String,
                         rollout: [RolloutStep]? = nil, now: Date = Date()) throws(StoreError) -> ScheduleOutcome {
        if let rollout {
            if let problem = RolloutState.validate(rollout) { return .badRollout(problem) }
            guard base != nil else { return .badRollout("A rollout needs a current revision to roll out from; schedule a plain publish of the first one.") }
        }
        guard at > now, at.timeIntervalSince(now) <= Self.maximumScheduleAhead else {
            tallyRefusal(action: "schedule", actor: author, reason: "badTime", now: now)
            return .badTime("A publish can be scheduled from now to a year ahead; \(Timestamp.format(at)) is not.")
        }
        let seen = snapshot
        let checked = base == seen.current?.number ? Checked(routes: routes, parsed: parsed, against: seen, findings: [], now: now) : nil
        return try exclusively { () throws(StoreError) in
            let current = snapshot
            guard base == current.current?.number else {
                tallyRefusal(action: "schedule", actor: author, reason: "staleBase", now: now)
                return .staleBase(current: current.current?.number)
            }
            let pending = current.schedules.filter { $0.status == .pending }
            let pendingBytes = pending.reduce(0) { $0 + $1.bytes }
            guard pending.count < Self.maximumPendingSchedules, pendingBytes + routes.count <= pendingScheduleBytes else {
                tallyRefusal(action: "schedule", actor: author, reason: "tooManySchedules", now: now)
                return .full("\(pending.count) publishes are scheduled, holding \(pendingBytes) bytes of routes; at most "
                    + "\(Self.maximumPendingSchedules) may wait, holding \(pendingScheduleBytes) bytes together. "
                    + "Cancel one, or let one fire, before scheduling this one (\(routes.count) bytes).")
            }
            let report = (checked ?? Checked(routes: routes, against: current, findings: [], now: now)).report(for: routes, against: current, now: now)
            guard report.isValid else {
                tallyRefusal(action: "schedule", actor: author, reason: "invalid", now: now)
                return .invalid(report)
            }
            let stamp = Timestamp.parse(Timestamp.format(now)) ?? now
            let item = ScheduledPublish(id: (current.schedules.last?.id ?? 0) + 1, at: Timestamp.parse(Timestamp.format(at)) ?? at, base: base,
                                        author: author, created: stamp, message: message, bytes: routes.count, sha256: SHA256.hex(routes),
                                        rollout: rollout, status: .pending, changed: stamp)
            try writeAudited(item.record(routes: routes).encoded, "schedules", ScheduledPublish.fileName(item.id), replacing: false,
                             Self.scheduleAudit(item, action: "schedule", actor: author), time: now)
            state.withLock { $0.schedules.append(item) }
            changed()
            return .scheduled(item)
        }
    }

    /// Withdraws a pending scheduled publish.
    public func cancelSchedule(_ id: Int, actor: String, now: Date = Date()) throws(StoreError) -> CancelOutcome {
        try exclusively { () throws(StoreError) in
            guard let found = snapshot.schedules.first(where: { $0.id == id }) else {
                tallyRefusal(action: "cancelSchedule", actor: actor, reason: "unknownSchedule", now: now)
                return .unknownSchedule(id)
            }
            guard found.status == .pending else {
                tallyRefusal(action: "cancelSchedule", actor: actor, reason: "notPending", now: now)
                return .notPending(found)
            }
            return .cancelled(try setStatus(of: found, to: .cancelled(by: actor), routes: [], action: "cancelSchedule", actor: actor, now: now))
        }
    }

    /// A scheduled publish's routes document, read from `DIR/schedules/N` and checked
    /// against its SHA-256 (a damaged file is `StoreError.damaged` naming it).
    /// - Complexity: O(the document's size), from disk.
    public func scheduledRoutes(of item: ScheduledPublish) throws(StoreError) -> [UInt8] {
        let relative = "schedules/" + ScheduledPublish.fileName(item.id)
        let record = try Self.loadRecord(medium, relative)
        guard record.sha256 == item.sha256 else {
            throw Self.damaged(medium, relative, "its body's SHA-256 is \(record.sha256), the store opened with \(item.sha256)")
        }
        return record.body
    }

    /// Whether a pending schedule's time has come (`fireDueSchedules` would fire one).
    public func hasDueSchedules(now: Date = Date()) -> Bool {
        snapshot.schedules.contains { $0.status == .pending && $0.at <= now }
    }

    /// Fires pending publishes whose time has come (the ones a stopped daemon missed too),
    /// oldest first, until `limit` have changed status: validated against the schemas of
    /// now and published if its base is still current; otherwise skipped, saying why (a
    /// schedule whose stored routes are found damaged or missing is skipped naming the file). One
    /// whose base is no longer current is skipped without being validated: a hundred due
    /// at once on one base cost one validation, not a hundred. Returns those whose status
    /// changed.
    @discardableResult
    public func fireDueSchedules(now: Date = Date(), limit: Int = .max) throws(StoreError) -> [ScheduledPublish] {
        let due = snapshot.schedules.filter { $0.status == .pending && $0.at <= now }.sorted { ($0.at, $0.id) < ($1.at, $1.id) }
        var changed: [ScheduledPublish] = []
        for item in due where changed.count < limit {
            // Read from disk and validated outside the lock, like a publish; validated again
            // inside only if the schemas changed meanwhile.
            // Damaged or missing (its file removed while the daemon runs), it is skipped,
            // saying so, and the next one fires; any other failure to read it (the disk) is
            // tried again.
            let routes: [UInt8]?, unreadable: (reason: String, missing: Bool)?
            do throws(StoreError) {
                (routes, unreadable) = (try scheduledRoutes(of: item), nil)
            } catch {
                switch error {
                case .damaged: (routes, unreadable) = (nil, ("Its stored routes are damaged: \(error.clientMessage)", false))
                case .io(let failure) where failure.errno == ENOENT:
                    (routes, unreadable) = (nil, ("Its stored routes (schedules/\(ScheduledPublish.fileName(item.id))) are missing", true))
                default: throw error
                }
            }
            let seen = snapshot
            let checked = routes.flatMap { routes in
                seen.current?.number == item.base ? Checked(routes: routes, against: seen, findings: [], now: now) : nil
            }
            let result = try exclusively { () throws(StoreError) -> ScheduledPublish? in
                guard let fresh = snapshot.schedules.first(where: { $0.id == item.id }), fresh.status == .pending else { return nil }
                guard let routes else {
                    return try setStatus(of: fresh, to: .skipped(reason: "\(unreadable?.reason ?? ""). Nothing was published."),
                                         routes: unreadable?.missing == true ? [] : nil, action: "fireSchedule", actor: fresh.author, now: now)
                }
                let current = snapshot
                let status: ScheduledPublish.Status
                // (The newest revision, whose document is kept in memory: a rollout's candidate is not current.)
                if let revision = current.revisions.last, revision.number > (fresh.base ?? 0), (revision.rollout != nil) == (fresh.rollout != nil),
                   revision.author == fresh.author, revision.message == fresh.message,
                   ManifestStore.canonicallyEqual(routes, try self.routes(of: revision)) {
                    // Published by this schedule before a crash kept its status from being written.
                    status = .fired(revision: revision.number)
                } else if fresh.base != current.current?.number {
                    status = .skipped(reason: "Revision \(current.current?.number ?? 0) was published after revision \(fresh.base ?? 0), "
                        + "which this publish was scheduled on; schedule it again on top of the current revision.")
                } else {
                    // (Not checked outside the lock only if its base was not current then.)
                    let checked = checked ?? Checked(routes: routes, against: current, findings: [], now: now)
                    let report = checked.report(for: routes, against: current, now: now)
                    if !report.isValid {
                        let first = report.errors.first.map { " The first: \($0.path): \($0.message)" } ?? ""
                        status = .skipped(reason: "The routes no longer validate against the schemas registered now (\(report.errorCount) error(s)).\(first)")
                    } else {
                        let start = fresh.rollout.flatMap { steps in fresh.base.map { RolloutStart(stable: $0, steps: steps) } }
                        switch try publishLocked(routes: routes, base: fresh.base, author: fresh.author, message: fresh.message,
                                                 restores: nil, checked: checked, now: now, rollout: start) {
                        case .published(let revision), .unchanged(let revision): status = .fired(revision: revision.number)
                        case .invalid(let again): status = .skipped(reason: "The routes no longer validate (\(again.errorCount) error(s)).")
                        case .staleBase(let number): status = .skipped(reason: "Revision \(number ?? 0) was published since.")
                        case .unknownRevision: status = .skipped(reason: "Nothing to publish.")
                        case .rolloutInProgress(let candidate), .stableOverRollout(let candidate):
                            status = .skipped(reason: "The rollout of revision \(candidate) was in progress; a scheduled publish does not interrupt one.")
                        }
                    }
                }
                return try setStatus(of: fresh, to: status, routes: [], action: "fireSchedule", actor: fresh.author, now: now)
            }
            if let result { changed.append(result) }
        }
        return changed
    }

    /// Writes the schedule's new status durably with its audit entry. Under the writer lock.
    /// `routes`: the document its record keeps, `[]` once it has ended (fired: the revision
    /// it published holds them; skipped or cancelled: nothing will publish them), so a token
    /// that schedules and cancels in a loop cannot fill the disk with documents (only pending
    /// ones are bounded); nil, the body is taken from its file as it is (a damaged one is
    /// kept as found).
    private func setStatus(of item: ScheduledPublish, to status: ScheduledPublish.Status, routes: [UInt8]?, action: String, actor: String,
                           now: Date) throws(StoreError) -> ScheduledPublish {
        var updated = item
        updated.status = status
        updated.changed = Timestamp.parse(Timestamp.format(now)) ?? now
        let body: [UInt8]
        if let routes {
            body = routes
        } else {
            let stored = try medium.read("schedules/" + ScheduledPublish.fileName(item.id))
            body = stored.firstIndex(of: UInt8(ascii: "\n")).map { Array(stored[($0 + 1)...]) } ?? []
        }
        let record = updated.record(routes: body)
        (updated.bytes, updated.sha256) = (body.count, record.sha256)
        try writeAudited(record.encoded, "schedules", ScheduledPublish.fileName(item.id), replacing: true,
                         Self.scheduleAudit(updated, action: action, actor: actor), time: now)
        let removed = removeOldestEnded(after: updated)
        state.withLock { snapshot in
            if let index = snapshot.schedules.firstIndex(where: { $0.id == item.id }) { snapshot.schedules[index] = updated }
            snapshot.schedules.removeAll { removed.contains($0.id) }
        }
        changed()
        return updated
    }

    /// Once `item` has ended, removes the files of the schedules that ended first, past
    /// `endedSchedulesKept` (all at once, with one sync of `schedules/`: a store upgraded
    /// with thousands of ended ones sheds them in one change), never `item` itself nor the
    /// highest id (the next is after it), and returns their ids. One whose file could not
    /// be removed stays, and goes with a later end. Under the writer lock.
    private func removeOldestEnded(after item: ScheduledPublish) -> Set<Int> {
        guard item.status != .pending else { return [] }
        let highest = snapshot.schedules.last?.id
        let ended = snapshot.schedules.map { $0.id == item.id ? item : $0 }.filter { $0.status != .pending }
        guard ended.count > endedSchedulesKept else { return [] }
        let first = ended.filter { $0.id != highest && $0.id != item.id }.sorted { ($0.changed, $0.id) < ($1.changed, $1.id) }
        let names = first.prefix(ended.count - endedSchedulesKept).map { ScheduledPublish.fileName($0.id) }
        let gone = medium.remove(names, in: "schedules")
        return Set(gone.compactMap { Int($0) })
    }

    static func scheduleAudit(_ item: ScheduledPublish, action: String, actor: String) -> [String: JSONValue] {
        var entry: [String: JSONValue] = ["action": .string(action), "actor": .string(actor),
                                          "outcome": item.status.name == "skipped" ? "skipped" : "ok",
                                          "schedule": .int(item.id), "status": .string(item.status.name), "at": .string(Timestamp.format(item.at))]
        if let rollout = item.rollout { entry["rollout"] = .array(rollout.map { .int($0.percent) }) }
        switch item.status {
        case .fired(let revision): entry["revision"] = .int(revision)
        case .skipped(let reason): entry["reason"] = .string(reason)
        case .pending, .cancelled: break
        }
        return entry
    }

    /// Whether the audit log, read backwards from its end to the entries written before
    /// `time` (less two seconds, for clocks that stepped), has an entry `matches` accepts:
    /// start-up's question for the newest change of a kind, reading only the log's tail.
    func auditTailHasEntry(since time: Date, _ matches: (JSONValue) -> Bool) throws(StoreError) -> Bool {
        guard directory.exists(Self.auditLog) else { return false }
        var found = false
        let since = time.addingTimeInterval(-2)
        try onDisk { () throws(IOError) in
            try directory.scanBackwards(Self.auditLog) { line in
                guard let entry = try? JSONParser().parse(line) else { return true }
                if matches(entry) { found = true; return false }
                if let written = entry["time"]?.stringValue.flatMap(Timestamp.parse), written < since { return false }
                return true
            }
        }
        return found
    }

    /// Start-up: the newest schedule change is the only one a crash can have left without
    /// its audit entry (each is audited before the next change begins). The log's tail is
    /// read back to that change's time; if no entry for that schedule and status is there,
    /// a `recovered` one is added.
    func repairScheduleAudit(_ report: inout OpenReport) throws(StoreError) {
        guard let newest = snapshot.schedules.max(by: { ($0.changed, $0.id) < ($1.changed, $1.id) }) else { return }
        let found = try auditTailHasEntry(since: newest.changed) { entry in
            entry["schedule"]?.intValue == newest.id && entry["status"]?.stringValue == newest.status.name
        }
        guard !found else { return }
        let action = switch newest.status {
        case .pending: "schedule"
        case .cancelled: "cancelSchedule"
        case .fired, .skipped: "fireSchedule"
        }
        var entry = Self.scheduleAudit(newest, action: action, actor: newest.author)
        entry["recovered"] = true
        try appendAudit(entry, time: newest.changed)
        report.recoveredAuditEntries += 1
    }
}
