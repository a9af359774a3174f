import Foundation
import LinkChecks
import RouteEngine
import Testing
import TestSupport
import WaymarkAPI

/// What Waymark serves as each host's apple-app-site-association, read by the link checks'
/// own parser and coverage check (`--check-links` runs the same code against a live site):
/// every route that answers links on the host is covered, mixed-case links included; a route
/// restricted to another host, or to the custom scheme, is not in the host's file.
@Suite("Associated-domain files against the link checks", .serialized)
struct AssociatedDomainCoverageTests {
    static func harness() throws -> LiveService {
        let harness = try LiveService(transport: .inProcess)
        guard case .object(var document) = Fixtures.storefrontRoutesJSON, case .array(var routes)? = document["routes"] else { throw CoverageFailure() }
        routes.append(["id": "members", "patterns": ["/members/:id"], "destination": "product", "hosts": ["www.storefront.example"], "owner": "app-team"])
        routes.append(["id": "app-only", "patterns": ["/debug/:id"], "destination": "product", "schemes": ["storefront"], "owner": "app-team"])
        document["routes"] = .array(routes)
        let body = JSONValue.object(["message": "hosts", "routes": .object(document)]).serialized()
        let published = harness.call("POST", "/v1/revisions", token: harness.tokens[.routesPublish]!, headers: [("If-Match", "\"rev-1\"")], body: body)
        guard published.status == 201 else { throw CoverageFailure() }
        return harness
    }

    struct CoverageFailure: Error {}

    /// `pattern` with its literals in other cases: all upper, capitalised, alternating.
    static func mixedCase(_ pattern: String) throws -> [String] {
        let parsed = try URLPattern(pattern)
        func render(_ transform: (String) -> String) -> String {
            "/" + parsed.segments.map { segment in
                switch segment {
                case .literal(let text): transform(text)
                case .parameter(let name): ":" + name
                case .rest(let name): "*" + name
                }
            }.joined(separator: "/")
        }
        return [render { $0.uppercased() }, render { $0.prefix(1).uppercased() + $0.dropFirst() },
                render { String($0.enumerated().map { $0.offset % 2 == 0 ? Character($0.element.uppercased()) : $0.element }) }]
    }

    @Test func everyRouteOfEveryHostIsCoveredInAnyCase() throws {
        let harness = try Self.harness()
        let document = try #require(RoutesDocument.decode(try JSONParser().parse(
            harness.call("GET", "/v1/revisions/2", token: harness.tokens[.routesRead]!).body)["routes"] ?? .null).document)
        var checked = 0
        for host in ["storefront.example", "www.storefront.example", "STOREFRONT.EXAMPLE:443"] {
            let reply = harness.call("GET", "/.well-known/apple-app-site-association", host: host)
            #expect(reply.status == 200)
            let association = try AppleAppSiteAssociation.parse(reply.body).get()
            let rules = try #require(association.rules(for: Storefront.appID), "\(host)")
            let name = LandingHost.normalise(host)
            for route in document.routes {
                let answersHere = route.scope.admits(.web(host: name))
                for pattern in route.patterns {
                    for variant in [pattern] + (try Self.mixedCase(pattern)) {
                        let verdict = PathCoverage.check(route: variant, rules: rules)
                        if answersHere {
                            #expect(verdict == .covered, "\(route.id) \(variant) on \(host): \(verdict)")
                            checked += 1
                        } else {
                            #expect(verdict != .covered, "\(route.id) \(variant) is not \(host)'s, and not in its file")
                        }
                    }
                }
            }
        }
        #expect(checked > 50)
        // A host no schema declares: every web route's patterns, the custom-scheme route's not.
        let other = try AppleAppSiteAssociation.parse(harness.call("GET", "/.well-known/apple-app-site-association", host: "waymark.test").body).get()
        let rules = try #require(other.rules(for: Storefront.appID))
        #expect(PathCoverage.check(route: "/members/:id", rules: rules) == .covered)
        #expect(PathCoverage.check(route: "/debug/:id", rules: rules) != .covered)
    }
}

/// The `Host` field as landing and the associated-domain files read it.
enum LandingHost {
    static func normalise(_ field: String) -> String {
        var host = Substring(field)
        if let colon = host.lastIndex(of: ":") { host = host[..<colon] }
        return host.lowercased()
    }
}
