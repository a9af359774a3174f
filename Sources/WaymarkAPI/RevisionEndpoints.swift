import CivilDate
import HTTPCore
import HTTPServer
import ManifestStore
import RouteEngine

/// The revision history (scope `manifest:read`): the list, one revision with its routes,
/// and what changed between two. A revision never changes, so its answers are immutable.
struct RevisionEndpoints: EndpointGroup {
    let context: APIContext

    static let immutable = "private, max-age=31536000, immutable"

    func register(on registry: inout EndpointRegistry) throws(RouterError) {
        try registry.add("GET", "/v1/revisions", .scope(.manifestRead, action: "readRevisions")) { _, _ in revisions() }
        // A revision and a diff are read from documents parsed once per revision; the first
        // read of one parses it, so both answer from the work queue.
        try registry.addOffLoop("GET", "/v1/revisions/:number", .scope(.manifestRead, action: "readRevision")) { request, call throws(Refusal) in
            try revision(request, call)
        }
        try registry.addOffLoop("GET", "/v1/revisions/:a/diff/:b", .scope(.manifestRead, action: "readDiff")) { request, call throws(Refusal) in
            try diff(request, call)
        }
    }

    static func etag(_ revision: Revision) -> String { "\"rev-\(revision.number)\"" }

    static func summary(_ revision: Revision) -> JSONValue {
        var object: [String: JSONValue] = [
            "number": .int(revision.number), "author": .string(revision.author), "time": .string(Timestamp.format(revision.time)),
            "message": .string(revision.message), "sha256": .string(revision.sha256), "etag": .string(etag(revision)),
            "parent": revision.parent.map(JSONValue.int) ?? .null,
        ]
        if let restores = revision.restores { object["restores"] = .int(restores) }
        return .object(object)
    }

    /// A path's revision number: digits only, at least 1.
    static func number(_ text: String) throws(Refusal) -> Int {
        guard text.utf8.allSatisfy({ (48...57).contains($0) }), let number = Int(text), number >= 1 else {
            throw Refusal(.badRequest, "badRevision", "A revision number is a positive integer, not \"\(text)\".")
        }
        return number
    }

    /// The stored revision a path names.
    static func revision(_ text: String, in snapshot: StoreSnapshot) throws(Refusal) -> Revision {
        let number = try number(text)
        guard let revision = snapshot.revision(number) else {
            throw Refusal(.notFound, "unknownRevision", "There is no revision \(number); the latest is \(snapshot.current?.number ?? 0).")
        }
        return revision
    }

    private func revisions() -> HTTPResponse {
        let snapshot = context.store.snapshot
        var headers: [(String, String)] = [("Cache-Control", "no-cache")]
        if let current = snapshot.current { headers.append(("ETag", Self.etag(current))) }
        return APIResponse.json(["current": snapshot.current.map { .int($0.number) } ?? .null,
                                 "revisions": .array(snapshot.revisions.reversed().map(Self.summary))], headers: headers)
    }

    private func revision(_ request: HTTPRequest, _ call: RouteCall) throws(Refusal) -> HTTPResponse {
        let revision = try Self.revision(call["number"], in: context.store.snapshot)
        let etag = Self.etag(revision)
        if APIResponse.ifNoneMatch(request, matches: etag) { return APIResponse.notModified(etag: etag, cacheControl: Self.immutable) }
        return context.revisionAnswers.response("revision \(revision.number) \(revision.sha256)") {
            guard case .object(var object) = Self.summary(revision) else { return APIResponse.json(.null) }
            object["routes"] = context.documents.document(revision).json
            return APIResponse.json(.object(object), headers: [("ETag", etag), ("Cache-Control", Self.immutable)])
        }
    }

    /// Route ids added, removed and changed from revision `a` to `b`, made once per pair.
    private func diff(_ request: HTTPRequest, _ call: RouteCall) throws(Refusal) -> HTTPResponse {
        let snapshot = context.store.snapshot
        let a = try Self.revision(call["a"], in: snapshot)
        let b = try Self.revision(call["b"], in: snapshot)
        return context.revisionAnswers.response("diff \(a.number) \(a.sha256) \(b.number) \(b.sha256)") { Self.diff(a, b, context.documents) }
    }

    private static func diff(_ a: Revision, _ b: Revision, _ documents: RevisionDocuments) -> HTTPResponse {
        let old = documents.document(a).routes, new = documents.document(b).routes
        let before = Dictionary(old, uniquingKeysWith: { first, _ in first })
        let afterIDs = Set(new.map(\.id))
        let added = new.filter { before[$0.id] == nil }.map { JSONValue.string($0.id) }
        let removed = old.map(\.id).filter { !afterIDs.contains($0) }.map(JSONValue.string)
        let changed = new.filter { id, route in before[id].map { $0 != route } ?? false }.map { JSONValue.string($0.id) }
        return APIResponse.json(["from": .int(a.number), "to": .int(b.number), "added": .array(added), "removed": .array(removed),
                                 "changed": .array(changed)], headers: [("Cache-Control", Self.immutable)])
    }
}
