import Foundation
import LinkLanding
import RouteEngine
import Testing
import TestSupport

@Suite("Route suggestions for unknown links")
struct RouteSuggestionTests {
    static let now = Date(timeIntervalSince1970: 1_795_000_000)  // 2026-11-18
    static let schemas = [Fixtures.storefront52, Fixtures.storefront53]

    /// (shape, route, pattern) — nil route: nothing is suggested.
    static let rows: [(String, String?, String?)] = [
        ("/products/:param", "product", "/products/:id"),
        ("/categories/:param", "category", "/categories/:slug"),
        ("/ordrs/:param", "order-detail", "/ordrs/:orderId"),
        ("/sale/summer", "spring-sale", "/sale/summer"),
        ("/orders/:param/items", nil, nil),          // no pattern of three segments
        ("/:param", nil, nil),                       // only literals have one segment
        ("/", nil, nil),
        ("/search/:param/:param/:param/:param/:param/:param/:param/*", nil, nil),  // cut short: no suggestion
        ("/checkout", nil, nil),                     // a one-word link: no one-segment pattern shares anything
        ("/newest", "new-arrivals", "/newest"),      // near /new
        ("/p/:param", nil, nil),                     // /p/:id exists: every candidate would compete with it
    ]

    @Test(arguments: rows)
    func suggests(_ row: (String, String?, String?)) {
        let suggestion = RouteSuggestion.suggest(for: row.0, routes: Fixtures.storefrontRoutesJSON, document: Fixtures.storefrontRoutes,
                                                 against: Self.schemas, now: Self.now)
        #expect(suggestion?.route == row.1, "\(row.0)")
        #expect(suggestion?.pattern == row.2, "\(row.0)")
    }

    /// What is suggested validates: the shape's link resolves with it, to the route it names.
    @Test func aSuggestionResolvesTheLink() throws {
        let suggestion = try #require(RouteSuggestion.suggest(for: "/products/:param", routes: Fixtures.storefrontRoutesJSON,
                                                              document: Fixtures.storefrontRoutes, against: Self.schemas, now: Self.now))
        guard case .object(var document) = Fixtures.storefrontRoutesJSON, case .array(var routes)? = document["routes"] else { return }
        for (index, route) in routes.enumerated() where route["id"]?.stringValue == suggestion.route {
            guard case .object(var changed) = route else { continue }
            changed["patterns"] = .array((route["patterns"]?.arrayValue ?? []) + [.string(suggestion.pattern)])
            routes[index] = .object(changed)
        }
        document["routes"] = .array(routes)
        let resolver = Resolver(schema: Fixtures.storefront53, routes: Fixtures.routes(.object(document)))
        guard case .proceed(let proceed) = resolver.resolve(url: "https://storefront.example/products/p42", context: ResolutionContext(now: Self.now)) else {
            Issue.record("the link does not resolve with the suggestion")
            return
        }
        #expect(proceed.routeID == "product")
    }

    /// A candidate that does not validate is not suggested: `new-arrivals` is only on 5.3.0,
    /// so against 5.2.0 alone the route (and the candidate) is an error.
    @Test func aCandidateThatDoesNotValidateIsNotSuggested() {
        #expect(RouteSuggestion.candidates(for: "/newest", in: Fixtures.storefrontRoutes).map(\.route) == ["new-arrivals"])
        #expect(RouteSuggestion.suggest(for: "/newest", routes: Fixtures.storefrontRoutesJSON, document: Fixtures.storefrontRoutes,
                                        against: [Fixtures.storefront52], now: Self.now) == nil)
        #expect(RouteSuggestion.suggest(for: "/products/:param", routes: Fixtures.storefrontRoutesJSON, document: Fixtures.storefrontRoutes,
                                        against: [], now: Self.now) == nil, "nothing to validate against, nothing suggested")
    }
}
