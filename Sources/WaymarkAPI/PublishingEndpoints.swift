import Foundation
import HTTPCore
import HTTPServer
import LinkChecks
import ManifestStore
import RouteEngine

/// Changing the routes (scope `routes:publish`): publishing a revision against the base the
/// client started from, rolling back to an earlier one, and the dry run of validation.
/// All three work off the loop (parsing and validating a document grows with it); with link
/// checks on, publishing and validation also wait for the network, on its own queue.
struct PublishingEndpoints: EndpointGroup {
    let context: APIContext

    func register(on registry: inout EndpointRegistry) throws(RouterError) {
        let documentLimit = context.options.maximumDocumentBytes
        // A change its token cannot queue now (past its share of the changes lane) is refused at the head.
        let work = context.work, trusted = context.options.trustForwardedFor
        let busy: @Sendable (HTTPRequestHead, String) -> Refusal? = { head, actor in work.refusalAtHead(.changes, for: WorkCaller(head, actor: actor, trustForwardedFor: trusted)) }
        try registry.addDeferred("POST", "/v1/revisions", .scope(.routesPublish, action: "publish"), maximumBody: documentLimit, busy: busy) {
            request, call, responder throws(Refusal) in try publish(request, call, responder)
        }
        // A rollback validates the old revision's document again: the changes lane, with its token's share.
        try registry.addOffLoop("POST", "/v1/revisions/:number/rollback", .scope(.routesPublish, action: "rollback"), maximumBody: 64 << 10,
                                lane: .changes) {
            request, call throws(Refusal) in try rollback(request, call)
        }
        try registry.addDeferred("POST", "/v1/validate", .scope(.routesPublish, action: "validate"), maximumBody: documentLimit, busy: busy) {
            request, call, responder throws(Refusal) in try validate(request, call, responder)
        }
    }

    /// The headers are checked on the loop; the body is parsed and validated on the work
    /// queue (with link checks on, published from theirs once the links are fetched).
    private func publish(_ request: HTTPRequest, _ call: RouteCall, _ responder: Responder) throws(Refusal) {
        try context.requirePrimary()
        let base = try base(request)
        let (context, store, author) = (context, context.store, call.actor)
        context.work.run(responder, in: .changes, for: WorkCaller(request, actor: call.actor, trustForwardedFor: context.options.trustForwardedFor)) { responder throws(Refusal) in
            let body = try Self.envelope(request, requireRoutes: true, also: ["rollout", "supersede"])
            let routes = try Self.stored(body.routes, context: context)
            // `"supersede": true`: publish over an active rollout, ending it.
            let supersede = try Self.supersede(body.object)
            // `"rollout": {}` (the default steps) or `{"steps": [...]}`: a candidate, not a new current revision.
            if let rollout = try body.object["rollout"].map(RolloutEndpoints.requestedSteps) {
                return responder.respond(RolloutEndpoints.start(context, routes: routes, parsed: body.routes, steps: rollout, base: base, author: author,
                                                                message: body.message, supersede: supersede))
            }
            let snapshot = store.snapshot
            // One the store will refuse takes no check's place, nor fetches: a stale base
            // stays stale (revisions only grow), so it is refused at once — unless only
            // changes of single routes came since, over which the store may rebase it. (A
            // rollout in progress may end before the store looks: such a publish is checked.)
            let rebasable = base.map { snapshot.routesChanged(since: $0) != nil } ?? false
            let place = base == snapshot.current?.number || rebasable ? try context.linkCheckPlace(for: author, .publish, against: snapshot) : nil
            context.withLinkFindings(body.routes, against: snapshot, in: place) { findings in
                responder.respond(Self.outcome(context, Result { () throws(StoreError) in
                    try store.publish(routes: routes, parsed: body.routes, base: base, author: author, message: body.message, findings: findings.problems,
                                      supersede: supersede, documentLimit: context.options.maximumDocumentBytes, now: context.now())
                }))
            }
        }
    }

    private func rollback(_ request: HTTPRequest, _ call: RouteCall) throws(Refusal) -> HTTPResponse {
        try context.requirePrimary()
        let number = try RevisionEndpoints.number(call["number"])
        let body = try Self.envelope(request, requireRoutes: false)
        let message = body.message.isEmpty ? "Rollback to revision \(number)" : body.message
        let base = try base(request)
        return Self.outcome(context, Result { () throws(StoreError) in
            try context.store.rollback(to: number, base: base, author: call.actor, message: message, now: context.now())
        })
    }

