import Foundation
import LinkLanding
import RouteEngine
import Testing
import TestSupport
import WaymarkAPI

/// Link previews and bots on a landing (`docs/landing.md`, "Previews" and "Bots"): a preview
/// crawler gets the route's card, every value escaped; people and other bots get the landing
/// as before; bots and `HEAD` are counted as `bot`, never in the counts of people.
@Suite("Link previews and bots, in-process", .serialized)
struct LandingPreviewTests {
    static let iPhone = LandingEndpointTests.iPhone
    static let hostileTitle = "Autumn <script>alert(1)</script> & \"50%\" 'off'"
    static let image = "https://cdn.storefront.example/autumn.png?w=1200&h=630"

    static func harness() throws -> LiveService {
        let harness = try LiveService(transport: .inProcess)
        guard case .object(var document) = Fixtures.storefrontRoutesJSON, case .array(var routes)? = document["routes"] else {
            throw LandingEndpointTests.Failure("fixture")
        }
        routes.append(["id": "autumn-sale", "patterns": ["/sale/autumn"], "destination": "promo", "params": ["code": ["const": "AUTUMN26"]],
                       "fallbackURL": "https://web.storefront.example/sale",
                       "preview": ["title": .string(hostileTitle), "description": "Tea </title><meta http-equiv=refresh> for less", "image": .string(image)]])
        document["routes"] = .array(routes)
        let body = JSONValue.object(["message": "previews", "routes": .object(document)]).serialized()
        let published = harness.call("POST", "/v1/revisions", token: harness.tokens[.routesPublish]!, headers: [("If-Match", "\"rev-1\"")], body: body)
        guard published.status == 201 else { throw LandingEndpointTests.Failure("publish: \(published.status) \(published.text)") }
        return harness
    }

    /// A crawler's name as it sends it, for each token of the documented table.
    static let crawlers = Agent.previewTokens.map { "Mozilla/5.0 (compatible; \($0)1.0)" }

    @Test func everyPreviewCrawlerGetsTheCardEscaped() throws {
        let harness = try Self.harness()
        for crawler in Self.crawlers {
            let reply = harness.call("GET", "/sale/autumn?utm_source=chat", host: "storefront.example", headers: [("User-Agent", crawler)])
            #expect(reply.status == 200 && reply["Location"] == nil, "\(crawler): \(reply.head)")
            let page = reply.text
            #expect(page.contains("<meta property=\"og:title\" content=\"Autumn &lt;script&gt;alert(1)&lt;/script&gt; &amp; &quot;50%&quot; &#39;off&#39;\">"), "\(crawler)")
            #expect(page.contains("<meta property=\"og:description\" content=\"Tea &lt;/title&gt;&lt;meta http-equiv=refresh&gt; for less\">"), "\(crawler)")
            #expect(page.contains("<meta property=\"og:image\" content=\"https://cdn.storefront.example/autumn.png?w=1200&amp;h=630\">"), "\(crawler)")
            #expect(page.contains("<meta property=\"og:url\" content=\"https://storefront.example/sale/autumn\">"), "\(crawler): the link, without its query")
            #expect(page.contains("<meta name=\"twitter:card\" content=\"summary_large_image\">"), "\(crawler)")
            #expect(!page.contains("<script") && !page.contains("utm_source") && !page.contains("<meta http-equiv"), "\(crawler): nothing unescaped, no script")
            let policy = try #require(reply["Content-Security-Policy"])
            #expect(policy.hasPrefix("default-src 'none'; script-src 'none'; style-src 'sha256-"), "\(crawler): \(policy)")
            #expect(reply["Vary"] == "User-Agent")
        }
        // A route without a preview: the app's name, a small card.
        let plain = harness.call("GET", "/product/p1", host: "storefront.example", headers: [("User-Agent", Self.crawlers[0])])
        #expect(plain.status == 200)
        #expect(plain.text.contains("<meta property=\"og:title\" content=\"storefront\">") && plain.text.contains("content=\"summary\">"), "\(plain.text)")
        #expect(!plain.text.contains("og:image") && !plain.text.contains("og:description"))
        // An unknown or ended link is no card: the page people get.
        for target in ["/summer/promo", "/sale/spring"] {
            let gone = harness.call("GET", target, host: "storefront.example", headers: [("User-Agent", Self.crawlers[0])])
            #expect(gone.status == 404 && gone.text.contains("unknown or has expired"), "\(target)")
        }
    }

