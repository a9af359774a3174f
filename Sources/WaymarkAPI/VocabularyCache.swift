import Dispatch
import ManifestStore
import RouteEngine
import Synchronization
import SystemIO
import Telemetry

/// What telemetry may name: the route ids of the revisions served and of the newest ones
/// before them, the preconditions and app versions of the registered schemas, the newest
/// revision. Revisions are immutable, so each is read once.
///
/// Bounded, and never made on an event loop but the first time:
/// - History's route ids are kept newest first, at most `TelemetryLimits.maximumRoutes` of
///   them (the most the counts name anyway; the served revisions' ids always): a publisher
///   adding documents of new ids grows neither memory nor the time a new parser takes.
/// - The first post after a start makes the first parser, reading the newest revisions at
///   once, newest first, up to `synchronousBytes` of documents (the revisions served
///   always), and leaves older ones to a background read (one document at a time, a new
///   parser every 64, until `maximumRoutes` ids are held); until it ends, a route id only
///   those older revisions had counts as `other`.
/// - After that, a change makes the next parser as it is prepared (`refresh`, from
///   `GenerationPreparer`, before the change is acknowledged), and only if what it names
///   changed (a new revision, a schema): a schedule or a rollout's step keeps the parser.
///   A loop that sees a generation not yet checked keeps posting with the parser it has and
///   asks for a check in the background; it never waits for one.
final class VocabularyCache: Sendable {
    /// Documents read when a parser is made, at most (the rest in the background).
    let synchronousBytes: Int

    init(synchronousBytes: Int = 16 << 20) {
        self.synchronousBytes = synchronousBytes
    }

    /// What a parser is made from: while it is the same, a new generation keeps the parser.
    private struct Inputs: Equatable {
        var revisions: Int
        var served: Set<Int>
        /// Each schema's key and SHA-256: its versions and preconditions.
        var schemas: [String]
        /// Bumped when the background read adds ids.
        var history: Int
    }

    /// What the event loops read (never waiting for a parser being made): the parser, the
    /// generation it was last checked against, and how many were made.
    private struct Served {
        var parser: BatchParser?
        var checked = -1
        var checkQueued = false
        var made = 0
    }

    /// What making a parser reads and keeps; one maker at a time holds it.
    private struct Maker {
        var limits = TelemetryLimits()
        var inputs: Inputs?
        /// History's route ids, each with the newest revision read that has it: at most
        /// `limits.maximumRoutes`, the lowest ranks dropped first.
        var ranks: [String: Int] = [:]
        /// The lowest rank in `ranks` (`Int.max` when empty).
        var lowest = Int.max
        /// Revisions up to this number have been considered (read, or left to the background).
        var revisionsRead = 0
        var history = 0
        /// Background reads of older revisions still running.
        var historyReads = 0

        /// Whether revision `number`'s ids would all be dropped at once: the bound is reached
        /// by ids of newer revisions.
        func isFull(below number: Int) -> Bool {
            ranks.count >= limits.maximumRoutes && lowest > number
        }
    }

    private let served = Mutex(Served())
    private let maker = Mutex(Maker())

    /// The parser for a batch, on an event loop: the one made last (checked against a new
    /// generation in the background), or the first one, made here.
    func parser(for store: ManifestStore, documents: RevisionDocuments, limits: TelemetryLimits) -> BatchParser {
        let generation = store.generation
        let (parser, stale) = served.withLock { served -> (BatchParser?, Bool) in
            let stale = served.parser != nil && served.checked < generation && !served.checkQueued
            if stale { served.checkQueued = true }
            return (served.parser, stale)
        }
        if let parser {
            if stale {
                DispatchQueue.global(qos: .utility).async { [self] in
                    refresh(store: store, documents: documents)
                    // After: a change meanwhile is seen by the next batch, which asks again.
                    served.withLock { $0.checkQueued = false }
                }
            }
            return parser
        }
        return maker.withLock { maker in
            if let made = served.withLock({ $0.parser }) { return made }
            maker.limits = limits
            return make(&maker, store: store, documents: documents)
        }
    }

    /// Makes the parser again if what it names changed: called as each change is prepared
    /// (`GenerationPreparer`), off the event loops. Nothing before the first parser.
    func refresh(store: ManifestStore, documents: RevisionDocuments) {
        maker.withLock { maker in
            guard served.withLock({ $0.parser != nil }) else { return }
            _ = make(&maker, store: store, documents: documents)
        }
    }

    /// Whether older revisions' ids are still being read in the background (tests).
    var isReadingHistory: Bool { maker.withLock { $0.historyReads > 0 } }

    /// History's route ids held (tests: bounded by `maximumRoutes`).
    var historyRouteCount: Int { maker.withLock { $0.ranks.count } }
    /// Parsers made since start (`/metrics`; never on a loop but the first).
    var parsersMade: Int { served.withLock { $0.made } }
    /// The route ids the parser in use names (`/metrics`: at most the served revisions' and `maximumRoutes`).
    var namedRoutes: Int { served.withLock { $0.parser?.vocabulary.routes.count ?? 0 } }

