import Foundation
import Rollout
import Synchronization

/// Changes made by other processes sharing the store's medium (other nodes on one database),
/// brought into this store's snapshot: before every change this store makes (so it decides on
/// what is there, not on what it last saw), and when told of one (`catchUp`).
extension ManifestStore {
    /// Runs `body` under the writer lock and the medium's exclusion, with others' changes
    /// applied to the snapshot first. On a medium whose change is one transaction, a change
    /// that fails (or fails to commit) leaves nothing, so the snapshot is put back as it was
    /// before `body`: readers saw what it made at most until then, and a commit whose outcome
    /// was lost, if it happened, is caught up with as another's change.
    func exclusively<T: Sendable>(_ body: () throws(StoreError) -> T) throws(StoreError) -> T {
        defer { reloadTokensIfBehind() }
        return try writer.withLock { _ throws(StoreError) in
            var before: (snapshot: StoreSnapshot, generation: Int)?
            do throws(StoreError) {
                return try medium.exclusively(since: marker.withLock { $0 }) { changes throws(StoreError) in
                    try apply(changes)
                    before = (snapshot, generation)
                    return try body()
                }
            } catch {
                if medium.changeIsOneTransaction, let before, generation != before.generation {
                    state.withLock { $0 = before.snapshot }
                    changed()
                }
                throw error
            }
        }
    }

    /// Reads what others changed since the last look and applies it to the snapshot (a
    /// notification's or a poll's work); answers whether anything changed. With a data
    /// directory nothing ever does.
    @discardableResult
    public func catchUp() throws(StoreError) -> Bool {
        defer { reloadTokensIfBehind() }
        return try writer.withLock { _ throws(StoreError) in try apply(try medium.changes(since: marker.withLock { $0 })) }
    }

    /// Reads the tokens again if another node changed them: outside the medium's exclusion,
    /// which a token change takes under the tokens' own lock. One that fails is tried again
    /// with the next catch-up.
    private func reloadTokensIfBehind() {
        guard tokensBehind.exchange(false, ordering: .acquiringAndReleasing) else { return }
        do throws(StoreError) {
            try tokens.reload()
        } catch {
            tokensBehind.store(true, ordering: .releasing)
        }
    }

    /// Applies others' changes: the whole new snapshot is made before readers see any of it,
    /// then the generation moves on once. Under the writer lock.
    /// - Complexity: O(the records changed), plus the pinned documents if they changed.
    @discardableResult
    private func apply(_ changes: MediumChanges) throws(StoreError) -> Bool {
        guard !changes.names.isEmpty else {
            marker.withLock { $0 = changes.marker }
            return false
        }
        var next = snapshot
        var rollout = false, tokensChanged = false
        for name in changes.names {
            let parts = name.split(separator: "/", maxSplits: 1).map(String.init)
            switch (parts.first, parts.count) {
            case ("revisions", 2):
                guard let number = Int(parts[1]) else { throw Self.damaged(medium, name, "a revision is named by its number") }
                // Immutable: one this store has already is the same record.
                guard number > next.revisions.count else { continue }
                guard number == next.revisions.count + 1 else {
                    throw Self.damaged(medium, name, "revisions must be numbered without gaps; expected \(Self.revisionFileName(next.revisions.count + 1))")
                }
                let revision = try Self.loadRevision(medium, parts[1], number: number)
                next.revisions.append(revision)
                rollout = rollout || revision.rollout != nil || revision.supersedes != nil
            case ("schemas", 2):
                if try medium.exists(name) {
                    let stored = try Self.loadSchema(medium, parts[1])
                    next.schemas[stored.key] = stored
                } else if let key = Self.schemaKey(fileName: parts[1]) {
                    next.schemas[key] = nil
                }
            case ("schedules", 2):
                guard let id = Int(parts[1]) else { throw Self.damaged(medium, name, "a schedule is named by its id") }
                if try medium.exists(name) {
                    let item = try Self.loadSchedule(medium, parts[1])
                    if let index = next.schedules.firstIndex(where: { $0.id == id }) { next.schedules[index] = item } else {
                        next.schedules.append(item)
                        next.schedules.sort { $0.id < $1.id }
                    }
                } else {
                    next.schedules.removeAll { $0.id == id }
                }
            case (Self.rolloutFile, 1): rollout = true
            case (TokenStore.fileName, 1): tokensChanged = true
            default: throw Self.damaged(medium, name, "it is not a record the store keeps")
            }
        }
        if rollout { next.rollout = try Self.loadRollout(medium, revisions: next.revisions) }
        for number in next.pinned.sorted() where next.pinnedRoutes(number) == nil {
            next.pinBodies(adding: number, try Self.readRoutes(medium, next.revisions[number - 1]))
        }
        next.pinBodies()
        if tokensChanged { tokensBehind.store(true, ordering: .releasing) }
        let snapshot = next
        state.withLock { $0 = snapshot }
        marker.withLock { $0 = changes.marker }
        changed()
        return true
    }
}
