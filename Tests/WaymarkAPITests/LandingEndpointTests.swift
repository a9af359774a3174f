import Foundation
import HTTPCore
import ManifestStore
import RouteEngine
import Telemetry
import Testing
import TestSupport
import WaymarkAPI

/// Link landing on the storefront example (iOS 5.2.0 and 5.3.0; 5.3.0 declares where links
/// land), with three more routes: a live campaign with a fallback, search with a fallback
/// that receives its mapped query item, and a route whose fallback is its own link.
@Suite("Link landing, in-process", .serialized)
struct LandingEndpointTests {
    static let iPhone = "Mozilla/5.0 (iPhone; CPU iPhone OS 17_4 like Mac OS X) AppleWebKit/605.1.15 Version/17.4 Mobile/15E148 Safari/604.1"
    static let android = "Mozilla/5.0 (Linux; Android 14; Pixel 8) AppleWebKit/537.36 Chrome/124.0 Mobile Safari/537.36"
    static let desktop = "Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 Chrome/124.0 Safari/537.36"
    static let appStore = "https://apps.apple.com/app/id6450000000"
    static let playStore = "https://play.google.com/store/apps/details?id=example.storefront"
    static let web = "https://web.storefront.example/"

    /// In-process every request comes from one unknown network: the shapes' per-source
    /// allowance and the sources a suggestion needs are opened up (make test-guard holds them).
    static func harness() throws -> LiveService {
        let harness = try LiveService(transport: .inProcess) { options in
            options.shapesPerSource = 1_000
            options.shapesPerNetwork = 1_000
            options.sourcesForSuggestion = 1
        }
        guard case .object(var document) = Fixtures.storefrontRoutesJSON, case .array(var routes)? = document["routes"] else { throw Failure("fixture") }
        for (index, route) in routes.enumerated() where route["id"]?.stringValue == "search" {
            guard case .object(var search) = route else { continue }
            search["fallbackURL"] = "https://web.storefront.example/search?src=link#results"
            routes[index] = .object(search)
        }
        routes.append(["id": "autumn-sale", "patterns": ["/sale/autumn"], "destination": "promo", "params": ["code": ["const": "AUTUMN26"]],
                       "fallbackURL": "https://web.storefront.example/sale", "owner": "marketing"])
        routes.append(["id": "loop", "patterns": ["/loop"], "destination": "home", "fallbackURL": "https://Storefront.example:443/loop/", "owner": "marketing"])
        document["routes"] = .array(routes)
        let body = JSONValue.object(["message": "landing routes", "routes": .object(document)]).serialized()
        let published = harness.call("POST", "/v1/revisions", token: harness.tokens[.routesPublish]!, headers: [("If-Match", "\"rev-1\"")], body: body)
        guard published.status == 201 else { throw Failure("publish: \(published.status) \(published.text)") }
        return harness
    }

    /// Every byte but RFC 3986's unreserved ones percent-encoded, as a referrer is.
    static func encoded(_ text: String) -> String {
        text.addingPercentEncoding(withAllowedCharacters: CharacterSet(charactersIn: "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-._~"))!
    }

    struct Failure: Error, CustomStringConvertible {
        let description: String
        init(_ description: String) { self.description = description }
    }

