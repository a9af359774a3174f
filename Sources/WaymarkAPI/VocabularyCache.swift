import Dispatch
import ManifestStore
import RouteEngine
import Synchronization
import SystemIO
import Telemetry

/// What telemetry may name, rebuilt when the store changes: every route id any revision
/// ever had, the preconditions and app versions of the registered schemas, the newest
/// revision. Revisions are immutable, so each is read once.
///
/// History is on disk: the first parser after a start reads the newest revisions' ids at
/// once, newest first, up to `synchronousBytes` of documents (the revisions served always),
/// and leaves older ones to a background read (one document at a time, a new parser every
/// 64); until it ends, a route id only those older revisions had counts as `other`.
final class VocabularyCache: Sendable {
    /// Documents read when the first parser is made, at most (the rest in the background).
    let synchronousBytes: Int

    init(synchronousBytes: Int = 16 << 20) {
        self.synchronousBytes = synchronousBytes
    }

    private struct State {
        var generation = -1
        var parser: BatchParser?
        var routeIDs: [String] = []
        var seenRoutes: Set<String> = []
        /// Revisions up to this number have been considered (read, or left to the background).
        var revisionsRead = 0
        /// Bumped when the background read adds ids: the parser is made again.
        var additions = 0
        var parserAdditions = -1
        /// Whether older revisions are still being read in the background.
        var readingHistory = false
    }

    private let state = Mutex(State())

    func parser(for store: ManifestStore, documents: RevisionDocuments, limits: TelemetryLimits) -> BatchParser {
        let generation = store.generation
        return state.withLock { state in
            if state.generation == generation, state.parserAdditions == state.additions, let parser = state.parser { return parser }
            let snapshot = store.snapshot
            let unread = snapshot.revisions.dropFirst(state.revisionsRead)
            var budget = synchronousBytes
            var left: [Revision] = []
            // Newest first: the served revisions (in memory) always, older ones while the budget lasts.
            for revision in unread.reversed() {
                guard snapshot.pinned.contains(revision.number) || budget >= revision.bytes else {
                    left.append(revision)
                    continue
                }
                budget -= revision.bytes
                add((try? documents.routeIDs(revision)) ?? [], to: &state)
            }
            state.revisionsRead = snapshot.revisions.count
            if !left.isEmpty {
                state.readingHistory = true
                DispatchQueue.global(qos: .utility).async { [self, left] in readHistory(left, documents) }
            }
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
            state.parserAdditions = state.additions
            return parser
        }
    }

    /// Whether older revisions' ids are still being read in the background (tests).
    var isReadingHistory: Bool { state.withLock { $0.readingHistory } }

    private func add(_ ids: [String], to state: inout State) {
        for id in ids where state.seenRoutes.insert(id).inserted { state.routeIDs.append(id) }
    }

    /// Reads `revisions` (newest first) from disk one at a time; a damaged one adds nothing
    /// (its read names the file to whoever asks for it).
    private func readHistory(_ revisions: [Revision], _ documents: RevisionDocuments) {
        var added = false
        for (index, revision) in revisions.enumerated() {
            let ids = (try? documents.routeIDs(revision)) ?? []
            let last = index == revisions.count - 1
            state.withLock { state in
                let before = state.routeIDs.count
                add(ids, to: &state)
                added = added || state.routeIDs.count != before
                // A new parser every 64 revisions read at most, not one per revision.
                if added && (index % 64 == 63 || last) {
                    state.additions += 1
                    added = false
                }
                if last { state.readingHistory = false }
            }
        }
        Memory.releaseFree()
    }
}
