import LinkChecks
import RouteEngine
import Testing

@Suite("Associated-domain coverage of route patterns")
struct CoverageTests {
    static func paths(_ list: String...) -> [PathRule] {
        list.map { path in
            let exclude = path.hasPrefix("NOT ")
            return PathRule(path, pattern: exclude ? String(path.dropFirst(4)) : path, exclude: exclude)
        }
    }

    /// Route pattern, rules, and nil when covered or the example path and excluding rule.
    static let table: [(String, [PathRule], (String, String?)?)] = [
        ("/product/:id", paths("*"), nil),
        ("/product/:id", paths("/product/*"), nil),
        ("/product/:id", paths("/product/?*"), nil),
        ("/product/:id", paths("/product/?"), ("/product/xx", nil)),
        ("/product/:id", paths("/products/*"), ("/product/x", nil)),
        ("/product/:id", paths("/product/*/reviews"), ("/product/x", nil)),
        ("/product/:id", paths("NOT /product/*", "*"), ("/product/x", "NOT /product/*")),
        // An exclusion only for one value leaves the pattern partly uncovered: that value is the example.
        ("/product/:id", paths("NOT /product/secret", "/product/*"), ("/product/secret", "NOT /product/secret")),
        ("/product/:id", paths("/product/*", "NOT /product/secret"), nil),
        ("/help/*topic", paths("/help/*"), nil),
        ("/help/*topic", paths("/help/?*"), nil),
        ("/help/*topic", paths("/help/*/*"), ("/help/x", nil)),
        ("/help/*topic", paths("NOT /help/*/*", "/help/*"), ("/help/x/x", "NOT /help/*/*")),
        ("/", paths("/"), nil),
        ("/", paths("/?*"), ("/", nil)),
        ("/", paths("*"), nil),
        ("/sale", paths("/sale"), nil),
        ("/sale", paths("/Sale"), ("/sale", nil)),
        ("/Sale", paths("/Sale"), nil),
        ("/sale", [PathRule("/SALE", pattern: "/SALE", exclude: false, caseSensitive: false)], nil),
        ("/sale/:code", paths("/sale/*", "NOT /sale/x*"), nil),
        ("/p/:a/:b", paths("/p/*"), nil),
        ("/p/:a/:b", paths("/p/?/*"), ("/p/xx/x", nil)),
        ("/orders/:id/track", paths("/orders/*/track"), nil),
        ("/orders/:id/track", paths("/orders/*"), nil),
        ("/orders/:id/track", paths("NOT /orders/*/track", "/orders/*"), ("/orders/x/track", "NOT /orders/*/track")),
        ("/product/:id", [], ("/product/x", nil)),
    ]

    @Test("route patterns against wildcard rules, first match deciding", arguments: table)
    func coverage(_ route: String, _ rules: [PathRule], _ expected: (String, String?)?) {
        let verdict = PathCoverage.check(route: route, rules: rules)
        switch (verdict, expected) {
        case (.covered, nil): break
        case (.notCovered(let example, let rule), let (path, excluding)?):
            #expect(example == path, "\(route) against \(rules)")
            #expect(rule?.description == excluding, "\(route) against \(rules)")
        default: Issue.record("\(route) against \(rules): \(verdict), expected \(expected.map { "\($0)" } ?? "covered")")
        }
    }

    @Test func componentsAndLegacyPathsAreBothRead() throws {
        let file = """
        {"applinks": {"apps": [], "details": [
          {"appIDs": ["TEAM.new"], "components": [
            {"/": "/account/*", "exclude": true, "comment": "not in the app"},
            {"/": "/buy/*", "?": {"coupon": "?*"}},
            {"/": "/search", "?": "*"},
            {"#": "nope", "exclude": true},
            {"/": "/p/*", "caseSensitive": false}
          ]},
          {"appID": "TEAM.old", "paths": ["NOT /account/*", "/account", "*"]}
        ]}}
        """
        let association = try AppleAppSiteAssociation.parse(Array(file.utf8)).get()
        #expect(association.appIDs == ["TEAM.new", "TEAM.old"])
        let new = try #require(association.rules(for: "TEAM.new"))
        // The coupon component needs a query item and the fragment one a fragment: links
        // without either never match them.
        #expect(new.map(\.pattern) == ["/account/*", "/search", "/p/*"])
        #expect(new.map(\.exclude) == [true, false, false])
        #expect(new.map(\.caseSensitive) == [true, true, false])
        #expect(PathCoverage.check(route: "/P/:id", rules: new) == .covered)
        #expect(PathCoverage.check(route: "/buy/:id", rules: new) == .notCovered(example: "/buy/x", excludedBy: nil))
        let old = try #require(association.rules(for: "TEAM.old"))
        #expect(PathCoverage.check(route: "/account", rules: old) == .covered)
        guard case .notCovered("/account/x", let rule?) = PathCoverage.check(route: "/account/:tab", rules: old) else {
            Issue.record("the NOT rule should exclude /account/:tab")
            return
        }
        #expect(rule.description == "\"NOT /account/*\"")
        #expect(association.rules(for: "TEAM.other") == nil)
    }

    @Test(arguments: [
        ("[]", "has no \"applinks\" object"),
        ("{\"applinks\": {}}", "has no \"applinks.details\" list"),
        ("{\"applinks\": {\"details\": [{\"paths\": [\"*\"]}]}}", "without appIDs or appID"),
        ("{\"applinks\": {\"details\": [{\"appID\": \"T.a\", \"components\": [{\"/\": 3}]}]}}", "components[0] that has a \"/\" that is not a string"),
        ("{\"applinks\": {\"details\": [{\"appID\": \"T.a\", \"paths\": [\"*\", 1]}]}}", "paths that is not a list of strings"),
        ("not json", "is not valid JSON"),
    ])
    func unusableAppleFilesSayWhy(_ text: String, _ reason: String) {
        guard case .failure(let error) = AppleAppSiteAssociation.parse(Array(text.utf8)) else {
            Issue.record("\(text) parsed")
            return
        }
        #expect(error.reason.contains(reason), "\(error.reason)")
    }

    @Test func assetLinksNeedThePackageAndOneFingerprint() throws {
        let file = """
        [{"relation": ["delegate_permission/common.get_login_creds"],
          "target": {"namespace": "web", "site": "https://example.com"}},
         {"relation": ["delegate_permission/common.handle_all_urls"],
          "target": {"namespace": "android_app", "package_name": "example.storefront",
                     "sha256_cert_fingerprints": ["14:6d:e9:83", "AA:BB"]}}]
        """
        let links = try AssetLinks.parse(Array(file.utf8)).get()
        #expect(links.allows(package: "example.storefront", fingerprints: ["14:6D:E9:83"]))
        #expect(!links.allows(package: "example.storefront", fingerprints: ["CC:DD"]))
        #expect(links.lists(package: "example.storefront"))
        #expect(!links.allows(package: "example.other", fingerprints: ["AA:BB"]))
        guard case .failure(let error) = AssetLinks.parse(Array("{\"relation\": []}".utf8)) else { Issue.record("parsed"); return }
        #expect(error.reason == "is not a list of statements")
    }
}
