import CivilDate
import Foundation
import Rollout
import RouteEngine
import Synchronization
import SystemIO

/// Changes to the routes and the schemas: publish, rollback, validation, schema
/// registration — validated before the writer lock, stored durably and audited under it.
extension ManifestStore {
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
    /// `parsed`: `routes` already parsed (a request's envelope holds them), so the document
    /// is not parsed a second time beside the first.
    /// A base overtaken only by changes of single routes is rebased over them (`rebasing`),
    /// outside the lock against the snapshot of the moment and, if another change lands
    /// meanwhile, again under it. `documentLimit`: the most bytes a rebased document may hold
    /// as stored (`--max-document-bytes`).
    public func publish(routes: [UInt8], parsed: JSONValue? = nil, base: Int?, author: String, message: String,
                        findings: [ValidationProblem] = [], supersede: Bool = false, documentLimit: Int = .max, now: Date = Date()) throws(StoreError) -> PublishOutcome {
        let seen = snapshot
        // Revisions only grow: a base that is stale now stays stale, so it is not validated
        // (unless only changes of single routes came since: then the rebased document is).
        let checked = base == seen.current?.number ? Checked(routes: routes, parsed: parsed, against: seen, findings: findings, now: now) : nil
        let rebase = checked == nil && !supersede ? base.flatMap { rebasing(routes, from: $0, onto: seen, findings: findings, limit: documentLimit, now: now) } : nil
        return try exclusively { () throws(StoreError) in
            try publishLocked(routes: routes, base: base, author: author, message: message, restores: nil, checked: checked, now: now,
                              supersede: supersede, findings: findings, rebase: rebase, documentLimit: documentLimit)
        }
    }

    /// A publish rebased over the changes since its base (`rebased`), onto revision `onto`, and checked there.
    struct Rebase {
        let onto: Int
        let routes: [UInt8]
        let checked: Checked
    }

    /// The most route ids a change's revision keeps (a batch of more is not rebased over).
    static let maximumKeptRouteIDs = 100

    /// `routes` rebased onto `snapshot`'s current revision and validated against it; nil when
    /// it cannot be (`rebased`), when the link checks found an error in it (their paths name
    /// the publisher's document, not the merged one: such a publish is `412`, to be made
    /// again on the current routes), or when the merged document passes what a publish may
    /// send (`limit` bytes as stored, `JSONParser.requests`' values and depth).
    func rebasing(_ routes: [UInt8], from base: Int, onto snapshot: StoreSnapshot, findings: [ValidationProblem], limit: Int, now: Date) -> Rebase? {
        guard let onto = snapshot.current?.number, !findings.contains(where: { $0.severity == .error }),
              let merged = rebased(routes, from: base, onto: snapshot), merged.count <= limit,
              let parsed = try? JSONParser.requests.parse(merged) else { return nil }
        return Rebase(onto: onto, routes: merged, checked: Checked(routes: merged, parsed: parsed, against: snapshot, findings: [], now: now))
    }

    /// Publishes revision `number`'s routes again as a new revision (read from disk, checked
    /// against its SHA-256 and validated against the schemas registered now, outside the
    /// lock as a publish is). A damaged revision file is `StoreError.damaged` and changes nothing.
    public func rollback(to number: Int, base: Int?, author: String, message: String, now: Date = Date()) throws(StoreError) -> PublishOutcome {
        let seen = snapshot
        let old = try seen.revision(number).map { revision throws(StoreError) in try routes(of: revision) }
        let checked = old.map { Checked(routes: $0, against: seen, findings: [], now: now) }
        return try exclusively { () throws(StoreError) in
            guard let old, let checked else {
                tallyRefusal(action: "rollback", actor: author, reason: "unknownRevision", now: now)
                return .unknownRevision(number)
            }
            return try publishLocked(routes: old, base: base, author: author, message: message, restores: number, checked: checked, now: now)
        }
    }

    /// Whether two routes documents are the same content: equal bytes, or equal once both
    /// are parsed and written in canonical JSON (sorted keys, no whitespace) — key order,
    /// spacing and escapes do not make a new revision.
    /// `parsed`: `first`, parsed already.
    static func canonicallyEqual(_ first: [UInt8], _ second: [UInt8], parsed: JSONValue? = nil) -> Bool {
        if first == second { return true }
        guard let a = parsed ?? (try? JSONParser().parse(first)), let b = try? JSONParser().parse(second) else { return false }
        return a.serializedBytes() == b.serializedBytes()
    }

    /// A validation report and the schemas it was made against.
    struct Checked {
        let report: ValidationReport
        let schemas: [SchemaKey: String]
        let findings: [ValidationProblem]
        /// The number of the snapshot's current revision when `routes` equal its routes
        /// canonically (the current revision's document is kept in memory).
        let sameAs: Int?

