import CivilDate
import Foundation
import RouteEngine
import Testing
import TestSupport
@testable import WaymarkAPI

/// `POST /v1/revisions/N/impact` over loopback: telemetry posted through the API, a draft
/// replayed against it.
@Suite("Draft impact over loopback", .serialized)
struct ImpactEndpointTests {
    /// The example's routes with `product`'s patterns replaced, and `extra` routes added.
    static func draft(productPatterns: [String], extra: [JSONValue] = []) -> String {
        guard case .object(var document) = Fixtures.storefrontRoutesJSON, case .array(var routes)? = document["routes"] else { return "" }
        routes = routes.map { route in
            guard case .object(var object) = route, object["id"] == "product" else { return route }
            object["patterns"] = .array(productPatterns.map(JSONValue.string))
            return .object(object)
        }
        document["routes"] = .array(routes + extra)
        return JSONValue.object(document).serialized()
    }

    @Test func anAliasRemovedAndAShapeGainedAreCountedFromPostedTelemetry() throws {
        let service = try LiveService()
        let write = service.tokens[.telemetryWrite]!, publish = service.tokens[.routesPublish]!
        let hourAgo = Timestamp.format(Int(Date().timeIntervalSince1970) - 3_600)
        let body = telemetryBody([
            #"{"ts": "\#(hourAgo)", "entry": "universalLink", "outcome": "proceed", "route": "product", "count": 40}"#,
            #"{"entry": "scheme", "outcome": "gated", "precondition": "auth", "route": "product", "count": 2}"#,
            #"{"entry": "scheme", "outcome": "notFound", "reason": "validationFailed", "route": "product", "count": 9}"#,
            #"{"entry": "scheme", "outcome": "proceed", "route": "cart", "count": 5}"#,
            #"{"entry": "universalLink", "outcome": "notFound", "reason": "unknownRoute", "shape": "/winter/:param"}"#,
            #"{"entry": "push", "outcome": "proceed", "route": "no-such-route", "count": 3}"#,
        ])
        #expect(service.call("POST", "/v1/telemetry", token: write, body: body).status == 202)

        let winter: JSONValue = ["id": "winter", "patterns": ["/winter/:id"], "destination": "product"]
        let out = service.call("POST", "/v1/revisions/1/impact", token: publish, body: Self.draft(productPatterns: ["/product/:id", "/deeplink/product/:id"], extra: [winter]))
        #expect(out.status == 200, "\(out.text)")
        #expect(out["Cache-Control"] == "no-store")
        let routes = out.json["routes"]?.arrayValue ?? []
        #expect(routes.map { $0["id"]?.stringValue } == ["product"], "cart is unchanged")
        #expect(routes.first?["opens"] == .int(42), "proceeded and gated, not the failures")
        let change = routes.first?["changes"]?.arrayValue?.first
        #expect(change?["kind"] == "patternRemoved" && change?["pattern"] == "/p/:id" && change?["basis"] == "upTo")
        #expect(change?["count"] == JSONValue.int(42) && change?["warning"] == JSONValue.bool(true))
        #expect(change?["builds"] == [["platform": "ios", "version": "5.3.0", "count": 42]])
        #expect(change?["message"]?.stringValue?.hasPrefix("Up to 42 opens last week would no longer open product") == true, "\(out.text)")
        let gained = out.json["gained"]?.arrayValue ?? []
        #expect(gained.map { $0["shape"] } == ["/winter/:param"], "\(service.call("GET", "/v1/telemetry/unknown-links", token: service.tokens[.telemetryRead]!).text)")
        #expect(gained.first?["route"] == "winter" && gained.first?["count"] == JSONValue.int(1))
        // Opens under no route the revisions have cannot be replayed: counted apart.
        #expect(out.json["unattributed"] == JSONValue.int(3) && out.json["allOpens"] == JSONValue.int(50), "\(out.text)")

        // The example itself: nothing changes, nothing gained.
        let same = service.call("POST", "/v1/revisions/1/impact", token: publish, body: Fixtures.storefrontRoutesJSON.serialized())
        #expect(same.json["routes"] == [] && same.json["gained"] == [] && same.json["unreadable"] == JSONValue.int(0), "\(same.text)")
        #expect(service.store.snapshot.revisions.count == 1, "nothing is published")
    }

