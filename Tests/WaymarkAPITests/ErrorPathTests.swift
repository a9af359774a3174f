import Foundation
import ManifestStore
import RouteEngine
import Testing
import TestSupport

/// One refused request: what is sent, and the status and error code that must come back.
struct ErrorPath: Sendable, CustomTestStringConvertible {
    let method: String
    let target: String
    let scope: Scope?
    var headers: [(String, String)] = []
    var body = ""
    let status: Int
    let code: String

    var testDescription: String { "\(method) \(target) → \(status) \(code)" }
}

let schema53Text = String(decoding: try! Data(contentsOf: URL(fileURLWithPath: Fixtures.path("manifests/storefront/schema-ios-5.3.0.json"))), as: UTF8.self)
let schema52Text = String(decoding: try! Data(contentsOf: URL(fileURLWithPath: Fixtures.path("manifests/storefront/schema-ios-5.2.0.json"))), as: UTF8.self)
let storefrontRoutesText = Fixtures.storefrontRoutesJSON.serialized()
let rev1 = [("If-Match", "\"rev-1\"")]

/// Every error path of every endpoint on a seeded store (revision 1; ios 5.2.0 and 5.3.0),
/// in-process (the same bytes a socket would carry). None of them may change the store.
let errorPaths: [ErrorPath] = [
    // Routing
    ErrorPath(method: "GET", target: "/v1/nothing-here", scope: .admin, status: 404, code: "notFound"),
    ErrorPath(method: "DELETE", target: "/v1/manifest", scope: .admin, status: 405, code: "methodNotAllowed"),
    ErrorPath(method: "PUT", target: "/v1/revisions", scope: .admin, status: 405, code: "methodNotAllowed"),
    // GET /v1/manifest
    ErrorPath(method: "GET", target: "/v1/manifest", scope: .manifestRead, status: 400, code: "missingBuild"),
    ErrorPath(method: "GET", target: "/v1/manifest?platform=ios", scope: .manifestRead, status: 400, code: "missingBuild"),
    ErrorPath(method: "GET", target: "/v1/manifest?platform=&version=5.3.0", scope: .manifestRead, status: 400, code: "missingBuild"),
    ErrorPath(method: "GET", target: "/v1/manifest?platform=ios&version=5.3.0&cohort=100", scope: .manifestRead, status: 400, code: "badCohort"),
    ErrorPath(method: "GET", target: "/v1/manifest?platform=ios&version=5.3.0&cohort=-1", scope: .manifestRead, status: 400, code: "badCohort"),
    ErrorPath(method: "GET", target: "/v1/manifest?platform=ios&version=5.3.0&cohort=07", scope: .manifestRead, status: 400, code: "badCohort"),
    ErrorPath(method: "GET", target: "/v1/manifest?platform=ios&version=5.3.0&cohort=", scope: .manifestRead, status: 400, code: "badCohort"),
    ErrorPath(method: "GET", target: "/v1/manifest?platform=ios&version=5.3.0&cohort=one", scope: .manifestRead, status: 400, code: "badCohort"),
    ErrorPath(method: "GET", target: "/v1/manifest?platform=ios&version=%zz", scope: .manifestRead, status: 400, code: "badRequest"),
    ErrorPath(method: "GET", target: "/v1/manifest?platform=ios&version=9.9.9", scope: .manifestRead, status: 404, code: "unknownBuild"),
    ErrorPath(method: "GET", target: "/v1/manifest?platform=android&version=5.3.0", scope: .manifestRead, status: 404, code: "unknownBuild"),
    // GET /v1/revisions/N and diffs
    ErrorPath(method: "GET", target: "/v1/revisions/0", scope: .routesRead, status: 400, code: "badRevision"),
    ErrorPath(method: "GET", target: "/v1/revisions/-1", scope: .routesRead, status: 400, code: "badRevision"),
    ErrorPath(method: "GET", target: "/v1/revisions/abc", scope: .routesRead, status: 400, code: "badRevision"),
    ErrorPath(method: "GET", target: "/v1/revisions/99999999999999999999999", scope: .routesRead, status: 400, code: "badRevision"),
    ErrorPath(method: "GET", target: "/v1/revisions/2", scope: .routesRead, status: 404, code: "unknownRevision"),
    ErrorPath(method: "GET", target: "/v1/revisions/x/diff/1", scope: .routesRead, status: 400, code: "badRevision"),
    ErrorPath(method: "GET", target: "/v1/revisions/1/diff/7", scope: .routesRead, status: 404, code: "unknownRevision"),
    // POST /v1/revisions
    ErrorPath(method: "POST", target: "/v1/revisions", scope: .routesPublish, body: "{\"routes\": \(storefrontRoutesText)}", status: 428, code: "baseRequired"),
    ErrorPath(method: "POST", target: "/v1/revisions", scope: .routesPublish, headers: [("If-Match", "rev-1")], body: "{\"routes\": \(storefrontRoutesText)}", status: 412, code: "staleBase"),
    ErrorPath(method: "POST", target: "/v1/revisions", scope: .routesPublish, headers: [("If-Match", "\"rev-1\", \"rev-2\"")], body: "{\"routes\": \(storefrontRoutesText)}", status: 412, code: "staleBase"),
    ErrorPath(method: "POST", target: "/v1/revisions", scope: .routesPublish, headers: [("If-Match", "\"rev-7\"")], body: "{\"routes\": \(storefrontRoutesText)}", status: 412, code: "staleBase"),
    ErrorPath(method: "POST", target: "/v1/revisions", scope: .routesPublish, headers: [("If-None-Match", "*")], body: "{\"routes\": \(storefrontRoutesText)}", status: 412, code: "staleBase"),
    ErrorPath(method: "POST", target: "/v1/revisions", scope: .routesPublish, headers: rev1, body: "not json", status: 400, code: "badJSON"),
    ErrorPath(method: "POST", target: "/v1/revisions", scope: .routesPublish, headers: rev1, body: "", status: 400, code: "badJSON"),
    ErrorPath(method: "POST", target: "/v1/revisions", scope: .routesPublish, headers: rev1, body: "[1]", status: 400, code: "badJSON"),
    ErrorPath(method: "POST", target: "/v1/revisions", scope: .routesPublish, headers: rev1, body: "{\"routes\": {}, \"extra\": 1}", status: 400, code: "unknownField"),
    ErrorPath(method: "POST", target: "/v1/revisions", scope: .routesPublish, headers: rev1, body: "{\"message\": 5, \"routes\": {}}", status: 400, code: "badMessage"),
    ErrorPath(method: "POST", target: "/v1/revisions", scope: .routesPublish, headers: rev1, body: "{\"message\": \"\(String(repeating: "m", count: 2001))\", \"routes\": {}}", status: 400, code: "badMessage"),
    ErrorPath(method: "POST", target: "/v1/revisions", scope: .routesPublish, headers: rev1, body: "{\"message\": \"no routes\"}", status: 400, code: "missingRoutes"),
    ErrorPath(method: "POST", target: "/v1/revisions", scope: .routesPublish, headers: rev1, body: "{\"routes\": {}}", status: 422, code: "invalidRoutes"),
    ErrorPath(method: "POST", target: "/v1/revisions", scope: .routesPublish, headers: rev1,
              body: "{\"routes\": \(storefrontRoutesText.replacingOccurrences(of: "\"app\":\"storefront\"", with: "\"app\":\"other\""))}", status: 422, code: "invalidRoutes"),
    ErrorPath(method: "POST", target: "/v1/revisions", scope: .routesPublish, headers: rev1,
              body: "{\"routes\": {\"format\": \"waymark.routes/1\", \"app\": \"storefront\", \"routes\": [{\"id\": \"w\", \"patterns\": [\"/w\"], \"destination\": \"wishlist\"}]}}", status: 422, code: "invalidRoutes"),
    // POST /v1/revisions/N/rollback
    ErrorPath(method: "POST", target: "/v1/revisions/abc/rollback", scope: .routesPublish, headers: rev1, status: 400, code: "badRevision"),
    ErrorPath(method: "POST", target: "/v1/revisions/9/rollback", scope: .routesPublish, headers: rev1, status: 404, code: "unknownRevision"),
    ErrorPath(method: "POST", target: "/v1/revisions/1/rollback", scope: .routesPublish, status: 428, code: "baseRequired"),
    ErrorPath(method: "POST", target: "/v1/revisions/1/rollback", scope: .routesPublish, headers: [("If-Match", "\"rev-3\"")], status: 412, code: "staleBase"),
    ErrorPath(method: "POST", target: "/v1/revisions/1/rollback", scope: .routesPublish, headers: rev1, body: "{\"routes\": {}}", status: 400, code: "unknownField"),
    ErrorPath(method: "POST", target: "/v1/revisions/1/rollback", scope: .routesPublish, headers: rev1, body: "nope", status: 400, code: "badJSON"),
    // POST /v1/validate (any JSON gets the validator's report; no body is a mistake)
    ErrorPath(method: "POST", target: "/v1/validate", scope: .routesPublish, body: "", status: 400, code: "missingBody"),
    // PUT /v1/schemas/P/V
    ErrorPath(method: "PUT", target: "/v1/schemas/ios/5.2.0", scope: .schemasWrite, body: "", status: 422, code: "invalidSchema"),
    ErrorPath(method: "PUT", target: "/v1/schemas/ios/5.2.0", scope: .schemasWrite, body: "{\"format\": \"waymark.schema/1\"}", status: 422, code: "invalidSchema"),
    ErrorPath(method: "PUT", target: "/v1/schemas/ios/6.0.0", scope: .schemasWrite, body: schema52Text, status: 422, code: "buildMismatch"),
    ErrorPath(method: "PUT", target: "/v1/schemas/android/5.2.0", scope: .schemasWrite, body: schema52Text, status: 422, code: "buildMismatch"),
    ErrorPath(method: "PUT", target: "/v1/schemas/ios/5.2.0", scope: .schemasWrite,
              body: schema52Text.replacingOccurrences(of: "\"app\": \"storefront\"", with: "\"app\": \"other\""), status: 422, code: "wrongApp"),
    // POST /v1/resolve
    ErrorPath(method: "POST", target: "/v1/resolve", scope: .routesRead, body: "", status: 400, code: "badJSON"),
    ErrorPath(method: "POST", target: "/v1/resolve", scope: .routesRead, body: "{\"url\": \"https://storefront.example/\"}", status: 400, code: "missingField"),
    ErrorPath(method: "POST", target: "/v1/resolve", scope: .routesRead,
              body: "{\"url\": \"/\", \"platform\": \"ios\", \"version\": \"5.3.0\", \"extra\": true}", status: 400, code: "unknownField"),
    ErrorPath(method: "POST", target: "/v1/resolve", scope: .routesRead,
              body: "{\"url\": \"/\", \"platform\": \"ios\", \"version\": \"5.3.0\", \"satisfied\": \"auth\"}", status: 400, code: "badSatisfied"),
    ErrorPath(method: "POST", target: "/v1/resolve", scope: .routesRead,
              body: "{\"url\": \"/\", \"platform\": \"ios\", \"version\": \"5.3.0\", \"now\": \"tomorrow\"}", status: 400, code: "badNow"),
    ErrorPath(method: "POST", target: "/v1/resolve", scope: .routesRead,
              body: "{\"url\": \"/\", \"platform\": \"ios\", \"version\": \"1.0.0\"}", status: 404, code: "unknownBuild"),
    ErrorPath(method: "POST", target: "/v1/resolve", scope: .routesPublish,
              body: "{\"url\": \"/\", \"platform\": \"ios\", \"routes\": {}}", status: 400, code: "missingField"),
    ErrorPath(method: "POST", target: "/v1/resolve", scope: .routesPublish,
              body: "{\"url\": \"/\", \"routes\": {\"format\": \"waymark.routes/1\"}}", status: 422, code: "invalidRoutes"),
    ErrorPath(method: "POST", target: "/v1/resolve", scope: .routesPublish,
              body: "{\"url\": \"/\", \"platform\": \"ios\", \"version\": \"1.0.0\", \"routes\": \(storefrontRoutesText)}", status: 404, code: "unknownBuild"),
    // GET /v1/schemas/P/V, POST /v1/revisions/N/diff
    ErrorPath(method: "GET", target: "/v1/schemas/ios/1.0.0", scope: .routesRead, body: "", status: 404, code: "unknownBuild"),
    ErrorPath(method: "POST", target: "/v1/revisions/9/diff", scope: .routesPublish, body: storefrontRoutesText, status: 404, code: "unknownRevision"),
    ErrorPath(method: "POST", target: "/v1/revisions/x/diff", scope: .routesPublish, body: storefrontRoutesText, status: 400, code: "badRevision"),
    ErrorPath(method: "POST", target: "/v1/revisions/1/diff", scope: .routesPublish, body: "[]", status: 400, code: "badJSON"),
    ErrorPath(method: "POST", target: "/v1/revisions/1/diff", scope: .routesPublish,
              body: "{\"routes\": [{\"patterns\": [\"/\"]}]}", status: 400, code: "badRoutes"),
    // POST /v1/telemetry
    ErrorPath(method: "POST", target: "/v1/telemetry", scope: .telemetryWrite, headers: [("Content-Type", "application/json")], body: "", status: 400, code: "missingBody"),
    ErrorPath(method: "POST", target: "/v1/telemetry", scope: .telemetryWrite, headers: [("Content-Type", "text/plain")],
              body: "{\"client\": {\"platform\": \"ios\", \"appVersion\": \"5.3.0\"}, \"events\": []}", status: 415, code: "unsupportedMediaType"),
    ErrorPath(method: "POST", target: "/v1/telemetry", scope: .telemetryWrite, headers: [("Content-Type", "application/jsonx")],
              body: "{\"client\": {\"platform\": \"ios\", \"appVersion\": \"5.3.0\"}, \"events\": []}", status: 415, code: "unsupportedMediaType"),
    ErrorPath(method: "POST", target: "/v1/telemetry", scope: .telemetryWrite, body: "", status: 415, code: "unsupportedMediaType"),
    ErrorPath(method: "POST", target: "/v1/telemetry", scope: .telemetryWrite,
              body: "{\"client\": {\"platform\": \"ios\", \"appVersion\": \"5.3.0\"}, \"events\": [{\"ts\": \"2026-11-21T12:00:00Z\", \"entry\": \"push\", \"outcome\": \"proceed\", \"count\": 5000}]}",
              status: 400, code: "countTooLarge"),
    ErrorPath(method: "POST", target: "/v1/telemetry", scope: .telemetryWrite, body: "{\"client\": ", status: 400, code: "invalidBatch"),
    ErrorPath(method: "POST", target: "/v1/telemetry", scope: .telemetryWrite, body: "[]", status: 400, code: "invalidBatch"),
    ErrorPath(method: "POST", target: "/v1/telemetry", scope: .telemetryWrite, body: "{\"client\": {\"platform\": \"ios\", \"appVersion\": \"5.3.0\"}}",
              status: 400, code: "invalidBatch"),
    ErrorPath(method: "POST", target: "/v1/telemetry", scope: .telemetryWrite, body: "{\"client\": {\"platform\": \"web\", \"appVersion\": \"5.3.0\"}, \"events\": []}",
              status: 400, code: "invalidClient"),
    ErrorPath(method: "POST", target: "/v1/telemetry", scope: .telemetryWrite, body: "{\"events\": []}", status: 400, code: "invalidClient"),
    ErrorPath(method: "POST", target: "/v1/telemetry", scope: .telemetryWrite,
              body: "{\"client\": {\"platform\": \"ios\", \"appVersion\": \"5.3.0\"}, \"events\": [" + Array(repeating: "{}", count: 1_001).joined(separator: ",") + "]}",
              status: 413, code: "tooManyEvents"),
    // GET /v1/telemetry/counts and /top
    ErrorPath(method: "GET", target: "/v1/telemetry/counts?color=red", scope: .telemetryRead, status: 400, code: "unknownParameter"),
    ErrorPath(method: "GET", target: "/v1/telemetry/counts?step=5m", scope: .telemetryRead, status: 400, code: "badParameter"),
    ErrorPath(method: "GET", target: "/v1/telemetry/counts?from=yesterday", scope: .telemetryRead, status: 400, code: "badParameter"),
    ErrorPath(method: "GET", target: "/v1/telemetry/counts?from=2026-01-01T00:00:00Z&to=2025-01-01T00:00:00Z", scope: .telemetryRead, status: 400, code: "badParameter"),
    ErrorPath(method: "GET", target: "/v1/telemetry/counts?from=2020-01-01T00:00:00Z&step=1m", scope: .telemetryRead, status: 400, code: "badParameter"),
    ErrorPath(method: "GET", target: "/v1/telemetry/counts?from=2000-01-01T00:00:00Z&step=1h", scope: .telemetryRead, status: 400, code: "badParameter"),
    ErrorPath(method: "GET", target: "/v1/telemetry/counts?groupBy=route,color", scope: .telemetryRead, status: 400, code: "badParameter"),
    ErrorPath(method: "GET", target: "/v1/telemetry/counts?outcome=crashed", scope: .telemetryRead, status: 400, code: "badParameter"),
    ErrorPath(method: "GET", target: "/v1/telemetry/counts?limit=0", scope: .telemetryRead, status: 400, code: "badParameter"),
    ErrorPath(method: "GET", target: "/v1/telemetry/top?by=route,", scope: .telemetryRead, status: 400, code: "badParameter"),
    ErrorPath(method: "GET", target: "/v1/telemetry/top?by=url", scope: .telemetryRead, status: 400, code: "badParameter"),
    ErrorPath(method: "GET", target: "/v1/telemetry/top?limit=1001", scope: .telemetryRead, status: 400, code: "badParameter"),
    ErrorPath(method: "GET", target: "/v1/telemetry/top?groupBy=route", scope: .telemetryRead, status: 400, code: "unknownParameter"),
    ErrorPath(method: "DELETE", target: "/v1/telemetry", scope: .admin, status: 405, code: "methodNotAllowed"),
]

