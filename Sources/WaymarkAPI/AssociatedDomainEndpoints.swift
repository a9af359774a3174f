import HTTPCore
import HTTPServer
import RouteEngine

/// `GET /.well-known/apple-app-site-association` and `GET /.well-known/assetlinks.json`,
/// open: the files that let phones open this host's links in the app, built by
/// `AssociatedDomainFiles` from the schemas and the patterns of every revision served: the
/// current one and, during a rollout, its candidate — so a link only the candidate has
/// opens the app for the installs that have it.
struct AssociatedDomainEndpoints: EndpointGroup {
    let context: APIContext

    func register(on registry: inout EndpointRegistry) throws(RouterError) {
        try registry.addCachedOrOffLoop("GET", "/.well-known/apple-app-site-association", .open) { _, _ in file(\.apple) }
        try registry.addCachedOrOffLoop("GET", "/.well-known/assetlinks.json", .open) { _, _ in file(\.google) }
    }

    /// Cached until the revision or a schema changes; then built once on the work queue.
    private func file(_ pick: @escaping @Sendable (AssociatedDomainFiles) -> [UInt8]) -> EndpointRegistry.Answer {
        let snapshot = context.store.snapshot
        @Sendable func response(_ files: AssociatedDomainFiles) -> HTTPResponse {
            APIResponse.bytes(pick(files), contentType: "application/json", cacheControl: "public, max-age=3600")
        }
        if let files = context.manifests.cachedAssociatedDomains(snapshot) { return .now(response(files)) }
        let (manifests, documents) = (context.manifests, context.documents)
        return .work {
            response(manifests.associatedDomains(snapshot) { snapshot in
                AssociatedDomainFiles(schemas: snapshot.orderedSchemas.map(\.schema),
                                      patterns: snapshot.servedRevisions.sorted().compactMap(snapshot.revision).flatMap { documents.document($0).patterns })
            })
        }
    }
}
