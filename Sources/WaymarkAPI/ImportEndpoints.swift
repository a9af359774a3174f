import Foundation
import HTTPCore
import HTTPServer
import Importing
import LinkChecks
import ManifestStore
import RouteEngine

/// `POST /v1/import` (scope `routes:publish`): another service's export made into a draft,
/// as `waymark import` makes it (`docs/migrating.md`) — the current routes with the
/// imported ones added, the report, and the draft's validation — for the console's import
/// (upload, review, publish). It changes nothing: the draft is published as any other. In
/// the changes lane with each token's share (parsing the file and resolving every link on
/// every build grows with the file).
struct ImportEndpoints: EndpointGroup {
    let context: APIContext

    func register(on registry: inout EndpointRegistry) throws(RouterError) {
        try registry.addOffLoop("POST", "/v1/import", .scope(.routesPublish, action: "import"), maximumBody: context.options.maximumDocumentBytes,
                                lane: .changes, readsDocument: true) { request, call throws(Refusal) in
            try run(request)
        }
    }

    /// `{"source": "firebase"|"csv", "host": "links.example", "csv": "…the file's text…"}`
    private func run(_ request: HTTPRequest) throws(Refusal) -> HTTPResponse {
        let expected = "The body must be {\"source\": \"firebase\" or \"csv\", \"host\": \"links.example\", \"csv\": \"…the file's text…\"}."
        guard case .object(let object) = try Refusal.requestJSON(request.body, expected) else { throw Refusal(.badRequest, "badJSON", expected) }
        let unknown = Set(object.keys).subtracting(["source", "host", "csv"])
        guard unknown.isEmpty else { throw Refusal(.badRequest, "unknownField", "Unknown field(s): \(unknown.sorted().joined(separator: ", ")). \(expected)") }
        guard let source = object["source"]?.stringValue.flatMap(LinkImport.Source.init(rawValue:)) else {
            throw Refusal(.badRequest, "badSource", "source must be firebase (a Takeout export) or csv.")
        }
        guard let host = object["host"]?.stringValue, let text = object["csv"]?.stringValue else { throw Refusal(.badRequest, "badJSON", expected) }
        let snapshot = context.store.snapshot
        let schemas = snapshot.orderedSchemas.map(\.schema)
        guard let current = snapshot.current, let routes = try RouteEndpoints.current(snapshot, context.store) else {
            throw Refusal(.conflict, "noRoutes", "Nothing is published yet: publish a first revision, then import into it.")
        }
        let importer: LinkImport
        do { importer = try LinkImport(source: source, host: host) } catch { throw Refusal(.badRequest, "badHost", error.description) }
        let result: (document: JSONValue, report: LinkImport.Report)
        do {
            result = try importer.run(Array(text.utf8), routes: routes, schemas: schemas, now: context.now())
        } catch {
            throw Refusal(.unprocessableContent, "cannotImport", error.description)
        }
        var validation = ManifestStore.validate(parsed: result.document, against: snapshot, now: context.now())
        if !context.options.allowPrivateFallbacks { validation.append(FallbackAddresses.report(in: result.document)) }
        guard case .object(var body) = result.report.json else { throw Refusal(.internalServerError, "internal", "The report could not be made.") }
        body["routes"] = result.document
        body["validation"] = validation.json
        body["base"] = .int(current.number)
        return APIResponse.json(.object(body))
    }
}
