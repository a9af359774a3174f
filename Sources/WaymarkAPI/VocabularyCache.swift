import ManifestStore
import RouteEngine
import Synchronization
import Telemetry

/// What telemetry may name, rebuilt when the store changes: every route id any revision
/// ever had, the preconditions and app versions of the registered schemas, the newest
/// revision. Revisions are immutable, so each is read once.
final class VocabularyCache: Sendable {
    private struct State {
        var generation = -1
        var parser: BatchParser?
        var routeIDs: [String] = []
        var seenRoutes: Set<String> = []
        var revisionsRead = 0
    }

    private let state = Mutex(State())

    func parser(for store: ManifestStore, documents: RevisionDocuments, limits: TelemetryLimits) -> BatchParser {
        let generation = store.generation
        return state.withLock { state in
            if state.generation == generation, let parser = state.parser { return parser }
            let snapshot = store.snapshot
            for revision in snapshot.revisions.dropFirst(state.revisionsRead) {
                for id in documents.routeIDs(revision) where state.seenRoutes.insert(id).inserted {
                    state.routeIDs.append(id)
                }
            }
            state.revisionsRead = snapshot.revisions.count
            var versions: [Platform: [String]] = [:]
            var preconditions: [String] = []
            for stored in snapshot.orderedSchemas {
                if let platform = Platform.allCases.first(where: { $0.name == stored.schema.platform }) {
                    versions[platform, default: []].append(stored.schema.version)
                }
                preconditions += stored.schema.preconditions
            }
            let vocabulary = Vocabulary(routes: state.routeIDs, preconditions: preconditions, appVersions: versions,
                                        // The newest stored revision: a rollout's candidate is served before it is current.
                                        latestRevision: snapshot.revisions.last?.number ?? 0)
            let parser = BatchParser(vocabulary: vocabulary, limits: limits)
            state.parser = parser
            state.generation = generation
            return parser
        }
    }
}