    @Test func peopleAndOtherBotsLandAsBefore() throws {
        let harness = try Self.harness()
        for agent in [Self.iPhone, LandingEndpointTests.android, LandingEndpointTests.desktop, "Mozilla/5.0 (compatible; Googlebot/2.1; +http://www.google.com/bot.html)", LandingInAppTests.instagram.replacingOccurrences(of: "iPhone", with: "Macintosh")] {
            let reply = harness.call("GET", "/sale/autumn", host: "storefront.example", headers: [("User-Agent", agent)])
            #expect(reply.status == 302 && reply["Location"] == "https://web.storefront.example/sale", "\(agent): \(reply.head)")
        }
        // A card kept for a crawler is never a person's answer, nor the other way round.
        for agent in [Self.iPhone, Self.crawlers[1], Self.iPhone, Self.crawlers[1]] {
            let reply = harness.call("GET", "/sale/autumn", host: "storefront.example", headers: [("User-Agent", agent)])
            #expect(reply.status == (agent == Self.iPhone ? 302 : 200), "\(agent)")
        }
    }

    @Test func botsAreCountedApartAndNeverAsPeople() throws {
        let harness = try Self.harness()
        for _ in 0..<3 { _ = harness.call("GET", "/sale/autumn", host: "storefront.example", headers: [("User-Agent", Self.iPhone)]) }
        for crawler in Self.crawlers { _ = harness.call("GET", "/sale/autumn", host: "storefront.example", headers: [("User-Agent", crawler)]) }
        _ = harness.call("GET", "/product/p1", host: "storefront.example", headers: [("User-Agent", "Mozilla/5.0 (compatible; bingbot/2.0; +http://www.bing.com/bingbot.htm)")])
        _ = harness.call("HEAD", "/product/p1", host: "storefront.example", headers: [("User-Agent", Self.iPhone)])
        _ = harness.call("GET", "/unknown/shape/1", host: "storefront.example", headers: [("User-Agent", Self.crawlers[0])])
        let flushed = DispatchSemaphore(value: 0)
        harness.api.flushLandings { flushed.signal() }
        #expect(flushed.wait(timeout: .now() + 10) == .success)
        let token = harness.tokens[.telemetryRead]!
        let people = harness.call("GET", "/v1/telemetry/counts?groupBy=entry,route", token: token)
        #expect(people.status == 200, "\(people.text)")
        #expect(people.json["total"]?.intValue == 3, "only the three people: \(people.text.prefix(600))")
        #expect(people.json["groups"]?.arrayValue?.compactMap { $0["key"]?["entry"]?.stringValue } == ["web"])
        let bots = harness.call("GET", "/v1/telemetry/counts?entry=bot&groupBy=route", token: token)
        #expect(bots.json["total"]?.intValue == Self.crawlers.count + 3, "every crawler, the bot and the HEAD: \(bots.text.prefix(600))")
        // A crawler's unknown link is no one's: not listed.
        let unknown = harness.call("GET", "/v1/telemetry/unknown-links", token: token)
        #expect(!unknown.text.contains("/unknown/shape"), "\(unknown.text.prefix(400))")
    }

    @Test func aPhoneIsNeverSentThePreview() throws {
        let harness = try Self.harness()
        let manifest = harness.call("GET", "/v1/manifest?platform=ios&version=5.3.0", token: harness.tokens[.manifestRead]!)
        #expect(manifest.status == 200)
        let autumn = manifest.json["routes"]?.arrayValue?.first { $0["id"]?.stringValue == "autumn-sale" }
        #expect(autumn != nil && autumn?["preview"] == nil, "\(manifest.text.prefix(300))")
        let parsed = try Manifest.decode(manifest.body, for: AppBuild(app: "storefront", platform: "ios", version: "5.3.0")).get()
        #expect(parsed.revision == 2, "the digest holds without the preview")
    }

