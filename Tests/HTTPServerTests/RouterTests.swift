import HTTPCore
@testable import HTTPServer
import Synchronization
import Testing

/// The router as a table: which route a method and path reach, with what parameters, and
/// what is answered when none does. Paths without parameters are matched whole, as bytes;
/// paths with parameters segment by segment; of the routes that take a request, the one
/// with a literal where the others have a parameter (from the left) wins, whatever the
/// order they were added in.
@Suite("Router table")
struct RouterTests {
    static let router: Router = {
        var router = Router()
        let empty: Router.Handler = { _, _ in HTTPResponse(status: .ok) }
        try! router.add("GET", "/", empty)                                   // 0
        try! router.add("GET", "/v1/manifest", empty)                        // 1
        try! router.add("GET", "/v1/revisions", empty)                       // 2
        try! router.add("POST", "/v1/revisions", maximumBody: 100, empty)    // 3
        try! router.add("GET", "/v1/revisions/latest", empty)                // 4
        try! router.add("GET", "/v1/revisions/:number", empty)               // 5
        try! router.add("DELETE", "/v1/revisions/latest", empty)             // 6
        try! router.add("GET", "/v1/revisions/:a/diff/:b", empty)            // 7
        try! router.add("POST", "/v1/telemetry", maximumBody: 1_000, empty)  // 8
        try! router.add("GET", "/v1/telemetry/counts", empty)                // 9
        try! router.add("PUT", "/v1/schemas/:platform/:version", maximumBody: 50, empty)  // 10
        // Added after their parameter siblings, and still reached.
        try! router.add("GET", "/v1/revisions/:a/diff/latest", empty)       // 11
        try! router.add("GET", "/v1/revisions/first/diff/:b", empty)        // 12
        try! router.add("PUT", "/v1/schemas/:platform/current", maximumBody: 5, empty)  // 13
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
        ("GET", "/v1/revisions/3/diff/latest", .route(11, ["a": "3"])),
        ("GET", "/v1/revisions/first/diff/4", .route(12, ["b": "4"])),
        ("GET", "/v1/revisions/first/diff/latest", .route(12, ["b": "latest"])),  // the literal leftmost wins
        ("GET", "/v1/revisions/latest/diff/4", .route(7, ["a": "latest", "b": "4"])),
        ("PUT", "/v1/schemas/ios/current", .route(13, ["platform": "ios"])),
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
        case .notFound, .outside: got = .notFound  // (.outside only with a fallback)
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
        ("PUT", "/v1/schemas/android/current", 5),
    ]

    /// The body limit is looked up before the body is read, for the route the head reaches.
    @Test(arguments: bodyLimits)
    func bodyLimitOfTheRouteReached(_ method: String, _ path: String, _ limit: Int?) {
        var headers = HTTPHeaders()
        headers.add("Content-Length", "10")
        #expect(Self.router.maximumBody(for: HTTPRequestHead(method: method, target: path + "?x=1", headers: headers)) == limit)
    }
}

