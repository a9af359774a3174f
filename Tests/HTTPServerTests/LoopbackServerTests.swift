import SystemIO
import Foundation
import HTTPCore
import HTTPServer
import Testing
import TestSupport

/// A server on loopback, port 0, with a few routes; stopped at the end of each test.
final class TestServer {
    let server: HTTPServer

    init(metrics: HTTPMetrics? = nil, configure: (inout ServerConfiguration) -> Void = { _ in }) throws {
        var router = Router()
        try router.add("GET", "/hello") { _, _ in HTTPResponse(status: .ok, contentType: "text/plain", body: Array("hello".utf8)) }
        try router.add("GET", "/echo/:word") { _, parameters in
            HTTPResponse(status: .ok, contentType: "text/plain", body: Array((parameters["word"] ?? "").utf8))
        }
        try router.add("GET", "/file/:size") { _, parameters in BodyFileTests.response(size: Int(parameters["size"] ?? "") ?? 0) }
        try router.add("GET", "/mismatched") { _, _ in
            var response = BodyFileTests.response(size: 20_000)
            response.bodyFile = BodyFile.holding(BodyFileTests.numbered(24_000))  // not the body's size
            return response
        }
        try router.add("POST", "/echo", maximumBody: 16) { request, _ in
            HTTPResponse(status: .ok, contentType: "application/octet-stream", body: request.body)
        }
        var configuration = ServerConfiguration()
        configuration.port = 0
        configuration.threads = 2
        configuration.accessLog = false
        configure(&configuration)
        server = HTTPServer(configuration: configuration, router: router, metrics: metrics)
        try server.start()
    }

    var port: UInt16 { server.port }

    func stop() {
        server.shutdown()
        server.wait()
    }
}

@Suite("HTTP server on loopback", .serialized)
struct LoopbackServerTests {
    @Test func keepAliveServesSeveralRequestsOnOneConnection() throws {
        let server = try TestServer()
        defer { server.stop() }
        let client = try LoopbackClient(port: server.port)
        for _ in 0..<3 {
            client.send("GET /hello HTTP/1.1\r\nHost: a\r\n\r\n")
            let responses = client.read(responses: 1)
            #expect(responses.first?.head.hasPrefix("HTTP/1.1 200 OK") == true)
            #expect(responses.first?.body == "hello")
            #expect(responses.first?.head.contains("Content-Length: 5") == true)
            #expect(responses.first?.head.contains("Date: ") == true)
            #expect(responses.first?.head.contains("X-Request-Id: ") == true)
        }
    }

    @Test func pipelinedResponsesComeInRequestOrder() throws {
        let server = try TestServer()
        defer { server.stop() }
        let client = try LoopbackClient(port: server.port)
        let words = (0..<20).map { "w\($0)" }
        client.send(words.map { "GET /echo/\($0) HTTP/1.1\r\nHost: a\r\n\r\n" }.joined())
        #expect(client.read(responses: 20).map(\.body) == words)
    }

    @Test func headHasTheLengthButNoContent() throws {
        let server = try TestServer()
        defer { server.stop() }
        let client = try LoopbackClient(port: server.port)
        client.send("HEAD /hello HTTP/1.1\r\nHost: a\r\n\r\nGET /hello HTTP/1.1\r\nHost: a\r\n\r\n")
        let responses = client.read(responses: 1, headOnly: true)
        #expect(responses.first?.head.contains("Content-Length: 5") == true)
        // The next response starts right after the HEAD response's head: no body in between.
        let rest = client.read(responses: 1)
        #expect(rest.first?.head.hasPrefix("HTTP/1.1 200 OK") == true)
        #expect(rest.first?.body == "hello")
    }

    @Test func expectContinueGets100ThenTheResponse() throws {
        let server = try TestServer()
        defer { server.stop() }
        let client = try LoopbackClient(port: server.port)
        client.send("POST /echo HTTP/1.1\r\nHost: a\r\nExpect: 100-continue\r\nContent-Length: 4\r\n\r\n")
        let interim = client.read(responses: 1)
        #expect(interim.first?.head == "HTTP/1.1 100 Continue")
        client.send("ping")
        #expect(client.read(responses: 1).first?.body == "ping")
    }

