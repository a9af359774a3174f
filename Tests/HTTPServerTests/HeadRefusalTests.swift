import Dispatch
import Foundation
import Synchronization
import HTTPCore
@testable import HTTPServer
import Testing
import TestSupport

/// A head with a body is decided before a byte of it is read: a route that takes it reads
/// it under its limit; a head no route takes gets its 404 / 405 / 501 at once; on a path
/// outside the server's own (the fallback's, link landing) a `GET` or `HEAD` may declare no
/// body and another method gets the fallback's answer.
@Suite("Refusal at the head")
struct HeadRefusalTests {
    static let router: Router = {
        var router = Router()
        let empty: Router.Handler = { _, _ in HTTPResponse(status: .ok) }
        try! router.add("GET", "/v1/manifest", empty)
        try! router.add("POST", "/v1/telemetry", maximumBody: 1_000, empty)
        try! router.add("PUT", "/v1/schemas/:platform/:version", maximumBody: 50, empty)
        router.setFallback(label: ("GET", "/{link}")) { request in
            // Like link landing: links on the host `links`, opened with GET.
            guard request.head.headers["Host"] == "links" else { return nil }
            guard request.head.method == "GET" || request.head.method == "HEAD" else { return .now(HTTPResponse(status: .methodNotAllowed)) }
            return .now(HTTPResponse(status: .found))
        }
        return router
    }()

    enum Expected: Equatable, Sendable {
        case read(Int?)
        case refused(Int)
    }

    static let rows: [(String, String, String, Expected)] = [
        ("a route's own limit", "POST", "/v1/telemetry", .read(1_000)),
        ("a route with parameters", "PUT", "/v1/schemas/ios/5.3.0", .read(50)),
        ("HEAD served by GET: the server's limit", "HEAD", "/v1/manifest", .read(nil)),
        ("GET with a body on a route", "GET", "/v1/manifest", .read(nil)),
        ("a link opened with a body: none may come", "GET", "/campaign/spring", .read(0)),
        ("HEAD on a link", "HEAD", "/campaign/spring", .read(0)),
        ("unknown path under the API's own", "POST", "/v1/no/such/path", .refused(404)),
        ("unknown method on a path that exists", "BREW", "/v1/telemetry", .refused(405)),
        ("a method the path does not take", "PUT", "/v1/telemetry", .refused(405)),
        ("a path short of its parameters", "PUT", "/v1/schemas/ios", .refused(404)),
        ("unknown method on an unknown path", "BREW", "/v1/nowhere", .refused(501)),
        ("POST on a link host: the fallback's answer", "POST", "/campaign/spring", .refused(405)),
        ("POST outside, on another host", "POST", "/no/such/path", .refused(404)),
    ]

    @Test(arguments: rows)
    func headDecision(_ label: String, _ method: String, _ path: String, _ expected: Expected) {
        var headers = HTTPHeaders()
        headers.add("Host", path.hasPrefix("/campaign") ? "links" : "elsewhere")
        headers.add("Content-Length", "100000")
        let got: Expected
        switch Self.router.decide(HTTPRequestHead(method: method, target: path, headers: headers)) {
        case .read(let limit, _): got = .read(limit)
        case .refuse(let response): got = .refused(response.status.code)
        }
        #expect(got == expected, "\(label)")
    }

    /// On a live server: a bodiless chunked head on an unknown path is answered 404 at once,
    /// holds nothing of the budget, and the connection closes (its body is never read).
    @Test func anUnknownPathIsAnsweredBeforeItsBodyOnLoopback() throws {
        let server = try TestServer()
        defer { server.stop() }
        var clients: [LoopbackClient] = []
        for index in 0..<20 {
            let client = try LoopbackClient(port: server.port)
            let framing = index % 2 == 0 ? "Transfer-Encoding: chunked" : "Content-Length: 1048576"
            client.send("POST /no/such/path HTTP/1.1\r\nHost: a\r\n\(framing)\r\n\r\n")
            clients.append(client)
        }
        for client in clients {
            let text = client.readAll()
            #expect(text.hasPrefix("HTTP/1.1 404 "), "\(text.prefix(40))")
            #expect(text.contains("Connection: close"))
        }
        #expect(server.server.bodyBudget.reserved == 0)
    }
}