    private func validate(_ request: HTTPRequest, _ call: RouteCall, _ responder: Responder) throws(Refusal) {
        guard !request.body.isEmpty else { throw Refusal(.badRequest, "missingBody", "Send the routes document to validate as the body.") }
        context.work.run(responder, in: .changes, for: WorkCaller(request, actor: call.actor, trustForwardedFor: context.options.trustForwardedFor)) { [context] responder throws(Refusal) in
            try Self.validate(request, context: context, holder: call.actor, responder)
        }
    }

    private static func validate(_ request: HTTPRequest, context: APIContext, holder: String, _ responder: Responder) throws(Refusal) {
        let snapshot = context.store.snapshot
        let place = try context.linkCheckPlace(for: holder, .validation, against: snapshot)
        // Parsed once, for the validator and the fallbacks' findings; a body that does not
        // parse is reported by the validator, which parses it again to say why.
        let parsed = try? JSONParser.requests.parse(request.body)
        let validated = parsed.map { ManifestStore.validate(parsed: $0, against: snapshot) }
            ?? ManifestStore.validate(request.body, against: snapshot, parser: .requests)
        context.withLinkFindings(parsed, against: snapshot, in: place) { findings in
            var report = validated
            report.append(findings)
            guard case .object(var object) = report.json else { return responder.respond(APIResponse.json(report.json)) }
            object["valid"] = .bool(report.isValid)
            object["schemas"] = .array(snapshot.schemas.keys.sorted().map { .string($0.description) })
            responder.respond(APIResponse.json(.object(object)))
        }
    }

    /// `{"message": "…", "routes": {…routes document…}}`
    static func envelope(_ request: HTTPRequest, requireRoutes: Bool, also fields: Set<String> = [])
        throws(Refusal) -> (message: String, routes: JSONValue?, object: [String: JSONValue]) {
        if request.body.isEmpty, !requireRoutes { return ("", nil, [:]) }
        let expected = "The body must be a JSON object: {\"message\": \"…\", \"routes\": {…}}."
        guard case .object(let object) = try Refusal.requestJSON(request.body, expected) else { throw Refusal(.badRequest, "badJSON", expected) }
        let unknown = Set(object.keys).subtracting(fields.union(requireRoutes ? ["message", "routes"] : ["message"]))
        guard unknown.isEmpty else {
            throw Refusal(.badRequest, "unknownField", requireRoutes ? "Unknown field(s): \(unknown.sorted().joined(separator: ", "))."
                                                                     : "A rollback takes only a message.")
        }
        if let message = object["message"], message.stringValue == nil { throw Refusal(.badRequest, "badMessage", "message must be a string.") }
        let message = object["message"]?.stringValue ?? ""
        guard message.utf8.count <= 2_000 else { throw Refusal(.badRequest, "badMessage", "message is limited to 2,000 bytes.") }
        if requireRoutes, object["routes"] == nil {
            throw Refusal(.badRequest, "missingRoutes", "The body needs the routes document under \"routes\".")
        }
        return (message, object["routes"], object)
    }

    /// The routes document as it is stored (pretty-printed), held to `--max-document-bytes`
    /// as stored and not only as sent: a compact document near the limit grows when
    /// indented, and every revision and schedule keeps it so.
    /// A fallback at a loopback, private or otherwise non-public address is refused here
    /// too (`FallbackAddresses`), for every route that stores a document: publish, rollout,
    /// schedule.
    static func stored(_ routes: JSONValue?, context: APIContext) throws(Refusal) -> [UInt8] {
        if let routes, !context.options.allowPrivateFallbacks {
            let problems = FallbackAddresses.report(in: routes)
            if problems.errorCount > 0 {
                throw Refusal(.unprocessableContent, "invalidRoutes",
                              "The routes fail validation (\(problems.errorCount) error(s)): a fallback at an address no visitor can reach; nothing was changed.",
                              details: problems.json)
            }
        }
        let bytes = routes?.serializedBytes(pretty: true) ?? []
        let limit = context.options.maximumDocumentBytes
        guard bytes.count <= limit else {
            throw Refusal(.contentTooLarge, "documentTooLarge",
                          "The routes document is \(bytes.count) bytes as stored (indented); at most \(limit) are kept. Nothing was changed.")
        }
        return bytes
    }

