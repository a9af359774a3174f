import LinkLanding
@testable import RouteEngine
import Testing

@Suite("Landing decisions")
struct LandingDecisionTests {
    static let landing = Landing(appStoreURL: "https://apps.apple.com/app/id1", playStoreURL: "https://play.google.com/store/apps/details?id=x",
                                 webURL: "https://web.example/", notFoundURL: "https://web.example/404")
    static let storesOnly = Landing(appStoreURL: "https://apps.apple.com/app/id1", playStoreURL: "https://play.google.com/store/apps/details?id=x")

    static func route(fallback: String?, query: [String: String] = [:]) -> RouteSpec {
        var params: [String: ParamSource] = [:]
        for (param, item) in query { params[param] = .query(item) }
        return RouteSpec(index: 0, id: "r", patterns: ["/r"], destination: "d", params: params, hosts: nil, schemes: nil,
                         window: ValidityWindow(), fallbackURL: fallback, owner: nil, notes: nil)
    }

    static let proceed = Resolution.proceed(Proceed(routeID: "r", destination: "d", params: [:], path: ["d"], tab: nil, presentation: .push))
    static let gated = Resolution.gated(Gate(precondition: "auth", routeID: "r", destination: "d", resume: .url("https://h.example/r")))
    static func notFound(_ reason: NotFoundReason) -> Resolution { .notFound(NotFound(reason, routeID: reason == .unknownRoute ? nil : "r")) }

    typealias Row = (String, Resolution, RouteSpec?, Landing?, Visitor, String, String?, LandingDecision.Answer)
    static let rows: [Row] = [
        ("fallback first", proceed, route(fallback: "https://f.example/x"), landing, .ios, "/r", nil, .redirect("https://f.example/x", .routeFallback)),
        ("gated is resolved", gated, route(fallback: "https://f.example/x"), landing, .android, "/r", nil, .redirect("https://f.example/x", .routeFallback)),
        ("mapped items follow, in the link's order", proceed, route(fallback: "https://f.example/x", query: ["q": "q", "page": "p"]), landing, .other, "/r",
         "p=2&utm_source=a&q=shoes&q=boots&email=me%40x.example", .redirect("https://f.example/x?p=2&q=shoes&q=boots", .routeFallback)),
        ("a name matched decoded", proceed, route(fallback: "https://f.example/x", query: ["q": "q"]), landing, .ios, "/r", "%71=a", .redirect("https://f.example/x?%71=a", .routeFallback)),
        ("a valueless item", proceed, route(fallback: "https://f.example/x", query: ["q": "q"]), landing, .ios, "/r", "q", .redirect("https://f.example/x?q", .routeFallback)),
        ("added to the fallback's own query, before its fragment", proceed, route(fallback: "https://f.example/x?a=1#top", query: ["q": "q"]), landing, .ios, "/r",
         "q=1", .redirect("https://f.example/x?a=1&q=1#top", .routeFallback)),
        ("nothing mapped: nothing passed", proceed, route(fallback: "https://f.example/x"), landing, .ios, "/r", "q=1&token=s", .redirect("https://f.example/x", .routeFallback)),
        ("no fallback, iOS: App Store", proceed, route(fallback: nil), landing, .ios, "/r", "q=1", .redirect("https://apps.apple.com/app/id1", .appStore)),
        ("no fallback, Android: Google Play, the link its referrer", gated, route(fallback: nil), landing, .android, "/r", nil,
         .redirect("https://play.google.com/store/apps/details?id=x&referrer=deeplink%3Dhttps%253A%252F%252Fh.example%252Fr%26t%3D1764000000", .playStore)),
        ("a store address with a referrer of its own keeps it", proceed, route(fallback: nil), Landing(playStoreURL: "https://play.google.com/store/apps/details?id=x&referrer=utm_source%3Dtv"),
         .android, "/r", nil, .redirect("https://play.google.com/store/apps/details?id=x&referrer=utm_source%3Dtv", .playStore)),
        ("no fallback, desktop: the web", proceed, nil, landing, .other, "/r", nil, .redirect("https://web.example/", .web)),
        ("no store declared: the web", proceed, nil, Landing(webURL: "https://web.example/"), .ios, "/r", nil, .redirect("https://web.example/", .web)),
        ("desktop, no web declared: the page", proceed, nil, storesOnly, .other, "/r", nil, .page(.openInApp)),
        ("no landing at all: the page", proceed, nil, nil, .ios, "/r", nil, .page(.openInApp)),
        ("a fallback to the link itself is skipped", proceed, route(fallback: "https://H.example:443/r/"), landing, .ios, "/r", nil,
         .redirect("https://apps.apple.com/app/id1", .appStore)),
        ("a fallback to another path of the host is kept", proceed, route(fallback: "https://h.example/sale"), landing, .ios, "/r", nil,
         .redirect("https://h.example/sale", .routeFallback)),
        ("a store address that is the link itself is skipped", proceed, nil, Landing(appStoreURL: "https://h.example/r"), .ios, "/r", nil, .page(.openInApp)),
        ("unknown: notFoundURL", notFound(.unknownRoute), nil, landing, .ios, "/x", nil, .redirect("https://web.example/404", .notFoundURL)),
        ("expired, even with a fallback: notFoundURL", notFound(.expired), route(fallback: "https://f.example/x"), landing, .ios, "/r", nil,
         .redirect("https://web.example/404", .notFoundURL)),
        ("malformed: the page", notFound(.malformed), nil, storesOnly, .android, "/x", nil, .page(.notFound)),
        ("validation failed: the page", notFound(.validationFailed), route(fallback: "https://f.example/x"), nil, .other, "/r", "q=1", .page(.notFound)),
        ("not found to itself: the page", notFound(.unknownRoute), nil, Landing(notFoundURL: "https://h.example/x"), .ios, "/x", nil, .page(.notFound)),
    ]