/// The body budget per peer, a chunked body reserved as it arrives, and the deadline for a
/// body to start.
@Suite("Body budget shares")
struct BodyBudgetShareTests {
    static let alice = PeerAddress(high: 0xFFFF, low: 0x7F00_0002)
    static let bob = PeerAddress(high: 0xFFFF, low: 0x7F00_0003)

    static func machine(_ budget: BodyBudget, peer: PeerAddress?, limit: Int? = nil,
                        timeouts: ConnectionTimeouts = ConnectionTimeouts()) -> ConnectionStateMachine {
        ConnectionStateMachine(now: 0, timeouts: timeouts, bodyBudget: budget, peer: peer,
                               decide: { _ in .read(maximumBody: limit, admittedAs: nil) })
    }

    static func feed(_ machine: inout ConnectionStateMachine, _ text: String, now: Int64 = 0) -> [ConnectionStateMachine.Action] {
        Array(text.utf8).withUnsafeBytes { machine.received($0, now: now) }
    }

    static func post(_ length: Int) -> String { "POST /p HTTP/1.1\r\nHost: x\r\nContent-Length: \(length)\r\n\r\n" }
    static let chunkedHead = "POST /p HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n"

    static func isOverBudget(_ actions: [ConnectionStateMachine.Action]) -> Bool {
        actions.contains { if case .refuse(let answer) = $0 { answer.response.status == .serviceUnavailable } else { false } }
    }

    /// Each row: reservations in order as (peer, bytes), and whether each is taken; a
    /// budget of 1,000 in all and 600 a peer.
    static let rows: [(String, [(PeerAddress?, Int)], [Bool])] = [
        ("one peer within its share", [(alice, 600)], [true]),
        ("two peers, each within its share", [(alice, 500), (bob, 500)], [true, true]),
        ("an unknown peer: only the total", [(nil, 1_000)], [true]),
        ("one peer past its share", [(alice, 400), (alice, 201)], [true, false]),
        ("one peer at its share, another still served", [(alice, 600), (alice, 1), (bob, 400)], [true, false, true]),
        ("the total past, whoever asks", [(alice, 600), (bob, 400), (nil, 1)], [true, true, false]),
        ("a peer refused by the total holds nothing more", [(alice, 500), (bob, 500), (bob, 1), (bob, 0)], [true, true, false, true]),
        ("a single body over the share", [(bob, 601)], [false]),
    ]

    @Test(arguments: rows)
    func shares(_ label: String, _ asks: [(PeerAddress?, Int)], _ expected: [Bool]) {
        let budget = BodyBudget(limit: 1_000, perPeer: 600)
        let taken = asks.map { budget.reserve($0.1, for: $0.0) }
        #expect(taken == expected, "\(label)")
        let held = zip(asks, taken).filter(\.1).map(\.0)
        #expect(budget.reserved == held.reduce(0) { $0 + $1.1 }, "\(label): the total counts what was taken")
        for peer in [Self.alice, Self.bob] {
            #expect(budget.reserved(by: peer) == held.filter { $0.0 == peer }.reduce(0) { $0 + $1.1 }, "\(label)")
        }
        for (ask, took) in zip(asks, taken) where took { budget.release(ask.1, for: ask.0) }
        #expect(budget.reserved == 0 && budget.reserved(by: Self.alice) == 0 && budget.reserved(by: Self.bob) == 0)
    }

    @Test func aPeerAtItsShareIsRefusedAtTheHeadWhileAnotherIsRead() {
        let budget = BodyBudget(limit: 10_000, perPeer: 1_000)
        var first = Self.machine(budget, peer: Self.alice), second = Self.machine(budget, peer: Self.alice)
        var other = Self.machine(budget, peer: Self.bob)
        #expect(Self.feed(&first, Self.post(800)).isEmpty)
        #expect(Self.isOverBudget(Self.feed(&second, Self.post(300))), "alice holds 800 of her 1,000")
        #expect(Self.feed(&other, Self.post(900)).isEmpty, "bob has his own share")
        #expect(budget.reserved == 1_700 && budget.reserved(by: Self.alice) == 800)
        #expect(budget.refusedOverShare.load(ordering: .relaxed) == 1)
    }

