import HTTPCore
import HTTPServer
import ManifestStore
import RouteEngine

/// `GET /.well-known/apple-app-site-association` and `GET /.well-known/assetlinks.json`,
/// open: the files that let phones open this host's links in the app, built by
/// `AssociatedDomainFiles` from the schemas and the routes of every revision served: the
/// current one and, during a rollout, its candidate — so a link only the candidate has
/// opens the app for the installs that have it. Each host gets its own (the `Host` field,
/// as landing reads it): the routes that answer links on it, the apps of the builds that
/// declare it; a host no schema declares gets every web route's.
struct AssociatedDomainEndpoints: EndpointGroup {
    let context: APIContext

    func register(on registry: inout EndpointRegistry) throws(RouterError) {
        try registry.addCachedOrOffLoop("GET", "/.well-known/apple-app-site-association", .open) { request, _ in file(request, \.apple) }
        try registry.addCachedOrOffLoop("GET", "/.well-known/assetlinks.json", .open) { request, _ in file(request, \.google) }
    }

    /// Cached until the revision or a schema changes; then built once on the work queue.
    private func file(_ request: HTTPRequest, _ pick: @escaping @Sendable (AssociatedDomainFiles) -> [UInt8]) -> EndpointRegistry.Answer {
        // The generation is read before the snapshot (files kept under it are never older than it).
        let generation = context.store.generation
        let snapshot = context.store.snapshot
        let named = request.head.headers["Host"].flatMap(LandingEndpoints.linkHost)
        let host = named.flatMap { LandingTable.hosts(of: snapshot).contains($0) ? $0 : nil }
        @Sendable func response(_ files: AssociatedDomainFiles) -> HTTPResponse {
            APIResponse.bytes(pick(files), contentType: "application/json", cacheControl: "public, max-age=3600")
        }
        if let files = context.manifests.cachedAssociatedDomains(snapshot, host: host) { return .now(response(files)) }
        // While the generation is prepared, the files it replaces answer (`GenerationPreparer`).
        if context.preparer.answersStale(for: generation), let files = context.manifests.keptAssociatedDomains(host: host) {
            return .now(response(files))
        }
        let (manifests, documents) = (context.manifests, context.documents)
        return .work { () throws(Refusal) in
            let routes = try Self.servedRoutes(snapshot, documents)
            return response(manifests.associatedDomains(snapshot, generation: generation, host: host) { snapshot in
                AssociatedDomainFiles(schemas: snapshot.orderedSchemas.map(\.schema), routes: routes, host: host)
            })
        }
    }

    /// The routes of every revision `snapshot` serves, whose documents the store keeps in memory.
    static func servedRoutes(_ snapshot: StoreSnapshot, _ documents: RevisionDocuments) throws(Refusal) -> [RouteSpec] {
        var routes: [RouteSpec] = []
        for revision in snapshot.servedRevisions.sorted().compactMap(snapshot.revision) {
            routes += try documents.read(revision).document?.routes ?? []
        }
        return routes
    }
}
