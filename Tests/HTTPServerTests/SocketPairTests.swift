import Foundation
import HTTPCore
@testable import HTTPServer
import Testing
#if canImport(Glibc)
import Glibc
#endif

/// An event loop with no listeners, serving one end of a socket pair; the test holds the other.
final class SocketPairHarness {
    let loop: EventLoop
    let peer: Int32
    private let done = DispatchSemaphore(value: 0)

    init(configure: (inout ServerConfiguration) -> Void = { _ in }) throws {
        var router = Router()
        try router.add("GET", "/big") { _, _ in HTTPResponse(status: .ok, contentType: "text/plain", body: [UInt8](repeating: 0x61, count: 4 << 20)) }
        try router.add("GET", "/file/:size") { _, parameters in BodyFileTests.response(size: Int(parameters["size"] ?? "") ?? 0) }
        try router.add("GET", "/n/:n") { _, parameters in HTTPResponse(status: .ok, contentType: "text/plain", body: Array((parameters["n"] ?? "").utf8)) }
        // Answers from another thread after the given milliseconds, as a group commit would.
        try router.addDeferred("GET", "/later/:ms") { _, parameters, responder in
            let milliseconds = Int(parameters["ms"] ?? "") ?? 0
            DispatchQueue.global().asyncAfter(deadline: .now() + .milliseconds(milliseconds)) {
                responder.respond(HTTPResponse(status: .accepted, contentType: "text/plain", body: Array("later \(milliseconds)".utf8)))
            }
        }
        try router.addDeferred("GET", "/forgotten") { _, _, _ in }
        var configuration = ServerConfiguration()
        configuration.accessLog = false
        configure(&configuration)
        var fds: [Int32] = [0, 0]
        guard socketpair(AF_UNIX, Int32(SOCK_STREAM.rawValue), 0, &fds) == 0 else { throw POSIXError(.EIO) }
        _ = fcntl(fds[0], F_SETFL, fcntl(fds[0], F_GETFL) | O_NONBLOCK)
        var timeout = timeval(tv_sec: 5, tv_usec: 0)
        setsockopt(fds[1], SOL_SOCKET, SO_RCVTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
        peer = fds[1]
        loop = try EventLoop(index: 0, router: router, configuration: configuration, listeners: [], requestIDPrefix: "t", balancer: LoopBalancer(loops: 1))
        let loop = loop
        let done = done
        Thread { loop.run(); done.signal() }.start()
        loop.adopt(fds[0])
    }

    func send(_ text: String) {
        _ = Array(text.utf8).withUnsafeBytes { Glibc.send(peer, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) }
    }

    /// Reads until `predicate` holds on everything read, EOF, or the 5 s timeout.
    func read(until predicate: (String) -> Bool = { _ in false }) -> (text: String, closed: Bool) {
        var data: [UInt8] = []
        var buffer = [UInt8](repeating: 0, count: 1 << 16)
        while true {
            let count = buffer.withUnsafeMutableBytes { recv(peer, $0.baseAddress, $0.count, 0) }
            if count <= 0 { return (String(decoding: data, as: UTF8.self), count == 0) }
            data.append(contentsOf: buffer[0..<count])
            if predicate(String(decoding: data, as: UTF8.self)) { return (String(decoding: data, as: UTF8.self), false) }
        }
    }

    func stop() {
        loop.requestShutdown()
        done.wait()
        close(peer)
    }
}

@Suite("Connections over socket pairs", .serialized)
struct SocketPairTests {
    @Test func requestsSplitAcrossWritesArePipelinedInOrder() throws {
        let harness = try SocketPairHarness()
        defer { harness.stop() }
        let requests = (1...5).map { "GET /n/\($0) HTTP/1.1\r\nHost: a\r\n\r\n" }.joined()
        // Dribble the pipelined requests a few bytes at a time.
        var index = requests.startIndex
        while index < requests.endIndex {
            let end = requests.index(index, offsetBy: 7, limitedBy: requests.endIndex) ?? requests.endIndex
            harness.send(String(requests[index..<end]))
            index = end
        }
        let (text, _) = harness.read { $0.components(separatedBy: "HTTP/1.1 200").count == 6 && $0.hasSuffix("5") }
        let bodies = text.components(separatedBy: "\r\n\r\n").dropFirst().map { String($0.prefix(1)) }
        #expect(bodies == ["1", "2", "3", "4", "5"])
    }