    /// Peers of one network (an IPv4 /24, an IPv6 /48) hold twice a peer's share together,
    /// however many addresses they are; another network's peer still reserves its own.
    @Test func aNetworksPeersHoldTwiceAPeersShareTogether() {
        let budget = BodyBudget(limit: 10_000, perPeer: 1_000)
        let one = (1...5).map { PeerAddress(written: "203.0.113.\($0)")! }
        #expect(one.map { budget.reserve(900, for: $0) } == [true, true, false, false, false], "2,000 for the /24: two of 900")
        #expect(budget.reserve(200, for: one[2]), "what is left of the network's share")
        #expect(budget.reserve(900, for: PeerAddress(written: "198.51.100.1")!), "another network has its own")
        let six = (1...3).map { PeerAddress(written: "2001:db8:6:\($0)::7")! }
        #expect(six.map { budget.reserve(1_000, for: $0) } == [true, true, false], "a /48's /64s share 2,000 too")
        #expect(budget.reserved(byNetworkOf: one[0]) == 2_000 && budget.reserved(byNetworkOf: six[0]) == 2_000)
        budget.release(900, for: one[0])
        #expect(budget.reserve(900, for: one[4]), "given back, the network's share takes another")
        for peer in [one[1], one[4]] { budget.release(900, for: peer) }
        budget.release(200, for: one[2])
        #expect(budget.reserved(byNetworkOf: one[0]) == 0 && budget.reserved(by: one[2]) == 0)
    }

    /// A thousand one-byte chunked bodies hold a step each, not a step ahead each.
    @Test func oneByteChunkedBodiesHoldAStepEach() {
        let budget = BodyBudget(limit: 256 << 20)
        var machines = (0..<1_000).map { _ in Self.machine(budget, peer: Self.alice, limit: 1 << 20) }
        for index in machines.indices { #expect(Self.feed(&machines[index], Self.chunkedHead + "1\r\n[\r\n").isEmpty) }
        #expect(budget.reserved == 1_000 * ConnectionStateMachine.reservationStep && ConnectionStateMachine.reservationStep == 4_096)
        for index in machines.indices { machines[index].releaseBody() }
        #expect(budget.reserved == 0)
    }

    /// A POST of `length` declared bytes forwarded by a proxy for `client`.
    static func forwarded(_ length: Int, for client: String) -> String {
        "POST /p HTTP/1.1\r\nHost: x\r\nX-Forwarded-For: 192.0.2.200, \(client)\r\nContent-Length: \(length)\r\n\r\n"
    }

    @Test func behindATrustedProxyEachClientItNamesHasItsOwnShare() {
        let budget = BodyBudget(limit: 10_000, perPeer: 1_000)
        let client = PeerAddress(written: "198.51.100.7")!, other = PeerAddress(written: "203.0.113.9")!
        let remote = PeerAddress(written: "192.0.2.1")!
        func proxied(trust: Bool = true, from peer: PeerAddress = Self.alice) -> ConnectionStateMachine {
            ConnectionStateMachine(now: 0, bodyBudget: budget, peer: peer, trustForwardedFor: trust, decide: { _ in .read(maximumBody: nil, admittedAs: nil) })
        }
        var first = proxied(), second = proxied(), third = proxied()
        #expect(Self.feed(&first, Self.forwarded(800, for: "198.51.100.7")).isEmpty)
        #expect(Self.isOverBudget(Self.feed(&second, Self.forwarded(300, for: "198.51.100.7"))), "the client named holds 800 of its 1,000")
        #expect(Self.feed(&third, Self.forwarded(900, for: "[2001:db8::1]:443")).isEmpty, "another client has its own share")
        #expect(budget.reserved(by: client) == 800 && budget.reserved(by: Self.alice) == 0)
        // Not from loopback, or not trusted: the connection's own share, whatever it names.
        var direct = proxied(from: remote), untrusted = proxied(trust: false)
        #expect(Self.feed(&direct, Self.forwarded(900, for: "203.0.113.9")).isEmpty)
        #expect(Self.feed(&untrusted, Self.forwarded(900, for: "203.0.113.9")).isEmpty)
        #expect(budget.reserved(by: remote) == 900 && budget.reserved(by: Self.alice) == 900 && budget.reserved(by: other) == 0)
        // One proxy connection carries one client's request, then another's: each is given
        // back to its own client.
        let answered = Self.feed(&first, String(repeating: "x", count: 800))
        #expect(answered.count == 1 && !Self.isOverBudget(answered))
        _ = first.responseQueued(bytes: 10, keepAlive: true, now: 0)
        #expect(budget.reserved(by: client) == 0)
        #expect(Self.feed(&first, Self.forwarded(700, for: "203.0.113.9")).isEmpty)
        #expect(budget.reserved(by: other) == 700 && budget.reserved(by: client) == 0)
        first.releaseBody()
        #expect(budget.reserved(by: other) == 0)
        #expect(budget.reserved(by: PeerAddress(written: "2001:db8::5")!) == 900, "an IPv6 client's /64")
        #expect(budget.reserved == 2_700, "the other three requests' bytes: \(budget.reserved)")
    }

    @Test func behindATrustedProxyAChunkedBodyAndItsLeaseAreTheClients() {
        let budget = BodyBudget(limit: 1 << 20, perPeer: 1 << 19)
        let client = PeerAddress(written: "198.51.100.7")!
        var machine = ConnectionStateMachine(now: 0, bodyBudget: budget, peer: Self.alice, trustForwardedFor: true,
                                             decide: { _ in .read(maximumBody: 1 << 20, admittedAs: nil) })
        let head = "POST /p HTTP/1.1\r\nHost: x\r\nX-Forwarded-For: 198.51.100.7\r\nTransfer-Encoding: chunked\r\n\r\n"
        #expect(Self.feed(&machine, head + "a\r\n0123456789\r\n").isEmpty)
        #expect(budget.reserved(by: client) == ConnectionStateMachine.reservationStep && budget.reserved(by: Self.alice) == 0,
                "reserved as it arrives, for the client the proxy named")
        let done = Self.feed(&machine, "0\r\n\r\n")
        guard case .handle? = done.first else {
            Issue.record("\(done)")
            return
        }
        let lease = machine.handOverBody()
        machine.releaseBody()
        #expect(budget.reserved(by: client) == ConnectionStateMachine.reservationStep, "held by the lease past the connection")
        lease?.release()
        #expect(budget.reserved(by: client) == 0 && budget.reserved == 0, "given back to the client that held it")
    }

