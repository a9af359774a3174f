import Foundation
import HTTPCore
@testable import HTTPServer
import Testing
import TestSupport

/// Large answers queued for readers who do not read count in an output budget, in all and
/// per peer; past either, the slowest readers are reset and everyone else is served.
@Suite("Output budget", .serialized)
struct OutputBudgetTests {
    static let alice = PeerAddress(high: 0xFFFF, low: 0x7F00_0002)
    static let bob = PeerAddress(high: 0xFFFF, low: 0x7F00_0003)

    /// Each row: bytes queued (+) or written (−) per peer, in order, against 1,000 in all
    /// and 600 a peer; then whether the total is past, whether alice is, whether any is.
    static let rows: [(String, [(PeerAddress?, Int)], Bool, Bool, Bool)] = [
        ("nothing queued", [], false, false, false),
        ("within both", [(alice, 600), (bob, 400)], false, false, false),
        ("an unknown peer counts in the total only", [(nil, 1_000)], false, false, false),
        ("written bytes leave", [(alice, 700), (alice, -200)], false, false, false),
        ("alice past her share", [(alice, 601)], false, true, true),
        ("bob past his share: alice is not", [(alice, 100), (bob, 601)], false, false, true),
        ("the total past", [(alice, 600), (bob, 401)], true, false, true),
        ("the total past by an unknown peer", [(nil, 1_001)], true, false, true),
    ]

    @Test(arguments: rows)
    func accounting(_ label: String, _ changes: [(PeerAddress?, Int)], _ over: Bool, _ aliceOver: Bool, _ anyOver: Bool) {
        let budget = OutputBudget(limit: 1_000, perPeer: 600)
        for (peer, bytes) in changes {
            if bytes > 0 { budget.add(bytes, for: peer) } else { budget.remove(-bytes, for: peer) }
        }
        #expect(budget.isOver == over && budget.isOver(Self.alice) == aliceOver && budget.isAnyOver == anyOver, "\(label)")
        #expect(budget.queued == changes.reduce(0) { $0 + $1.1 }, "\(label)")
    }

    /// A server of two loops on a port of its own, 64 MiB of queued output in all and
    /// `perPeer` for each peer, started.
    static func started(_ router: Router, perPeer: Int) throws -> HTTPServer {
        var configuration = ServerConfiguration()
        configuration.port = 0
        configuration.threads = 2
        configuration.accessLog = false
        configuration.maximumQueuedOutputBytes = 64 << 20
        configuration.maximumQueuedOutputBytesPerPeer = perPeer
        let server = HTTPServer(configuration: configuration, router: router)
        try server.start()
        return server
    }

    /// Eight clients from 127.0.0.1 ask a 2 MiB answer and never read it, against a share
    /// of 4 MiB a peer: the slowest are reset until the share holds, and a client from ::1
    /// (another peer) reads its whole answer meanwhile.
    @Test func slowReadersPastTheirPeersShareAreReset() throws {
        let big = [UInt8](repeating: 0x61, count: 2 << 20)
        var router = Router()
        try router.add("GET", "/big") { _, _ in HTTPResponse(status: .ok, contentType: "application/octet-stream", body: big) }
        let server = try Self.started(router, perPeer: 4 << 20)
        defer {
            server.shutdown()
            server.wait()
        }
        var silent: [LoopbackClient] = []
        for _ in 0..<8 {
            let client = try LoopbackClient(port: server.port)
            client.send("GET /big HTTP/1.1\r\nHost: a\r\n\r\n")
            silent.append(client)
        }
        // Each answered at once; what the kernel would not take waits in the server.
        var shed: UInt64 = 0
        for _ in 0..<200 where shed < 2 {
            Thread.sleep(forTimeInterval: 0.01)
            shed = server.outputBudget.shed.load(ordering: .relaxed)
        }
        #expect(shed >= 2, "of 8 readers taking nothing, the slowest were reset")
        let local = PeerAddress(high: 0xFFFF, low: 0x7F00_0001)
        #expect(server.outputBudget.queued(by: local) <= (4 << 20) + (2 << 20), "the share, and the answer queued last")
        let other = try LoopbackClient(port: server.port, host: "::1")
        other.send("GET /big HTTP/1.1\r\nHost: a\r\nConnection: close\r\n\r\n")
        #expect(other.readAllBytes().count > 2 << 20, "another peer is served whole")
        silent.removeAll()
        for _ in 0..<200 where server.outputBudget.queued > 0 { Thread.sleep(forTimeInterval: 0.01) }
        #expect(server.outputBudget.queued == 0, "closed connections give their bytes back")
    }

    /// Four clients from 127.0.0.1 pipeline 20,000 requests for a 600-byte answer each and
    /// never read, against a share of 256 KiB a peer: answers queued behind unwritten ones
    /// count, so the slowest are reset. Before, small answers counted nowhere and each such
    /// connection held up to 1 MiB (600 of them, 700 MB).
    @Test func pipelinedSmallAnswersCountOnceTheyWait() throws {
        let small = [UInt8](repeating: 0x61, count: 600)
        var router = Router()
        try router.add("GET", "/small") { _, _ in HTTPResponse(status: .ok, contentType: "text/plain", body: small) }
        let server = try Self.started(router, perPeer: 256 << 10)
        defer {
            server.shutdown()
            server.wait()
        }
        let batch = Array(Array(repeating: Array("GET /small HTTP/1.1\r\nHost: a\r\n\r\n".utf8), count: 20_000).joined())
        var silent: [LoopbackClient] = []
        for _ in 0..<4 {
            let client = try LoopbackClient(port: server.port)
            // A small window, and sends that give up once the server stops reading.
            var window: Int32 = 4096
            setsockopt(client.fd, SOL_SOCKET, SO_RCVBUF, &window, socklen_t(MemoryLayout<Int32>.size))
            var wait = timeval(tv_sec: 0, tv_usec: 200_000)
            setsockopt(client.fd, SOL_SOCKET, SO_SNDTIMEO, &wait, socklen_t(MemoryLayout<timeval>.size))
            client.send(bytes: batch)
            silent.append(client)
        }
        var shed: UInt64 = 0
        for _ in 0..<300 where shed < 1 {
            Thread.sleep(forTimeInterval: 0.01)
            shed = server.outputBudget.shed.load(ordering: .relaxed)
        }
        #expect(shed >= 1, "of 4 clients pipelining without reading, the slowest were reset")
        let local = PeerAddress(high: 0xFFFF, low: 0x7F00_0001)
        #expect(server.outputBudget.queued(by: local) <= (256 << 10) + (1 << 20), "the share, and one connection's answers past it")
        silent.removeAll()
        for _ in 0..<200 where server.outputBudget.queued > 0 { Thread.sleep(forTimeInterval: 0.01) }
        #expect(server.outputBudget.queued == 0, "closed connections give their bytes back")
    }
}
