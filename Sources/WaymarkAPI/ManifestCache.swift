import Foundation
import HTTPCore
import ManifestStore
import Rollout
import RouteEngine
import Synchronization

/// Build views for the current revision, made on first use and dropped when a newer
/// revision or a re-registered schema replaces what they were made from.
final class ManifestCache: Sendable {
    private struct Key: Hashable {
        let revision: Int
        let key: SchemaKey
        let schemaSha: String
    }

    private let views = Mutex<[Key: BuildView]>([:])

    /// A build's view of one revision: during a rollout a build is served two.
    private struct Served: Hashable {
        let key: SchemaKey
        let revision: Int
    }

    /// The views of one store generation by build and revision, and which revision each
    /// cohort gets in it: a manifest fetch is one lock and one small lookup, without copying
    /// the snapshot or hashing schema digests. `previous` is the generation before, kept
    /// only while the newer one is being prepared (`GenerationPreparer`): until then it
    /// answers, whole, instead of a fetch waiting for a build.
    private let generations = Mutex<(current: Generation, previous: Generation?)>((Generation(number: -1), nil))

    private struct Generation {
        var number: Int
        var views: [Served: BuildView] = [:]
        var split: Split?

        func view(_ key: SchemaKey, cohort: Int?) -> BuildView? {
            guard let revision = split?.revision(forCohort: cohort) else { return nil }
            return views[Served(key: key, revision: revision)]
        }
    }

    /// Which revision a cohort gets in one generation: the current one, or during a rollout
    /// the candidate for cohorts below its percent.
    struct Split: Sendable {
        let current: Int?
        let rollout: RolloutState?

        init(_ snapshot: StoreSnapshot) {
            (current, rollout) = (snapshot.current?.number, snapshot.activeRollout)
        }

        func revision(forCohort cohort: Int?) -> Int? {
            guard let rollout else { return current }
            return rollout.revision(forCohort: cohort)
        }

        /// Every revision some cohort gets.
        var revisions: Set<Int> {
            guard let rollout else { return Set(current.map { [$0] } ?? []) }
            return [rollout.candidate, rollout.stable]
        }
    }

    /// The view a build's request with `cohort` is answered with in `generation`, when it is
    /// made already: one lock, the hot path of every manifest fetch. With `stale`, while
    /// `generation` is being prepared, the previous generation's view when this one has none.
    func served(generation: Int, _ key: SchemaKey, cohort: Int?, stale: Bool = false) -> BuildView? {
        generations.withLock { generations in
            // Read in place (no copy of the generation: this is every fetch).
            if generations.current.number == generation, let view = generations.current.view(key, cohort: cohort) { return view }
            guard stale else { return nil }
            if generations.current.number < generation { return generations.current.view(key, cohort: cohort) }
            if generations.current.number == generation { return generations.previous?.view(key, cohort: cohort) }
            return nil
        }
    }

    /// The revision `cohort` is served in `generation` (`snapshot` is read once per generation).
    func revision(generation: Int, cohort: Int?, snapshot: () -> StoreSnapshot) -> Int? {
        if let split = generations.withLock({ $0.current.number == generation ? $0.current.split : nil }) { return split.revision(forCohort: cohort) }
        let split = Split(snapshot())
        generations.withLock { generations in
            Self.advance(&generations, to: generation)
            if generations.current.number == generation { generations.current.split = split }
        }
        return split.revision(forCohort: cohort)
    }

    func remember(_ view: BuildView, generation: Int) {
        generations.withLock { generations in
            Self.advance(&generations, to: generation)
            if generations.current.number == generation { generations.current.views[Served(key: view.key, revision: view.revision)] = view }
        }
    }

    /// A newer generation becomes current; the one it replaces is kept as `previous`.
    private static func advance(_ generations: inout (current: Generation, previous: Generation?), to generation: Int) {
        guard generations.current.number < generation else { return }
        if generations.current.split != nil { generations.previous = generations.current }
        generations.current = Generation(number: generation)
    }

