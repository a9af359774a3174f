import RouteEngine
import Testing
@testable import WaymarkAPI

/// Unknown-link suggestions are kept per shape against the schemas and the routes that could
/// compete with it: a publish that changes no route of a shape's length leaves it standing.
@Suite("Suggestion cache")
struct SuggestionCacheTests {
    static func competitors(_ cache: SuggestionCache, revision: Int, _ routes: [(String, [String])]) -> SuggestionCache.Competitors {
        let json = Self.routes(routes)
        return cache.competitors(revision: revision, routes: json, document: RoutesDocument.decode(json).document!)
    }

    static func competitors(_ cache: SuggestionCache, revision: Int, app: String, _ routes: [(String, [String])]) -> SuggestionCache.Competitors {
        let json = Self.routes(routes, app: app)
        return cache.competitors(revision: revision, routes: json, document: RoutesDocument.decode(json).document!)
    }

    static func routes(_ routes: [(String, [String])], app: String = "storefront") -> JSONValue {
        let list = routes.map { id, patterns in
            "{\"id\":\"\(id)\",\"patterns\":[\(patterns.map { "\"\($0)\"" }.joined(separator: ","))],\"destination\":\"home\"}"
        }
        let text = "{\"format\":\"waymark.routes/1\",\"app\":\"\(app)\",\"routes\":[\(list.joined(separator: ","))]}"
        return (try? JSONParser().parse(Array(text.utf8))) ?? .null
    }

    @Test func aSuggestionStandsWhileTheRoutesOfItsLengthAndTheSchemasDo() {
        let cache = SuggestionCache()
        let before = Self.competitors(cache, revision: 4, [("deals", ["/deals/summer"]), ("home", ["/"])])
        let key = SuggestionCache.Key(schemas: ["a"], competitors: before.digest(length: 2))
        cache.keep(nil, for: "/deals/winter", at: key)
        #expect(cache.suggestion(for: "/deals/winter", at: key) != nil)
        // Revision 5 adds a route of three segments: two-segment shapes keep their suggestions.
        let added = Self.competitors(cache, revision: 5, [("deals", ["/deals/summer"]), ("home", ["/"]), ("help", ["/help/a/b"])])
        #expect(added.digest(length: 2) == before.digest(length: 2))
        #expect(added.digest(length: 3) != before.digest(length: 3))
        #expect(cache.suggestion(for: "/deals/winter", at: SuggestionCache.Key(schemas: ["a"], competitors: added.digest(length: 2))) != nil)
        // A route of two segments changes, or one ending in *rest (it competes with every length): made again.
        let changed = Self.competitors(cache, revision: 6, [("deals", ["/deals/summer", "/deal/:id"]), ("home", ["/"])])
        #expect(changed.digest(length: 2) != before.digest(length: 2))
        let rest = Self.competitors(cache, revision: 7, [("deals", ["/deals/summer"]), ("home", ["/"]), ("docs", ["/docs/*path"])])
        #expect(rest.digest(length: 2) != before.digest(length: 2) && rest.digest(length: 5) != before.digest(length: 5))
        #expect(cache.suggestion(for: "/deals/winter", at: SuggestionCache.Key(schemas: ["a"], competitors: changed.digest(length: 2))) == nil)
        // A schema registered: what was made before no longer holds.
        #expect(cache.suggestion(for: "/deals/winter", at: SuggestionCache.Key(schemas: ["a", "b"], competitors: before.digest(length: 2))) == nil)
        // Another app (what a suggestion validates against): made again.
        let renamed = Self.competitors(cache, revision: 8, app: "outlet", [("deals", ["/deals/summer"]), ("home", ["/"])])
        #expect(renamed.digest(length: 2) != before.digest(length: 2))
        // The competitors of one revision are made once.
        #expect(Self.competitors(cache, revision: 8, []).digest(length: 2) == renamed.digest(length: 2))
    }
}
