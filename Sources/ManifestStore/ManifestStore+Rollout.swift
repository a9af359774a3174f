import CivilDate
import Foundation
import Rollout
import RouteEngine
import SystemIO

/// What starting a rollout did.
public enum RolloutStartOutcome: Sendable {
    /// The candidate is stored as a revision and its rollout runs at its first step.
    case started(RolloutState, Revision)
    case invalid(ValidationReport)
    case staleBase(current: Int?)
    /// The routes equal the current revision's: nothing to roll out.
    case unchanged(Revision)
    /// Another rollout is running or paused.
    case rolloutInProgress(candidate: Int)
    /// The steps do not make a rollout, or there is no stable revision to roll out from.
    case refused(String)
}

/// Staged rollouts in the store. A candidate is a revision whose record says it was
/// published as a rollout (its stable revision and steps: one durable write starts both);
/// while the rollout has not completed, `StoreSnapshot.current` stays the stable revision.
/// Its state as it changes (steps, pause, trips, completion) is `DIR/rollout`, a record
/// replaced with each change and audited with it; without one, a candidate's rollout is
/// at its first step.
extension ManifestStore {
    static let rolloutFile = "rollout"

    /// The newest candidate's rollout at start: its stored state if `DIR/rollout` is about
    /// that candidate, else its first step (the state file of an older rollout is history).
    static func loadRollout(_ medium: any StoreMedium, revisions: [Revision]) throws(StoreError) -> RolloutState? {
        guard let candidate = revisions.last(where: { $0.rollout != nil }), let start = candidate.rollout else { return nil }
        var rollout = RolloutState(candidate: candidate.number, stable: start.stable, steps: start.steps, now: candidate.time)
        if try medium.exists(rolloutFile) {
            let record = try loadRecord(medium, rolloutFile)
            guard let number = record.metadata["candidate"]?.intValue else { throw damaged(medium, rolloutFile, "it names no candidate") }
            if number == candidate.number {
                guard let stored = rolloutState(record.metadata, start: start, candidate: number) else {
                    throw damaged(medium, rolloutFile, "its step, status, version or time is missing or wrong")
                }
                rollout = stored
            }
        }
        // A revision published over an active rollout superseded it (its record says so).
        if revisions.contains(where: { $0.number > candidate.number && $0.supersedes == candidate.number }) { rollout.supersede() }
        return rollout
    }

    static func rolloutState(_ metadata: [String: JSONValue], start: RolloutStart, candidate: Int) -> RolloutState? {
        guard let step = metadata["step"]?.intValue, start.steps.indices.contains(step),
              let status = metadata["status"]?.stringValue.flatMap(RolloutStatus.init(rawValue:)),
              let version = metadata["version"]?.intValue, version >= 1,
              let stepStarted = metadata["stepStarted"]?.stringValue.flatMap(Timestamp.parse) else { return nil }
        let findings = (metadata["findings"]?.arrayValue ?? []).compactMap(finding(from:))
        return RolloutState(candidate: candidate, stable: start.stable, steps: start.steps, step: step, stepStarted: stepStarted,
                            status: status, version: version, findings: findings)
    }

    static func rolloutRecord(_ rollout: RolloutState, changed: Date) -> Record {
        Record(metadata: ["kind": "rollout", "candidate": .int(rollout.candidate), "stable": .int(rollout.stable), "step": .int(rollout.step),
                          "status": .string(rollout.status.rawValue), "version": .int(rollout.version),
                          "stepStarted": .string(Timestamp.format(rollout.stepStarted)), "changed": .string(Timestamp.format(changed)),
                          "findings": .array(rollout.findings.map(json(of:)))],
               body: [])
    }

    /// A finding as stored and as the API shows it.
    public static func json(of finding: GuardFinding) -> JSONValue {
        var object: [String: JSONValue] = [
            "scope": .string(finding.scope.rawValue),
            "candidate": ["failures": .int(finding.candidateFailures), "total": .int(finding.candidateTotal)],
            "stable": ["failures": .int(finding.stableFailures), "total": .int(finding.stableTotal)],
            "pValue": .double(finding.pValue), "threshold": .double(finding.threshold), "text": .string(finding.description),
        ]
        if let route = finding.route { object["route"] = .string(route) }
        if let build = finding.build { object["build"] = .string(build) }
        if let reason = finding.reason { object["reason"] = .string(reason) }
        return .object(object)
    }