    @Test func halfClosedPeerStillGetsItsResponseThenEOF() throws {
        let harness = try SocketPairHarness()
        defer { harness.stop() }
        harness.send("GET /n/7 HTTP/1.1\r\nHost: a\r\n\r\n")
        shutdown(harness.peer, Int32(SHUT_WR))
        let (text, closed) = harness.read()
        #expect(text.hasPrefix("HTTP/1.1 200 OK"))
        #expect(text.hasSuffix("7"))
        #expect(closed)
    }

    @Test func readerThatStopsReadingIsCutAtTheWriteDeadline() throws {
        let harness = try SocketPairHarness { $0.timeouts.write = 300_000_000 }
        defer { harness.stop() }
        harness.send("GET /big HTTP/1.1\r\nHost: a\r\n\r\n")
        // Read nothing for longer than the deadline, then drain: the 4 MiB response is cut short.
        Thread.sleep(forTimeInterval: 1.0)
        let (text, closed) = harness.read()
        #expect(closed)
        #expect(text.utf8.count < 4 << 20)
    }

    @Test func deferredAnswersKeepRequestOrderWithPipelinedRequests() throws {
        let harness = try SocketPairHarness()
        defer { harness.stop() }
        // The slow deferred answer must go out before the instant one pipelined behind it.
        harness.send("GET /later/200 HTTP/1.1\r\nHost: a\r\n\r\nGET /n/2 HTTP/1.1\r\nHost: a\r\n\r\nGET /later/0 HTTP/1.1\r\nHost: a\r\n\r\n")
        let (text, closed) = harness.read { $0.hasSuffix("later 0") }
        #expect(!closed)
        let bodies = text.components(separatedBy: "HTTP/1.1 ").dropFirst().map { $0.components(separatedBy: "\r\n\r\n").last ?? "" }
        #expect(bodies == ["later 200", "2", "later 0"])
        #expect(text.hasPrefix("HTTP/1.1 202 Accepted"))
    }

    @Test func inputWhileAwaitingADeferredAnswerDoesNotSpinTheLoop() throws {
        let harness = try SocketPairHarness()
        defer { harness.stop() }
        // The connection keeps watching input while it awaits (no epoll_ctl per request);
        // input that arrives meanwhile must make the loop stop watching, not wake it on
        // every turn (the poll is level-triggered).
        harness.send("GET /later/600 HTTP/1.1\r\nHost: a\r\n\r\n")
        Thread.sleep(forTimeInterval: 0.1)
        harness.send("GET /n/2 HTTP/1.1\r\nHost: a\r\n\r\n")
        Thread.sleep(forTimeInterval: 0.1)
        let before = harness.loop.turns
        Thread.sleep(forTimeInterval: 0.3)
        let turns = harness.loop.turns - before
        #expect(turns <= 6, "\(turns) turns in 0.3 s while awaiting: about 3 expected (the 100 ms sweep)")
        let (text, _) = harness.read { $0.hasSuffix("\r\n\r\n2") }
        #expect(text.hasPrefix("HTTP/1.1 202 Accepted") && text.contains("later 600"))
    }

    @Test func deferredHandlerThatNeverAnswersGets500() throws {
        let harness = try SocketPairHarness()
        defer { harness.stop() }
        harness.send("GET /forgotten HTTP/1.1\r\nHost: a\r\n\r\nGET /n/3 HTTP/1.1\r\nHost: a\r\n\r\n")
        let (text, _) = harness.read { $0.hasSuffix("\r\n\r\n3") }
        #expect(text.hasPrefix("HTTP/1.1 500 Internal Server Error"))
    }

    @Test func halfClosedPeerStillGetsTheDeferredAnswerThenEOF() throws {
        let harness = try SocketPairHarness()
        defer { harness.stop() }
        harness.send("GET /later/100 HTTP/1.1\r\nHost: a\r\n\r\n")
        shutdown(harness.peer, Int32(SHUT_WR))
        let (text, closed) = harness.read()
        #expect(text.hasSuffix("later 100"))
        #expect(closed)
        #expect(harness.loop.openConnections == 0)
    }

    @Test func garbageGets400AndEOF() throws {
        let harness = try SocketPairHarness()
        defer { harness.stop() }
        harness.send("GARBAGE\r\n\r\n")
        let (text, closed) = harness.read()
        #expect(text.hasPrefix("HTTP/1.1 400 "))
        #expect(closed)
    }
}
