import CivilDate
import Foundation
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
        try registry.add("GET", "/v1/revisions", .scope(.routesRead, action: "readRevisions")) { _, _ in revisions() }
        // A revision and a diff are read from documents parsed once per revision; the first
        // read of one parses it, so both answer from the work queue.
        try registry.addOffLoop("GET", "/v1/revisions/:number", .scope(.routesRead, action: "readRevision"), readsDocument: true) { request, call throws(Refusal) in
            try revision(request, call)
        }
        try registry.addOffLoop("GET", "/v1/revisions/:a/diff/:b", .scope(.routesRead, action: "readDiff"), readsDocument: true) { request, call throws(Refusal) in
            try diff(request, call)
        }
        // A draft against a revision: what publishing it would change (the console's review).
        try registry.addOffLoop("POST", "/v1/revisions/:a/diff", .scope(.routesPublish, action: "diffDraft"),
                                maximumBody: context.options.maximumDocumentBytes) { request, call throws(Refusal) in
            try diffDraft(request, call)
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
        if let base = revision.rebasedFrom { object["rebasedFrom"] = .int(base) }
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

    /// The list grows with history and any reading token may ask it as often as its rate
    /// allows, on the loop: it is made once per store generation and answered from there.
    private func revisions() -> HTTPResponse {
        context.revisionList.response(for: context.store.generation) {
            let snapshot = context.store.snapshot
            var headers: [(String, String)] = [("Cache-Control", "no-cache")]
            if let current = snapshot.current { headers.append(("ETag", Self.etag(current))) }
            return APIResponse.json(["current": snapshot.current.map { .int($0.number) } ?? .null,
                                     "revisions": .array(snapshot.revisions.reversed().map(Self.summary))], headers: headers).prepared()
        }
    }

    private func revision(_ request: HTTPRequest, _ call: RouteCall) throws(Refusal) -> HTTPResponse {
        let revision = try Self.revision(call["number"], in: context.store.snapshot)
        let etag = Self.etag(revision)
        if APIResponse.ifNoneMatch(request, matches: etag) { return APIResponse.notModified(etag: etag, cacheControl: Self.immutable) }
        return try context.revisionAnswers.response("revision \(revision.number) \(revision.sha256)") { () throws(Refusal) in
            guard case .object(var object) = Self.summary(revision) else { return APIResponse.json(.null) }
            object["routes"] = try context.documents.read(revision).json
            return APIResponse.json(.object(object), headers: [("ETag", etag), ("Cache-Control", Self.immutable)])
        }
    }

    /// Route ids added, removed and changed from revision `a` to `b`, made once per pair.
    private func diff(_ request: HTTPRequest, _ call: RouteCall) throws(Refusal) -> HTTPResponse {
        let snapshot = context.store.snapshot
        let a = try Self.revision(call["a"], in: snapshot)
        let b = try Self.revision(call["b"], in: snapshot)
        return try context.revisionAnswers.response("diff \(a.number) \(a.sha256) \(b.number) \(b.sha256)") { () throws(Refusal) in
            try Self.diff(a, b, context.documents)
        }
    }

    private static func diff(_ a: Revision, _ b: Revision, _ documents: RevisionDocuments) throws(Refusal) -> HTTPResponse {
        APIResponse.json(diff(from: try documents.read(a).routes, to: try documents.read(b).routes, fromLabel: .int(a.number), toLabel: .int(b.number)),
                         headers: [("Cache-Control", Self.immutable)])
    }

    /// From revision `a` to the draft routes document in the body.
    private func diffDraft(_ request: HTTPRequest, _ call: RouteCall) throws(Refusal) -> HTTPResponse {
        let a = try Self.revision(call["a"], in: context.store.snapshot)
        let expected = "The body must be a routes document: {\"format\", \"app\", \"routes\": [...]}."
        guard case .object(let document) = try Refusal.requestJSON(request.body, expected), case .array(let entries)? = document["routes"]
        else { throw Refusal(.badRequest, "badJSON", expected) }
        var routes: [(id: String, json: JSONValue)] = []
        for (index, entry) in entries.enumerated() {
            guard case .object(let route) = entry, let id = route["id"]?.stringValue else {
                throw Refusal(.badRequest, "badRoutes", "routes[\(index)] needs a string \"id\" to be compared.")
            }
            routes.append((id, entry))
        }
        var answer = Self.diff(from: try context.documents.read(a).routes, to: routes, fromLabel: .int(a.number), toLabel: .null)
        if case .object(var object) = answer {
            object["draft"] = true
            answer = .object(object)
        }
        return APIResponse.json(answer, headers: [("Cache-Control", "no-store")])
    }

    /// Route ids added, removed and changed, and for each changed route the fields that
    /// changed (`changes`): JSON Pointers into the route with the value before and after
    /// (`from` missing: the field was added; `to` missing: removed). Objects are compared
    /// key by key, all the way down; any other value (a list of patterns, a string) is
    /// compared whole. Routes keep their order in `to`; a duplicated id counts its first.
    static func diff(from old: [(id: String, json: JSONValue)], to new: [(id: String, json: JSONValue)],
                     fromLabel: JSONValue, toLabel: JSONValue) -> JSONValue {
        let before = Dictionary(old, uniquingKeysWith: { first, _ in first })
        let afterIDs = Set(new.map(\.id))
        var seen = Set<String>()
        let unique = new.filter { seen.insert($0.id).inserted }
        let added = unique.filter { before[$0.id] == nil }.map { JSONValue.string($0.id) }
        let removed = old.map(\.id).filter { !afterIDs.contains($0) }.map(JSONValue.string)
        var changed: [JSONValue] = [], changes: [JSONValue] = []
        for (id, route) in unique {
            guard let previous = before[id], previous != route else { continue }
            changed.append(.string(id))
            changes.append(["id": .string(id), "fields": .array(fieldChanges(previous, route, at: ""))])
        }
        return ["from": fromLabel, "to": toLabel, "added": .array(added), "removed": .array(removed), "changed": .array(changed),
                "changes": .array(changes)]
    }

    /// The changes from `old` to `new` below the JSON Pointer `path` (RFC 6901).
    static func fieldChanges(_ old: JSONValue, _ new: JSONValue, at path: String) -> [JSONValue] {
        guard case .object(let before) = old, case .object(let after) = new else {
            return old == new ? [] : [["path": .string(path), "from": old, "to": new]]
        }
        var changes: [JSONValue] = []
        for key in Set(before.keys).union(after.keys).sorted() {
            let below = path + "/" + key.replacingOccurrences(of: "~", with: "~0").replacingOccurrences(of: "/", with: "~1")
            switch (before[key], after[key]) {
            case (let was?, let now?): changes += fieldChanges(was, now, at: below)
            case (let was?, nil): changes.append(["path": .string(below), "from": was])
            case (nil, let now?): changes.append(["path": .string(below), "to": now])
            case (nil, nil): break
            }
        }
        return changes
    }
}
