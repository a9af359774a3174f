import LinkLanding
import ManifestStore
import Synchronization

/// Route suggestions for unknown-link shapes (`RouteSuggestion.suggest`), made once per shape
/// for one current revision and one set of schemas: a suggestion validates a document,
/// tens of milliseconds on a large one, so a listing of 200 shapes made afresh for every
/// request would cost seconds of CPU each time. Everything is dropped when the revision or
/// the schemas change, and when `capacity` shapes are held.
final class SuggestionCache: Sendable {
    /// What suggestions were made against: the current revision and every schema's digest.
    struct Stamp: Hashable, Sendable {
        let revision: Int
        let schemas: [String]

        init(_ snapshot: StoreSnapshot) {
            self.init(revision: snapshot.current?.number ?? 0, schemas: snapshot.orderedSchemas.map(\.sha256))
        }

        init(revision: Int, schemas: [String]) {
            self.revision = revision
            self.schemas = schemas
        }
    }

    static let capacity = 4_096

    private struct State {
        var stamp: Stamp?
        /// Shape → its suggestion, or nil when none validates.
        var made: [String: RouteSuggestion?] = [:]
    }

    private let state = Mutex(State())

    /// The suggestion made for `shape` against `stamp`: `.some(nil)` when none validates,
    /// nil when none has been made.
    func suggestion(for shape: String, at stamp: Stamp) -> RouteSuggestion?? {
        state.withLock { $0.stamp == stamp ? $0.made[shape] : nil }
    }

    /// Keeps `suggestion`, made against `stamp`, unless the store has moved on since
    /// (`current`): a request that read an older snapshot neither clears what was made
    /// against the newer one nor keeps what no longer holds.
    func keep(_ suggestion: RouteSuggestion?, for shape: String, at stamp: Stamp, current: Stamp) {
        guard stamp == current else { return }
        state.withLock { state in
            if state.stamp != stamp || state.made.count >= Self.capacity { state = State(stamp: stamp) }
            state.made[shape] = .some(suggestion)
        }
    }

    /// Shapes held (tests).
    var count: Int { state.withLock { $0.made.count } }
}