    /// (label, method, target, host, user agent, status, Location or nil)
    static let rows: [(String, String, String, String?, String?, Int, String?)] = [
        ("a live route's fallback", "GET", "/sale/autumn", "storefront.example", iPhone, 302, "https://web.storefront.example/sale"),
        ("the same for every platform", "GET", "/sale/autumn", "storefront.example", desktop, 302, "https://web.storefront.example/sale"),
        ("no fallback: the App Store on iOS", "GET", "/product/p1", "storefront.example", iPhone, 302, appStore),
        ("no fallback: Google Play on Android", "GET", "/product/p1", "storefront.example", android, 302, playStore),
        ("no fallback: the web on a desktop", "GET", "/p/p1", "www.storefront.example", desktop, 302, web),
        ("no User-Agent lands as a desktop", "GET", "/product/p1", "storefront.example", nil, 302, web),
        ("gated is resolved: the store", "GET", "/cart", "storefront.example", iPhone, 302, appStore),
        ("mapped query item passed on, others dropped", "GET", "/search?utm_source=mail&q=red%20shoes&email=a%40b.example", "storefront.example", iPhone, 302,
         "https://web.storefront.example/search?src=link&q=red%20shoes#results"),
        ("a fallback that is the link itself is skipped", "GET", "/loop", "storefront.example", android, 302, playStore),
        ("host without case, with :443", "GET", "/product/p1", "STOREFRONT.example:443", iPhone, 302, appStore),
        ("an expired campaign: the page", "GET", "/sale/spring", "storefront.example", iPhone, 404, nil),
        ("an unknown link: the page", "GET", "/summer/promo", "storefront.example", desktop, 404, nil),
        ("a param that fails its type: the page", "GET", "/product/INVALID", "storefront.example", android, 404, nil),
        ("dot segments: the page", "GET", "/a/../product/p1", "storefront.example", iPhone, 404, nil),
        ("an encoded slash: the page", "GET", "/product/..%2F..%2Fetc%2Fpasswd", "storefront.example", iPhone, 404, nil),
        ("invalid UTF-8: the page", "GET", "/product/%FF%FE", "storefront.example", iPhone, 404, nil),
        ("a bad escape is refused by the server before landing", "GET", "/product/%zz", "storefront.example", iPhone, 400, nil),
        ("over 2,048 bytes: the page", "GET", "/product/" + String(repeating: "p", count: 2_100), "storefront.example", iPhone, 404, nil),
        ("a network-path target is a path like any other", "GET", "//evil.example/%2F..", "storefront.example", iPhone, 404, nil),
        ("an open-redirect attempt in the query", "GET", "/summer?next=https://evil.example/&url=//evil.example", "storefront.example", iPhone, 404, nil),
        ("HEAD as GET", "HEAD", "/product/p1", "storefront.example", iPhone, 302, appStore),
        ("HEAD of the page", "HEAD", "/nothing", "storefront.example", iPhone, 404, nil),
    ]

