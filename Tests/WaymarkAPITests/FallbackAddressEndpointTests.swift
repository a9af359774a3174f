import Foundation
import RouteEngine
import Testing
import TestSupport

/// Publishing, scheduling and validating routes whose fallback is a loopback or private
/// address: refused (422) and reported, nothing changed.
@Suite("Fallback addresses on the API", .serialized)
struct FallbackAddressEndpointTests {
    static func document(fallback: String) -> String {
        guard case .object(var document) = Fixtures.storefrontRoutesJSON, case .array(var routes)? = document["routes"] else { return "" }
        routes.append(["id": "inside", "patterns": ["/sale/inside"], "destination": "home", "fallbackURL": .string(fallback)])
        document["routes"] = .array(routes)
        return JSONValue.object(document).serialized()
    }

    static let rows: [(String, String, Int)] = [
        ("publish, public fallback", "https://web.storefront.example/inside", 201),
        ("publish, loopback", "https://127.0.0.1/inside", 422),
        ("publish, IPv6 loopback", "https://[::1]/inside", 422),
        ("publish, private network", "https://10.1.2.3/inside", 422),
    ]

    @Test(arguments: rows)
    func publish(_ label: String, _ fallback: String, _ status: Int) throws {
        let service = try LiveService(transport: .inProcess)
        let reply = service.call("POST", "/v1/revisions", token: service.tokens[.routesPublish], headers: [("If-Match", "\"rev-1\"")],
                                 body: "{\"routes\": \(Self.document(fallback: fallback))}")
        #expect(reply.status == status, "\(label): \(reply.text.prefix(300))")
        if status == 422 {
            #expect(reply.errorCode == "invalidRoutes" && reply.text.contains("insecureFallback"), "\(label)")
            #expect(service.store.snapshot.revisions.count == 1)
        }
    }

    @Test func scheduleAndValidateRefuseItToo() throws {
        let service = try LiveService(transport: .inProcess)
        let token = service.tokens[.routesPublish]
        let tomorrow = ISO8601DateFormatter().string(from: Date().addingTimeInterval(86_400))
        let routes = Self.document(fallback: "https://192.168.0.1/inside")
        let schedule = service.call("POST", "/v1/schedules", token: token, headers: [("If-Match", "\"rev-1\"")],
                                    body: "{\"at\": \"\(tomorrow)\", \"routes\": \(routes)}")
        #expect(schedule.status == 422 && service.store.snapshot.schedules.isEmpty, "\(schedule.text.prefix(300))")
        let validate = service.call("POST", "/v1/validate", token: token, body: routes)
        #expect(validate.text.contains("insecureFallback") && validate.text.contains("\"valid\":false"), "\(validate.text.prefix(400))")
    }
}