    static func supersede(_ object: [String: JSONValue]) throws(Refusal) -> Bool {
        guard let value = object["supersede"] else { return false }
        guard case .bool(let flag) = value else { throw Refusal(.badRequest, "badSupersede", "supersede must be true or false.") }
        return flag
    }

    /// The revision number `If-Match` names (nil: `If-None-Match: *`, publishing the first revision).
    private func base(_ request: HTTPRequest) throws(Refusal) -> Int? {
        try Self.base(request, context: context)
    }

    /// The revision number `If-Match` names (nil: `If-None-Match: *`): publishing and scheduling alike.
    static func base(_ request: HTTPRequest, context: APIContext) throws(Refusal) -> Int? {
        let ifMatch = request.head.headers.values("If-Match")
        if ifMatch.isEmpty {
            if request.head.headers["If-None-Match"]?.trimmingCharacters(in: .whitespaces) == "*" { return nil }
            throw Refusal(.preconditionRequired, "baseRequired",
                "Send If-Match with the ETag of the revision you started from (GET /v1/revisions gives it), or If-None-Match: * for the first revision.")
        }
        let tag = ifMatch.joined(separator: ",").trimmingCharacters(in: .whitespaces)
        guard tag.hasPrefix("\"rev-"), tag.hasSuffix("\""), let number = Int(tag.dropFirst(5).dropLast()), number >= 1 else {
            throw Refusal(.preconditionFailed, "staleBase", "If-Match must be one revision ETag such as \"rev-3\", not \(tag).",
                          details: ["current": context.store.snapshot.current.map { .int($0.number) } ?? .null])
        }
        return number
    }

    /// The answer to a publish or rollback the store decided.
    static func outcome(_ context: APIContext, _ result: Result<PublishOutcome, StoreError>) -> HTTPResponse {
        switch result {
        case .failure(let error):
            return Refusal.storeFailed(error, "The revision could not be stored", "Nothing was published.").response
        case .success(.published(let revision)):
            context.publishes.add(1, ordering: .relaxed)
            return APIResponse.json(RevisionEndpoints.summary(revision), status: .created,
                                    headers: [("ETag", RevisionEndpoints.etag(revision)), ("Location", "/v1/revisions/\(revision.number)")])
        case .success(.unchanged(let revision)):
            guard case .object(var summary) = RevisionEndpoints.summary(revision) else { return APIResponse.json(RevisionEndpoints.summary(revision)) }
            summary["unchanged"] = true
            return APIResponse.json(.object(summary), status: .ok,
                                    headers: [("ETag", RevisionEndpoints.etag(revision)), ("Location", "/v1/revisions/\(revision.number)")])
        case .success(.invalid(let report)):
            return APIResponse.error(.unprocessableContent, "invalidRoutes",
                                     "The routes fail validation (\(report.errorCount) error(s)); nothing was published.", details: report.json)
        case .success(.staleBase(let current)):
            return APIResponse.error(.preconditionFailed, "staleBase",
                                     "Revision \(current.map(String.init) ?? "none") was published since your base; fetch it, merge, and retry.",
                                     details: ["current": current.map(JSONValue.int) ?? .null])
        case .success(.rolloutInProgress(let candidate)):
            return APIResponse.error(.conflict, "rolloutInProgress",
                                     "Revision \(candidate) is being rolled out; promote or abort its rollout before publishing again, or publish with \"supersede\": true to end it.",
                                     details: ["candidate": .int(candidate)])
        case .success(.stableOverRollout(let candidate)):
            return APIResponse.error(.conflict, "useAbort",
                                     "These are the stable revision's routes: superseding the rollout of revision \(candidate) with them would publish nothing and leave the rollout running. To serve the stable routes to everyone, abort the rollout (POST /v1/rollout/abort).",
                                     details: ["candidate": .int(candidate)])
        case .success(.unknownRevision(let number)):
            return APIResponse.error(.notFound, "unknownRevision", "There is no revision \(number).")
        }
    }
}