    private static func number(_ value: JSONValue?) -> Double? {
        switch value {
        case .double(let number)?: number
        case .int(let number)?: Double(number)
        default: nil
        }
    }

    static func finding(from json: JSONValue) -> GuardFinding? {
        guard let scope = json["scope"]?.stringValue.flatMap(GuardFinding.Scope.init(rawValue:)),
              let candidateFailures = json["candidate"]?["failures"]?.intValue, let candidateTotal = json["candidate"]?["total"]?.intValue,
              let stableFailures = json["stable"]?["failures"]?.intValue, let stableTotal = json["stable"]?["total"]?.intValue,
              let pValue = number(json["pValue"]), let threshold = number(json["threshold"]) else { return nil }
        return GuardFinding(scope: scope, route: json["route"]?.stringValue, build: json["build"]?.stringValue, reason: json["reason"]?.stringValue,
                            candidateFailures: candidateFailures, candidateTotal: candidateTotal, stableFailures: stableFailures,
                            stableTotal: stableTotal, pValue: pValue, threshold: threshold)
    }

    // MARK: Changes

    /// Publishes `routes` as a candidate revision rolled out over the current one through
    /// `steps`: validated and based like a publish; refused while another rollout is active.
    /// `parsed`: `routes` already parsed, as `publish` takes it.
    public func startRollout(routes: [UInt8], parsed: JSONValue? = nil, base: Int?, steps: [RolloutStep] = RolloutStep.defaults,
                             author: String, message: String, supersede: Bool = false, now: Date = Date()) throws(StoreError) -> RolloutStartOutcome {
        if let problem = RolloutState.validate(steps) { return .refused(problem) }
        let seen = snapshot
        let checked = base == seen.current?.number ? Checked(routes: routes, parsed: parsed, against: seen, findings: [], now: now) : nil
        return try exclusively { () throws(StoreError) in
            guard let stable = snapshot.current else { return .refused("A rollout needs a current revision to roll out from; publish the first one.") }
            switch try publishLocked(routes: routes, base: base, author: author, message: message, restores: nil, checked: checked, now: now,
                                     rollout: RolloutStart(stable: stable.number, steps: steps), supersede: supersede) {
            case .published(let revision): return .started(snapshot.rollout!, revision)
            case .unchanged(let revision): return .unchanged(revision)
            case .invalid(let report): return .invalid(report)
            case .staleBase(let current): return .staleBase(current: current)
            case .rolloutInProgress(let candidate): return .rolloutInProgress(candidate: candidate)
            case .stableOverRollout(let candidate):
                return .refused("These are the stable revision's routes: superseding the rollout of revision \(candidate) with them would roll out nothing. Abort that rollout instead (POST /v1/rollout/abort).")
            case .unknownRevision: return .refused("Nothing to roll out.")
            }
        }
    }

    /// A person's control on the active rollout (pause, resume, advance, promote, abort),
    /// against the version they read: durable and audited before it returns.
    public func controlRollout(_ action: String, version: Int, actor: String, now: Date = Date(),
                               _ control: (inout RolloutState) throws(RolloutRefusal) -> Void) throws(StoreError) -> Result<RolloutState, RolloutRefusal> {
        try exclusively { () throws(StoreError) in
            guard var rollout = snapshot.rollout, rollout.candidate == snapshot.revisions.last?.number else {
                tallyRefusal(action: "rollout." + action, actor: actor, reason: "noRollout", now: now)
                return .failure(.noRollout)
            }
            do throws(RolloutRefusal) {
                try control(&rollout)
            } catch {
                let reason = if case .staleVersion = error { "staleVersion" } else { "notApplicable" }
                tallyRefusal(action: "rollout." + action, actor: actor, reason: reason, now: now)
                return .failure(error)
            }
            try saveRollout(rollout, action: action, actor: actor, now: now)
            return .success(rollout)
        }
    }

