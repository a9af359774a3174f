import RouteEngine
import LibraryTestSupport
import Testing

/// The `/.well-known` files as tables: which Apple component paths a set of route patterns
/// gives, how the file collapses past Apple's size limit, and which app IDs and Android
/// statements the schemas give.
@Suite("Associated-domain files")
struct AssociatedDomainFilesTests {
    static let paths: [(String, [String], [String])] = [
        ("no routes", [], []),
        ("the root", ["/"], ["/"]),
        ("a literal", ["/orders"], ["/orders"]),
        ("literals as the engine compares them", ["/Campaign/Fresh"], ["/campaign/fresh"]),
        ("a parameter", ["/p/:id"], ["/p/*"]),
        ("a rest capture", ["/help/*topic"], ["/help/*"]),
        ("a trailing slash", ["/orders/"], ["/orders"]),
        ("parameters only", ["/:a/:b"], ["/*/*"]),
        ("repeats once, sorted", ["/p/:id", "/p/:sku", "/a", "/P/:x"], ["/a", "/p/*"]),
        ("sub-delims kept", ["/a;b/c=d"], ["/a;b/c=d"]),
    ]

    @Test(arguments: paths)
    func applePaths(_ label: String, _ patterns: [String], _ expected: [String]) throws {
        let parsed = try patterns.map { pattern throws in try URLPattern(pattern) }
        #expect(AssociatedDomainFiles.applePaths(parsed) == expected, "\(label)")
    }

    static func components(_ file: [UInt8]) -> [String] {
        let json = (try? JSONParser().parse(file)) ?? .null
        return json["applinks"]?["details"]?.arrayValue?.first?["components"]?.arrayValue?.compactMap { $0["/"]?.stringValue } ?? []
    }

    /// Past 128 KB, each path collapses to its first segment, then everything to `/*`: rows
    /// of (label, how many `/p/item-N…` and how many `/section-N…/:id` patterns are
    /// generated beside the fixed ones, the fixed ones, expected). Generated in the test, so
    /// the arguments Swift Testing prints stay short.
    static let collapsing: [(String, Int, Int, [String], [String])] = [
        ("small: as is", 0, 0, ["/p/:id", "/orders"], ["/orders", "/p/*"]),
        ("a few generated: as is", 3, 0, ["/orders/:id"], ["/orders/*", "/p/item-0-with-a-longish-name", "/p/item-1-with-a-longish-name",
                                                           "/p/item-2-with-a-longish-name"]),
        ("large: first segments", 5_000, 0, ["/orders/:id", "/:x/y", "/"], ["/*", "/orders/*", "/p/*"]),
        ("larger still: everything", 5_000, 5_000, [], ["/*"]),
    ]

    @Test(arguments: collapsing)
    func collapsesPastApplesLimit(_ label: String, _ items: Int, _ sections: Int, _ fixed: [String], _ expected: [String]) throws {
        let patterns = (0..<items).map { "/p/item-\($0)-with-a-longish-name" } + (0..<sections).map { "/section-\($0)-of-the-spring-campaign/:id" }
            + fixed
        let files = AssociatedDomainFiles(schemas: [Fixtures.storefront53], patterns: try patterns.map { pattern throws in try URLPattern(pattern) })
        let components = Self.components(files.apple)
        #expect(components.count == expected.count && components == expected, "\(label): \(components.prefix(5))…")
        #expect(files.apple.count <= AssociatedDomainFiles.appleLimit, "\(label)")
        let whole = AssociatedDomainFiles.applePaths(try patterns.map { pattern throws in try URLPattern(pattern) })
        #expect((whole.count == expected.count) == (items < 5_000), "\(label): collapsed only past the limit")
    }

