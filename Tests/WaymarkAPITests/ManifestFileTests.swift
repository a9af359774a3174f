import Foundation
import HTTPCore
@testable import HTTPServer
import RouteEngine
import Testing
import TestSupport
@testable import WaymarkAPI
#if canImport(Glibc)
import Glibc
#endif

/// A manifest of `BodyFile.worthwhileBytes` or more is sent from its view's sealed memory
/// file (sendfile(2)); a smaller one from memory. Either way the bytes are the view's.
@Suite("Manifests sent from memory files", .serialized)
struct ManifestFileTests {
    static let manifest = "/v1/manifest?platform=ios&version=5.3.0"

    /// The storefront routes with `count` more campaign routes.
    static func publishBody(campaigns count: Int) -> String {
        guard case .object(var document) = Fixtures.storefrontRoutesJSON, case .array(var routes)? = document["routes"] else { return "" }
        for index in 0..<count {
            routes.append(["id": .string("campaign-\(index)"), "patterns": [.string("/campaign/spring-\(index)/:slug")],
                           "destination": "category", "owner": "marketing"])
        }
        document["routes"] = .array(routes)
        return JSONValue.object(["message": "campaigns", "routes": .object(document)]).serialized()
    }

    @Test func aLargeManifestIsSentFromItsFileAndASmallOneFromMemory() throws {
        let service = try LiveService(transport: .socket)
        let router = try service.api.router()
        let headers = HTTPHeaders([("Authorization", "Bearer \(service.tokens[.manifestRead]!)"), ("Host", "waymark.test")])
        func routed() throws -> HTTPResponse {
            let request = HTTPRequest(head: HTTPRequestHead(method: "GET", target: Self.manifest, headers: headers))
            guard case .response(let response, _) = router.route(request) else { throw POSIXError(.EIO) }
            return response
        }
        // The seeded storefront's manifest is small: no file.
        #expect(service.call("GET", Self.manifest, token: service.tokens[.manifestRead]).status == 200)
        let small = try routed()
        #expect(small.body.count < BodyFile.worthwhileBytes && small.bodyFile == nil)

        let publish = service.call("POST", "/v1/revisions", token: service.tokens[.routesPublish], headers: rev1,
                                   body: Self.publishBody(campaigns: 300))
        #expect(publish.status == 201, "\(publish.text.prefix(600))")
        let large = try routed()
        #expect(large.body.count >= BodyFile.worthwhileBytes)
        let file = try #require(large.bodyFile)
        var inFile = [UInt8](repeating: 0, count: file.count)
        #expect(pread(file.descriptor, &inFile, file.count, 0) == file.count)
        #expect(inFile == large.body, "the file holds the view's bytes")
        // Over the socket: the same bytes, whole.
        let fetched = service.call("GET", Self.manifest, token: service.tokens[.manifestRead])
        #expect(fetched.status == 200 && fetched.body == large.body)
        // A HEAD sends neither.
        let head = service.call("HEAD", Self.manifest, token: service.tokens[.manifestRead])
        #expect(head.status == 200 && head.body.isEmpty && head["Content-Length"] == "\(large.body.count)")
    }
}