    /// The look: the guard's verdict on the step's window, and the candidate's resolutions
    /// since the step began, judged at the rollout's `version` (nil: whatever it is now; a
    /// look at an older version is stale and changes nothing). Writes only when something changed.
    @discardableResult
    public func evaluateRollout(candidateResolutions: Int, verdict: GuardVerdict, version: Int? = nil,
                                now: Date = Date()) throws(StoreError) -> RolloutChange? {
        try exclusively { () throws(StoreError) in
            guard var rollout = snapshot.activeRollout, version.map({ $0 == rollout.version }) ?? true else { return nil }
            guard let change = rollout.evaluate(now: now, candidateResolutions: candidateResolutions, verdict: verdict) else { return nil }
            let action = switch change {
            case .advanced: "advance"
            case .completed: "complete"
            case .tripped: "trip"
            }
            try saveRollout(rollout, action: action, actor: "guard", now: now)
            return change
        }
    }

    // MARK: Followers

    /// The rollout's state as the primary's replication state lists it.
    public static func replicationJSON(_ rollout: RolloutState) -> JSONValue {
        var metadata = rolloutRecord(rollout, changed: rollout.stepStarted).metadata
        metadata["kind"] = nil
        metadata["changed"] = nil
        return .object(metadata)
    }

    /// A follower takes the primary's rollout state (after the revisions, so its candidate
    /// is here): durable and audited like the primary's own change, applied only when it is
    /// newer than what this store has (a later candidate, or a later version of the same
    /// one). A follower never moves a rollout by itself; it serves the split it is told.
    /// Returns whether anything changed.
    @discardableResult
    public func mirrorRollout(_ json: JSONValue, actor: String, now: Date = Date()) throws(StoreError) -> Bool {
        guard case .object(let metadata) = json, let candidate = metadata["candidate"]?.intValue else {
            throw StoreError.refusedMirror("The primary's rollout state names no candidate.")
        }
        return try exclusively { () throws(StoreError) in
            guard let start = snapshot.revision(candidate)?.rollout else {
                throw StoreError.refusedMirror("The primary's rollout names revision \(candidate), which is not a candidate here (yet).")
            }
            guard let mirrored = Self.rolloutState(metadata, start: start, candidate: candidate), metadata["stable"]?.intValue == start.stable else {
                throw StoreError.refusedMirror("The primary's rollout state for revision \(candidate) is incomplete.")
            }
            if let mine = snapshot.rollout, mine.candidate > candidate || (mine.candidate == candidate && mine.version >= mirrored.version) {
                return false
            }
            try saveRollout(mirrored, action: "mirror", actor: actor, now: now)
            return true
        }
    }

    /// Under the writer lock: the state file and its audit entry, all or nothing.
    private func saveRollout(_ rollout: RolloutState, action: String, actor: String, now: Date) throws(StoreError) {
        var entry: [String: JSONValue] = ["action": .string("rollout." + action), "actor": .string(actor), "outcome": "ok",
                                          "candidate": .int(rollout.candidate), "stable": .int(rollout.stable), "status": .string(rollout.status.rawValue),
                                          "step": .int(rollout.step), "percent": .int(rollout.percent), "version": .int(rollout.version)]
        if !rollout.findings.isEmpty { entry["findings"] = .array(rollout.findings.map(Self.json(of:))) }
        try writeAudited(Self.rolloutRecord(rollout, changed: now).encoded, ".", Self.rolloutFile, replacing: true, entry, time: now)
        state.withLock { snapshot in
            snapshot.rollout = rollout
            snapshot.pinBodies()
        }
        changed()
    }

    /// Start-up: the rollout state's newest change is the only one a crash can have left
    /// without its audit entry; if the log's tail back to its time has none for that
    /// candidate and version, a `recovered` one is added.
    func repairRolloutAudit(_ report: inout OpenReport) throws(StoreError) {
        guard let rollout = snapshot.rollout, directory.exists(Self.rolloutFile) else { return }
        let record = try Self.loadRecord(medium, Self.rolloutFile)
        guard record.metadata["candidate"]?.intValue == rollout.candidate, rollout.version > 1,
              let changed = record.metadata["changed"]?.stringValue.flatMap(Timestamp.parse) else { return }
        let found = try auditTailHasEntry(since: changed) { entry in
            entry["candidate"]?.intValue == rollout.candidate && entry["version"]?.intValue == rollout.version
        }
        guard !found else { return }
        try appendAudit(["action": "rollout.recovered", "actor": "waymark serve", "outcome": "ok", "candidate": .int(rollout.candidate),
                         "status": .string(rollout.status.rawValue), "step": .int(rollout.step), "version": .int(rollout.version),
                         "recovered": true], time: changed)
        report.recoveredAuditEntries += 1
    }
}
