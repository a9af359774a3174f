import CivilDate
import Foundation
import Rollout
import RouteEngine
import Synchronization
import SystemIO

/// Everything the store holds at one moment; readers take one and never see a half-applied change.
public struct StoreSnapshot: Sendable {
    /// Ascending by number.
    public internal(set) var revisions: [Revision] = []
    public internal(set) var schemas: [SchemaKey: StoredSchema] = [:]
    /// Scheduled publishes, ascending by id, whatever their status.
    public internal(set) var schedules: [ScheduledPublish] = []
    /// The routes documents kept in memory: the current revision's and the newest's (during
    /// a rollout, its stable revision and its candidate). Every other revision's is read
    /// from disk when asked (`ManifestStore.routes(of:)`), so memory does not grow with history.
    var bodies: [Int: [UInt8]] = [:]

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

    /// The revisions whose documents are kept in memory: the current one and the newest.
    public var pinned: Set<Int> { Set([current?.number, revisions.last?.number].compactMap { $0 }) }

    /// Keeps `routes` as revision `number`'s document if it is pinned, and drops the
    /// documents of revisions no longer pinned. Called after every change.
    mutating func pinBodies(adding number: Int? = nil, _ routes: [UInt8]? = nil) {
        let keep = pinned
        if let number, let routes, keep.contains(number) { bodies[number] = routes }
        bodies = bodies.filter { keep.contains($0.key) }
    }

    /// The ids of the routes changed since revision `base`, when every revision after it up to
    /// the current one is a change of single routes (`Revision.changedRoutes`), each applied
    /// to the revision before it, and there are at most `ManifestStore.maximumRebase` of them; nil otherwise (or when `base` is current:
    /// nothing to rebase over). A publish from `base` may then be rebased over them.
    public func routesChanged(since base: Int) -> Set<String>? {
        guard let current, base >= 1, base < current.number, current.number - base <= ManifestStore.maximumRebase else { return nil }
        var touched = Set<String>()
        for number in (base + 1)...current.number {
            // An unbroken chain: each a change applied to the one before it (after a tripped or
            // aborted candidate, a change is applied to the stable revision, not to the candidate).
            guard let found = revision(number), let ids = found.changedRoutes, found.changedOn == number - 1 else { return nil }
            touched.formUnion(ids)
        }
        return touched
    }

    /// The routes of revision `number` if they are in memory.
    func pinnedRoutes(_ number: Int) -> [UInt8]? { bodies[number] }

    /// Schemas of `app`, in key order.
    public var orderedSchemas: [StoredSchema] { schemas.keys.sorted().map { schemas[$0]! } }
}
