import Foundation
import RouteEngine
import Testing
import TestSupport

/// A routes document is held to `--max-document-bytes` as it is stored (indented), not only
/// as it is sent, on every route that stores one; a note past its limit is refused naming
/// the route and the field. Nothing refused changes anything.
@Suite("Document limits", .serialized)
struct DocumentLimitTests {
    /// The storefront's routes and one more, compact as a client may send them.
    static let document: JSONValue = {
        guard case .object(var document) = Fixtures.storefrontRoutesJSON, case .array(var routes)? = document["routes"] else { return .null }
        routes.append(["id": "limits", "patterns": ["/sale/limits"], "destination": "home"])
        document["routes"] = .array(routes)
        return .object(document)
    }()
    static let compact = document.serialized()
    static let stored = document.serializedBytes(pretty: true).count
    /// A day ahead, when a schedule may be set.
    static let tomorrow: String = {
        let formatter = ISO8601DateFormatter()
        return formatter.string(from: Date().addingTimeInterval(86_400))
    }()

    /// Each row: the route, its body, and the document limit relative to the stored size
    /// (the body as sent always fits); the status expected.
    static let rows: [(String, String, String, Int, Int)] = [
        ("publish, stored size fits", "/v1/revisions", "{\"routes\": \(compact)}", 0, 201),
        ("schedule, stored size fits", "/v1/schedules", "{\"at\": \"\(tomorrow)\", \"routes\": \(compact)}", 0, 201),
        ("publish, fits as sent but not as stored", "/v1/revisions", "{\"routes\": \(compact)}", -1, 413),
        ("schedule, fits as sent but not as stored", "/v1/schedules", "{\"at\": \"\(tomorrow)\", \"routes\": \(compact)}", -1, 413),
    ]

    @Test(arguments: rows)
    func storedSize(_ label: String, _ target: String, _ body: String, _ slack: Int, _ status: Int) throws {
        #expect(body.utf8.count < Self.stored - 1, "the compact body is smaller than the stored document")
        let service = try LiveService(maximumDocumentBytes: Self.stored + slack, transport: .inProcess)
        let before = service.store.snapshot
        let reply = service.call("POST", target, token: service.tokens[.routesPublish], headers: [("If-Match", "\"rev-1\"")], body: body)
        #expect(reply.status == status, "\(label): \(reply.text.prefix(300))")
        if status == 413 {
            #expect(reply.errorCode == "documentTooLarge" && reply.text.contains("as stored"), "\(label)")
            #expect(service.store.snapshot.revisions.count == before.revisions.count && service.store.snapshot.schedules.isEmpty, "\(label)")
        }
    }

    @Test func aNotePastItsLimitIsRefusedNamingTheRouteAndTheField() throws {
        let service = try LiveService(transport: .inProcess)
        guard case .object(var document) = Fixtures.storefrontRoutesJSON, case .array(var routes)? = document["routes"] else { return }
        routes.append(["id": "spring-notes", "patterns": ["/sale/spring-notes"], "destination": "home",
                       "notes": .string(String(repeating: "x", count: 1_000_000))])
        document["routes"] = .array(routes)
        let reply = service.call("POST", "/v1/revisions", token: service.tokens[.routesPublish], headers: [("If-Match", "\"rev-1\"")],
                                 body: "{\"routes\": \(JSONValue.object(document).serialized())}")
        #expect(reply.status == 422, "\(reply.text.prefix(300))")
        #expect(reply.text.contains("Route \\\"spring-notes\\\": notes is 1000000 bytes"), "\(reply.text.prefix(600))")
        #expect(reply.text.contains("routes[\(routes.count - 1)].notes"))
        #expect(service.store.snapshot.revisions.count == 1, "nothing published")
    }
}