        /// `parsed`: `routes` parsed already (nil: parsed here).
        init(routes: [UInt8], parsed: JSONValue? = nil, against snapshot: StoreSnapshot, findings: [ValidationProblem], now: Date) {
            var report = parsed.map { ManifestStore.validate(parsed: $0, against: snapshot, now: now) }
                ?? ManifestStore.validate(routes, against: snapshot, now: now)
            report.append(contentsOf: findings)
            self.report = report
            schemas = snapshot.schemas.mapValues(\.sha256)
            self.findings = findings
            sameAs = snapshot.current.flatMap { current in
                snapshot.pinnedRoutes(current.number).flatMap { ManifestStore.canonicallyEqual(routes, $0, parsed: parsed) ? current.number : nil }
            }
        }

        /// The report, made again if the schemas are no longer those it was made against.
        func report(for routes: [UInt8], against snapshot: StoreSnapshot, now: Date) -> ValidationReport {
            guard snapshot.schemas.mapValues(\.sha256) != schemas else { return report }
            return Checked(routes: routes, against: snapshot, findings: findings, now: now).report
        }
    }

    func publishLocked(routes: [UInt8], base: Int?, author: String, message: String, restores: Int?,
                       checked: Checked?, now: Date, rollout: RolloutStart? = nil, supersede: Bool = false,
                       change: RouteChange? = nil, findings: [ValidationProblem] = [], rebase: Rebase? = nil,
                       documentLimit: Int = .max) throws(StoreError) -> PublishOutcome {
        var routes = routes, given = checked
        let action: JSONValue = .string(change?.action ?? (restores == nil ? "publish" : "rollback"))
        let current = snapshot
        // A publish that asks to supersede the active rollout ends it in the same durable
        // write as the new revision (whose record names it): never one without the other.
        let superseded = supersede ? current.activeRollout?.candidate : nil
        if let active = current.activeRollout, superseded == nil {
            tallyRefusal(action: action.stringValue!, actor: author, reason: "rolloutInProgress", now: now)
            return .rolloutInProgress(candidate: active.candidate)
        }
        // A stale base: refused, unless every revision since is a change of single routes
        // that this publish left as they were — then it is applied on top of them.
        var rebasedFrom: Int? = nil
        if base != current.current?.number {
            // Made outside the lock against what is still current, else made here (the rare case:
            // another change landed between).
            let made = rebase.flatMap { $0.onto == current.current?.number ? $0 : nil }
                ?? (restores == nil && rollout == nil && change == nil && superseded == nil
                    ? base.flatMap { base in rebasing(routes, from: base, onto: current, findings: findings, limit: documentLimit, now: now) } : nil)
            guard let made else {
                tallyRefusal(action: action.stringValue!, actor: author, reason: "staleBase", now: now)
                return .staleBase(current: current.current?.number)
            }
            routes = made.routes
            given = made.checked
            rebasedFrom = base
        }
        let checked = given ?? Checked(routes: routes, against: current, findings: findings, now: now)
        // The same routes again (a pipeline publishing on every merge): nothing to store, and
        // no phone downloads its manifest again. Checked against what was current when the
        // comparison was made outside the lock, which `base` has just shown is still current
        // (a rebased publish was checked against the current one, under the lock).
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
        if let change {
            // The ids, for a later publish to be rebased over (a large batch's not kept: each
            // revision's header stays small in memory); the revision it was applied to.
            metadata["change"] = ["action": .string(change.action), "on": base.map(JSONValue.int) ?? .null,
                                  "routes": change.ids.count <= Self.maximumKeptRouteIDs ? .array(change.ids.map(JSONValue.string)) : .null]
        }
        if let rebasedFrom { metadata["rebasedFrom"] = .int(rebasedFrom) }
        let record = Record(metadata: metadata, body: routes)
        var revision = Revision(number: number, parent: number > 1 ? number - 1 : nil, author: author,
                                time: Timestamp.parse(Timestamp.format(now)) ?? now, message: message,
                                sha256: record.sha256, bytes: routes.count, restores: restores)
        revision.rollout = rollout
        revision.supersedes = superseded
        revision.changedRoutes = change.flatMap { $0.ids.count <= Self.maximumKeptRouteIDs ? $0.ids : nil }
        revision.changeAction = change?.action
        revision.changedOn = change != nil ? base : nil
        revision.rebasedFrom = rebasedFrom
        var entry: [String: JSONValue] = ["action": action, "actor": .string(author), "outcome": "ok",
                                          "revision": .int(number), "sha256": .string(record.sha256)]
        if let restores { entry["restores"] = .int(restores) }
        if let rollout { entry["rollout"] = ["stable": .int(rollout.stable), "steps": .array(rollout.steps.map { .int($0.percent) })] }
        if let superseded { entry["supersedes"] = .int(superseded) }
        if let change { entry["routes"] = .array(change.ids.prefix(100).map(JSONValue.string)) }
        if let rebasedFrom { entry["rebasedFrom"] = .int(rebasedFrom) }
        try writeAudited(record.encoded, "revisions", Self.revisionFileName(number), replacing: false, entry, time: now)
        state.withLock { snapshot in
            snapshot.revisions.append(revision)
            if superseded != nil { snapshot.rollout?.supersede() }
            if let rollout { snapshot.rollout = RolloutState(candidate: number, stable: rollout.stable, steps: rollout.steps, now: revision.time) }
            snapshot.pinBodies(adding: number, routes)
        }
        changed()
        return .published(revision)
    }

