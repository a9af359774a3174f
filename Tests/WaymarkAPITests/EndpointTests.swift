import CivilDate
import Foundation
import Importing
import HTTPCore
import HTTPServer
import WaymarkAPI
import ManifestStore
import RouteEngine
import Telemetry
import Synchronization
import Testing
import TestSupport

func publishBody(extraRoute id: String, message: String = "m") -> String {
    guard case .object(var document) = Fixtures.storefrontRoutesJSON, case .array(var routes)? = document["routes"] else { return "" }
    routes.append(["id": .string(id), "patterns": [.string("/campaign/\(id)")], "destination": "home", "owner": "marketing"])
    document["routes"] = .array(routes)
    return JSONValue.object(["message": .string(message), "routes": .object(document)]).serialized()
}

/// A schedule of the storefront routes with one more campaign route, at `at`.
func scheduleBody(extraRoute id: String, at: Date, message: String = "scheduled") -> String {
    guard case .object(var body) = try? JSONParser().parse(publishBody(extraRoute: id, message: message)) else { return "" }
    body["at"] = .string(Timestamp.format(at))
    return JSONValue.object(body).serialized()
}

/// A telemetry batch from iOS 5.3.0 on revision 1; each event gets `"ts"` of now unless it has one.
func telemetryBody(_ events: [String], client: String = #"{"platform": "ios", "appVersion": "5.3.0", "revision": 1}"#) -> String {
    let now = Int(Date().timeIntervalSince1970)
    let stamped = events.map { $0.contains("\"ts\"") ? $0 : "{\"ts\": \"\(Timestamp.format(now))\", " + $0.dropFirst() }
    return #"{"client": \#(client), "events": [\#(stamped.joined(separator: ", "))]}"#
}