    @Test func http10WithoutKeepAliveCloses() throws {
        let server = try TestServer()
        defer { server.stop() }
        let client = try LoopbackClient(port: server.port)
        client.send("GET /hello HTTP/1.0\r\n\r\n")
        let text = client.readAll()
        #expect(text.hasPrefix("HTTP/1.1 200 OK"))
        #expect(text.contains("Connection: close"))
        #expect(text.hasSuffix("hello"))
    }

    @Test func connectionCloseIsHonoured() throws {
        let server = try TestServer()
        defer { server.stop() }
        let client = try LoopbackClient(port: server.port)
        client.send("GET /hello HTTP/1.1\r\nHost: a\r\nConnection: close\r\n\r\nGET /hello HTTP/1.1\r\nHost: a\r\n\r\n")
        let text = client.readAll()
        #expect(text.components(separatedBy: "HTTP/1.1 200").count == 2, "exactly one response, then close")
    }

    static let errors: [(String, Int)] = [
        ("GET /hello HTTP/1.1\r\n\r\n", 400),
        ("GET /hello HTTP/1.1\r\nHost: a\r\nContent-Length: 1\r\nTransfer-Encoding: chunked\r\n\r\n", 400),
        ("GET /hello HTTP/2.0\r\nHost: a\r\n\r\n", 505),
        ("POST /echo HTTP/1.1\r\nHost: a\r\nContent-Length: 17\r\n\r\n", 413),
        ("POST /echo HTTP/1.1\r\nHost: a\r\nTransfer-Encoding: gzip, chunked\r\n\r\n", 501),
        ("GET /" + String(repeating: "x", count: 9000) + " HTTP/1.1\r\nHost: a\r\n\r\n", 414),
        ("GET /hello HTTP/1.1\r\nHost: a\r\nX: " + String(repeating: "y", count: 40000) + "\r\n\r\n", 431),
        ("GET /hello HTTP/1.1\nHost: a\r\n\r\n", 400),
    ]

    @Test(arguments: errors)
    func framingErrorsAnswerAndClose(_ request: String, _ status: Int) throws {
        let server = try TestServer()
        defer { server.stop() }
        let client = try LoopbackClient(port: server.port)
        client.send(request)
        let text = client.readAll()
        #expect(text.hasPrefix("HTTP/1.1 \(status) "), "\(text.prefix(40))")
        #expect(text.contains("Connection: close"))
        let name = ["400": "badRequest", "413": "contentTooLarge", "414": "uriTooLong", "431": "requestHeaderFieldsTooLarge",
                    "501": "notImplemented", "505": "httpVersionNotSupported"][String(status)]!
        #expect(text.contains("\"code\":\"\(name)\""), "the error body names the status, not always badRequest")
    }

    @Test func unknownPathMethodAndVerb() throws {
        let server = try TestServer()
        defer { server.stop() }
        let client = try LoopbackClient(port: server.port)
        client.send("GET /nope HTTP/1.1\r\nHost: a\r\n\r\nDELETE /hello HTTP/1.1\r\nHost: a\r\n\r\nBREW /hello HTTP/1.1\r\nHost: a\r\n\r\n"
            + "BREW /nope HTTP/1.1\r\nHost: a\r\n\r\n")
        let responses = client.read(responses: 4)
        #expect(responses.map { $0.head.prefix(12) } == ["HTTP/1.1 404", "HTTP/1.1 405", "HTTP/1.1 405", "HTTP/1.1 501"])
        #expect(responses[1].head.contains("Allow: GET, HEAD") && responses[2].head.contains("Allow: GET, HEAD"))
    }