    /// (host, the component paths of its file): a route restricted to www is only in www's
    /// file, a custom-scheme-only route in none, and a build that does not declare a host
    /// lends it no app.
    static let hosts: [(String?, [String], [String])] = [
        ("storefront.example", ["/", "/p/*"], ["ABCDE12345.example.storefront"]),
        ("www.storefront.example", ["/", "/members/*", "/p/*"], ["ABCDE12345.example.storefront", "WWW.only"]),
        (nil, ["/", "/members/*", "/p/*"], ["ABCDE12345.example.storefront", "WWW.only"]),
    ]

    @Test(arguments: hosts)
    func eachHostServesItsOwnRoutes(_ host: String?, _ paths: [String], _ appIDs: [String]) throws {
        var wwwOnly = Fixtures.storefront52
        wwwOnly.hosts = ["www.storefront.example"]
        wwwOnly.appleAppIDs = ["WWW.only"]
        let document = Fixtures.routes(["format": "waymark.routes/1", "app": "storefront", "routes": [
            ["id": "home", "patterns": ["/"], "destination": "home"],
            ["id": "p", "patterns": ["/p/:id"], "destination": "product"],
            ["id": "members", "patterns": ["/members/:id"], "destination": "product", "hosts": ["www.storefront.example"]],
            ["id": "app-only", "patterns": ["/debug/:id"], "destination": "product", "schemes": ["storefront"]],
        ]])
        let files = AssociatedDomainFiles(schemas: [Fixtures.storefront53, wwwOnly], routes: document.routes, host: host)
        #expect(Self.components(files.apple) == paths, "\(host ?? "another host")")
        #expect(try JSONParser().parse(files.apple)["applinks"]?["details"]?.arrayValue?.first?["appIDs"] == .array(appIDs.map(JSONValue.string)))
    }

    @Test func appleFileNamesEveryIOSAppIDOnceAndComparesWithoutCase() throws {
        var android = Fixtures.storefront53
        android.platform = "android"
        android.appleAppIDs = ["ZZZ.should.not.appear"]
        var other = Fixtures.storefront52
        other.appleAppIDs = ["BBB.example.other", "ABCDE12345.example.storefront"]
        let files = AssociatedDomainFiles(schemas: [Fixtures.storefront53, android, other], patterns: [try URLPattern("/p/:id")])
        let json = try JSONParser().parse(files.apple)
        #expect(json["applinks"]?["details"]?.arrayValue?.first?["appIDs"] == ["ABCDE12345.example.storefront", "BBB.example.other"])
        #expect(json["applinks"]?["defaults"]?["caseSensitive"] == false)
        let none = try JSONParser().parse(AssociatedDomainFiles(schemas: [android], patterns: [try URLPattern("/p/:id")]).apple)
        #expect(none["applinks"]?["details"] == [], "no iOS build: no details")
    }

    @Test func assetLinksHasOneStatementPerPackageAndCertificateSet() throws {
        func build(_ package: String, _ fingerprints: [String]) -> Schema {
            var schema = Fixtures.storefront53
            schema.platform = "android"
            schema.android = AndroidApp(package: package, sha256CertFingerprints: fingerprints)
            return schema
        }
        var noAndroid = Fixtures.storefront53
        noAndroid.android = nil
        let schemas = [build("com.a", ["B", "A"]), build("com.a", ["A", "B"]), noAndroid, build("com.a", ["C"]), build("com.b", ["A"])]
        let json = try JSONParser().parse(AssociatedDomainFiles(schemas: schemas, patterns: []).google)
        let targets = json.arrayValue?.compactMap { $0["target"] } ?? []
        #expect(targets.map { $0["package_name"]?.stringValue ?? "" } == ["com.a", "com.a", "com.b"])
        #expect(targets.first?["sha256_cert_fingerprints"] == ["A", "B"], "fingerprints sorted")
        #expect(json.arrayValue?.first?["relation"] == ["delegate_permission/common.handle_all_urls"])
        #expect(try JSONParser().parse(AssociatedDomainFiles(schemas: [noAndroid], patterns: []).google) == [])
    }
}
