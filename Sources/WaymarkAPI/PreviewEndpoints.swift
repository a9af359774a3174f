import CivilDate
import HTTPCore
import HTTPServer
import ManifestStore
import RouteEngine

/// `POST /v1/resolve` (scope `manifest:read`): how a link resolves for one app build on the
/// current revision, for a given set of satisfied preconditions and time.
struct PreviewEndpoints: EndpointGroup {
    let context: APIContext

    func register(on registry: inout EndpointRegistry) throws(RouterError) {
        try registry.addOffLoop("POST", "/v1/resolve", .scope(.manifestRead, action: "resolve"), maximumBody: 64 << 10) { request, call throws(Refusal) in
            try resolve(request, call)
        }
    }

    private func resolve(_ request: HTTPRequest, _ call: RouteCall) throws(Refusal) -> HTTPResponse {
        guard let json = try? JSONParser().parse(request.body), case .object(let object) = json else {
            throw Refusal(.badRequest, "badJSON", "The body must be a JSON object: {\"url\", \"platform\", \"version\", \"satisfied\"?, \"now\"?}.")
        }
        let unknown = Set(object.keys).subtracting(["url", "platform", "version", "satisfied", "now"])
        guard unknown.isEmpty else { throw Refusal(.badRequest, "unknownField", "Unknown field(s): \(unknown.sorted().joined(separator: ", ")).") }
        guard let url = object["url"]?.stringValue, let platform = object["platform"]?.stringValue, let version = object["version"]?.stringValue else {
            throw Refusal(.badRequest, "missingField", "url, platform and version are required strings.")
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
        let (stored, current) = try ManifestEndpoints.build(SchemaKey(platform: platform, version: version), in: self.context.store.snapshot,
                                                            listKnown: false)
        let resolver = self.context.manifests.resolver(revision: current, stored: stored, documents: self.context.documents)
        let resolution = resolver.resolve(url: url, context: context)
        return APIResponse.json(["revision": .int(current.number), "resolution": resolution.json])
    }
}