    @Test func aSecondServerOnTheSamePortIsRefusedNotJoined() throws {
        let first = try TestServer()
        defer { first.stop() }
        // Its listeners use SO_REUSEPORT; without the check a second daemon would join the
        // group and the kernel would split the port's connections between the two.
        #expect(throws: IOError.self) {
            _ = try TestServer { $0.port = first.port }
        }
        let client = try LoopbackClient(port: first.port)
        client.send("GET /hello HTTP/1.1\r\nHost: a\r\n\r\n")
        #expect(client.read(responses: 1).first?.body == "hello")
    }

    @Test func servesIPv6() throws {
        let server = try TestServer()
        defer { server.stop() }
        let client = try LoopbackClient(port: server.port, host: "::1")
        client.send("GET /hello HTTP/1.1\r\nHost: [::1]\r\n\r\n")
        #expect(client.read(responses: 1).first?.body == "hello")
    }

    @Test func idleConnectionsAreClosedAtTheIdleTimeout() throws {
        let server = try TestServer { $0.timeouts.idle = 300_000_000 }
        defer { server.stop() }
        let client = try LoopbackClient(port: server.port)
        client.send("GET /hello HTTP/1.1\r\nHost: a\r\n\r\n")
        #expect(client.read(responses: 1).count == 1)
        #expect(client.isClosedByPeer())
    }

    @Test func onePeerCannotOpenMoreThanItsCap() throws {
        let metrics = HTTPMetrics()
        let server = try TestServer(metrics: metrics) { $0.maximumConnectionsPerPeer = 3 }
        defer { server.stop() }
        // Each answered once, so each is accepted and counted before the next connects.
        var held: [LoopbackClient] = []
        for _ in 0..<3 {
            let client = try LoopbackClient(port: server.port)
            client.send("GET /hello HTTP/1.1\r\nHost: a\r\n\r\n")
            #expect(client.read(responses: 1).first?.body == "hello")
            held.append(client)
        }
        let fourth = try LoopbackClient(port: server.port)
        fourth.send("GET /hello HTTP/1.1\r\nHost: a\r\n\r\n")
        #expect(fourth.read(responses: 1).isEmpty, "a fourth connection from 127.0.0.1 is reset at accept")
        #expect(metrics.exposition().contains("waymark_http_connections_refused_total 1"))
        // Another peer (::1 is its own /64) is not affected.
        let other = try LoopbackClient(port: server.port, host: "::1")
        other.send("GET /hello HTTP/1.1\r\nHost: a\r\n\r\n")
        #expect(other.read(responses: 1).first?.body == "hello")
        // A closed connection gives its place back.
        held.removeFirst()
        var answered = false
        for _ in 0..<50 where !answered {
            let next = try LoopbackClient(port: server.port)
            next.send("GET /hello HTTP/1.1\r\nHost: a\r\n\r\n")
            answered = next.read(responses: 1).first?.body == "hello"
            if !answered { Thread.sleep(forTimeInterval: 0.02) }
        }
        #expect(answered)
    }

    @Test func atTheConnectionLimitTheIdlestConnectionMakesRoom() throws {
        let metrics = HTTPMetrics()
        let server = try TestServer(metrics: metrics) { $0.maximumConnections = 3; $0.threads = 1 }
        defer { server.stop() }
        // The oldest: silent since it opened. Then two that were answered and now wait.
        let silent = try LoopbackClient(port: server.port)
        Thread.sleep(forTimeInterval: 0.05)
        var waiting: [LoopbackClient] = []
        for _ in 0..<2 {
            let client = try LoopbackClient(port: server.port)
            client.send("GET /hello HTTP/1.1\r\nHost: a\r\n\r\n")
            #expect(client.read(responses: 1).count == 1)
            waiting.append(client)
        }
        let newcomer = try LoopbackClient(port: server.port)
        newcomer.send("GET /hello HTTP/1.1\r\nHost: a\r\n\r\n")
        #expect(newcomer.read(responses: 1).first?.body == "hello", "a new client is served at once, not after a timeout")
        #expect(silent.isClosedByPeer(), "the connection idle longest was closed for it")
        for client in waiting {
            client.send("GET /hello HTTP/1.1\r\nHost: a\r\n\r\n")
            #expect(client.read(responses: 1).count == 1, "the others are still served")
        }
        #expect(metrics.exposition().contains("waymark_http_idle_connections_shed_total 1"))
    }

    @Test func shutdownFinishesTheRequestInFlight() throws {
        let server = try TestServer()
        let client = try LoopbackClient(port: server.port)
        client.send("POST /echo HTTP/1.1\r\nHost: a\r\nContent-Length: 4\r\n\r\npi")
        Thread.sleep(forTimeInterval: 0.2)
        server.server.shutdown()
        Thread.sleep(forTimeInterval: 0.2)
        client.send("ng")
        let text = client.readAll()
        #expect(text.hasPrefix("HTTP/1.1 200 OK"))
        #expect(text.contains("Connection: close"))
        #expect(text.hasSuffix("ping"))
        server.server.wait()
        #expect(throws: (any Error).self) { try LoopbackClient(port: server.port) }
    }
}
