import Foundation
import RouteEngine

/// What a change of single routes did, for the audit log: its action and the ids it named.
public struct RouteChange: Sendable, Hashable {
    /// `route.put`, `route.delete` or `routes.batch`.
    public var action: String
    public var ids: [String]

    public init(action: String, ids: [String]) {
        (self.action, self.ids) = (action, ids)
    }
}

/// Changing routes one at a time (`PUT /v1/routes/{id}`, `DELETE`, the batch): each change is
/// applied to the current revision's document and published as the next revision, validated
/// as any publish. Without a base the caller named, it is applied to whatever is current
/// when it is stored: a publish that lands meanwhile only makes it start again on the new
/// current, so neither is lost.
extension ManifestStore {
    /// How many times a change is applied and validated outside the writer lock before it
    /// is applied under it (where it cannot be overtaken, at the cost of holding others up
    /// while it validates).
    static let optimisticAttempts = 3

    /// Publishes `edit`'s result as the next revision. `edit` gets the current routes
    /// document (nil when nothing is published yet) and returns the new one, stored as it
    /// returns it; it throws to refuse the change (a route to delete that does not exist).
    /// `base`: the revision the caller said it started from (`If-Match`), checked as a
    /// publish checks it; nil: whatever is current, rebased on as often as needed.
    /// `findings`: problems found outside the store (the link checks) for the new routes.
    public func change(base: Int?, author: String, message: String, change: RouteChange, findings: [ValidationProblem] = [],
                       now: Date = Date(), edit: (JSONValue?) -> Result<Edited, any Error>) throws(StoreError) -> ChangeOutcome {
        /// The edit of `seen`'s current routes; nil with `refusal` set when the edit refuses.
        var refusal: (any Error)? = nil
        func edited(_ seen: StoreSnapshot) throws(StoreError) -> Edited? {
            var current: JSONValue? = nil
            if let revision = seen.current {
                let bytes = try routes(of: revision)
                // Stored after it was parsed once, and checked against its SHA-256 as it is read.
                guard let parsed = try? JSONParser().parse(bytes) else {
                    throw .damaged(directory: medium.location, file: "revisions/" + Self.revisionFileName(revision.number), reason: "its routes are not JSON")
                }
                current = parsed
            }
            switch edit(current) {
            case .success(let new): return new
            case .failure(let error):
                refusal = error
                return nil
            }
        }
        for attempt in 0...Self.optimisticAttempts {
            let seen = snapshot
            // A rollout refuses every change before any is validated.
            if let active = seen.activeRollout {
                tallyRefusal(action: change.action, actor: author, reason: "rolloutInProgress", now: now)
                return .decided(.rolloutInProgress(candidate: active.candidate))
            }
            if let base, base != seen.current?.number {
                tallyRefusal(action: change.action, actor: author, reason: "staleBase", now: now)
                return .decided(.staleBase(current: seen.current?.number))
            }
            let result: PublishOutcome?
            if attempt == Self.optimisticAttempts {
                // Under the lock: applied to what is current there, validated there.
                result = try exclusively { () throws(StoreError) -> PublishOutcome? in
                    let current = snapshot
                    guard let new = try edited(current) else { return nil }
                    return try publishLocked(routes: new.bytes, base: current.current?.number, author: author, message: message, restores: nil,
                                             checked: Checked(routes: new.bytes, parsed: new.parsed, against: current, findings: findings, now: now),
                                             now: now, change: change)
                }
            } else {
                guard let new = try edited(seen) else { return .refused(refusal!) }
                let checked = Checked(routes: new.bytes, parsed: new.parsed, against: seen, findings: findings, now: now)
                result = try exclusively { () throws(StoreError) -> PublishOutcome? in
                    // Overtaken: start again on what is current now.
                    guard snapshot.current?.number == seen.current?.number, snapshot.activeRollout == nil else { return nil }
                    return try publishLocked(routes: new.bytes, base: seen.current?.number, author: author, message: message, restores: nil,
                                             checked: checked, now: now, change: change)
                }
            }
            if let refusal { return .refused(refusal) }
            if let result { return .decided(result) }
        }
        // Not reached: the last attempt runs under the lock and always decides.
        return .decided(.staleBase(current: snapshot.current?.number))
    }
}

/// A routes document as an edit made it: as stored, and parsed.
public struct Edited: Sendable {
    public var bytes: [UInt8]
    public var parsed: JSONValue

    public init(bytes: [UInt8], parsed: JSONValue) {
        (self.bytes, self.parsed) = (bytes, parsed)
    }
}

/// What became of a change of single routes: the store decided it, or the edit refused it.
public enum ChangeOutcome {
    case decided(PublishOutcome)
    case refused(any Error)
}