    @Test func aChunkedHeadHoldsNothingUntilItsBytesArrive() {
        let budget = BodyBudget(limit: 1 << 20)
        var machine = Self.machine(budget, peer: Self.alice, limit: 1 << 20)
        #expect(Self.feed(&machine, Self.chunkedHead).isEmpty)
        #expect(budget.reserved == 0, "a head alone reserves nothing")
        #expect(Self.feed(&machine, "a\r\n0123456789\r\n").isEmpty)
        #expect(budget.reserved == ConnectionStateMachine.reservationStep, "the 10 bytes that came, rounded up to a step")
        let chunk = String(repeating: "x", count: 100_000)
        #expect(Self.feed(&machine, String(100_000, radix: 16) + "\r\n" + chunk + "\r\n").isEmpty)
        #expect(budget.reserved >= 100_010 && budget.reserved <= 100_010 + ConnectionStateMachine.reservationStep)
        let done = Self.feed(&machine, "0\r\n\r\n")
        #expect(done.count == 1 && !Self.isOverBudget(done), "handed to its handler, not refused")
        #expect(budget.reserved >= 100_010, "held while it is handled")
        _ = machine.responseQueued(bytes: 10, keepAlive: true, now: 0)
        #expect(budget.reserved == 0, "answered: all given back")
    }

    /// A started server on loopback, one loop, with `router` and a body budget of
    /// `bodyBudget` bytes (no per-peer share).
    static func server(_ router: Router, bodyBudget: Int) throws -> HTTPServer {
        var configuration = ServerConfiguration()
        configuration.port = 0
        configuration.threads = 1
        configuration.accessLog = false
        configuration.maximumBufferedBodyBytes = bodyBudget
        configuration.maximumBufferedBodyBytesPerPeer = 0
        let server = HTTPServer(configuration: configuration, router: router)
        try server.start()
        return server
    }