    /// Under `maker`: reads the revisions not yet read and makes the parser, unless nothing
    /// it names changed.
    private func make(_ maker: inout Maker, store: ManifestStore, documents: RevisionDocuments) -> BatchParser {
        // The generation first: if the snapshot is newer, the next check makes nothing more.
        let generation = store.generation
        let snapshot = store.snapshot
        let inputs = Inputs(revisions: snapshot.revisions.count, served: snapshot.pinned,
                            schemas: snapshot.orderedSchemas.map { "\($0.key.platform)@\($0.key.version) \($0.sha256)" }, history: maker.history)
        if inputs == maker.inputs, let parser = served.withLock({ $0.parser }) {
            served.withLock { $0.checked = max($0.checked, generation) }
            return parser
        }
        var budget = synchronousBytes
        var left: [Revision] = []
        var servedIDs: [Int: [String]] = [:]
        // Newest first: the served revisions (in memory) always; older ones while the budget
        // lasts, then all in the background, in the same order; none once the bound is
        // reached by newer ids.
        for revision in snapshot.revisions.dropFirst(maker.revisionsRead).reversed() {
            if snapshot.pinned.contains(revision.number) {
                let ids = (try? documents.routeIDs(revision)) ?? []
                servedIDs[revision.number] = ids
                Self.rank(ids, of: revision.number, in: &maker)
            } else if maker.isFull(below: revision.number) {
                continue
            } else if left.isEmpty, budget >= revision.bytes {
                budget -= revision.bytes
                Self.rank((try? documents.routeIDs(revision)) ?? [], of: revision.number, in: &maker)
            } else {
                left.append(revision)
            }
        }
        maker.revisionsRead = snapshot.revisions.count
        if !left.isEmpty {
            maker.historyReads += 1
            DispatchQueue.global(qos: .utility).async { [self, left] in readHistory(left, store: store, documents: documents) }
        }
        // The served revisions' ids whatever the bound (a served document is in memory).
        var routes: [String] = []
        for number in snapshot.pinned.sorted(by: >) {
            guard let revision = snapshot.revision(number) else { continue }
            routes += servedIDs[number] ?? (try? documents.routeIDs(revision)) ?? []
        }
        routes += maker.ranks.keys
        var versions: [Platform: [String]] = [:]
        var preconditions: [String] = []
        for stored in snapshot.orderedSchemas {
            if let platform = Platform.allCases.first(where: { $0.name == stored.schema.platform }) {
                versions[platform, default: []].append(stored.schema.version)
            }
            preconditions += stored.schema.preconditions
        }
        let vocabulary = Vocabulary(routes: routes, preconditions: preconditions, appVersions: versions,
                                    // The newest stored revision: a rollout's candidate is served before it is current.
                                    latestRevision: snapshot.revisions.last?.number ?? 0)
        let parser = BatchParser(vocabulary: vocabulary, limits: maker.limits)
        maker.inputs = inputs
        served.withLock { served in
            served.parser = parser
            served.checked = max(served.checked, generation)
            served.made += 1
        }
        return parser
    }

    /// Ranks `ids` as held by revision `number` (the newest revision read that has an id is
    /// its rank), keeping the `maximumRoutes` of the highest rank.
    private static func rank(_ ids: [String], of number: Int, in maker: inout Maker) {
        var added = false
        for id in ids where maker.ranks[id].map({ $0 < number }) ?? true {
            maker.ranks[id] = number
            added = true
        }
        if added { maker.lowest = min(maker.lowest, number) }
        let bound = maker.limits.maximumRoutes
        guard maker.ranks.count > bound else { return }
        // The lowest ranks go whole; of the rank that crosses the bound, the ids last in
        // byte order. Linear but for that one rank's sort.
        var held: [Int: Int] = [:]
        for rank in maker.ranks.values { held[rank, default: 0] += 1 }
        var kept = 0, lowest = Int.max
        for (rank, count) in held.sorted(by: { $0.key > $1.key }) {
            lowest = rank
            kept += count
            if kept >= bound { break }
        }
        let crossing = maker.ranks.filter { $0.value == lowest }.map(\.key).sorted()
        let room = crossing.count - (kept - bound)
        maker.ranks = maker.ranks.filter { $0.value > lowest }
        for id in crossing.prefix(room) { maker.ranks[id] = lowest }
        maker.lowest = maker.ranks.values.min() ?? Int.max
    }

    /// Reads `revisions` (newest first, each older than every other revision read) from disk
    /// one at a time, until the bound is reached by newer ids (an older revision's would all
    /// be dropped); a damaged one adds nothing (its read names the file to whoever asks for it).
    private func readHistory(_ revisions: [Revision], store: ManifestStore, documents: RevisionDocuments) {
        var added = false
        for (index, revision) in revisions.enumerated() {
            if maker.withLock({ $0.isFull(below: revision.number) }) { break }
            let ids = (try? documents.routeIDs(revision)) ?? []
            maker.withLock { maker in
                let before = maker.ranks.count
                Self.rank(ids, of: revision.number, in: &maker)
                added = added || maker.ranks.count != before
                // A new parser every 64 revisions read at most, not one per revision.
                if added && index % 64 == 63 {
                    maker.history += 1
                    added = false
                    _ = make(&maker, store: store, documents: documents)
                }
            }
        }
        maker.withLock { maker in
            maker.historyReads -= 1
            if added {
                maker.history += 1
                _ = make(&maker, store: store, documents: documents)
            }
        }
        Memory.releaseFree()
    }
}
