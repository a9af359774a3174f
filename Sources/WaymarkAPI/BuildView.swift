import Foundation
import HTTPCore
import ManifestStore
import Rollout
import RouteEngine
import Synchronization

/// What one app build gets from one revision: the filtered manifest's bytes and ETag.
/// Built once per (revision, schema), never per request, and about the size of the
/// manifest: the resolver it is made with is not kept (a preview asks
/// `ManifestCache.resolver`, which keeps a few).
final class BuildView: Sendable {
    let revision: Int
    let key: SchemaKey
    let manifest: [UInt8]
    let etag: String
    /// Ids of the revision's routes this build cannot resolve.
    let unresolvable: [String]
    /// The 200 and the 304, whole, for private and for public reads: a fetch copies nothing.
    private let privateOK: HTTPResponse, privateNotModified: HTTPResponse
    private let publicOK: HTTPResponse, publicNotModified: HTTPResponse

    /// The engine for `stored`'s build on `revision`, as the app would build it.
    static func resolver(revision: Revision, stored: StoredSchema, document parsed: RevisionDocuments.Document) -> Resolver {
        // Every stored revision passed validation, so it decodes; an empty table is the safe fallback.
        let empty: JSONValue = ["format": .string(RoutesDocument.format), "app": .string(stored.schema.app), "routes": []]
        let document = parsed.document ?? RoutesDocument.decode(empty).document!
        return Resolver(schema: stored.schema, analysis: RouteAnalysis(document: document, now: revision.time))
    }

    /// The newest generation a fetch was answered with this view in (-1: none yet): which
    /// builds a new generation's views are made for before readers move to it.
    private let lastServed = Atomic<Int>(-1)

    var servedIn: Int { lastServed.load(ordering: .relaxed) }

    /// One load on a fetch; a store only on the first fetch of a generation.
    @inline(__always)
    func noteServed(in generation: Int) {
        if lastServed.load(ordering: .relaxed) < generation { lastServed.store(generation, ordering: .relaxed) }
    }

    func response(publicReads: Bool, notModified: Bool) -> HTTPResponse {
        publicReads ? (notModified ? publicNotModified : publicOK) : (notModified ? privateNotModified : privateOK)
    }

    init(revision: Revision, stored: StoredSchema, document parsed: RevisionDocuments.Document) {
        self.revision = revision.number
        key = stored.key
        let served = ServedManifest(resolver: Self.resolver(revision: revision, stored: stored, document: parsed),
                                    schemaJSON: (try? JSONParser().parse(stored.bytes)) ?? .null,
                                    revision: revision.number, revisionSha256: revision.sha256, routes: parsed.routes)
        manifest = served.bytes
        unresolvable = served.unresolvable
        etag = "\"m\(revision.number)-\(SHA256.hex(manifest).prefix(32))\""
        let (bytes, etag) = (manifest, etag)
        // One memory file for both 200s: a large manifest is sent from it (`BodyFile.holding`).
        let file = BodyFile.holding(bytes)
        func pair(_ cacheControl: String) -> (ok: HTTPResponse, notModified: HTTPResponse) {
            var ok = HTTPResponse(status: .ok, headers: HTTPHeaders([("Content-Type", "application/json"), ("ETag", etag), ("Cache-Control", cacheControl)]),
                                  body: bytes).prepared()
            ok.bodyFile = file
            return (ok, APIResponse.notModified(etag: etag, cacheControl: cacheControl).prepared())
        }
        // Private unless reads are public: a shared cache must not serve one app's token-gated bytes to another.
        (privateOK, privateNotModified) = pair("private, no-cache")
        (publicOK, publicNotModified) = pair("no-cache")
    }
}