    static func waitUntil(_ condition: () -> Bool) -> Bool {
        let deadline = Date().addingTimeInterval(5)
        while Date() < deadline {
            if condition() { return true }
            Thread.sleep(forTimeInterval: 0.005)
        }
        return condition()
    }

    @Test func aHandedOverBodyStaysCountedPastItsConnection() {
        let budget = BodyBudget(limit: 1_000, perPeer: 600)
        var machine = Self.machine(budget, peer: Self.alice)
        let handled = Self.feed(&machine, Self.post(300) + String(repeating: "x", count: 300))
        guard case .handle? = handled.first else {
            Issue.record("\(handled)")
            return
        }
        var lease = machine.handOverBody()
        #expect(lease?.bytes == 300)
        _ = machine.receivedEOF()
        machine.releaseBody()
        #expect(budget.reserved == 300 && budget.reserved(by: Self.alice) == 300,
                "the client left, but its request is still held: its bytes stay counted")
        lease = nil
        #expect(budget.reserved == 0 && budget.reserved(by: Self.alice) == 0, "let go: given back")
        withExtendedLifetime(lease) {}
    }

    /// On loopback: clients that send a body to a deferred handler and reset their
    /// connections before it answers do not get their bytes back while the handler holds
    /// the requests, so one more body past the budget is refused at its head.
    @Test func aResetClientsQueuedBodyHoldsTheBudgetUntilItsJobEnds() throws {
        let held = Mutex<[Responder]>([])
        var router = Router()
        try router.addDeferred("POST", "/slow", maximumBody: 100_000) { request, _, responder in
            held.withLock { $0.append(responder) }
            withExtendedLifetime(request) {}
        }
        let server = try Self.server(router, bodyBudget: 250_000)
        defer {
            server.shutdown()
            server.wait()
        }
        let body = "POST /slow HTTP/1.1\r\nHost: a\r\nContent-Length: 100000\r\n\r\n" + String(repeating: "x", count: 100_000)
        for index in 1...2 {
            let client = try LoopbackClient(port: server.port)
            client.send(body)
            #expect(Self.waitUntil { held.withLock { $0.count } == index })
            client.reset()
        }
        // Both connections are gone (the server has seen both resets), both requests held.
        #expect(Self.waitUntil { server.openConnectionsPerLoop.reduce(0, +) == 0 })
        #expect(server.bodyBudget.reserved == 200_000, "\(server.bodyBudget.reserved)")
        let third = try LoopbackClient(port: server.port)
        third.send(body)
        #expect(third.readAll().hasPrefix("HTTP/1.1 503 "), "past the budget while the two are held")
        // The handler answers and lets go: the bytes come back.
        for responder in held.withLock({ list in defer { list.removeAll() }; return list }) {
            responder.respond(HTTPResponse(status: .ok))
        }
        #expect(Self.waitUntil { server.bodyBudget.reserved == 0 }, "\(server.bodyBudget.reserved)")
    }

    /// Two pipelined bodies, each the whole budget: the first's bytes are given back as it
    /// is answered, before the second's head reserves its own, whether its handler answered
    /// at once or later.
    @Test(arguments: ["/now", "/later"])
    func pipelinedBodiesEachTheWholeBudgetAreBothRead(_ path: String) throws {
        var router = Router()
        try router.add("POST", "/now", maximumBody: 100_000) { request, _ in HTTPResponse(status: .ok, body: Array("\(request.body.count)".utf8)) }
        try router.addDeferred("POST", "/later", maximumBody: 100_000) { request, _, responder in
            DispatchQueue.global().async { responder.respond(HTTPResponse(status: .ok, body: Array("\(request.body.count)".utf8))) }
        }
        let server = try Self.server(router, bodyBudget: 100_000)
        defer {
            server.shutdown()
            server.wait()
        }
        let client = try LoopbackClient(port: server.port)
        let one = "POST \(path) HTTP/1.1\r\nHost: a\r\nContent-Length: 100000\r\n\r\n" + String(repeating: "x", count: 100_000)
        client.send(one + one)
        let answers = client.read(responses: 2)
        #expect(answers.map { String($0.head.prefix(15)) } == ["HTTP/1.1 200 OK", "HTTP/1.1 200 OK"], "\(answers.map(\.head))")
        #expect(Self.waitUntil { server.bodyBudget.reserved == 0 })
    }

    @Test func aChunkedBodyPastTheBudgetIsCutWith503() {
        let budget = BodyBudget(limit: 100_000)
        var machine = Self.machine(budget, peer: Self.alice, limit: 1 << 20)
        _ = Self.feed(&machine, Self.chunkedHead)
        let chunk = String(repeating: "x", count: 150_000)
        let actions = Self.feed(&machine, String(150_000, radix: 16) + "\r\n" + chunk + "\r\n")
        #expect(Self.isOverBudget(actions))
        _ = machine.responseQueued(bytes: 10, keepAlive: false, now: 0)
        #expect(budget.reserved == 0)
    }

    /// A head whose body does not start in time is answered 408; one whose body started is
    /// held to the body deadline only.
    static let deadlines: [(String, String, Double, Bool)] = [
        ("a declared length, nothing sent, past the start deadline", post(100), 5.1, true),
        ("chunked, nothing sent, past the start deadline", chunkedHead, 5.1, true),
        ("a declared length, nothing sent, before it", post(100), 4.9, false),
        ("a body started, past the start deadline", post(100) + "abc", 5.1, false),
        ("a chunk line started, past the start deadline", chunkedHead + "6", 5.1, false),
        ("a body started, past the body deadline", post(100) + "abc", 30.1, true),
    ]

    @Test(arguments: deadlines)
    func bodyStartDeadline(_ label: String, _ text: String, _ seconds: Double, _ timesOut: Bool) {
        let budget = BodyBudget(limit: 1_000)
        var machine = Self.machine(budget, peer: Self.alice)
        #expect(Self.feed(&machine, text).isEmpty, "\(label)")
        let actions = machine.tick(now: Int64(seconds * 1e9))
        let timedOut = actions.contains { if case .sendError(.requestTimeout, _) = $0 { true } else { false } }
        #expect(timedOut == timesOut, "\(label): \(actions.count) actions")
        if timesOut { #expect(budget.reserved == 0, "\(label): a head timed out holds nothing") }
    }
}

