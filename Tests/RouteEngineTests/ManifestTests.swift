import Foundation
import RouteEngine
import LibraryTestSupport
import Testing

/// Decoding what `GET /v1/manifest` serves: tolerant of what a newer server adds, strict
/// about which build it is for and whether its routes are the ones it hashed.
@Suite("Manifest decoding")
struct ManifestTests {
    static let build = Fixtures.storefrontBuild
    static let schema = Fixtures.storefrontSchema53JSON
    static let routes = Fixtures.storefrontRoutesJSON["routes"]!.arrayValue!
    static let context = ResolutionContext(satisfied: ["auth"], now: Fixtures.date("2026-03-15T00:00:00Z"))

    static func decode(_ json: JSONValue, for build: AppBuild = build) -> Result<Manifest, ManifestError> {
        Manifest.decode(json.serializedBytes(), for: build, now: Fixtures.date("2026-03-15T00:00:00Z"))
    }

    static func with(_ json: JSONValue, _ key: String, _ value: JSONValue?) -> JSONValue {
        guard case .object(var object) = json else { return json }
        object[key] = value
        return .object(object)
    }

    static func route(_ index: Int, _ key: String, _ value: JSONValue?) -> [JSONValue] {
        var changed = routes
        changed[index] = with(changed[index], key, value)
        return changed
    }

    @Test("A manifest resolves every link as the engine built from the same documents")
    func agreesWithEngine() throws {
        let manifest = try Self.decode(Fixtures.manifestJSON(schema: Self.schema, routes: Self.routes)).get()
        #expect(manifest.revision == 1)
        #expect(manifest.resolver.routeIDs == Fixtures.storefront.routeIDs)
        for link in ["https://storefront.example/p/p-1", "storefront://orders/A-1", "https://storefront.example/search?q=x",
                     "https://storefront.example/nope", "https://storefront.example/p/%ZZ", "https://storefront.example/orders/!"] {
            #expect(manifest.resolver.resolve(url: link, context: Self.context) == Fixtures.storefront.resolve(url: link, context: Self.context), "\(link)")
        }
    }

    /// Refused whole: (label, document, build asked for, kind).
    static let refusals: [(String, JSONValue, AppBuild, ManifestError.Kind)] = [
        ("another app", with(Fixtures.manifestJSON(schema: schema, routes: routes), "app", "other"), build, .wrongBuild),
        ("another platform", Fixtures.manifestJSON(schema: schema, routes: routes), AppBuild(app: "storefront", platform: "android", version: "5.3.0"), .wrongBuild),
        ("another version", Fixtures.manifestJSON(schema: schema, routes: routes), AppBuild(app: "storefront", platform: "ios", version: "5.2.0"), .wrongBuild),
        ("a changed route", Fixtures.manifestJSON(schema: schema, routes: route(1, "destination", "home"),
                                                  digest: Manifest.canonicalRoutesDigest(.array(routes))), build, .integrity),
        ("a route left out", Fixtures.manifestJSON(schema: schema, routes: Array(routes.dropLast()),
                                                   digest: Manifest.canonicalRoutesDigest(.array(routes))), build, .integrity),
        ("no digest", with(Fixtures.manifestJSON(schema: schema, routes: routes), "routesSha256", nil), build, .wrongFormat),
        ("another format", with(Fixtures.manifestJSON(schema: schema, routes: routes), "format", "waymark.manifest/2"), build, .wrongFormat),
        ("a routes document, not a manifest", Fixtures.storefrontRoutesJSON, build, .wrongFormat),
        ("revision 0", Fixtures.manifestJSON(schema: schema, routes: routes, revision: 0), build, .wrongFormat),
        ("revision as a string", with(Fixtures.manifestJSON(schema: schema, routes: routes), "revision", "7"), build, .wrongFormat),
        ("routes not a list", with(Fixtures.manifestJSON(schema: schema, routes: routes), "routes", [:]), build, .wrongFormat),
        ("no schema", with(Fixtures.manifestJSON(schema: schema, routes: routes), "schema", nil), build, .wrongFormat),
        ("a broken schema", with(Fixtures.manifestJSON(schema: schema, routes: routes), "schema", ["format": "waymark.schema/1"]), build, .invalidSchema),
        ("the schema of another build", with(Fixtures.manifestJSON(schema: schema, routes: routes), "schema",
                                             with(schema, "version", "5.2.0")), build, .invalidSchema),
        ("a list", .array([]), build, .notJSON),
    ]

