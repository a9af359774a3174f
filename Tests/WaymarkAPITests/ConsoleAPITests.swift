import Foundation
import HTTPCore
import ManifestStore
import RouteEngine
import Testing
import TestSupport
@testable import WaymarkAPI

/// What the marketing console adds to the API: links resolved on a draft (`POST /v1/resolve`
/// with `"routes"`), field-by-field diffs (of two revisions and of a draft), one build's
/// schema, and the page itself.
@Suite("Console API, in-process")
struct ConsoleAPITests {
    /// The example's routes plus a campaign route to an order (a gated destination).
    static func draft(extra route: JSONValue = ["id": "winter", "patterns": ["/winter/:orderId"], "destination": "orderDetail",
                                               "validUntil": "2030-01-01T00:00:00Z"]) -> JSONValue {
        guard case .object(var document) = Fixtures.storefrontRoutesJSON, case .array(var routes)? = document["routes"] else { return .null }
        routes.append(route)
        document["routes"] = .array(routes)
        return .object(document)
    }

    static func resolveBody(_ url: String, build: (String, String)?, satisfied: [String] = [], now: String? = nil, routes: JSONValue) -> String {
        var object: [String: JSONValue] = ["url": .string(url), "satisfied": .array(satisfied.map(JSONValue.string)), "routes": routes]
        if let build { (object["platform"], object["version"]) = (.string(build.0), .string(build.1)) }
        if let now { object["now"] = .string(now) }
        return JSONValue.object(object).serialized()
    }

    @Test func aDraftResolvesAsItsBuildsWouldOncePublished() throws {
        let service = try LiveService(transport: .inProcess)
        let token = service.tokens[.routesPublish]!
        let link = "https://storefront.example/winter/7"
        let out = service.call("POST", "/v1/resolve", token: token, body: Self.resolveBody(link, build: ("ios", "5.3.0"), routes: Self.draft()))
        #expect(out.status == 200, "\(out.text)")
        #expect(out.json["draft"] == .bool(true) && out.json["revision"] == .null && out.json["base"] == .int(1))
        #expect(out.json["resolution"]?["outcome"]?.stringValue == "gated")
        #expect(out.json["resolution"]?["precondition"]?.stringValue == "auth")
        let signedIn = service.call("POST", "/v1/resolve", token: token,
                                    body: Self.resolveBody(link, build: ("ios", "5.3.0"), satisfied: ["auth"], routes: Self.draft()))
        #expect(signedIn.json["resolution"]?["outcome"]?.stringValue == "proceed")
        #expect(signedIn.json["resolution"]?["route"]?.stringValue == "winter")
        #expect(signedIn.json["resolution"]?["params"]?["orderId"] == .int(7))
        let later = service.call("POST", "/v1/resolve", token: token,
                                 body: Self.resolveBody(link, build: ("ios", "5.3.0"), satisfied: ["auth"], now: "2031-01-01T00:00:00Z", routes: Self.draft()))
        #expect(later.json["resolution"]?["reason"]?.stringValue == "expired")
        // The published revision knows nothing of it.
        let published = service.call("POST", "/v1/resolve", token: token, body: "{\"url\": \"\(link)\", \"platform\": \"ios\", \"version\": \"5.3.0\"}")
        #expect(published.json["resolution"]?["reason"]?.stringValue == "unknownRoute")
        // Every build at once, each with the routes it cannot resolve.
        let all = service.call("POST", "/v1/resolve", token: token, body: Self.resolveBody(link, build: nil, satisfied: ["auth"], routes: Self.draft()))
        let builds = all.json["builds"]?.arrayValue ?? []
        #expect(builds.map { "\($0["platform"]?.stringValue ?? "") \($0["version"]?.stringValue ?? "")" } == ["ios 5.2.0", "ios 5.3.0"])
        #expect(builds.allSatisfy { $0["resolution"]?["outcome"]?.stringValue == "proceed" })
        #expect(builds.first?["unresolvable"] == ["new-arrivals"], "5.2.0 has no New Arrivals screen")
        #expect(builds.last?["unresolvable"] == [])
        #expect(service.store.snapshot.revisions.count == 1, "a preview publishes nothing")
    }

    /// A draft costs what a validation does: the publishing scope, decided before the body
    /// is read for its size; a reading token keeps the small limit and cannot send a draft.
    @Test func aDraftNeedsThePublishingScope() throws {
        let service = try LiveService(transport: .inProcess)
        let body = Self.resolveBody("https://storefront.example/winter/7", build: ("ios", "5.3.0"), routes: Self.draft())
        let reader = service.call("POST", "/v1/resolve", token: service.tokens[.routesRead]!, body: body)
        #expect(reader.status == 403, "\(reader.text)")
        #expect(reader.json["error"]?["details"]?["required"]?.stringValue == "routes:publish")
        // A body over the reading limit: refused at the head for a reading token, read for a publishing one.
        let padded = Self.resolveBody("https://storefront.example/" + String(repeating: "a", count: PreviewEndpoints.maximumBody), build: ("ios", "5.3.0"),
                                      routes: Self.draft())
        #expect(service.call("POST", "/v1/resolve", token: service.tokens[.routesRead]!, body: padded).status == 413)
        #expect(service.call("POST", "/v1/resolve", token: service.tokens[.routesPublish]!, body: padded).status == 200)
    }