@Suite("API error paths, in-process", .serialized)
struct ErrorPathTests {
    @Test func everyErrorPathAnswersClearlyAndChangesNothing() throws {
        let service = try LiveService(transport: .inProcess)
        let before = service.store.snapshot
        for path in errorPaths {
            let reply = service.call(path.method, path.target, token: path.scope.flatMap { service.tokens[$0] }, headers: path.headers, body: path.body)
            #expect(reply.status == path.status, "\(path.testDescription): \(reply.text)")
            #expect(reply.errorCode == path.code, "\(path.testDescription): \(reply.text)")
            #expect(reply.json["error"]?["message"]?.stringValue?.isEmpty == false, "\(path.testDescription) explains itself")
            #expect(reply["Content-Type"] == "application/json", "\(path.testDescription)")
            if path.status == 405 { #expect(reply["Allow"] != nil, "\(path.testDescription) says what is allowed") }
        }
        let after = service.store.snapshot
        #expect(service.telemetry.currentStatistics.batches == 0, "no refused batch was counted")
        #expect(after.revisions.count == before.revisions.count)
        #expect(after.orderedSchemas.map(\.sha256) == before.orderedSchemas.map(\.sha256))
        let refused = try service.store.auditEntries().filter { $0["outcome"]?.stringValue == "refused" }
        let refusals = refused.reduce(0) { $0 + ($1["count"]?.intValue ?? 0) }
        #expect(refusals >= 10, "refused changes that reached the store are audited, counted per reason and actor")
        #expect(refused.count < refusals, "repeated refusals share a line")
    }

    @Test func documentsOverTheLimitAre413AndChangeNothing() throws {
        let service = try LiveService(maximumDocumentBytes: 1024, transport: .inProcess)
        let big = "{\"routes\": \(storefrontRoutesText)}"
        #expect(big.utf8.count > 1024)
        for (method, target, scope) in [("POST", "/v1/revisions", Scope.routesPublish), ("POST", "/v1/validate", .routesPublish),
                                        ("PUT", "/v1/schemas/ios/5.2.0", .schemasWrite)] {
            let reply = service.call(method, target, token: service.tokens[scope], headers: rev1, body: big)
            #expect(reply.status == 413, "\(method) \(target): \(reply.text)")
        }
        #expect(service.store.snapshot.revisions.count == 1)
    }

    @Test func anEmptyStoreSaysWhatIsMissing() throws {
        let service = try LiveService(seed: false, transport: .inProcess)
        let read = service.reader
        #expect(service.call("GET", "/readyz").errorCode == "notReady")
        #expect(service.call("GET", "/readyz").status == 503)
        #expect(service.call("GET", "/healthz").status == 200, "alive, though not ready")
        let manifest = service.call("GET", "/v1/manifest?platform=ios&version=5.3.0", token: read)
        #expect(manifest.status == 404 && manifest.errorCode == "unknownBuild")
        #expect(service.call("GET", "/v1/revisions", token: read).json["current"] == .null)
        // Routes before any schema: refused with the reason, not stored.
        let publish = service.call("POST", "/v1/revisions", token: service.tokens[.routesPublish], headers: [("If-None-Match", "*")],
                                   body: "{\"routes\": \(storefrontRoutesText)}")
        #expect(publish.status == 422 && publish.text.contains("No app-build schema"))
        // A schema, then the first revision with If-None-Match: *.
        #expect(service.call("PUT", "/v1/schemas/ios/5.3.0", token: service.tokens[.schemasWrite], body: schema53Text).status == 201)
        let noRevision = service.call("GET", "/v1/manifest?platform=ios&version=5.3.0", token: read)
        #expect(noRevision.status == 404 && noRevision.errorCode == "noRevision")
        let first = service.call("POST", "/v1/revisions", token: service.tokens[.routesPublish], headers: [("If-None-Match", "*")],
                                 body: "{\"routes\": \(storefrontRoutesText)}")
        #expect(first.status == 201 && first["ETag"] == "\"rev-1\"", "\(first.text)")
        #expect(service.call("GET", "/readyz").status == 200)
    }
}
