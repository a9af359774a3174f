import Foundation
import LinkChecks
import WaymarkAPI
import RouteEngine
import Testing
import TestSupport

/// `serve --check-links`: the findings in `POST /v1/validate` and on publishing, against
/// the storefront example's own hosts served from loopback (its www host has no
/// apple-app-site-association).
@Suite("Link checks on validate and publish")
struct LinkCheckEndpointTests {
    static let served: Void = {
        let site = HTTPSFixture.site
        try! site.serveStorefrontSites(host: "storefront.example", wwwHost: "www.storefront.example")
        try? FileManager.default.removeItem(atPath: site.directory + "/sites/www.storefront.example/.well-known/apple-app-site-association")
    }()

    func service(_ severity: Severity) throws -> LiveService {
        _ = Self.served
        var options = LinkCheckOptions()
        options.fetch = HTTPSFixture.site.options()
        options.fetch.connectTo = ["storefront.example", "www.storefront.example"].map(HTTPSFixture.site.connect)
        options.severity = severity
        return try LiveService(linkChecks: options)
    }

    /// The link checks' codes among `problems`, in order.
    func codes(_ problems: JSONValue?) -> [String] {
        problems?.arrayValue?.compactMap { $0["code"]?.stringValue }.filter { ProblemCode(rawValue: $0)!.isFoundByLinkChecks } ?? []
    }

    @Test func findingsAreWarningsByDefaultAndDoNotBlockPublishing() throws {
        let harness = try service(.warning)
        let token = harness.tokens[.routesPublish]!
        let report = harness.call("POST", "/v1/validate", token: token, bytes: Fixtures.storefrontRoutesJSON.serializedBytes())
        #expect(report.status == 200)
        #expect(report.json["valid"] == true)
        #expect(codes(report.json["warnings"]) == ["associatedDomainMissing"])
        #expect(report.json["warnings"]?.arrayValue?.contains {
            $0["message"]?.stringValue?.contains("www.storefront.example/.well-known/apple-app-site-association answers 404") == true
        } == true)
        let published = harness.call("POST", "/v1/revisions", token: token, headers: [("If-Match", "\"rev-1\"")], body: publishBody(extraRoute: "a"))
        #expect(published.status == 201)
        // Five fetches for the first check; the publish's reused them (one new route, no new URL).
        let metrics = harness.call("GET", "/metrics", token: harness.tokens[.telemetryRead]!).text
        #expect(metrics.contains("waymark_link_check_fetches_total 5\n"))
        #expect(metrics.contains("waymark_link_check_findings_total 3\n"), "one on validate, two on publish")
    }

    /// A publish the store will refuse takes no check's place and fetches nothing: tokens
    /// sending stale `If-Match` headers cannot keep an operator's publish at `linkChecksBusy`.
    @Test func aStalePublishIsRefusedWithoutACheck() throws {
        let harness = try service(.warning)
        let token = harness.tokens[.routesPublish]!
        for _ in 0..<3 {
            let stale = harness.call("POST", "/v1/revisions", token: token, headers: [("If-Match", "\"rev-9\"")], body: publishBody(extraRoute: "a"))
            #expect(stale.status == 412, "\(stale.text.prefix(200))")
        }
        let metrics = harness.call("GET", "/metrics", token: harness.tokens[.telemetryRead]!).text
        #expect(metrics.contains("waymark_link_check_fetches_total 0\n"), "no check ran for a stale publish")
        let published = harness.call("POST", "/v1/revisions", token: token, headers: [("If-Match", "\"rev-1\"")], body: publishBody(extraRoute: "a"))
        #expect(published.status == 201)
        #expect(harness.call("GET", "/metrics", token: harness.tokens[.telemetryRead]!).text.contains("waymark_link_check_fetches_total 5\n"))
    }

    @Test func findingsConfiguredAsErrorsBlockPublishingAndChangeNothing() throws {
        let harness = try service(.error)
        let token = harness.tokens[.routesPublish]!
        let report = harness.call("POST", "/v1/validate", token: token, bytes: Fixtures.storefrontRoutesJSON.serializedBytes())
        #expect(report.json["valid"] == false)
        #expect(codes(report.json["errors"]) == ["associatedDomainMissing"])
        let refused = harness.call("POST", "/v1/revisions", token: token, headers: [("If-Match", "\"rev-1\"")], body: publishBody(extraRoute: "a"))
        #expect(refused.status == 422)
        // The new route's /campaign/a is not in storefront.example's file either.
        let errors = refused.json["error"]?["details"]?["errors"]
        #expect(codes(errors) == ["associatedDomainNotCovering", "associatedDomainMissing"])
        #expect(errors?.arrayValue?.first?["path"] == "routes[10].patterns[0]")
        #expect(errors?.arrayValue?.first?["message"]?.stringValue?.hasPrefix("Route \"a\" (/campaign/a) will open in the browser on storefront.example") == true)
        #expect(harness.store.snapshot.revisions.count == 1)
        // A rollback is the way out of an incident: it is not held up by the checks. (Revision
        // 2 is stored directly, as if published before the checks were turned on.)
        let routes = Array(publishBody(extraRoute: "b").utf8)
        let document = try JSONParser().parse(routes)["routes"]!.serializedBytes()
        guard case .published = try harness.store.publish(routes: document, base: 1, author: "earlier", message: "") else {
            Issue.record("could not store revision 2")
            return
        }
        #expect(harness.call("POST", "/v1/revisions/1/rollback", token: token, headers: [("If-Match", "\"rev-2\"")]).status == 201)
    }
}