    @Test func everyBranchLandsOnlyOnValidatedAddresses() throws {
        let harness = try Self.harness()
        let validated = [Self.appStore, Self.playStore, Self.web, "https://web.storefront.example/sale", "https://web.storefront.example/search?src=link"]
        for row in Self.rows {
            let reply = harness.call(row.1, row.2, host: row.3, headers: row.4.map { [("User-Agent", $0)] } ?? [])
            if row.6 == Self.appStore, row.1 == "GET" {
                // An iPhone without the app gets the hand-off page, whose one link is the store (LandingHandOffTests).
                #expect(reply.status == 200 && reply["Location"] == nil, "\(row.0): \(reply.head)")
                #expect(reply.text.contains("id=\"get\" class=\"get\" href=\"\(Self.appStore)\""), "\(row.0)")
                continue
            }
            #expect(reply.status == row.5, "\(row.0): \(reply.head)")
            if row.6 == Self.playStore {
                // Google Play's address carries the link as its Install Referrer (LandingDecisionTests has the rule).
                let link = "https://" + row.3!.lowercased().replacingOccurrences(of: ":443", with: "") + row.2.prefix { $0 != "?" }
                let referrer = "deeplink=" + Self.encoded(link) + "&t="
                #expect(reply["Location"]?.hasPrefix(Self.playStore + "&referrer=" + Self.encoded(referrer)) == true, "\(row.0): \(reply["Location"] ?? "")")
            } else {
                #expect(reply["Location"] == row.6, "\(row.0)")
            }
            if let location = reply["Location"] {
                #expect(validated.contains { location.hasPrefix($0) }, "\(row.0): \(location) is a validated address")
            }
            guard row.5 != 400 else { continue }
            #expect(reply["Vary"] == "User-Agent", "\(row.0)")
            #expect(reply["Cache-Control"] == "public, max-age=0, s-maxage=30", "\(row.0)")
            if row.1 == "HEAD" { #expect(reply.body.isEmpty, "\(row.0)") }
            if row.5 == 404, row.1 == "GET" {
                #expect(reply["Content-Type"] == "text/html; charset=utf-8", "\(row.0)")
                #expect(reply.text.contains("unknown or has expired"), "\(row.0)")
                #expect(!reply.text.contains("evil") && !reply.text.contains("passwd") && !reply.text.contains("http"), "\(row.0): nothing of the link is reflected")
                let policy = try #require(reply["Content-Security-Policy"])
                #expect(policy.hasPrefix("default-src 'none'; script-src 'none'; style-src 'sha256-"), "\(row.0): \(policy)")
            }
        }
    }

    @Test func otherHostsAndOwnPathsAreAnsweredAsBefore() throws {
        let harness = try Self.harness()
        for (label, host, target) in [("an undeclared host", "waymark.test", "/product/p1"), ("no Host", nil, "/product/p1"),
                                      ("a lookalike host", "storefront.example.evil.example", "/product/p1"),
                                      ("the API's own prefix on a link host", "storefront.example", "/v1/nothing"),
                                      ("the well-known prefix on a link host", "storefront.example", "/.well-known/nothing")] as [(String, String?, String)] {
            let reply = harness.call("GET", target, host: host, headers: [("User-Agent", Self.iPhone)])
            #expect(reply.status == (host == nil ? 400 : 404), "\(label): \(reply.head)")
            #expect(reply["Location"] == nil, "\(label)")
            #expect(reply["Content-Type"] != "text/html; charset=utf-8", "\(label): not a landing")
        }
        let own = harness.call("GET", "/.well-known/apple-app-site-association", host: "storefront.example")
        #expect(own.status == 200, "the API's own routes on a link host")
        let post = harness.call("POST", "/product/p1", host: "storefront.example", body: "{}")
        #expect(post.status == 405)
        #expect(post["Allow"] == "GET, HEAD")
    }

    @Test func theSchemasNotFoundAddressTakesTheirPlace() throws {
        let harness = try Self.harness()
        guard case .object(var schema) = Fixtures.json(file: "manifests/storefront/schema-ios-5.3.0.json") else { return }
        schema["version"] = "5.4.0"
        schema["landing"] = ["appStoreURL": .string(Self.appStore), "notFoundURL": "https://web.storefront.example/not-found"]
        let registered = harness.call("PUT", "/v1/schemas/ios/5.4.0", token: harness.tokens[.schemasWrite]!, body: JSONValue.object(schema).serialized())
        #expect(registered.status == 200 || registered.status == 201, "\(registered.text)")
        let unknown = harness.call("GET", "/summer/promo", host: "storefront.example", headers: [("User-Agent", Self.iPhone)])
        #expect(unknown.status == 302)
        #expect(unknown["Location"] == "https://web.storefront.example/not-found")
        // 5.4.0 declares no webURL: a desktop visitor resolves with the newest iOS build and,
        // with nowhere declared for it, gets the "open in the app" page.
        let desktop = harness.call("GET", "/product/p1", host: "storefront.example", headers: [("User-Agent", Self.desktop)])
        #expect(desktop.status == 200)
        #expect(desktop.text.contains("opens in the app"))
    }

    @Test func landingsAreCountedAsWebTelemetryByPlatform() throws {
        let harness = try Self.harness()
        let links: [(String, String)] = [("/product/p1", Self.iPhone), ("/product/p1", Self.iPhone), ("/cart", Self.iPhone),
                                         ("/product/p2", Self.android), ("/summer/promo", Self.desktop), ("/sale/spring", Self.desktop)]
        for (target, agent) in links {
            _ = harness.call("GET", target, host: "storefront.example", headers: [("User-Agent", agent)])
        }
        let flushed = DispatchSemaphore(value: 0)
        harness.api.flushLandings { flushed.signal() }
        #expect(flushed.wait(timeout: .now() + 10) == .success)
        let counts = harness.call("GET", "/v1/telemetry/counts?entry=web&groupBy=platform,outcome,reason,route,appVersion", token: harness.tokens[.telemetryRead]!)
        #expect(counts.status == 200, "\(counts.text)")
        var seen: [String: Int] = [:]
        for group in counts.json["groups"]?.arrayValue ?? [] {
            let key = ["platform", "outcome", "reason", "route", "appVersion"].map { group["key"]?[$0]?.stringValue ?? "-" }.joined(separator: " ")
            seen[key] = group["total"]?.intValue ?? group["count"]?.intValue
        }
        #expect(seen == ["ios proceed none product 5.3.0": 2, "ios gated none cart 5.3.0": 1, "android proceed none product other": 1,
                         "other notFound unknownRoute none other": 1, "other notFound expired spring-sale other": 1], "\(counts.text)")
        let apps = harness.call("GET", "/v1/telemetry/counts?entry=universalLink", token: harness.tokens[.telemetryRead]!)
        #expect(apps.json["total"]?.intValue ?? 0 == 0, "nothing counted under the apps' entry points")
    }

    /// Unknown links landed and reported by apps that opt in are listed by shape, most
    /// followed first, with a route suggestion that validates; nothing personal in any.
    @Test func unknownLinksAreListedByShapeWithSuggestions() throws {
        let harness = try Self.harness()
        let personal = ["/products/p123?email=jane%40example.com", "/products/98765?utm_source=mail&token=s3cr3t", "/Products/abc-DEF-123/"]
        for (index, target) in personal.enumerated() {
            _ = harness.call("GET", target, host: "storefront.example", headers: [("User-Agent", index == 0 ? Self.iPhone : Self.desktop)])
        }
        _ = harness.call("GET", "/zz/jane.doe@example.com", host: "storefront.example", headers: [("User-Agent", Self.android)])
        let batch = telemetryBody([#"{"entry": "universalLink", "outcome": "notFound", "reason": "unknownRoute", "shape": "https://storefront.example/products/+15551234567"}"#])
        #expect(harness.call("POST", "/v1/telemetry", token: harness.tokens[.telemetryWrite]!, body: batch).status == 202)
        let flushed = DispatchSemaphore(value: 0)
        harness.api.flushLandings { flushed.signal() }
        #expect(flushed.wait(timeout: .now() + 10) == .success)
        let reply = harness.call("GET", "/v1/telemetry/unknown-links?limit=5", token: harness.tokens[.telemetryRead]!)
        #expect(reply.status == 200, "\(reply.text)")
        let shapes = reply.json["shapes"]?.arrayValue ?? []
        // The campaign name utm_source is on the allow list: its link is a shape of its own.
        #expect(shapes.map { $0["shape"]?.stringValue ?? "" } == ["/products/:param", "/products/:param?utm_source", "/zz/:param"], "\(reply.text)")
        #expect(shapes.first?["count"]?.intValue == 3)
        #expect(shapes.first?["platforms"]?.arrayValue?.compactMap(\.stringValue) == ["ios", "other"])
        #expect(shapes.first?["entries"]?.arrayValue?.compactMap(\.stringValue) == ["universalLink", "web"])
        #expect(shapes.first?["suggestion"]?["route"]?.stringValue == "product", "\(reply.text)")
        #expect(shapes.first?["suggestion"]?["pattern"]?.stringValue == "/products/:id")
        #expect(shapes.last?["suggestion"] == .null, "nothing is close to /zz/:param")
        for secret in ["jane", "example.com", "98765", "s3cr3t", "token", "5551234567", "p123", "abc"] {
            #expect(!reply.text.contains(secret), "\(secret) does not survive")
        }
        #expect(harness.call("GET", "/v1/telemetry/unknown-links?limit=0", token: harness.tokens[.telemetryRead]!).errorCode == "badLimit")
        #expect(harness.call("GET", "/v1/telemetry/unknown-links?since=1", token: harness.tokens[.telemetryRead]!).errorCode == "unknownParameter")
        #expect(harness.call("GET", "/v1/telemetry/unknown-links", token: harness.tokens[.manifestRead]!).status == 403)
    }

    /// A suggestion validates a document: one request makes at most 20 that were not made
    /// before, says how many it left (`pending`), and the next request finds them kept.
    @Test func suggestionsAreMadeTwentyARequestAndKept() throws {
        let harness = try Self.harness()
        let letters = Array("abcdefghijklmnopqrstuvwxy")
        let events = letters.map { letter in
            #"{"entry": "universalLink", "outcome": "notFound", "reason": "unknownRoute", "shape": "https://storefront.example/prodz\#(letter)/123"}"#
        }
        #expect(harness.call("POST", "/v1/telemetry", token: harness.tokens[.telemetryWrite]!, body: telemetryBody(events)).status == 202)
        func listing() -> (suggested: Int, pending: Int?, shapes: Int) {
            let reply = harness.call("GET", "/v1/telemetry/unknown-links?limit=30", token: harness.tokens[.telemetryRead]!)
            let shapes = reply.json["shapes"]?.arrayValue ?? []
            return (shapes.filter { $0["suggestion"]?["route"]?.stringValue == "product" }.count, reply.json["pending"]?.intValue, shapes.count)
        }
        let first = listing()
        #expect(first.shapes == 25 && first.suggested == 20 && first.pending == 5, "\(first)")
        let second = listing()
        #expect(second.shapes == 25 && second.suggested == 25 && second.pending == 0, "\(second)")
    }
}
