import Foundation
import HTTPCore
import HTTPServer
import ManifestStore
import RouteEngine

/// One route at a time (scope `routes:publish`), for systems that make links: `PUT
/// /v1/routes/{id}` creates or replaces one route, `DELETE /v1/routes/{id}` removes one,
/// `POST /v1/routes:batch` does many as one revision. Each is the current routes with that
/// change, published as the next revision and validated exactly as a publish (every live
/// build, conflicts, fallback addresses, link checks). Without `If-Match` the change is
/// applied to whatever is current when it is stored (`ManifestStore.change`): a marketer's
/// publish meanwhile loses nothing, nor does the change. In the changes lane, each token
/// with its share, as publishing is.
struct RouteEndpoints: EndpointGroup {
    let context: APIContext

    /// The most changes one batch makes (puts and deletes together).
    static let maximumBatchChanges = 1_000
    /// The largest body `PUT /v1/routes/{id}` takes: one route, its patterns and notes.
    static let maximumRouteBytes = 256 << 10

    func register(on registry: inout EndpointRegistry) throws(RouterError) {
        let work = context.work, trusted = context.options.trustForwardedFor
        let busy: @Sendable (HTTPRequestHead, String) -> Refusal? = { head, actor in work.refusalAtHead(.changes, for: WorkCaller(head, actor: actor, trustForwardedFor: trusted)) }
        try registry.addDeferred("PUT", "/v1/routes/:id", .scope(.routesPublish, action: "route.put"), maximumBody: Self.maximumRouteBytes, busy: busy) {
            request, call, responder throws(Refusal) in try change(request, call, responder, action: "route.put")
        }
        try registry.addDeferred("DELETE", "/v1/routes/:id", .scope(.routesPublish, action: "route.delete"), maximumBody: 64 << 10, busy: busy) {
            request, call, responder throws(Refusal) in try change(request, call, responder, action: "route.delete")
        }
        try registry.addDeferred("POST", "/v1/routes:batch", .scope(.routesPublish, action: "routes.batch"), maximumBody: context.options.maximumDocumentBytes,
                                 busy: busy) {
            request, call, responder throws(Refusal) in try change(request, call, responder, action: "routes.batch")
        }
    }

    /// What a request asks for: routes to put (each with its id) and ids to delete.
    struct Edits: Sendable {
        var puts: [(id: String, route: JSONValue)] = []
        var deletes: [String] = []
        var message = ""

        var ids: [String] { puts.map(\.id) + deletes }
    }

    /// Headers on the loop; the body read, applied and validated on the work queue.
    private func change(_ request: HTTPRequest, _ call: RouteCall, _ responder: Responder, action: String) throws(Refusal) {
        try context.requirePrimary()
        // `If-Match` when sent (a base the caller holds), else whatever is current.
        let base = request.head.headers.values("If-Match").isEmpty ? nil : try PublishingEndpoints.base(request, context: context)
        let (context, store, author, id) = (context, context.store, call.actor, call["id"])
        context.work.run(responder, in: .changes, for: WorkCaller(request, actor: call.actor, trustForwardedFor: context.options.trustForwardedFor)) { responder throws(Refusal) in
            let edits = try Self.edits(request, action: action, id: id)
            let apply: @Sendable (JSONValue?) throws(Refusal) -> Edited = { current throws(Refusal) -> Edited in
                let new = try Self.apply(edits, to: current, app: store.snapshot.app)
                let bytes = try PublishingEndpoints.stored(new, context: context)
                // A document no whole publish could send is not made by changes either: one
                // nested past the parser's depth (a route is two levels below a document's
                // top) could not be read back, one of too many values not published again.
                do throws(JSONParseError) { _ = try JSONParser.requests.parse(bytes) } catch {
                    throw Refusal(.contentTooLarge, "documentTooComplex",
                                  "With this change the routes document would be one no publish may send (\(error.message)); nothing was changed.")
                }
                return Edited(bytes: bytes, parsed: new)
            }
            let snapshot = store.snapshot
            let message = edits.message.isEmpty ? Self.message(action, edits) : edits.message
            // The link checks of the routes as changed now (a change that lands on a newer
            // current is checked against what it changed, which is what it adds).
            // (Made only when link checks run: the store makes the change itself.)
            let place = try context.linkCheckPlace(for: author, .publish, against: snapshot)
            let preview = try place.map { _ throws(Refusal) in try apply(try Self.current(snapshot, store)).parsed }
            context.withLinkFindings(preview, against: snapshot, in: place) { findings in
                let outcome: Result<PublishOutcome, StoreError>
                do throws(StoreError) {
                    let decided = try store.change(base: base, author: author, message: message, change: RouteChange(action: action, ids: edits.ids),
                                                   findings: findings.problems.filter { $0.code.isFoundByLinkChecks }, now: context.now()) { current in
                        Result { () throws(Refusal) in try apply(current) }.mapError { $0 as any Error }
                    }
                    switch decided {
                    case .decided(let result): outcome = .success(result)
                    case .refused(let error): return responder.respond((error as? Refusal)?.response ?? Refusal(.internalServerError, "internal", "\(error)").response)
                    }
                } catch {
                    outcome = .failure(error)
                }
                responder.respond(PublishingEndpoints.outcome(context, outcome))
            }
        }
    }