    /// The most revisions a publish is rebased over: past them, its base is stale.
    static let maximumRebase = 1_000

    /// `routes` (a publish made from revision `base`) applied on top of the revisions since,
    /// when every one of them is a change of single routes (`Revision.changedRoutes`) and
    /// `routes` has each route they changed as it was at `base` (or lacks it as `base` did):
    /// those routes as they are now — replaced where they stand, removed, or added at the end
    /// in the current order — and every other route as `routes` has it. Nil when the publish
    /// changed a route they changed too, when another kind of revision came between, or when a
    /// document cannot be read: the publish's base is then stale, as before.
    /// - Complexity: O(the three documents + the changed ids); outside the writer lock
    /// (`publish`), under it only when a change landed between.
    func rebased(_ routes: [UInt8], from base: Int, onto snapshot: StoreSnapshot) -> [UInt8]? {
        guard let current = snapshot.current, let touched = snapshot.routesChanged(since: base) else { return nil }
        guard let old = snapshot.revision(base),
              let beforeBytes = try? self.routes(of: old), let theirBytes = try? self.routes(of: current),
              let before = try? JSONParser().parse(beforeBytes), let theirs = try? JSONParser().parse(theirBytes),
              case .object(var mine)? = try? JSONParser().parse(routes), case .array(let list)? = mine["routes"] else { return nil }
        func byID(_ routes: [JSONValue]) -> [String: JSONValue] {
            var found: [String: JSONValue] = [:]
            for route in routes { if let id = route["id"]?.stringValue, found[id] == nil { found[id] = route } }
            return found
        }
        let was = byID(before["routes"]?.arrayValue ?? []), now = byID(theirs["routes"]?.arrayValue ?? []), kept = byID(list)
        for id in touched where was[id]?.serializedBytes() != kept[id]?.serializedBytes() { return nil }
        var merged: [JSONValue] = []
        for route in list {
            guard let id = route["id"]?.stringValue, touched.contains(id) else { merged.append(route); continue }
            if let theirs = now[id] { merged.append(theirs) }
        }
        for route in theirs["routes"]?.arrayValue ?? [] {
            if let id = route["id"]?.stringValue, touched.contains(id), kept[id] == nil { merged.append(route) }
        }
        mine["routes"] = .array(merged)
        return JSONValue.object(mine).serializedBytes(pretty: true)
    }

    /// The validator's report for `routes` against every schema registered in `snapshot`:
    /// a client's document is parsed with `JSONParser.requests`' limits, one the store holds
    /// (a rollback's, a schedule's as it fires, a publish's once its request passed them)
    /// without, so nothing stored before the limits can become impossible to roll back to.
    public static func validate(_ routes: [UInt8], against snapshot: StoreSnapshot, now: Date = Date(),
                                parser: JSONParser = JSONParser()) -> ValidationReport {
        let json: JSONValue
        do {
            json = try parser.parse(routes)
        } catch {
            return ValidationReport([ValidationProblem(.invalidFormat, at: .root, "The routes document is not valid JSON: \(error.message)")])
        }
        return validate(parsed: json, against: snapshot, now: now)
    }

    /// `validate`, of a document parsed already.
    public static func validate(parsed json: JSONValue, against snapshot: StoreSnapshot, now: Date = Date()) -> ValidationReport {
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
        switch Result(catching: { () throws(JSONParseError) in try JSONParser.requests.parse(bytes) }) {
        case .success(let json): decoding = Schema.decode(json)
        case .failure(let error):
            decoding = .failure(SchemaError(problems: [ValidationProblem(.invalidFormat, at: .root, "The schema is not valid JSON: \(error.message)")]))
        }
        return try exclusively { () throws(StoreError) in
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
            changed()
            return .registered(stored, replaced: replaced)
        }
    }
}
