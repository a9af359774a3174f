import CivilDate
import HTTPCore
import HTTPServer
import ManifestStore
import RouteEngine

/// `POST /v1/resolve` (scope `manifest:read`): how a link resolves for one app build on the
/// current revision, for a given set of satisfied preconditions and time — or on a draft
/// routes document (`"routes"`, scope `routes:publish`): what a route being composed does
/// before it is published.
struct PreviewEndpoints: EndpointGroup {
    let context: APIContext

    /// The body limit without a draft: a link and a few fields.
    static let maximumBody = 64 << 10

    func register(on registry: inout EndpointRegistry) throws(RouterError) {
        // A draft is a whole routes document: a token that may publish may send one as large
        // as a publish, decided at the end of the head; any other keeps the small limit.
        try registry.addOffLoop("POST", "/v1/resolve", .scope(.routesRead, action: "resolve"), maximumBody: Self.maximumBody,
                                largerBody: .init(scope: .routesPublish, maximumBody: context.options.maximumDocumentBytes)) { request, call throws(Refusal) in
            try resolve(request, call)
        }
    }

    private func resolve(_ request: HTTPRequest, _ call: RouteCall) throws(Refusal) -> HTTPResponse {
        let expected = "The body must be a JSON object: {\"url\", \"platform\", \"version\", \"satisfied\"?, \"now\"?, \"routes\"?}."
        guard case .object(let object) = try Refusal.requestJSON(request.body, expected) else { throw Refusal(.badRequest, "badJSON", expected) }
        let unknown = Set(object.keys).subtracting(["url", "platform", "version", "satisfied", "now", "routes"])
        guard unknown.isEmpty else { throw Refusal(.badRequest, "unknownField", "Unknown field(s): \(unknown.sorted().joined(separator: ", ")).") }
        guard let url = object["url"]?.stringValue else { throw Refusal(.badRequest, "missingField", "url is a required string.") }
        let platform = object["platform"]?.stringValue, version = object["version"]?.stringValue
        // A build is named whole, or (with a draft) not at all: every registered build then.
        let named = object["platform"] != nil || object["version"] != nil
        guard named ? platform != nil && version != nil : object["routes"] != nil else {
            throw Refusal(.badRequest, "missingField", "platform and version are required strings (with a draft both may be left out: every build).")
        }
        var context = ResolutionContext()
        if let satisfied = object["satisfied"] {
            guard let list = satisfied.arrayValue?.compactMap(\.stringValue), list.count == satisfied.arrayValue?.count else {
                throw Refusal(.badRequest, "badSatisfied", "satisfied must be a list of precondition names.")
            }
            context.satisfied = Set(list)
        }
        if let now = object["now"] {
            guard let date = now.stringValue.flatMap(Timestamp.parse) else {
                throw Refusal(.badRequest, "badNow", "now must be an RFC 3339 timestamp such as 2026-12-01T09:00:00Z.")
            }
            context.now = date
        }
        let snapshot = self.context.store.snapshot
        if let routes = object["routes"] {
            let key = platform.map { SchemaKey(platform: $0, version: version ?? "") }
            return try resolveDraft(routes, url: url, key: key, context, request, snapshot)
        }
        let (stored, current) = try ManifestEndpoints.build(SchemaKey(platform: platform ?? "", version: version ?? ""), in: snapshot, listKnown: false)
        let resolver = try self.context.manifests.resolver(revision: current, stored: stored, documents: self.context.documents)
        let resolution = resolver.resolve(url: url, context: context)
        return APIResponse.json(["revision": .int(current.number), "resolution": resolution.json])
    }

    /// On a draft: the document as the validator reads it, resolved as a build of that
    /// schema would once it is published — one build (`key`), or every registered build
    /// (`builds`). Routes a build cannot resolve (a destination it lacks, a param type it
    /// does not know) are left out, as a published revision's manifest leaves them out, and
    /// named in `unresolvable`.
    private func resolveDraft(_ routes: JSONValue, url: String, key: SchemaKey?, _ resolution: ResolutionContext, _ request: HTTPRequest,
                              _ snapshot: StoreSnapshot) throws(Refusal) -> HTTPResponse {
        // A draft costs what a validation does: the publishing scope, and its rate.
        _ = try context.authorize(request.head, .scope(.routesPublish, action: "resolveDraft"))
        let (document, problems) = RoutesDocument.decodeReporting(routes)
        guard let document else {
            throw Refusal(.unprocessableContent, "invalidRoutes", "The draft is not a routes document the validator can read.",
                          details: problems.json)
        }
        let analysis = RouteAnalysis(document: document, now: resolution.now)
        func resolved(_ stored: StoredSchema) -> [String: JSONValue] {
            let resolver = Resolver(schema: stored.schema, analysis: analysis)
            let resolvable = Set(resolver.routeIDs)
            return ["platform": .string(stored.key.platform), "version": .string(stored.key.version),
                    "resolution": resolver.resolve(url: url, context: resolution).json,
                    "unresolvable": .array(document.routes.map(\.id).filter { !resolvable.contains($0) }.map(JSONValue.string))]
        }
        var answer: [String: JSONValue] = ["revision": .null, "base": snapshot.current.map { .int($0.number) } ?? .null, "draft": true]
        if let key {
            guard let stored = snapshot.schemas[key] else { throw Refusal(.notFound, "unknownBuild", "No schema is registered for \(key).") }
            answer.merge(resolved(stored)) { _, new in new }
        } else {
            answer["builds"] = .array(snapshot.orderedSchemas.map { .object(resolved($0)) })
        }
        return APIResponse.json(.object(answer))
    }
}