    @Test(arguments: refusals)
    func refused(_ label: String, _ json: JSONValue, _ build: AppBuild, _ kind: ManifestError.Kind) {
        switch Self.decode(json, for: build) {
        case .success: Issue.record("\(label): accepted")
        case .failure(let error): #expect(error.kind == kind, "\(label): \(error)")
        }
    }

    @Test("A truncated body is refused at every length, never half used")
    func truncated() {
        let bytes = Fixtures.storefrontManifest()
        for length in stride(from: 0, to: bytes.count, by: max(1, bytes.count / 200)) {
            if case .success = Manifest.decode(bytes[..<length], for: Self.build) { Issue.record("accepted \(length) of \(bytes.count) bytes") }
        }
        #expect((try? Manifest.decode(bytes, for: Self.build).get()) != nil)
    }

    /// Tolerated: (label, routes, ids expected in the table, ids expected left out).
    @Test("Unknown fields are ignored; routes this build cannot use are left out and named")
    func tolerant() throws {
        let newer = Self.with(Self.with(Fixtures.manifestJSON(schema: Self.schema, routes: Self.route(0, "analytics", ["x": 1])),
                                        "signature", "later"), "cohort", 4)
        let manifest = try Self.decode(newer).get()
        #expect(manifest.resolver.routeIDs.contains("home"))
        #expect(manifest.leftOut.isEmpty)

        var routes = Self.route(1, "destination", "hologram")          // a destination this build lacks
        routes = routes.enumerated().map { $0.offset == 2 ? Self.with($0.element, "patterns", nil) : $0.element }  // not well-formed
        routes.append(["id": "future", "patterns": ["/future/:x"], "destination": "product",
                       "params": ["id": ["cookie": "x"]]])      // a param source from the future
        let partial = try Self.decode(Fixtures.manifestJSON(schema: Self.schema, routes: routes)).get()
        #expect(!partial.resolver.routeIDs.contains("product"))
        #expect(!partial.resolver.routeIDs.contains("category"))
        #expect(!partial.resolver.routeIDs.contains("future"))
        #expect(partial.resolver.routeIDs.contains("search"))
        let named = partial.leftOut.map(\.path.description).joined(separator: " ")
        for path in ["routes[1].destination", "routes[2]", "routes[\(routes.count - 1)]"] {
            #expect(named.contains(path), "\(path) in \(named)")
        }
        #expect(partial.resolver.resolve(url: "https://storefront.example/p/p-1", context: Self.context).outcome == "notFound")
    }

    @Test("The digest is of the canonical form: key order and whitespace do not matter, content does")
    func canonicalDigest() throws {
        let spaced = try JSONParser().parse(#"[ {"patterns": ["/"], "id": "home",  "destination": "home"} ]"#)
        let compact = try JSONParser().parse(#"[{"destination":"home","id":"home","patterns":["/"]}]"#)
        #expect(Manifest.canonicalRoutesDigest(spaced) == Manifest.canonicalRoutesDigest(compact))
        #expect(Manifest.canonicalRoutesDigest(compact) == "5dec7c899abaac8464fcb46305ff7ae1abe367696adca41279f9ac5ebef5b80e")  // sha256sum of the compact bytes
        let other = try JSONParser().parse(#"[{"destination":"home","id":"Home","patterns":["/"]}]"#)
        #expect(Manifest.canonicalRoutesDigest(other) != Manifest.canonicalRoutesDigest(compact))
    }
}