    /// With no unknown link counted yet, the shapes' counts start now, not at 1970.
    @Test func shapesSinceIsNowWhenNothingWasCounted() throws {
        let service = try LiveService()
        let before = Int(Date().timeIntervalSince1970)
        let out = service.call("POST", "/v1/revisions/1/impact", token: service.tokens[.routesPublish]!, body: Fixtures.storefrontRoutesJSON.serialized())
        #expect(out.status == 200, "\(out.text)")
        let since = out.json["shapesSince"]?.stringValue.flatMap(Timestamp.parse).map { Int($0.timeIntervalSince1970) } ?? 0
        #expect(since >= before - 1 && since <= Int(Date().timeIntervalSince1970) + 1, "\(out.text)")
        #expect(out.json["unattributed"] == JSONValue.int(0) && out.json["allOpens"] == JSONValue.int(0))
    }

    @Test func aBuildThatCanNoLongerResolveARouteLosesItsOpensExactly() throws {
        let service = try LiveService()
        let write = service.tokens[.telemetryWrite]!
        for (version, count) in [("5.2.0", 7), ("5.3.0", 11)] {
            let body = telemetryBody([#"{"entry": "scheme", "outcome": "proceed", "route": "home", "count": \#(count)}"#],
                                     client: #"{"platform": "ios", "appVersion": "\#(version)", "revision": 1}"#)
            #expect(service.call("POST", "/v1/telemetry", token: write, body: body).status == 202)
        }
        // home now shows New Arrivals, a screen ios 5.2.0 does not have.
        guard case .object(var document) = Fixtures.storefrontRoutesJSON, case .array(let routes)? = document["routes"] else { return }
        document["routes"] = .array(routes.map { route in
            guard case .object(var object) = route, object["id"] == "home" else { return route }
            object["destination"] = "newArrivals"
            return .object(object)
        })
        let out = service.call("POST", "/v1/revisions/1/impact", token: service.tokens[.routesPublish]!, body: JSONValue.object(document).serialized())
        let changes = out.json["routes"]?.arrayValue?.first?["changes"]?.arrayValue ?? []
        #expect(out.json["routes"]?.arrayValue?.map { $0["id"] } == ["home"], "\(out.text)")
        #expect(changes.map { $0["kind"] } == ["buildDropped"])
        #expect(changes.first?["count"] == JSONValue.int(7) && changes.first?["basis"] == "exact")
        #expect(changes.first?["builds"] == [["platform": "ios", "version": "5.2.0", "count": 7]])
    }

    @Test func badInputIsRefusedByName() throws {
        let service = try LiveService(transport: .inProcess)
        let publish = service.tokens[.routesPublish]!
        #expect(service.call("POST", "/v1/revisions/9/impact", token: publish, body: Fixtures.storefrontRoutesJSON.serialized()).errorCode == "unknownRevision")
        #expect(service.call("POST", "/v1/revisions/x/impact", token: publish, body: "{}").errorCode == "badRevision")
        #expect(service.call("POST", "/v1/revisions/1/impact", token: publish, body: "[1]").errorCode == "badJSON")
        #expect(service.call("POST", "/v1/revisions/1/impact", token: publish, body: "{\"routes\": 3}").errorCode == "invalidRoutes")
        let reader = service.call("POST", "/v1/revisions/1/impact", token: service.tokens[.routesRead]!, body: Fixtures.storefrontRoutesJSON.serialized())
        #expect(reader.status == 403)
    }

    @Test func aTokenHoldsTwoImpactsAtOnce() {
        let held = ImpactEndpoints.Held()
        #expect(held.take("a") && held.take("a"))
        #expect(!held.take("a"), "a third waits for one of them")
        #expect(held.take("b"), "another token is not held back")
        held.give("a")
        #expect(held.take("a") && !held.take("a"))
    }
}