    @Test(arguments: rows)
    func decides(_ row: Row) {
        let answer = LandingDecision.decide(row.1, route: row.2, landing: row.3, visitor: row.4, link: ("h.example", row.5[...], row.6.map { $0[...] }),
                                            now: 1_764_000_000)
        #expect(answer == row.7, "\(row.0)")
    }

    /// The Install Referrer (`docs/landing.md`, "Deferred links"): the link as opened with the
    /// items its route maps, the time, and the UTM items that are short and plain, in a fixed order.
    static let referrers: [(String, String?, [String: String], String)] = [
        ("the link alone", nil, [:], "deeplink=https%3A%2F%2Fh.example%2Fr&t=7"),
        ("UTM items in their order, others dropped", "utm_campaign=spring&email=a%40b.example&utm_source=mail&token=s3cr3t&utm_content=hero_1", [:],
         "deeplink=https%3A%2F%2Fh.example%2Fr&t=7&utm_source=mail&utm_campaign=spring&utm_content=hero_1"),
        ("a mapped item goes in the link", "q=red%20shoes&utm_medium=cpc", ["q": "q"], "deeplink=https%3A%2F%2Fh.example%2Fr%3Fq%3Dred%2520shoes&t=7&utm_medium=cpc"),
        ("the first of each, even when it is dropped", "utm_source=a%20b&utm_source=ok", [:], "deeplink=https%3A%2F%2Fh.example%2Fr&t=7"),
        ("an escape, a plus, a quote or an empty value is dropped", "utm_source=a%2Fb&utm_medium=a+b&utm_term='x'&utm_content=", [:], "deeplink=https%3A%2F%2Fh.example%2Fr&t=7"),
        ("a value of 100 bytes is kept, 101 dropped", "utm_source=" + String(repeating: "s", count: 100) + "&utm_medium=" + String(repeating: "m", count: 101), [:],
         "deeplink=https%3A%2F%2Fh.example%2Fr&t=7&utm_source=" + String(repeating: "s", count: 100)),
        ("an item without a value, and a name without case", "utm_source&UTM_MEDIUM=x", [:], "deeplink=https%3A%2F%2Fh.example%2Fr&t=7"),
    ]

    /// A referrer stays within what the Android library takes: past 4,096 bytes the UTM items
    /// go, and a link too long for it alone goes without one.
    @Test func referrersAreBounded() throws {
        let route = Self.route(fallback: nil)
        let campaign: Substring = "utm_source=mail&utm_campaign=spring"
        let fits = "/r/" + String(repeating: "a", count: 3_900)
        let full = try #require(LandingDecision.installReferrer(link: ("h.example", fits[...], campaign), route: route, now: 7))
        #expect(full.hasSuffix("&t=7&utm_source=mail&utm_campaign=spring") && full.utf8.count <= 4_096)
        let near = "/r/" + String(repeating: "a", count: 4_050)
        let bare = try #require(LandingDecision.installReferrer(link: ("h.example", near[...], campaign), route: route, now: 7))
        #expect(bare.hasSuffix("&t=7") && bare.utf8.count <= 4_096, "the UTM items left out")
        let long = "/r/" + String(repeating: "%41", count: 820)  // each "%41" is five bytes once encoded
        #expect(LandingDecision.installReferrer(link: ("h.example", long[...], campaign), route: route, now: 7) == nil)
        let answer = LandingDecision.decide(Self.proceed, route: route, landing: Self.landing, visitor: .android, link: ("h.example", long[...], nil), now: 7)
        #expect(answer == .redirect("https://play.google.com/store/apps/details?id=x", .playStore), "the store without a referrer")
    }