@Suite("API endpoints, in-process", .serialized)
struct EndpointTests {
    /// endpoint × {no token, wrong scope, right scope}: (method, target, scope it needs, body, If-Match, status with the right scope)
    static let endpoints: [(String, String, Scope, String, String?, Int)] = [
        ("GET", "/v1/manifest?platform=ios&version=5.3.0", .manifestRead, "", nil, 200),
        ("GET", "/v1/revisions", .routesRead, "", nil, 200),
        ("GET", "/v1/revisions/1", .routesRead, "", nil, 200),
        ("GET", "/v1/revisions/1/diff/1", .routesRead, "", nil, 200),
        ("GET", "/v1/schemas", .routesRead, "", nil, 200),
        ("POST", "/v1/resolve", .routesRead, "{\"url\": \"https://storefront.example/p/42\", \"platform\": \"ios\", \"version\": \"5.3.0\"}", nil, 200),
        ("GET", "/v1/schemas/ios/5.3.0", .routesRead, "", nil, 200),
        ("POST", "/v1/revisions/1/diff", .routesPublish, Fixtures.storefrontRoutesJSON.serialized(), nil, 200),
        ("POST", "/v1/revisions/1/impact", .routesPublish, Fixtures.storefrontRoutesJSON.serialized(), nil, 200),
        ("POST", "/v1/validate", .routesPublish, "{}", nil, 200),
        ("POST", "/v1/revisions", .routesPublish, publishBody(extraRoute: "table"), "\"rev-1\"", 201),
        ("POST", "/v1/revisions/1/rollback", .routesPublish, "", "\"rev-1\"", 200),  // revision 1 is current: unchanged
        ("POST", "/v1/telemetry", .telemetryWrite, telemetryBody([#"{"entry": "scheme", "outcome": "proceed", "route": "home"}"#]), nil, 202),
        ("GET", "/v1/telemetry/counts?groupBy=route", .telemetryRead, "", nil, 200),
        ("GET", "/v1/telemetry/top?outcome=notFound", .telemetryRead, "", nil, 200),
        ("GET", "/v1/telemetry/unknown-links?limit=5", .telemetryRead, "", nil, 200),
        ("GET", "/metrics", .telemetryRead, "", nil, 200),
        ("GET", "/v1/replication/state", .replication, "", nil, 200),
        ("GET", "/v1/replication/revisions/1", .replication, "", nil, 200),
        ("GET", "/v1/replication/schemas/ios/5.3.0", .replication, "", nil, 200),
        ("GET", "/v1/replication/tokens", .replication, "", nil, 200),
        ("POST", "/v1/replication/telemetry", .replication, "not a forward", nil, 400),
        ("POST", "/v1/schedules", .routesPublish, scheduleBody(extraRoute: "table", at: Date().addingTimeInterval(3_600)), "\"rev-1\"", 201),
        ("GET", "/v1/schedules", .routesRead, "", nil, 200),
        ("GET", "/v1/schedules/1", .routesRead, "", nil, 404),
        ("DELETE", "/v1/schedules/1", .routesPublish, "", nil, 404),
        ("GET", "/v1/rollout", .routesRead, "", nil, 404),
        ("GET", "/v1/qr?url=https://storefront.example/p/1", .routesRead, "", nil, 200),
        ("POST", "/v1/rollout/pause", .routesPublish, "", "\"rollout-2-1\"", 412),
        ("PUT", "/v1/schemas/ios/5.3.0", .schemasWrite, String(decoding: try! Data(contentsOf: Fixtures.repositoryRoot.appendingPathComponent("manifests/storefront/schema-ios-5.3.0.json")), as: UTF8.self), nil, 200),
        ("PUT", "/v1/routes/table-put", .routesPublish, #"{"patterns": ["/table/put"], "destination": "cart"}"#, nil, 201),
        ("DELETE", "/v1/routes/cart", .routesPublish, "", nil, 201),
        ("POST", "/v1/import", .routesPublish, #"{"source": "csv", "host": "storefront.example", "csv": "https://storefront.example/x1,https://storefront.example/cart\n"}"#, nil, 200),
        ("POST", "/v1/routes:batch", .routesPublish, #"{"put": [{"id": "table-batch", "patterns": ["/table/batch"], "destination": "cart"}], "delete": ["orders"]}"#, nil, 201),
    ]

    @Test(arguments: endpoints)
    func tokensAndScopes(method: String, target: String, scope: Scope, body: String, ifMatch: String?, expected: Int) throws {
        let harness = try LiveService(transport: .inProcess)
        let headers = ifMatch.map { [("If-Match", $0)] } ?? []
        let anonymous = harness.call(method, target, headers: headers, body: body)
        #expect(anonymous.status == 401)
        #expect(anonymous["WWW-Authenticate"]?.hasPrefix("Bearer") == true)
        #expect(anonymous.json["error"]?["code"]?.stringValue == "unauthorized")
        #expect(harness.call(method, target, token: "wm_00000000_forged", headers: headers, body: body).status == 401)
        let wrong = Scope.allCases.first { !$0.implied.contains(scope) }!
        let forbidden = harness.call(method, target, token: harness.tokens[wrong]!, headers: headers, body: body)
        #expect(forbidden.status == 403)
        #expect(forbidden.json["error"]?["details"]?["required"]?.stringValue == scope.rawValue)
        let allowed = harness.call(method, target, token: harness.tokens[scope]!, headers: headers, body: body)
        #expect(allowed.status == expected, "\(String(decoding: allowed.body, as: UTF8.self))")
        #expect(harness.call(method, target, token: harness.tokens[.admin]!, headers: headers, body: body).status != 403)
    }

    /// Every route's declared access: open, or the scope its token needs.
    static let declared: Set<String> = [
        "GET /healthz open", "GET /readyz open", "GET /dashboard open", "GET /console open",
        "GET /v1/schemas/:platform/:version routes:read", "POST /v1/revisions/:a/diff routes:publish", "POST /v1/revisions/:a/impact routes:publish",
        "GET /.well-known/apple-app-site-association open", "GET /.well-known/assetlinks.json open",
        "GET /v1/manifest manifest:read", "GET /v1/revisions routes:read", "GET /v1/revisions/:number routes:read",
        "GET /v1/revisions/:a/diff/:b routes:read", "GET /v1/schemas routes:read", "POST /v1/resolve routes:read",
        "POST /v1/revisions routes:publish", "POST /v1/revisions/:number/rollback routes:publish", "POST /v1/validate routes:publish",
        "PUT /v1/schemas/:platform/:version schemas:write", "POST /v1/telemetry telemetry:write",
        "GET /v1/telemetry/counts telemetry:read|routes:publish", "GET /v1/telemetry/top telemetry:read", "GET /metrics telemetry:read",
        "GET /v1/replication/state replication", "GET /v1/replication/revisions/:number replication",
        "GET /v1/replication/schemas/:platform/:version replication", "GET /v1/replication/tokens replication",
        "POST /v1/replication/telemetry replication",
        "POST /v1/schedules routes:publish", "GET /v1/schedules routes:read", "GET /v1/schedules/:id routes:read",
        "DELETE /v1/schedules/:id routes:publish", "GET /v1/rollout routes:read", "POST /v1/rollout/:action routes:publish",
        "GET /v1/qr routes:read", "GET /v1/telemetry/unknown-links telemetry:read",
        "PUT /v1/routes/:id routes:publish", "DELETE /v1/routes/:id routes:publish", "POST /v1/routes:batch routes:publish",
        "POST /v1/import routes:publish",
    ]

    /// The counts the console's performance view reads take a `routes:publish` token too,
    /// and nothing else of telemetry does; a token with neither scope is told both.
    @Test func countsTakeAPublishingTokenAndNothingElseOfTelemetryDoes() throws {
        let harness = try LiveService(transport: .inProcess)
        let publisher = harness.tokens[.routesPublish]!
        let counts = harness.call("GET", "/v1/telemetry/counts?groupBy=route&step=1h", token: publisher)
        #expect(counts.status == 200, "\(String(decoding: counts.body, as: UTF8.self))")
        #expect(counts.json["step"]?.stringValue == "1h")
        for target in ["/v1/telemetry/top?outcome=notFound", "/v1/telemetry/unknown-links?limit=5", "/metrics"] {
            #expect(harness.call("GET", target, token: publisher).status == 403, "\(target) stays telemetry:read's")
        }
        let refused = harness.call("GET", "/v1/telemetry/counts", token: harness.tokens[.manifestRead]!)
        #expect(refused.status == 403)
        #expect(refused.json["error"]?["details"]?["required"]?.stringValue == "telemetry:read")
        #expect(refused.json["error"]?["details"]?["alternative"]?.stringValue == "routes:publish")
        #expect(refused.json["error"]?["message"]?.stringValue?.contains("telemetry:read or routes:publish") == true)
        #expect(harness.call("GET", "/v1/telemetry/counts", token: harness.tokens[.telemetryWrite]!).status == 403)
        #expect(harness.call("GET", "/v1/telemetry/counts").status == 401)
    }

    /// Each route says at registration who may call it, and every route that needs a token
    /// is a row of the token table above (so a new one cannot be added without its row).
    @Test func everyRouteDeclaresItsAccessAndIsInTheTokenTable() throws {
        let harness = try LiveService(transport: .inProcess)
        let routes = try harness.api.routes()
        #expect(Set(routes.map { "\($0.method) \($0.path) \($0.scope?.rawValue ?? "open")\($0.alternativeScope.map { "|" + $0.rawValue } ?? "")" }) == Self.declared)
        #expect(routes.count == Self.declared.count, "each route registered once")
        for route in routes {
            guard let scope = route.scope else { continue }
            let pattern = "^" + route.path.split(separator: "/").map { $0.hasPrefix(":") ? "[^/]+" : String($0) }.reduce("") { $0 + "/" + $1 } + "$"
            let rows = Self.endpoints.filter { row in
                row.0 == route.method && row.1.split(separator: "?")[0].range(of: pattern, options: .regularExpression) != nil
            }
            #expect(rows.map(\.2) == [scope], "\(route.method) \(route.path) has one row in the token table, with its scope")
        }
        let deferred = routes.filter { $0.mode == .deferred }.map { "\($0.method) \($0.path)" }
        #expect(Set(deferred) == ["POST /v1/revisions", "POST /v1/validate", "POST /v1/telemetry", "POST /v1/replication/telemetry",
                                  "POST /v1/revisions/:a/impact", "PUT /v1/routes/:id", "DELETE /v1/routes/:id", "POST /v1/routes:batch"])
        #expect(routes.filter { $0.method == "POST" || $0.method == "PUT" }.allSatisfy { $0.maximumBody != nil }, "every body has its limit")
    }

    /// The importer refuses short links on Waymark's own paths (`LinkImport.reservedFirstSegments`):
    /// that list is the API's routes' first segments, so a new route cannot be added without it.
    @Test func theImportersReservedPathsAreTheAPIs() throws {
        let harness = try LiveService(transport: .inProcess)
        let first = Set(try harness.api.routes().compactMap { $0.path.split(separator: "/").first.map { String($0).lowercased() } })
        #expect(first == LinkImport.reservedFirstSegments)
    }

    /// The in-process client is a seam, not a second server: the same requests get the same
    /// status, fields (but `Date` and the request id the server adds) and bytes over it as
    /// over a socket, errors the decoder finds included.
    @Test func inProcessAnswersAsTheSocketDoes() throws {
        let wire = try LiveService(maximumDocumentBytes: 2_048)
        let local = try LiveService(maximumDocumentBytes: 2_048, transport: .inProcess)
        let requests: [(String, String, Scope?, [(String, String)], String)] = [
            ("GET", "/v1/manifest?platform=ios&version=5.3.0", .manifestRead, [], ""),
            ("HEAD", "/v1/manifest?platform=ios&version=5.3.0", .manifestRead, [], ""),
            ("GET", "/v1/manifest?platform=ios&version=%zz", .manifestRead, [], ""),
            ("GET", "/v1/revisions/1", .routesRead, [("If-None-Match", "\"rev-1\"")], ""),
            ("GET", "/v1/revisions/abc", .routesRead, [], ""),
            ("DELETE", "/v1/manifest", .admin, [], ""),
            ("BREW", "/nowhere", .admin, [], ""),
            ("POST", "/v1/revisions", nil, rev1, "{}"),
            ("POST", "/v1/validate", .routesPublish, [], String(repeating: " ", count: 4_096)),
            ("GET", "/.well-known/apple-app-site-association", nil, [], ""),
            ("GET", "/healthz", nil, [], ""),
        ]
        func fields(_ reply: Reply) -> [String] {
            reply.head.split(separator: "\r\n").dropFirst().map(String.init).filter {
                !$0.lowercased().hasPrefix("date:") && !$0.lowercased().hasPrefix("x-request-id:")
            }.sorted()
        }
        for (method, target, scope, headers, body) in requests {
            let a = wire.call(method, target, token: scope.flatMap { wire.tokens[$0] }, headers: headers, body: body)
            let b = local.call(method, target, token: scope.flatMap { local.tokens[$0] }, headers: headers, body: body)
            #expect(a.status != 0 && a.status == b.status, "\(method) \(target): \(a.status) over a socket, \(b.status) in-process")
            #expect(a.head.split(separator: "\r\n").first == b.head.split(separator: "\r\n").first, "\(method) \(target): status line")
            #expect(fields(a) == fields(b), "\(method) \(target): fields")
            #expect(a.body == b.body, "\(method) \(target): body")
        }
    }

    @Test func manifestIsFilteredPerBuildWithETagAnd304() throws {
        let harness = try LiveService(transport: .inProcess)
        let token = harness.tokens[.manifestRead]!
        let old = harness.call("GET", "/v1/manifest?platform=ios&version=5.2.0", token: token)
        let new = harness.call("GET", "/v1/manifest?platform=ios&version=5.3.0", token: token)
        #expect(old.status == 200 && new.status == 200)
        let oldIDs = old.json["routes"]?.arrayValue?.compactMap { $0["id"]?.stringValue } ?? []
        let newIDs = new.json["routes"]?.arrayValue?.compactMap { $0["id"]?.stringValue } ?? []
        #expect(newIDs.contains("new-arrivals") && !oldIDs.contains("new-arrivals"), "5.2.0 cannot resolve new-arrivals")
        #expect(new.json["schema"]?["version"]?.stringValue == "5.3.0", "self-contained: the schema travels with it")
        let etag = try #require(new["ETag"])
        #expect(etag != old["ETag"])
        let again = harness.call("GET", "/v1/manifest?platform=ios&version=5.3.0", token: token)
        #expect(again.body == new.body && again["ETag"] == etag)
        let conditional = harness.call("GET", "/v1/manifest?platform=ios&version=5.3.0", token: token, headers: [("If-None-Match", "\"x\", \(etag)")])
        #expect(conditional.status == 304 && conditional.body.isEmpty && conditional["ETag"] == etag)
        let unknown = harness.call("GET", "/v1/manifest?platform=ios&version=9.9.9", token: token)
        #expect(unknown.status == 404 && unknown.json["error"]?["code"]?.stringValue == "unknownBuild")
        #expect(harness.call("GET", "/v1/manifest?platform=ios", token: token).status == 400)
        #expect(harness.call("GET", "/v1/manifest?platform=ios&version=%zz", token: token).status == 400)
    }

    @Test func publishingNeedsTheCurrentBaseAndValidRoutes() throws {
        let harness = try LiveService(transport: .inProcess)
        let token = harness.tokens[.routesPublish]!
        let missing = harness.call("POST", "/v1/revisions", token: token, body: publishBody(extraRoute: "a"))
        #expect(missing.status == 428)
        let first = harness.call("POST", "/v1/revisions", token: token, headers: [("If-Match", "\"rev-1\"")], body: publishBody(extraRoute: "a"))
        #expect(first.status == 201 && first["ETag"] == "\"rev-2\"" && first["Location"] == "/v1/revisions/2")
        let stale = harness.call("POST", "/v1/revisions", token: token, headers: [("If-Match", "\"rev-1\"")], body: publishBody(extraRoute: "b"))
        #expect(stale.status == 412 && stale.json["error"]?["details"]?["current"]?.intValue == 2)
        let invalid = harness.call("POST", "/v1/revisions", token: token, headers: [("If-Match", "\"rev-2\"")],
                                   body: "{\"routes\": {\"format\": \"waymark.routes/1\", \"app\": \"storefront\", \"routes\": [{\"id\": \"x\"}]}}")
        #expect(invalid.status == 422 && invalid.json["error"]?["details"]?["errors"]?.arrayValue?.isEmpty == false)
        #expect(harness.call("POST", "/v1/revisions", token: token, headers: [("If-Match", "\"rev-2\"")], body: "not json").status == 400)
        #expect(harness.call("POST", "/v1/revisions/+1/rollback", token: token, headers: [("If-Match", "\"rev-2\"")]).status == 400)
        #expect(harness.call("POST", "/v1/revisions", token: token, headers: [("If-Match", "\"rev-2\"")], body: "{\"routes\": {}, \"extra\": 1}").status == 400)
        #expect(harness.store.snapshot.revisions.count == 2, "nothing but the one valid publish changed the store")
        #expect(harness.store.snapshot.revision(2)?.author == "routes:publish", "the author is the token's name")
        let refusals = try harness.store.auditEntries().filter { $0["outcome"]?.stringValue == "refused" }.compactMap { $0["reason"]?.stringValue }
        #expect(refusals == ["staleBase", "invalid"], "refused publishes are audited; malformed requests never reach the store")
        let diff = harness.call("GET", "/v1/revisions/1/diff/2", token: harness.tokens[.routesRead]!).json
        #expect(diff["added"] == ["a"] && diff["removed"] == [] && diff["changed"] == [])
    }

    @Test("Scheduled publishing over the API: scheduled, listed, fired by the primary's look at its time, cancelled, refused")
    func schedules() throws {
        let harness = try LiveService(transport: .inProcess)
        let (publish, read) = (harness.tokens[.routesPublish]!, harness.reader!)
        let clock = Mutex(Date())
        let at = Date().addingTimeInterval(3_600)
        let created = harness.call("POST", "/v1/schedules", token: publish, headers: [("If-Match", "\"rev-1\"")],
                                   body: scheduleBody(extraRoute: "nine", at: at, message: "At nine"))
        #expect(created.status == 201 && created.json["status"] == "pending" && created["Location"] == "/v1/schedules/1", "\(created.text)")
        let other = harness.call("POST", "/v1/schedules", token: publish, headers: [("If-Match", "\"rev-1\"")],
                                 body: scheduleBody(extraRoute: "ten", at: at.addingTimeInterval(3_600)))
        #expect(other.status == 201)
        // Refusals, nothing stored.
        #expect(harness.call("POST", "/v1/schedules", token: publish, headers: [("If-Match", "\"rev-1\"")],
                             body: scheduleBody(extraRoute: "past", at: Date().addingTimeInterval(-60))).errorCode == "badTime")
        #expect(harness.call("POST", "/v1/schedules", token: publish, headers: [("If-Match", "\"rev-9\"")],
                             body: scheduleBody(extraRoute: "stale", at: at)).status == 412)
        #expect(harness.call("POST", "/v1/schedules", token: publish, headers: [("If-Match", "\"rev-1\"")],
                             body: #"{"at": "\#(Timestamp.format(at))", "routes": {"format": "waymark.routes/1", "app": "storefront", "routes": [{"id": "x"}]}}"#).status == 422)
        #expect(harness.call("GET", "/v1/schedules", token: read).json["schedules"]?.arrayValue?.count == 2)
        #expect(harness.call("GET", "/v1/schedules/1", token: read).json["routes"]?["routes"]?.arrayValue?.count == 11)
        // Cancel the second; again is a conflict.
        #expect(harness.call("DELETE", "/v1/schedules/2", token: publish).json["status"] == "cancelled")
        #expect(harness.call("DELETE", "/v1/schedules/2", token: publish).errorCode == "notPending")
        // The look fires the first once the clock passes its time.
        harness.api.startScheduling(every: 0.02) { clock.withLock { $0 } }
        Thread.sleep(forTimeInterval: 0.1)
        #expect(harness.store.snapshot.revisions.count == 1, "not before its time")
        clock.withLock { $0 = at.addingTimeInterval(1) }
        var fired = false
        for _ in 0..<500 where !fired {
            fired = harness.call("GET", "/v1/schedules/1", token: read).json["status"] == "fired"
            if !fired { Thread.sleep(forTimeInterval: 0.01) }
        }
        #expect(fired)
        #expect(harness.store.snapshot.current?.number == 2 && harness.store.snapshot.current?.message == "At nine")
        #expect(harness.call("GET", "/v1/schedules/1", token: read).json["revision"] == 2)
        let metrics = harness.call("GET", "/metrics", token: harness.tokens[.telemetryRead]!).text
        #expect(metrics.contains("waymark_schedules_fired_total 1") && metrics.contains("waymark_schedules_pending 0"))
    }

