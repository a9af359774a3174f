import HTTPCore
@testable import HTTPServer
import Testing

/// The router as a table: which route a method and path reach, with what parameters, and
/// what is answered when none does. Paths without parameters are matched whole, as bytes;
/// paths with parameters segment by segment; the first route added that takes a request wins.
@Suite("Router table")
struct RouterTests {
    static let router: Router = {
        var router = Router()
        let empty: Router.Handler = { _, _ in HTTPResponse(status: .ok) }
        router.add("GET", "/", empty)                                   // 0
        router.add("GET", "/v1/manifest", empty)                        // 1
        router.add("GET", "/v1/revisions", empty)                       // 2
        router.add("POST", "/v1/revisions", maximumBody: 100, empty)    // 3
        router.add("GET", "/v1/revisions/latest", empty)                // 4
        router.add("GET", "/v1/revisions/:number", empty)               // 5
        router.add("DELETE", "/v1/revisions/latest", empty)             // 6
        router.add("GET", "/v1/revisions/:a/diff/:b", empty)            // 7
        router.add("POST", "/v1/telemetry", maximumBody: 1_000, empty)  // 8
        router.add("GET", "/v1/telemetry/counts", empty)                // 9
        router.add("PUT", "/v1/schemas/:platform/:version", maximumBody: 50, empty)  // 10
        return router
    }()

    enum Expected: Equatable {
        case route(Int, [String: String] = [:])
        case notAllowed([String])
        case notFound
        case notImplemented
    }

    static let rows: [(String, String, Expected)] = [
        ("GET", "/", .route(0)),
        ("GET", "/v1/manifest", .route(1)),
        ("HEAD", "/v1/manifest", .route(1)),
        ("GET", "/v1/manifest/", .route(1)),
        ("GET", "/v1/manifest//", .notFound),
        ("GET", "//v1/manifest", .notFound),
        ("GET", "/v1//manifest", .notFound),
        ("GET", "/v1/manifes", .notFound),
        ("GET", "/v1/manifestx", .notFound),
        ("GET", "/V1/manifest", .notFound),
        ("GET", "/v1/manifest/x", .notFound),
        ("GET", "/v1", .notFound),
        ("POST", "/v1/manifest", .notAllowed(["GET", "HEAD"])),
        ("GET", "/v1/revisions", .route(2)),
        ("POST", "/v1/revisions", .route(3)),
        ("POST", "/v1/revisions/", .route(3)),
        ("DELETE", "/v1/revisions", .notAllowed(["GET", "HEAD", "POST"])),
        ("GET", "/v1/revisions/latest", .route(4)),
        ("DELETE", "/v1/revisions/latest", .route(6)),
        ("PUT", "/v1/revisions/latest", .notAllowed(["DELETE", "GET", "HEAD"])),
        ("GET", "/v1/revisions/7", .route(5, ["number": "7"])),
        ("GET", "/v1/revisions/7/", .route(5, ["number": "7"])),
        ("GET", "/v1/revisions/a%20b", .route(5, ["number": "a b"])),
        ("GET", "/v1/revisions/%zz", .notFound),
        ("DELETE", "/v1/revisions/7", .notAllowed(["GET", "HEAD"])),
        ("GET", "/v1/revisions/3/diff/4", .route(7, ["a": "3", "b": "4"])),
        ("GET", "/v1/revisions/3/diff", .notFound),
        ("GET", "/v1/revisions//diff/4", .notFound),
        ("POST", "/v1/telemetry", .route(8)),
        ("GET", "/v1/telemetry", .notAllowed(["POST"])),
        ("GET", "/v1/telemetry/counts", .route(9)),
        ("GET", "/v1/telemetry/counts/", .route(9)),
        ("PUT", "/v1/schemas/ios/5.3.0", .route(10, ["platform": "ios", "version": "5.3.0"])),
        ("PUT", "/v1/schemas/ios", .notFound),
        ("BREW", "/v1/manifest", .notAllowed(["GET", "HEAD"])),
        ("BREW", "/nowhere", .notImplemented),
        ("GET", "/nowhere", .notFound),
        ("GET", "*", .notFound),
    ]

    @Test(arguments: rows)
    func routes(_ method: String, _ path: String, _ expected: Expected) {
        let got: Expected
        switch Self.router.match(method: method, path: Substring(path)) {
        case .found(_, let parameters, let route): got = .route(route, parameters.values)
        case .methodNotAllowed(let allow): got = .notAllowed(allow)
        case .notFound: got = .notFound
        case .notImplemented: got = .notImplemented
        }
        #expect(got == expected)
    }

    static let bodyLimits: [(String, String, Int?)] = [
        ("POST", "/v1/telemetry", 1_000),
        ("POST", "/v1/telemetry/", 1_000),
        ("POST", "/v1/revisions", 100),
        ("PUT", "/v1/schemas/android/1.0", 50),
        ("GET", "/v1/revisions", nil),
        ("POST", "/v1/telemetryx", nil),
        ("PUT", "/v1/schemas/android", nil),
    ]

    /// The body limit is looked up before the body is read, for the route the head reaches.
    @Test(arguments: bodyLimits)
    func bodyLimitOfTheRouteReached(_ method: String, _ path: String, _ limit: Int?) {
        var headers = HTTPHeaders()
        headers.add("Content-Length", "10")
        #expect(Self.router.maximumBody(for: HTTPRequestHead(method: method, target: path + "?x=1", headers: headers)) == limit)
    }
}
