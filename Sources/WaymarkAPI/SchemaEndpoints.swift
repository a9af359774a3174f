import CivilDate
import HTTPCore
import HTTPServer
import ManifestStore
import RouteEngine

/// App builds' schemas: the list (scope `manifest:read`) and registration by app CI
/// (scope `schemas:write`), which reports the live routes the build cannot resolve.
struct SchemaEndpoints: EndpointGroup {
    let context: APIContext

    func register(on registry: inout EndpointRegistry) throws(RouterError) {
        try registry.addOffLoop("PUT", "/v1/schemas/:platform/:version", .scope(.schemasWrite, action: "registerSchema"),
                               maximumBody: context.options.maximumDocumentBytes, lane: .changes) {
            request, call throws(Refusal) in try registerSchema(request, call)
        }
        try registry.add("GET", "/v1/schemas", .scope(.routesRead, action: "readSchemas")) { _, _ in schemas() }
        try registry.add("GET", "/v1/schemas/:platform/:version", .scope(.routesRead, action: "readSchema")) { request, call throws(Refusal) in
            try schema(request, call)
        }
    }

    /// One build's schema as it was registered (where a registration's `Location` points).
    private func schema(_ request: HTTPRequest, _ call: RouteCall) throws(Refusal) -> HTTPResponse {
        let key = SchemaKey(platform: call["platform"], version: call["version"])
        guard let stored = context.store.snapshot.schemas[key] else {
            throw Refusal(.notFound, "unknownBuild", "No schema is registered for \(key).")
        }
        let etag = "\"schema-\(stored.sha256.prefix(32))\""
        if APIResponse.ifNoneMatch(request, matches: etag) { return APIResponse.notModified(etag: etag, cacheControl: "no-cache") }
        return HTTPResponse(status: .ok, headers: HTTPHeaders([("Content-Type", "application/json"), ("ETag", etag), ("Cache-Control", "no-cache")]),
                            body: stored.bytes)
    }

    private func schemas() -> HTTPResponse {
        APIResponse.json(["schemas": .array(context.store.snapshot.orderedSchemas.map { stored in
            ["platform": .string(stored.key.platform), "version": .string(stored.key.version), "sha256": .string(stored.sha256),
             "author": .string(stored.author), "time": .string(Timestamp.format(stored.time))]
        })])
    }

    private func registerSchema(_ request: HTTPRequest, _ call: RouteCall) throws(Refusal) -> HTTPResponse {
        try context.requirePrimary()
        let (platform, version) = (call["platform"], call["version"])
        let key = SchemaKey(platform: platform, version: version)
        let outcome: SchemaOutcome
        do throws(StoreError) {
            outcome = try context.store.registerSchema(request.body, expected: key, author: call.actor, now: context.now())
        } catch {
            throw Refusal.storeFailed(error, "The schema could not be stored", "Nothing changed.")
        }
        switch outcome {
        case .invalid(let problems):
            throw Refusal(.unprocessableContent, "invalidSchema", "The schema is invalid; nothing changed.", details: ValidationReport(problems).json)
        case .wrongApp(let app):
            throw Refusal(.unprocessableContent, "wrongApp", "This server serves the app \"\(app)\"; the schema is for another.")
        case .keyMismatch(let found):
            throw Refusal(.unprocessableContent, "buildMismatch", "The URL names \(key) but the schema describes \(found).")
        case .registered(let stored, let replaced):
            // Schema drift: the live routes this build cannot resolve.
            var drift: [JSONValue] = []
            var current: JSONValue = .null
            let snapshot = context.store.snapshot
            if let revision = snapshot.current {
                current = .int(revision.number)
                drift = (try? context.manifests.view(revision: revision, stored: stored, documents: context.documents,
                                                     live: snapshot.servedRevisions))?.unresolvable.map(JSONValue.string) ?? []
            }
            return APIResponse.json(["platform": .string(stored.key.platform), "version": .string(stored.key.version),
                                     "sha256": .string(stored.sha256), "replaced": .bool(replaced), "revision": current,
                                     "unresolvableRoutes": .array(drift)],
                                    status: replaced ? .ok : .created, headers: [("Location", "/v1/schemas/\(platform)/\(version)")])
        }
    }
}