/// What the router refuses when routes are added: each row adds `routes` in order to an empty
/// router and expects the last one to be refused with that error, or taken (nil).
@Suite("Router registration table")
struct RouterRegistrationTests {
    static let rows: [(String, [(String, String)], RouterError?)] = [
        ("one route", [("GET", "/a")], nil),
        ("the root", [("GET", "/")], nil),
        ("same path, other method", [("GET", "/a"), ("POST", "/a")], nil),
        ("literal after a parameter sibling", [("GET", "/a/:id"), ("GET", "/a/new")], nil),
        ("parameter after a literal sibling", [("GET", "/a/new"), ("GET", "/a/:id")], nil),
        ("deeper shapes", [("GET", "/a/:id"), ("GET", "/a/:id/b"), ("GET", "/a/x/:y")], nil),
        ("trailing slash is the same path", [("GET", "/a/"), ("GET", "/a")], .duplicate(method: "GET", path: "/a", existing: "/a")),
        ("exact duplicate", [("GET", "/a/b"), ("GET", "/a/b")], .duplicate(method: "GET", path: "/a/b", existing: "/a/b")),
        ("parameter names aside", [("GET", "/r/:number"), ("GET", "/r/:id")], .duplicate(method: "GET", path: "/r/:id", existing: "/r/:number")),
        ("two parameters renamed", [("PUT", "/s/:p/:v"), ("PUT", "/s/:x/:y")], .duplicate(method: "PUT", path: "/s/:x/:y", existing: "/s/:p/:v")),
        ("no leading slash", [("GET", "a/b")], .invalidPath("a/b", reason: "a route's path starts with /")),
        ("empty path", [("GET", "")], .invalidPath("", reason: "a route's path starts with /")),
        ("empty segment", [("GET", "/a//b")], .invalidPath("/a//b", reason: "an empty segment (//) is never matched")),
        ("unnamed parameter", [("GET", "/a/:")], .invalidPath("/a/:", reason: "a parameter is : and a name of letters, digits and _, not \":\"")),
        ("parameter name with a dash", [("GET", "/a/:x-y")], .invalidPath("/a/:x-y", reason: "a parameter is : and a name of letters, digits and _, not \":x-y\"")),
        ("parameter named twice", [("GET", "/a/:x/:x")], .invalidPath("/a/:x/:x", reason: "the parameter :x is named twice")),
        ("literal with a space", [("GET", "/a b")], .unreachable("/a b", segment: "a b")),
        ("literal with a percent escape", [("GET", "/a%20b")], .unreachable("/a%20b", segment: "a%20b")),
        ("literal with a query", [("GET", "/a?b")], .unreachable("/a?b", segment: "a?b")),
        ("literal with a fragment", [("GET", "/a#b")], .unreachable("/a#b", segment: "a#b")),
        ("literal with non-ASCII", [("GET", "/caf\u{E9}")], .unreachable("/caf\u{E9}", segment: "caf\u{E9}")),
        ("literal with sub-delims and @", [("GET", "/a:b@c!$&'()*+,;=-._~")], nil),
        ("method not a token", [("GE T", "/a")], .invalidMethod("GE T")),
        ("empty method", [("", "/a")], .invalidMethod("")),
    ]

    @Test(arguments: rows)
    func registration(_ label: String, _ routes: [(String, String)], _ expected: RouterError?) {
        var router = Router()
        let empty: Router.Handler = { _, _ in HTTPResponse(status: .ok) }
        var outcome: RouterError?
        for (index, (method, path)) in routes.enumerated() {
            do throws(RouterError) {
                try router.add(method, path, empty)
            } catch {
                #expect(index == routes.count - 1, "\(label): only the last route is refused, not \(method) \(path)")
                outcome = error
            }
        }
        #expect(outcome == expected, "\(label)")
    }

    /// Deferred routes are checked against the same routes as the others.
    @Test func deferredAndImmediateShareOneTable() {
        var router = Router()
        try! router.add("POST", "/t/:id") { _, _ in HTTPResponse(status: .ok) }
        #expect(throws: RouterError.duplicate(method: "POST", path: "/t/:n", existing: "/t/:id")) {
            try router.addDeferred("POST", "/t/:n") { _, _, responder in responder.respond(HTTPResponse(status: .ok)) }
        }
    }

    /// An answering route answers at once when its handler can, and is deferred (its work
    /// handed the responder) when it cannot; the parameters reach it either way.
    @Test func answeringRoutesAnswerNowOrLater() {
        var router = Router()
        try! router.addAnswering("GET", "/a/:key") { _, parameters in
            parameters["key"] == "cached" ? .now(HTTPResponse(status: .ok)) : .later { responder in responder.respond(HTTPResponse(status: .accepted)) }
        }
        for (key, immediate, status) in [("cached", true, 200), ("cold", false, 202)] {
            let request = HTTPRequest(head: HTTPRequestHead(method: "GET", target: "/a/\(key)", headers: HTTPHeaders()), body: [])
            switch router.route(request) {
            case .response(let response, _):
                #expect(immediate && response.status.code == status, "\(key)")
            case .deferred(let handler, let parameters, _):
                #expect(!immediate, "\(key)")
                let answered = Mutex<Int?>(nil)
                handler(request, parameters, Responder { response in answered.withLock { $0 = response.status.code } })
                #expect(answered.withLock { $0 } == status)
            }
        }
    }
}
