import Foundation
import ManifestStore
import RouteEngine
import Synchronization

/// What a new store generation serves, made before readers move to it.
///
/// A change (a publish, a rollback, a schedule firing, a rollout's step, a schema, a
/// follower's copy of the primary's) moves the store to a new generation. What it serves —
/// the manifest views of the builds that were being fetched, the landing table, the
/// associated-domain files — is built here, under the store's writer lock, before the
/// change returns (`ManifestStore.observeChanges`), with telemetry's parser when the
/// change gave it something new to name (`VocabularyCache`): the change's answer is sent once they
/// are ready, so whoever made it reads what they wrote, and changes wait for one another,
/// never readers. Meanwhile every reader is answered from the previous generation, whole
/// (`ManifestCache.served(stale:)`, `LandingCache.newestTable`, the kept associated-domain
/// files), instead of waiting in the builds lane. What nothing served before (a build's
/// first fetch, a host's first file) is built on its first request, as after a start.
final class GenerationPreparer: Sendable {
    /// The generation being prepared; -1 when none is.
    private let preparing = Atomic<Int>(-1)
    /// Generations prepared since start, and the longest preparation (nanoseconds), for `/metrics`.
    let prepared = Atomic<UInt64>(0)
    let longestNanoseconds = Atomic<UInt64>(0)
    /// What it prepares, and from. The store's observer holds the preparer weakly, never the
    /// API's context: a weak reference moves an object's reference count to a side table,
    /// and the context is retained on every request (measured: 21,346 instructions a conditional manifest fetch became 21,723).
    private let manifests: ManifestCache
    private let landings: LandingCache
    private let documents: RevisionDocuments
    private let vocabulary: VocabularyCache
    private let now: @Sendable () -> Date

    init(manifests: ManifestCache, landings: LandingCache, documents: RevisionDocuments, vocabulary: VocabularyCache,
         now: @escaping @Sendable () -> Date) {
        (self.manifests, self.landings, self.documents, self.vocabulary, self.now) = (manifests, landings, documents, vocabulary, now)
    }

    /// Whether a reader of `generation` is answered from the one before: only while
    /// `generation` (or a newer one) is being prepared, so an answer is never older than the
    /// change being made.
    func answersStale(for generation: Int) -> Bool {
        preparing.load(ordering: .acquiring) >= generation
    }

    /// `generation` is about to be seen by readers: until `prepare` has made what it serves,
    /// they are answered from the one before.
    func begin(_ generation: Int) {
        preparing.store(generation, ordering: .releasing)
    }

    /// Prepares what `generation` serves: called by the store after a change, under its
    /// writer lock, so the store's snapshot is that generation's; readers have been told to
    /// take the previous one since just before they could see it (`begin`).
    func prepare(generation: Int) {
        prepare(generation) { make(generation: generation) }
    }

    /// Runs `body` as the preparation of `generation` (begun by `begin`, or now).
    func prepare(_ generation: Int, _ body: () -> Void) {
        let started = DispatchTime.now().uptimeNanoseconds
        begin(generation)
        body()
        _ = preparing.compareExchange(expected: generation, desired: -1, ordering: .acquiringAndReleasing)
        prepared.add(1, ordering: .relaxed)
        let took = DispatchTime.now().uptimeNanoseconds - started
        var longest = longestNanoseconds.load(ordering: .relaxed)
        while took > longest {
            let (exchanged, found) = longestNanoseconds.compareExchange(expected: longest, desired: took, ordering: .relaxed)
            if exchanged { break }
            longest = found
        }
    }

    /// What `prepare` runs: `generation`'s views, landing table and files, and telemetry's
    /// parser if what it names changed, from the store's snapshot.
    func make(generation: Int) {
        let snapshot = documents.store.snapshot
        manifests.prepare(generation: generation, snapshot: snapshot, builds: manifests.servedBuilds, documents: documents)
        if landings.newestTable != nil,
           let table = try? LandingEndpoints.makeTable(generation: generation, snapshot: snapshot, documents: documents, manifests: manifests, now: now()) {
            landings.remember(table)
        }
        var routes: [RouteSpec]?
        let documents = documents
        manifests.prepareAssociatedDomains(snapshot, generation: generation, hosts: LandingTable.hosts(of: snapshot)) { host throws(Refusal) in
            let served: [RouteSpec]
            if let routes { served = routes } else { served = try AssociatedDomainEndpoints.servedRoutes(snapshot, documents) }
            routes = served
            return AssociatedDomainFiles(schemas: snapshot.orderedSchemas.map(\.schema), routes: served, host: host)
        }
        // Last: the views made above keep the new revision's parsed document, which it reads.
        vocabulary.refresh(store: documents.store, documents: documents)
    }
}