    @Test(arguments: referrers)
    func makesTheReferrer(_ row: (String, String?, [String: String], String)) {
        let made = LandingDecision.installReferrer(link: ("h.example", "/r", row.1.map { $0[...] }), route: Self.route(fallback: nil, query: row.2), now: 7)
        #expect(made == row.3, "\(row.0)")
    }

    /// A route's `utm` stands in for the items a link does not carry (an imported short link
    /// whose campaign was set in the old service, not in the link): the link's own first.
    @Test func theRoutesUTMStandsInForTheLinks() throws {
        var route = Self.route(fallback: nil)
        route.utm = ["source": "qr", "campaign": "box-2026"]
        #expect(LandingDecision.installReferrer(link: ("h.example", "/r", nil), route: route, now: 7)
                == "deeplink=https%3A%2F%2Fh.example%2Fr&t=7&utm_source=qr&utm_campaign=box-2026")
        #expect(LandingDecision.installReferrer(link: ("h.example", "/r", "utm_campaign=mail&utm_medium=cpc"), route: route, now: 7)
                == "deeplink=https%3A%2F%2Fh.example%2Fr&t=7&utm_source=qr&utm_medium=cpc&utm_campaign=mail")
        let store = "https://apps.apple.com/app/id1"
        #expect(LandingDecision.withCampaignToken(store, query: nil, route: route) == store + "?ct=box-2026")
        #expect(LandingDecision.withCampaignToken(store, query: "utm_campaign=mail", route: route) == store + "?ct=mail")
        route.utm = ["campaign": String(repeating: "c", count: 41)]
        #expect(LandingDecision.withCampaignToken(store, query: nil, route: route) == store, "past App Store Connect's 40 bytes")
    }

    /// "Open in the app" in an in-app browser: Android's `intent://` address, parsed back; iOS's
    /// custom scheme; nothing where the platform declares neither.
    @Test func openInAppAddresses() throws {
        let route = Self.route(fallback: nil, query: ["q": "q"])
        let link: (host: String, path: Substring, query: Substring?) = ("h.example", "/r/x", "q=red%20shoes&utm_source=a")
        let fallback = "https://play.google.com/store/apps/details?id=x&referrer=deeplink%3Dhttps"
        let android = try #require(LandingDecision.openInApp(link, route: route, visitor: .android, package: "example.app", schemes: [], fallback: fallback))
        // intent://HOST/PATH?QUERY#Intent;scheme=…;package=…;S.browser_fallback_url=…;end (Chrome's syntax)
        let parts = android.split(separator: "#", maxSplits: 1).map(String.init)
        #expect(parts[0] == "intent://h.example/r/x?q=red%20shoes")
        #expect(parts[1].hasPrefix("Intent;") && parts[1].hasSuffix(";end"))
        var extras: [String: String] = [:]
        for item in parts[1].dropFirst("Intent;".count).dropLast(";end".count).split(separator: ";") {
            let pair = item.split(separator: "=", maxSplits: 1).map(String.init)
            extras[pair[0]] = pair[1]
        }
        #expect(extras["scheme"] == "https" && extras["package"] == "example.app")
        #expect(extras["S.browser_fallback_url"]?.removingPercentEncoding == fallback)
        #expect(LandingDecision.openInApp(link, route: route, visitor: .android, package: "example.app", schemes: [], fallback: nil)
            == "intent://h.example/r/x?q=red%20shoes#Intent;scheme=https;package=example.app;end")
        #expect(LandingDecision.openInApp(link, route: route, visitor: .ios, package: nil, schemes: ["shop", "other"], fallback: fallback) == "shop://r/x?q=red%20shoes")
        #expect(LandingDecision.openInApp(link, route: route, visitor: .ios, package: "example.app", schemes: [], fallback: fallback) == nil, "iOS without a scheme")
        #expect(LandingDecision.openInApp(link, route: route, visitor: .android, package: nil, schemes: ["shop"], fallback: fallback) == nil, "Android without a package")
        #expect(LandingDecision.openInApp(link, route: route, visitor: .android, package: "a;b", schemes: [], fallback: nil) == nil, "a package that would break the syntax")
        #expect(LandingDecision.openInApp(link, route: route, visitor: .other, package: "example.app", schemes: ["shop"], fallback: fallback) == nil)
    }
}