    @Test("A running rollout is looked at once the wall clock has moved by the look interval, not only after that long in real time")
    func aClockMoveBringsALook() throws {
        let harness = try LiveService(transport: .inProcess) { $0.rolloutLookInterval = 3_600 }
        let (publish, read) = (harness.tokens[.routesPublish]!, harness.reader!)
        guard case .object(var body) = try JSONParser().parse(publishBody(extraRoute: "candidate", message: "Winter")) else { return }
        body["rollout"] = [:]
        #expect(harness.call("POST", "/v1/revisions", token: publish, headers: [("If-Match", "\"rev-1\"")], body: JSONValue.object(body).serialized()).status == 201)
        let start = Date(timeIntervalSince1970: Double(Int(Date().timeIntervalSince1970)))
        let clock = Mutex(start)
        func checked(_ expected: Date) -> Bool {
            for _ in 0..<500 {
                if harness.call("GET", "/v1/rollout", token: read).json["guard"]?["checked"]?.stringValue == Timestamp.format(expected) { return true }
                Thread.sleep(forTimeInterval: 0.01)
            }
            return false
        }
        harness.api.startScheduling(every: 0.02) { clock.withLock { $0 } }
        defer { harness.api.stopScheduling() }
        #expect(checked(start), "the first tick looks")
        clock.withLock { $0 = start.addingTimeInterval(3_599) }
        Thread.sleep(forTimeInterval: 0.2)
        #expect(harness.call("GET", "/v1/rollout", token: read).json["guard"]?["checked"]?.stringValue == Timestamp.format(start),
                "a move short of the interval brings none")
        clock.withLock { $0 = start.addingTimeInterval(3_600) }
        #expect(checked(start.addingTimeInterval(3_600)), "a move of the interval brings one at once, not an hour later")
    }

    @Test("A rollout over the API: the candidate reaches only its cohorts, controls need the version, promote makes it current")
    func rollout() throws {
        let harness = try LiveService(transport: .inProcess)
        let (publish, read) = (harness.tokens[.routesPublish]!, harness.reader!)
        guard case .object(var body) = try JSONParser().parse(publishBody(extraRoute: "candidate", message: "Winter")) else { return }
        body["rollout"] = [:]
        let started = harness.call("POST", "/v1/revisions", token: publish, headers: [("If-Match", "\"rev-1\"")], body: JSONValue.object(body).serialized())
        #expect(started.status == 201 && started.json["rollout"]?["percent"] == 1 && started.json["number"] == 2, "\(started.text)")
        func served(_ cohort: String) -> Int? {
            harness.call("GET", "/v1/manifest?platform=ios&version=5.3.0" + cohort, token: read).json["revision"]?.intValue
        }
        #expect(served("&cohort=0") == 2 && served("&cohort=1") == 1 && served("&cohort=99") == 1 && served("") == 1)
        #expect(harness.call("GET", "/v1/revisions", token: read).json["current"] == 1)
        #expect(harness.call("POST", "/v1/revisions", token: publish, headers: [("If-Match", "\"rev-1\"")],
                             body: publishBody(extraRoute: "other")).errorCode == "rolloutInProgress")
        let rollout = harness.call("GET", "/v1/rollout", token: read)
        #expect(rollout.status == 200 && rollout["ETag"] == "\"rollout-2-1\"")
        #expect(harness.call("POST", "/v1/rollout/pause", token: publish).status == 428)
        #expect(harness.call("POST", "/v1/rollout/pause", token: publish, headers: [("If-Match", "\"rollout-2-9\"")]).errorCode == "staleVersion")
        let advanced = harness.call("POST", "/v1/rollout/advance", token: publish, headers: [("If-Match", "\"rollout-2-1\"")])
        #expect(advanced.json["percent"] == 10 && advanced["ETag"] == "\"rollout-2-2\"")
        #expect((0..<100).filter { served("&cohort=\($0)") == 2 } == Array(0..<10))
        let promoted = harness.call("POST", "/v1/rollout/promote", token: publish, headers: [("If-Match", "\"rollout-2-2\"")])
        #expect(promoted.json["status"] == "completed")
        #expect(served("&cohort=50") == 2 && served("") == 2 && harness.call("GET", "/v1/revisions", token: read).json["current"] == 2)
        #expect(harness.call("POST", "/v1/rollout/abort", token: publish, headers: [("If-Match", "\"rollout-2-3\"")]).errorCode == "notApplicable")
    }

    @Test("During a rollout the apple-app-site-association covers the candidate's links too; after an abort, the stable one's only")
    func associatedDomainsDuringARollout() throws {
        let harness = try LiveService(transport: .inProcess)
        let publish = harness.tokens[.routesPublish]!
        func components() -> [JSONValue] {
            harness.call("GET", "/.well-known/apple-app-site-association").json["applinks"]?["details"]?.arrayValue?.first?["components"]?.arrayValue ?? []
        }
        #expect(!components().contains(["/": "/campaign/candidate"]))
        guard case .object(var body) = try JSONParser().parse(publishBody(extraRoute: "candidate")) else { return }
        body["rollout"] = [:]
        #expect(harness.call("POST", "/v1/revisions", token: publish, headers: [("If-Match", "\"rev-1\"")], body: JSONValue.object(body).serialized()).status == 201)
        #expect(components().contains(["/": "/campaign/candidate"]), "the candidate's cohorts open its links in the app")
        #expect(components().contains(["/": "/p/*"]), "and the stable revision's still")
        #expect(harness.call("POST", "/v1/rollout/abort", token: publish, headers: [("If-Match", "\"rollout-2-1\"")]).status == 200)
        #expect(!components().contains(["/": "/campaign/candidate"]), "aborted: only the stable revision's")
    }

    @Test("Any cohort gets the current revision while no rollout runs: the same bytes and ETag")
    func cohortsWithoutARollout() throws {
        let harness = try LiveService(transport: .inProcess)
        let read = harness.tokens[.manifestRead]!
        let plain = harness.call("GET", "/v1/manifest?platform=ios&version=5.3.0", token: read)
        for cohort in ["0", "7", "99"] {
            let answer = harness.call("GET", "/v1/manifest?platform=ios&version=5.3.0&cohort=\(cohort)", token: read)
            #expect(answer.status == 200 && answer["ETag"] == plain["ETag"] && answer.body == plain.body, "cohort \(cohort)")
        }
    }

    @Test("Publishing the current routes again answers 200 unchanged: no revision, the manifest's ETag stays")
    func unchangedPublish() throws {
        let harness = try LiveService(transport: .inProcess)
        let token = harness.tokens[.routesPublish]!
        let read = harness.tokens[.manifestRead]!
        let before = harness.call("GET", "/v1/manifest?platform=ios&version=5.3.0", token: read)["ETag"]
        let same = JSONValue.object(["message": "CI", "routes": Fixtures.storefrontRoutesJSON]).serialized()
        let again = harness.call("POST", "/v1/revisions", token: token, headers: [("If-Match", "\"rev-1\"")], body: same)
        #expect(again.status == 200 && again.json["unchanged"] == true && again.json["number"] == 1 && again["ETag"] == "\"rev-1\"")
        #expect(harness.store.snapshot.revisions.count == 1)
        #expect(harness.call("GET", "/v1/manifest?platform=ios&version=5.3.0", token: read)["ETag"] == before)
        let changed = harness.call("POST", "/v1/revisions", token: token, headers: [("If-Match", "\"rev-1\"")], body: publishBody(extraRoute: "a"))
        #expect(changed.status == 201 && changed.json["unchanged"] == nil)
    }

    @Test func schemaRegistrationReportsDrift() throws {
        let harness = try LiveService(transport: .inProcess)
        let schema = String(decoding: try Data(contentsOf: Fixtures.repositoryRoot.appendingPathComponent("manifests/storefront/schema-ios-5.2.0.json")), as: UTF8.self)
            .replacingOccurrences(of: "\"version\": \"5.2.0\"", with: "\"version\": \"5.2.1\"")
        let response = harness.call("PUT", "/v1/schemas/ios/5.2.1", token: harness.tokens[.schemasWrite]!, body: schema)
        #expect(response.status == 201)
        #expect(response.json["unresolvableRoutes"] == ["new-arrivals"])
        let mismatch = harness.call("PUT", "/v1/schemas/ios/6.0.0", token: harness.tokens[.schemasWrite]!, body: schema)
        #expect(mismatch.status == 422)
    }

    @Test func associatedDomainFilesArePublic() throws {
        let harness = try LiveService(transport: .inProcess)
        let apple = harness.call("GET", "/.well-known/apple-app-site-association")
        #expect(apple.status == 200)
        let details = apple.json["applinks"]?["details"]?.arrayValue?.first
        #expect(details?["appIDs"] == ["ABCDE12345.example.storefront"])
        #expect(details?["components"]?.arrayValue?.contains(["/": "/p/*"]) == true)
        #expect(details?["components"]?.arrayValue?.contains(["/": "/campaign/fresh"]) == false)
        let published = harness.call("POST", "/v1/revisions", token: harness.tokens[.routesPublish]!, headers: [("If-Match", "\"rev-1\"")],
                                     body: publishBody(extraRoute: "fresh"))
        #expect(published.status == 201)
        let after = harness.call("GET", "/.well-known/apple-app-site-association").json["applinks"]?["details"]?.arrayValue?.first
        #expect(after?["components"]?.arrayValue?.contains(["/": "/campaign/fresh"]) == true, "a new revision reaches the cached file")
        let google = harness.call("GET", "/.well-known/assetlinks.json")
        #expect(google.status == 200)
        #expect(harness.call("GET", "/readyz").status == 200)
        #expect(harness.call("GET", "/healthz").status == 200)
    }

    @Test func publicReadsNeedNoToken() throws {
        let harness = try LiveService(publicReads: true, transport: .inProcess)
        #expect(harness.call("GET", "/v1/manifest?platform=ios&version=5.3.0").status == 200)
        #expect(harness.call("POST", "/v1/validate", body: "{}").status == 401, "writes still need a token")
    }
}