    /// A new generation's views are made before readers move to it for the builds fetched
    /// in the last this many generations; another build's view is made on its next fetch.
    static let servedWindow = 32

    /// The builds whose views were fetched in the newest generations made so far, each with
    /// the newest generation it was fetched in (what `prepare` makes views for).
    var servedBuilds: [SchemaKey: Int] {
        generations.withLock { generations in
            var builds: [SchemaKey: Int] = [:]
            for generation in [generations.current] + (generations.previous.map { [$0] } ?? []) {
                for view in generation.views.values where view.servedIn >= 0 {
                    builds[view.key] = max(builds[view.key] ?? -1, view.servedIn)
                }
            }
            return builds
        }
    }

    /// `generation`'s views for `builds`, made from `snapshot` before readers move to it: every
    /// revision a cohort gets, for each build the snapshot still has a schema for. A view that
    /// cannot be made (a damaged revision file) is left to be made on request, which says why.
    /// Then the previous generation is let go.
    func prepare(generation: Int, snapshot: StoreSnapshot, builds: [SchemaKey: Int], documents: RevisionDocuments) {
        let split = Split(snapshot)
        var made: [Served: BuildView] = [:]
        for (key, served) in builds where served > generation - Self.servedWindow {
            guard let stored = snapshot.schemas[key] else { continue }
            for number in split.revisions {
                guard let revision = snapshot.revision(number),
                      let view = try? view(revision: revision, stored: stored, documents: documents, live: snapshot.servedRevisions) else { continue }
                view.noteServed(in: served)  // a new revision's view carries how recently its build was fetched
                made[Served(key: key, revision: number)] = view
            }
        }
        generations.withLock { generations in
            Self.advance(&generations, to: generation)
            guard generations.current.number == generation else { return }
            generations.current.split = split
            generations.current.views.merge(made) { kept, _ in kept }
            generations.previous = nil
        }
    }

    /// The associated-domain files by host ("" for a host no schema declares), for one key
    /// (what they are built from), the newest generation that used it, and the files of the
    /// key before, kept while a new generation's are prepared.
    private let domains = Mutex(Domains())

    private struct Domains {
        var generation = -1
        var key = ""
        var files: [String: AssociatedDomainFiles] = [:]
        var previous: [String: AssociatedDomainFiles] = [:]

        /// Keeps `made` (from `key`, as of `generation`); files of an older generation than
        /// the ones kept never replace them.
        mutating func keep(_ made: [String: AssociatedDomainFiles], key: String, generation: Int) {
            if key != self.key {
                guard generation > self.generation else { return }
                if !files.isEmpty { previous = files }
                (self.key, files) = (key, [:])
            }
            self.generation = max(self.generation, generation)
            files.merge(made) { _, made in made }
        }
    }

    /// The associated-domain files `host` serves, rebuilt only when the revision or a schema
    /// changes (they are public, so no request should make the server parse the routes
    /// again). At most one entry per declared host and one for the rest. `generation` is the
    /// store's, read before `snapshot` was taken.
    func associatedDomains(_ snapshot: StoreSnapshot, generation: Int, host: String?,
                           build: (StoreSnapshot) -> AssociatedDomainFiles) -> AssociatedDomainFiles {
        if let files = cachedAssociatedDomains(snapshot, host: host) { return files }
        let files = build(snapshot)
        let key = Self.domainsKey(snapshot)
        domains.withLock { $0.keep([host ?? "": files], key: key, generation: generation) }
        return files
    }

    /// The associated-domain files of `snapshot` for `host` if they are built already.
    func cachedAssociatedDomains(_ snapshot: StoreSnapshot, host: String?) -> AssociatedDomainFiles? {
        let key = Self.domainsKey(snapshot)
        return domains.withLock { $0.key == key ? $0.files[host ?? ""] : nil }
    }

    /// The files last kept for `host`, whatever snapshot they were built from: while a new
    /// generation is prepared, the previous one's.
    func keptAssociatedDomains(host: String?) -> AssociatedDomainFiles? {
        domains.withLock { $0.files[host ?? ""] ?? $0.previous[host ?? ""] }
    }