    @Test func hostilePreviewsAreRefusedAtPublishing() throws {
        let harness = try Self.harness()
        for (label, preview, path) in [("a private image", ["image": "https://127.0.0.1/x.png"], "routes[0].preview.image"),
                                       ("a script image", ["image": "javascript:alert(1)"], "routes[0].preview.image"),
                                       ("a bidi override", ["title": "Sale \u{202E}"], "routes[0].preview.title"),
                                       ("a long title", ["title": .string(String(repeating: "t", count: 121))], "routes[0].preview.title")] as [(String, JSONValue, String)] {
            let routes: JSONValue = ["format": "waymark.routes/1", "app": "storefront",
                                     "routes": [["id": "x", "patterns": ["/x"], "destination": "home", "preview": preview]]]
            let body = JSONValue.object(["message": "hostile", "routes": routes]).serialized()
            let reply = harness.call("POST", "/v1/revisions", token: harness.tokens[.routesPublish]!, headers: [("If-Match", "\"rev-2\"")], body: body)
            #expect(reply.status == 422, "\(label): \(reply.status) \(reply.text.prefix(300))")
            #expect(reply.text.contains(path), "\(label): \(reply.text.prefix(400))")
        }
        let revisions = harness.call("GET", "/v1/revisions", token: harness.tokens[.routesRead]!)
        #expect(revisions.text.contains("\"number\":2") && !revisions.text.contains("\"number\":3"), "nothing published")
    }
}

/// The iOS hand-off page (`docs/landing.md`, "Deferred links"): a person on an iPhone whose
/// link would go to the App Store gets a page whose one link is the store (with `ct` from a
/// plain `utm_campaign`) and whose button copies the link as opened and when; bots, `HEAD` and
/// routes with a fallback are answered as before.
@Suite("The iOS hand-off page, in-process", .serialized)
struct LandingHandOffTests {
    static let iPhone = LandingEndpointTests.iPhone
    static let store = LandingEndpointTests.appStore

    static func page(_ harness: LiveService, _ target: String, agent: String = iPhone, method: String = "GET") -> (Int, String?, String) {
        let reply = harness.call(method, target, host: "storefront.example", headers: [("User-Agent", agent)])
        return (reply.status, reply["Location"], reply.text)
    }

    static func link(_ page: String) -> (href: String, handOff: String)? {
        guard let start = page.range(of: #"<a id="get" class="get" href=""#), let end = page[start.upperBound...].range(of: #"">Get the app</a>"#) else { return nil }
        let parts = page[start.upperBound..<end.lowerBound].components(separatedBy: #"" data-handoff=""#)
        return parts.count == 2 ? (parts[0].replacingOccurrences(of: "&amp;", with: "&"), parts[1].replacingOccurrences(of: "&amp;", with: "&")) : nil
    }

    @Test func anIPhoneGetsThePageWithTheStoreAndTheHandOff() throws {
        let harness = try LandingPreviewTests.harness()
        let now = Int(Date().timeIntervalSince1970)
        for (target, store, opened) in [("/product/p1?utm_campaign=spring-26&utm_source=mail&email=a%40b.example", Self.store + "?ct=spring-26", "https://storefront.example/product/p1"),
                                        ("/product/p1?utm_campaign=" + String(repeating: "c", count: 41), Self.store, "https://storefront.example/product/p1"),
                                        ("/product/p1?utm_campaign=%3Cscript%3E&utm_campaign=ok", Self.store, "https://storefront.example/product/p1"),
                                        ("/cart", Self.store, "https://storefront.example/cart")] {
            let (status, location, page) = Self.page(harness, target)
            #expect(status == 200 && location == nil, "\(target)")
            let link = try #require(Self.link(page), "\(target): \(page.prefix(400))")
            #expect(link.href == store, "\(target)")
            let parts = link.handOff.components(separatedBy: "#waymark=")
            #expect(parts.count == 2 && parts[0] == opened && abs((Int(parts[1]) ?? 0) - now) < 60, "\(target): \(link.handOff)")
            #expect(page.contains("<script>" + "document.getElementById(\"get\")"), "\(target)")
        }
    }

    @Test func thePagesPolicyAllowsItsOwnScriptByHash() throws {
        let harness = try LandingPreviewTests.harness()
        let reply = harness.call("GET", "/product/p1", host: "storefront.example", headers: [("User-Agent", Self.iPhone)])
        let policy = try #require(reply["Content-Security-Policy"])
        #expect(policy.hasPrefix("default-src 'none'; script-src 'sha256-") && policy.contains("form-action 'none'"), "\(policy)")
        #expect(reply.text.components(separatedBy: "<script>").count == 2, "one inline script, the button's")
    }

    @Test func botsHeadAndFallbacksAreAnsweredAsBefore() throws {
        let harness = try LandingPreviewTests.harness()
        #expect(Self.page(harness, "/product/p1", method: "HEAD").1 == Self.store, "HEAD")
        #expect(Self.page(harness, "/product/p1", agent: "Mozilla/5.0 (iPhone; CPU iPhone OS 17_4 like Mac OS X) (compatible; Googlebot/2.1; +http://www.google.com/bot.html)").1 == Self.store, "a bot on an iPhone")
        #expect(Self.page(harness, "/sale/autumn").1 == "https://web.storefront.example/sale", "a route's fallback first")
        #expect(Self.page(harness, "/product/p1", agent: LandingEndpointTests.desktop).1 == LandingEndpointTests.web, "a desktop")
    }
}

/// In-app browsers (`docs/landing.md`, "In-app browsers"): a person in Instagram's, Facebook's
/// or another app's browser gets "Open in the app" — the custom scheme on iOS, an `intent://`
/// address on Android — with the landing as the way on without the app.
@Suite("In-app browsers, in-process", .serialized)
struct LandingInAppTests {
    static let instagram = "Mozilla/5.0 (iPhone; CPU iPhone OS 17_1 like Mac OS X) AppleWebKit/605.1.15 (KHTML, like Gecko) Mobile/15E148 Instagram 307.0.2.18.107"
    static let facebook = "Mozilla/5.0 (Linux; Android 13; SM-S911B; wv) AppleWebKit/537.36 Version/4.0 Chrome/120.0 Mobile Safari/537.36 [FB_IAB/FB4A;FBAV/441.0.0.33.113;]"

    static func hrefs(_ page: String) -> [String: String] {
        var found: [String: String] = [:]
        for match in page.matches(of: /<a id="([a-z]+)"(?: class="get")? href="([^"]*)"/) {
            found[String(match.1)] = String(match.2).replacingOccurrences(of: "&amp;", with: "&")
        }
        return found
    }