    /// The current revision's routes, parsed (nil before the first).
    static func current(_ snapshot: StoreSnapshot, _ store: ManifestStore) throws(Refusal) -> JSONValue? {
        guard let revision = snapshot.current else { return nil }
        do {
            return try JSONParser().parse(store.routes(of: revision))
        } catch {
            throw Refusal(.internalServerError, "damaged", "The current revision's routes cannot be read; nothing was changed.")
        }
    }

    private static func message(_ action: String, _ edits: Edits) -> String {
        switch action {
        case "route.put": "Put route \(edits.ids[0])"
        case "route.delete": "Delete route \(edits.ids[0])"
        default: "Batch: \(edits.puts.count) put, \(edits.deletes.count) deleted"
        }
    }

    /// The request's changes, every field checked before anything is applied.
    static func edits(_ request: HTTPRequest, action: String, id: String) throws(Refusal) -> Edits {
        var edits = Edits()
        func message(_ object: [String: JSONValue]) throws(Refusal) {
            guard let value = object["message"] else { return }
            guard let text = value.stringValue, text.utf8.count <= 2_000 else { throw Refusal(.badRequest, "badMessage", "message must be a string of at most 2,000 bytes.") }
            edits.message = text
        }
        func checkedID(_ value: String, at place: String) throws(Refusal) -> String {
            guard RouteSpec.isValidID(value) else {
                throw Refusal(.badRequest, "badRouteID", "\(place): a route id is 1 to 128 ASCII letters, digits and - _ ., starting with a letter or digit.")
            }
            return value
        }
        switch action {
        case "route.put":
            let id = try checkedID(id, at: "The path's id")
            guard case .object(var object) = try Refusal.requestJSON(request.body, "The body must be the route, a JSON object.") else {
                throw Refusal(.badRequest, "badJSON", "The body must be the route, a JSON object (or {\"route\": {…}, \"message\": \"…\"}).")
            }
            // `{"route": {…}, "message": "…"}`, or the route itself (a route has no member `route`).
            if let wrapped = object["route"] {
                let unknown = Set(object.keys).subtracting(["route", "message"])
                guard unknown.isEmpty else { throw Refusal(.badRequest, "unknownField", "Unknown field(s): \(unknown.sorted().joined(separator: ", ")).") }
                try message(object)
                guard case .object(let route) = wrapped else { throw Refusal(.badRequest, "badJSON", "route must be a JSON object.") }
                object = route
            }
            else if object["message"] != nil {
                // A route has no member `message`: the caller meant the wrapped form.
                throw Refusal(.badRequest, "unknownField", "A route has no message; send {\"route\": {…}, \"message\": \"…\"} to give the revision one.")
            }
            if let given = object["id"], given != .string(id) {
                throw Refusal(.badRequest, "idMismatch", "The route's id must be the path's (\(id)), or left out.")
            }
            object["id"] = .string(id)
            edits.puts = [(id, .object(object))]
        case "route.delete":
            edits.deletes = [try checkedID(id, at: "The path's id")]
            if !request.body.isEmpty {
                guard case .object(let object) = try Refusal.requestJSON(request.body, "The body, if any, is {\"message\": \"…\"}."),
                      Set(object.keys).isSubset(of: ["message"]) else {
                    throw Refusal(.badRequest, "unknownField", "A delete takes only {\"message\": \"…\"}.")
                }
                try message(object)
            }
        default:
            let expected = "The body must be {\"message\": \"…\", \"put\": [routes…], \"delete\": [ids…]}."
            guard case .object(let object) = try Refusal.requestJSON(request.body, expected) else { throw Refusal(.badRequest, "badJSON", expected) }
            let unknown = Set(object.keys).subtracting(["message", "put", "delete"])
            guard unknown.isEmpty else { throw Refusal(.badRequest, "unknownField", "Unknown field(s): \(unknown.sorted().joined(separator: ", ")). \(expected)") }
            try message(object)
            guard object["put"].map({ $0.arrayValue != nil }) ?? true, object["delete"].map({ $0.arrayValue != nil }) ?? true else {
                throw Refusal(.badRequest, "badJSON", expected)
            }
            let puts = object["put"]?.arrayValue ?? [], deletes = object["delete"]?.arrayValue ?? []
            guard !(puts.isEmpty && deletes.isEmpty) else { throw Refusal(.badRequest, "emptyBatch", "The batch changes nothing: give put, delete or both.") }
            guard puts.count + deletes.count <= maximumBatchChanges else {
                throw Refusal(.contentTooLarge, "batchTooLarge", "A batch makes at most \(maximumBatchChanges) changes; this one has \(puts.count + deletes.count). Nothing was changed.")
            }
            for (index, route) in puts.enumerated() {
                guard let text = route["id"]?.stringValue, route.objectValue != nil else {
                    throw Refusal(.badRequest, "badRouteID", "put[\(index)] must be a route object with its id.")
                }
                edits.puts.append((try checkedID(text, at: "put[\(index)].id"), route))
            }
            for (index, value) in deletes.enumerated() {
                guard let text = value.stringValue else { throw Refusal(.badRequest, "badRouteID", "delete[\(index)] must be a route id.") }
                edits.deletes.append(try checkedID(text, at: "delete[\(index)]"))
            }
            var seen = Set<String>()
            for id in edits.ids where !seen.insert(id).inserted {
                throw Refusal(.badRequest, "duplicateRouteID", "The batch names \(id) twice; each route is put or deleted once.")
            }
        }
        return edits
    }