/// `HTTPRequestHead.client(trustingForwardedFor:)`: the peer every share counts.
@Suite("The client a request comes from")
struct ForwardedClientTests {
    static let rows: [(String, String, [String], Bool, String)] = [
        ("a proxy on loopback: the address it added", "127.0.0.1", ["198.51.100.66, 203.0.113.7"], true, "203.0.113.7"),
        ("a proxy that adds a line of its own: the last line", "127.0.0.1", ["198.51.100.66", "203.0.113.7"], true, "203.0.113.7"),
        ("IPv6 loopback", "::1", ["[2001:db8:1:2::7]:443"], true, "2001:db8:1:2::/64"),
        ("not trusted: the connection's", "127.0.0.1", ["203.0.113.7"], false, "127.0.0.1"),
        ("not from loopback: the connection's", "192.0.2.1", ["203.0.113.7"], true, "192.0.2.1"),
        ("not an address: the proxy's", "127.0.0.1", ["unknown"], true, "127.0.0.1"),
        ("an element too long to be an address: the proxy's", "127.0.0.1", [String(repeating: "1", count: 4_000)], true, "127.0.0.1"),
        ("no field: the proxy's", "127.0.0.1", [], true, "127.0.0.1"),
    ]

    @Test(arguments: rows)
    func clients(_ label: String, _ peer: String, _ lines: [String], _ trust: Bool, _ expected: String) {
        var head = HTTPRequestHead(method: "POST", target: "/p", headers: HTTPHeaders([("Host", "h")] + lines.map { ("X-Forwarded-For", $0) }))
        head.peer = PeerAddress(written: peer)
        #expect(head.client(trustingForwardedFor: trust)?.description == expected, "\(label)")
    }
}