    @Test func anIPhoneInInstagramGetsTheSchemeAndTheStore() throws {
        let harness = try LandingPreviewTests.harness()
        let reply = harness.call("GET", "/product/p1?utm_campaign=spring", host: "storefront.example", headers: [("User-Agent", Self.instagram)])
        #expect(reply.status == 200 && reply["Location"] == nil)
        let links = Self.hrefs(reply.text)
        #expect(links["open"] == "storefront://product/p1", "\(links)")
        #expect(links["get"] == LandingEndpointTests.appStore + "?ct=spring", "\(links)")
        #expect(reply.text.contains("data-handoff=\"https://storefront.example/product/p1#waymark="), "the store link carries the hand-off")
        // A route with a fallback: the way on is the fallback.
        let autumn = harness.call("GET", "/sale/autumn", host: "storefront.example", headers: [("User-Agent", Self.instagram)])
        #expect(Self.hrefs(autumn.text) == ["open": "storefront://sale/autumn", "without": "https://web.storefront.example/sale"], "\(Self.hrefs(autumn.text))")
        #expect(autumn.text.contains("Continue on the web") && autumn.text.contains("Autumn &lt;script&gt;"), "the preview, escaped")
    }

    @Test func androidInFacebookGetsAnIntentAddress() throws {
        let harness = try LandingPreviewTests.harness()
        let reply = harness.call("GET", "/product/p1", host: "storefront.example", headers: [("User-Agent", Self.facebook)])
        #expect(reply.status == 200)
        let links = Self.hrefs(reply.text)
        let open = try #require(links["open"])
        #expect(open.hasPrefix("intent://storefront.example/product/p1#Intent;scheme=https;package=example.storefront;S.browser_fallback_url=https%3A%2F%2Fplay.google.com%2F"), "\(open)")
        #expect(links["without"]?.hasPrefix(LandingEndpointTests.playStore + "&referrer=") == true, "\(links)")
        #expect(!reply.text.contains("<script>"), "no script on Android's page")
    }

    @Test func unknownLinksAndOtherVisitorsAreAnsweredAsBefore() throws {
        let harness = try LandingPreviewTests.harness()
        let unknown = harness.call("GET", "/summer/promo", host: "storefront.example", headers: [("User-Agent", Self.instagram)])
        #expect(unknown.status == 404 && unknown.text.contains("unknown or has expired"))
        let head = harness.call("HEAD", "/product/p1", host: "storefront.example", headers: [("User-Agent", Self.instagram)])
        #expect(head.status == 302, "HEAD is a bot's")
        let safari = harness.call("GET", "/product/p1", host: "storefront.example", headers: [("User-Agent", LandingEndpointTests.iPhone)])
        #expect(safari.status == 200 && Self.hrefs(safari.text)["open"] == nil, "Safari hands links to the app: the hand-off page")
    }
}