    /// `current` with the edits applied: a put replaces the route of its id where it stands,
    /// or is added at the end; a delete removes one, and one that is not there refuses the
    /// whole change. With nothing published yet, the document is started for `app`.
    static func apply(_ edits: Edits, to current: JSONValue?, app: String?) throws(Refusal) -> JSONValue {
        var top: [String: JSONValue]
        var list: [JSONValue]
        if let current {
            guard case .object(let object) = current, case .array(let routes)? = object["routes"] else {
                throw Refusal(.conflict, "currentNotChangeable", "The current routes have no routes list to change; publish a whole document instead.")
            }
            (top, list) = (object, routes)
        } else {
            guard let app else {
                throw Refusal(.conflict, "noSchemas", "No app-build schema is registered yet; register one (PUT /v1/schemas/PLATFORM/VERSION) first.")
            }
            (top, list) = (["format": "waymark.routes/1", "app": .string(app)], [])
        }
        var index: [String: Int] = [:]
        for (position, route) in list.enumerated() {
            if let id = route["id"]?.stringValue, index[id] == nil { index[id] = position }
        }
        for id in edits.deletes where index[id] == nil {
            throw Refusal(.notFound, "unknownRoute", "There is no route \(id) in the current routes; nothing was changed.")
        }
        let removed = Set(edits.deletes)
        for (id, route) in edits.puts {
            if let position = index[id] { list[position] = route } else {
                index[id] = list.count
                list.append(route)
            }
        }
        if !removed.isEmpty { list.removeAll { $0["id"]?.stringValue.map(removed.contains) ?? false } }
        top["routes"] = .array(list)
        return .object(top)
    }
}
