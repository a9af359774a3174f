import HTTPCore
import HTTPServer
import RouteEngine

/// `GET /.well-known/apple-app-site-association` and `GET /.well-known/assetlinks.json`,
/// open: the files that let phones open this host's links in the app, built by
/// `AssociatedDomainFiles` from the schemas and the current revision's patterns.
struct AssociatedDomainEndpoints: EndpointGroup {
    let context: APIContext

    func register(on registry: inout EndpointRegistry) throws(RouterError) {
        try registry.add("GET", "/.well-known/apple-app-site-association", .open) { _, _ in file(\.apple) }
        try registry.add("GET", "/.well-known/assetlinks.json", .open) { _, _ in file(\.google) }
    }

    private func file(_ pick: (AssociatedDomainFiles) -> [UInt8]) -> HTTPResponse {
        let documents = context.documents
        let files = context.manifests.associatedDomains(context.store.snapshot) { snapshot in
            AssociatedDomainFiles(schemas: snapshot.orderedSchemas.map(\.schema),
                                  patterns: snapshot.current.map { documents.document($0).patterns } ?? [])
        }
        return APIResponse.bytes(pick(files), contentType: "application/json", cacheControl: "public, max-age=3600")
    }
}