    /// JSON Pointers (RFC 6901, `~` and `/` escaped) to each changed value; objects compared
    /// key by key all the way down, anything else whole.
    @Test(arguments: [
        (["a": 1], ["a": 2], [["path": "/a", "from": 1, "to": 2]]),
        (["a": 1], ["a": 1, "b": "x"], [["path": "/b", "to": "x"]]),
        (["a": 1, "b": "x"], ["a": 1], [["path": "/b", "from": "x"]]),
        (["w": ["from": "t1", "to": "t2"]], ["w": ["from": "t1", "to": "t3"]], [["path": "/w/to", "from": "t2", "to": "t3"]]),
        (["p": ["/a", "/b"]], ["p": ["/a", "/c"]], [["path": "/p", "from": ["/a", "/b"], "to": ["/a", "/c"]]]),
        (["a/b": 1, "m~n": 1], ["a/b": 2, "m~n": 2], [["path": "/a~1b", "from": 1, "to": 2], ["path": "/m~0n", "from": 1, "to": 2]]),
        (["o": ["x": 1]], ["o": "flat"], [["path": "/o", "from": ["x": 1], "to": "flat"]]),
        (["same": ["deep": [1, 2]]], ["same": ["deep": [1, 2]]], []),
    ] as [(JSONValue, JSONValue, [JSONValue])])
    func fieldChanges(before: JSONValue, after: JSONValue, expected: [JSONValue]) {
        #expect(RevisionEndpoints.fieldChanges(before, after, at: "") == expected)
    }

    @Test func diffsGoFieldByFieldForRevisionsAndDrafts() throws {
        let service = try LiveService(transport: .inProcess)
        guard case .object(var document) = Fixtures.storefrontRoutesJSON, case .array(var routes)? = document["routes"] else { return }
        let spring = routes.firstIndex { $0["id"]?.stringValue == "spring-sale" }!
        guard case .object(var route) = routes[spring] else { return }
        route["owner"] = "brand"
        route["notes"] = nil
        route["hosts"] = ["storefront.example"]
        routes[spring] = .object(route)
        routes.removeAll { $0["id"]?.stringValue == "settings" }
        routes.append(["id": "winter", "patterns": ["/winter"], "destination": "home"])
        document["routes"] = .array(routes)
        let changed = JSONValue.object(document)
        let expected: JSONValue = [["id": "spring-sale", "fields": [["path": "/hosts", "to": ["storefront.example"]],
                                                                    ["path": "/notes", "from": "Spring campaign 2026."],
                                                                    ["path": "/owner", "from": "marketing", "to": "brand"]]]]
        let draft = service.call("POST", "/v1/revisions/1/diff", token: service.tokens[.routesPublish]!, body: changed.serialized())
        #expect(draft.status == 200, "\(draft.text)")
        #expect(draft.json["from"] == .int(1) && draft.json["to"] == .null && draft.json["draft"] == .bool(true))
        #expect(draft.json["added"] == ["winter"] && draft.json["removed"] == ["settings"] && draft.json["changed"] == ["spring-sale"])
        #expect(draft.json["changes"] == expected)
        let published = service.call("POST", "/v1/revisions", token: service.tokens[.routesPublish]!, headers: [("If-Match", "\"rev-1\"")],
                                     body: JSONValue.object(["message": "m", "routes": changed]).serialized())
        #expect(published.status == 201, "\(published.text)")
        let revisions = service.call("GET", "/v1/revisions/1/diff/2", token: service.tokens[.routesRead]!)
        #expect(revisions.json["changes"] == expected)
        #expect(revisions.json["added"] == ["winter"] && revisions.json["removed"] == ["settings"])
        #expect(service.store.snapshot.revisions.count == 2, "a draft's diff stored nothing")
    }

    @Test func oneBuildsSchemaIsServedAsRegistered() throws {
        let service = try LiveService(transport: .inProcess)
        let reply = service.call("GET", "/v1/schemas/ios/5.3.0", token: service.tokens[.routesRead]!)
        #expect(reply.status == 200)
        #expect(reply.body == Array(schema53Text.utf8) || (try? JSONParser().parse(reply.body)) == (try? JSONParser().parse(Array(schema53Text.utf8))))
        let etag = try #require(reply["ETag"])
        #expect(service.call("GET", "/v1/schemas/ios/5.3.0", token: service.tokens[.routesRead]!, headers: [("If-None-Match", etag)]).status == 304)
    }

    @Test func theConsolePageIsOpenAndLockedDown() throws {
        let service = try LiveService(transport: .inProcess)
        let page = service.call("GET", "/console")
        #expect(page.status == 200)
        #expect(page["Content-Type"] == "text/html; charset=utf-8")
        let policy = try #require(page["Content-Security-Policy"])
        #expect(policy.hasPrefix("default-src 'none'; script-src 'sha256-"))
        #expect(policy.contains("connect-src 'self'") && policy.contains("img-src 'self' blob:") && policy.contains("frame-ancestors 'none'"))
        #expect(!policy.contains("unsafe"))
        #expect(policy == InlinePage.policy(for: page.body, extra: ["connect-src 'self'", "img-src 'self' blob:"]), "the hashes are the served page's")
        #expect(service.call("GET", "/console", headers: [("If-None-Match", try #require(page["ETag"]))]).status == 304)
    }
}
