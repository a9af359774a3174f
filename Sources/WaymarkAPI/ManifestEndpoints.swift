import HTTPCore
import HTTPServer
import ManifestStore
import RouteEngine

/// `GET /v1/manifest?platform&version`: the current revision filtered for one app build,
/// with its schema, a strong ETag and 304s. The hot path: a fetch is one cache lookup on
/// the loop; the first fetch of a build after a change builds its view on the work queue.
struct ManifestEndpoints: EndpointGroup {
    let context: APIContext

    func register(on registry: inout EndpointRegistry) throws(RouterError) {
        try registry.addCachedOrOffLoop("GET", "/v1/manifest", .scope(.manifestRead, action: "readManifest")) { request, call throws(Refusal) in
            try manifest(request, call)
        }
    }

    private func manifest(_ request: HTTPRequest, _ call: RouteCall) throws(Refusal) -> EndpointRegistry.Answer {
        let query = try APIResponse.query(request)
        guard let platform = query["platform"], !platform.isEmpty, let version = query["version"], !version.isEmpty else {
            throw Refusal(.badRequest, "missingBuild", "Say which app build: ?platform=ios&version=5.3.0.")
        }
        // The install's cohort (0…99, docs/rollouts.md) chooses between a rollout's candidate
        // and the stable revision; with no rollout every cohort gets the current revision.
        var cohort: Int?
        if let text = query["cohort"] {
            guard let number = Self.cohort(text) else {
                throw Refusal(.badRequest, "badCohort", "cohort is a whole number from 0 to 99, not \(text.prefix(20)).")
            }
            cohort = number
        }
        let key = SchemaKey(platform: platform, version: version)
        let publicReads = context.options.publicManifestReads
        // The generation is read before the snapshot: a view remembered under it can only be
        // older than the store, never newer, and the next change retires it.
        let generation = context.store.generation
        if let view = context.manifests.served(generation: generation, key, cohort: cohort)
            // While the generation is prepared, the view it replaces answers (`GenerationPreparer`).
            ?? (context.preparer.answersStale(for: generation) ? context.manifests.served(generation: generation, key, cohort: cohort, stale: true) : nil) {
            view.noteServed(in: generation)
            return .now(view.response(publicReads: publicReads, notModified: APIResponse.ifNoneMatch(request, matches: view.etag)))
        }
        let store = context.store
        let served = context.manifests.revision(generation: generation, cohort: cohort) { store.snapshot }
        let snapshot = context.store.snapshot
        let (stored, current) = try Self.build(key, in: snapshot)
        let revision = served.flatMap(snapshot.revision) ?? current
        let live = snapshot.servedRevisions
        let context = context
        return .work { () throws(Refusal) in
            let view = try context.manifests.view(revision: revision, stored: stored, documents: context.documents, live: live)
            context.manifests.remember(view, generation: generation)
            view.noteServed(in: generation)
            return view.response(publicReads: publicReads, notModified: APIResponse.ifNoneMatch(request, matches: view.etag))
        }
    }

    /// `0`…`99` in plain decimal (no sign, no leading zeros); nil for anything else.
    static func cohort(_ text: String) -> Int? {
        guard (1...2).contains(text.utf8.count), text.utf8.allSatisfy({ $0 >= UInt8(ascii: "0") && $0 <= UInt8(ascii: "9") }),
              text == "0" || !text.hasPrefix("0") else { return nil }
        return Int(text)
    }

    /// The schema of build `key` and the current revision, or the 404 saying which is missing.
    static func build(_ key: SchemaKey, in snapshot: StoreSnapshot, listKnown: Bool = true) throws(Refusal) -> (StoredSchema, Revision) {
        guard let stored = snapshot.schemas[key] else {
            guard listKnown else { throw Refusal(.notFound, "unknownBuild", "No schema is registered for \(key.platform) \(key.version).") }
            let known = snapshot.schemas.keys.sorted()
            throw Refusal(.notFound, "unknownBuild", "No schema is registered for \(key); this server knows: "
                + known.map(\.description).joined(separator: ", ") + ".",
                details: ["known": .array(known.map { ["platform": .string($0.platform), "version": .string($0.version)] })])
        }
        guard let current = snapshot.current else { throw Refusal(.notFound, "noRevision", "No routes have been published yet.") }
        return (stored, current)
    }
}