    /// `generation`'s files (from `snapshot`) for every host kept from before that is still
    /// a link host (`hosts`) or is no declared host (""), built before readers move to it;
    /// then the files before are let go. A host whose files cannot be built is left to be
    /// built on request, which says why.
    func prepareAssociatedDomains(_ snapshot: StoreSnapshot, generation: Int, hosts: Set<String>,
                                  build: (String?) throws(Refusal) -> AssociatedDomainFiles) {
        let key = Self.domainsKey(snapshot)
        let wanted = domains.withLock { kept in
            Set(kept.files.keys).union(kept.previous.keys).filter { host in
                (host.isEmpty || hosts.contains(host)) && !(kept.key == key && kept.files[host] != nil)
            }
        }
        var made: [String: AssociatedDomainFiles] = [:]
        for host in wanted { made[host] = try? build(host.isEmpty ? nil : host) }
        domains.withLock { kept in
            kept.keep(made, key: key, generation: generation)
            if kept.key == key { kept.previous = [:] }
        }
    }

    /// The served revisions (the current one, and an active rollout's candidate) and the schemas.
    private static func domainsKey(_ snapshot: StoreSnapshot) -> String {
        snapshot.servedRevisions.sorted().map(String.init).joined(separator: ",") + "|" + snapshot.orderedSchemas.map(\.sha256).joined(separator: ",")
    }

    /// Resolvers for previews, most recently used last: a few builds' worth, since each
    /// holds the compiled table (several times a manifest's bytes).
    private let resolvers = Mutex<[(key: Key, resolver: Resolver)]>([])
    static let resolverCapacity = 4

    /// The resolver of `stored`'s build on `revision`, made on first use.
    func resolver(revision: Revision, stored: StoredSchema, documents: RevisionDocuments) throws(Refusal) -> Resolver {
        try resolver(revision: revision, stored: stored) { () throws(Refusal) in try documents.read(revision) }
    }

    /// The resolver of `stored`'s build on `revision`, made from `document` on first use.
    func resolver<E: Error>(revision: Revision, stored: StoredSchema, document: () throws(E) -> RevisionDocuments.Document) throws(E) -> Resolver {
        let key = Key(revision: revision.number, key: stored.key, schemaSha: stored.sha256)
        let found = resolvers.withLock { kept -> Resolver? in
            guard let index = kept.firstIndex(where: { $0.key == key }) else { return nil }
            let entry = kept.remove(at: index)
            kept.append(entry)
            return entry.resolver
        }
        if let found { return found }
        let resolver = BuildView.resolver(revision: revision, stored: stored, document: try document())
        resolvers.withLock { kept in
            kept.removeAll { $0.key == key || $0.key.revision != revision.number }
            kept.append((key, resolver))
            if kept.count > Self.resolverCapacity { kept.removeFirst(kept.count - Self.resolverCapacity) }
        }
        return resolver
    }

    /// The view of `revision` for `stored`'s build, made on first use. Views of revisions
    /// not in `live` (the current one and a rollout's candidate) are dropped as it is kept.
    func view(revision: Revision, stored: StoredSchema, documents: RevisionDocuments, live: Set<Int> = []) throws(Refusal) -> BuildView {
        let key = Key(revision: revision.number, key: stored.key, schemaSha: stored.sha256)
        if let view = views.withLock({ $0[key] }) { return view }
        let view = BuildView(revision: revision, stored: stored, document: try documents.read(revision))  // built outside the lock; a race builds it twice, harmlessly
        let keep = live.union([revision.number])
        // The view kept is the one returned: two first fetches that race build it twice, and
        // the loser's (with its memory file) is let go at once rather than served beside it.
        return views.withLock { views in
            // Dropped: views of revisions no longer served, and this build's view of this
            // revision made from another schema (re-registered); not one a racing fetch just kept.
            views = views.filter { keep.contains($0.key.revision) && ($0.key == key || !($0.key.revision == revision.number && $0.key.key == stored.key)) }
            let kept = views[key] ?? view
            views[key] = kept
            return kept
        }
    }
}
