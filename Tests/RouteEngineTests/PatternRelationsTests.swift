import RouteEngine
import Testing

/// The relations between patterns that the validator, the impact preview and route
/// suggestions reason with, in tables.
@Suite("Pattern relations")
struct PatternRelationsTests {
    static func segments(_ text: String) -> [PatternSegment] { try! URLPattern(text).segments }

    @Test("overlaps: some path matches both", arguments: [
        ("/product/:id", "/product/42", true), ("/product/:id", "/p/:id", false), ("/a/*rest", "/a/b/c", true),
        ("/a/*rest", "/a", false), ("/:x/b", "/a/:y", true), ("/a/b", "/a/b/c", false), ("/*all", "/x", true), ("/", "/", true),
    ])
    func overlaps(_ a: String, _ b: String, _ expected: Bool) {
        #expect(URLPattern.overlaps(Self.segments(a), Self.segments(b)) == expected)
        #expect(URLPattern.overlaps(Self.segments(b), Self.segments(a)) == expected, "symmetric")
    }

    @Test("covers: every path the inner matches, the outer matches", arguments: [
        ("/product/:id", "/product/42", true), ("/product/42", "/product/:id", false), ("/a/*rest", "/a/b/:c", true),
        ("/a/*rest", "/a", false), ("/:x", "/*rest", false), ("/:x/:y", "/a/b", true), ("/a", "/a/b", false), ("/*all", "/*rest", true),
    ])
    func covers(_ outer: String, _ inner: String, _ expected: Bool) {
        #expect(URLPattern.covers(Self.segments(outer), Self.segments(inner)) == expected)
    }

    @Test("beats: the first segment whose rank differs decides, then the longer", arguments: [
        ("/product/new", "/product/:id", true), ("/product/:id", "/product/new", false), ("/a/:b", "/a/*rest", true),
        ("/:a/b", "/x/:b", false), ("/a/b/:c", "/a/b", true), ("/a/b", "/a/b/:c", false),
    ])
    func beats(_ a: String, _ b: String, _ expected: Bool) {
        #expect(URLPattern.beats(Self.segments(a), Self.segments(b)) == expected)
    }

    @Test func shapesIgnoreCaptureNames() throws {
        #expect(try URLPattern("/Product/:id/*rest").shape == ["product", ":", "*"])
        #expect(try URLPattern("/p/:a").shape == URLPattern("/p/:b").shape)
    }

    @Test func scopesWithinScopes() {
        let all = LinkScope(hosts: nil, schemes: nil)
        let one = LinkScope(hosts: ["a.example"], schemes: nil)
        let two = LinkScope(hosts: ["a.example", "b.example"], schemes: ["storefront"])
        #expect(one.isWithin(all) && !all.isWithin(one))
        // Hosts alone answer no custom scheme (docs/formats.md): within any list of schemes.
        #expect(one.isWithin(two) && !two.isWithin(one))
        #expect(!LinkScope(hosts: ["c.example"], schemes: nil).isWithin(two))
    }
}
