import Foundation
import HTTPCore
@testable import HTTPServer
import Testing
import TestSupport
#if canImport(Glibc)
import Glibc
#endif

/// Bodies sent from a sealed memory file (`BodyFile`, sendfile(2)) rather than from memory.
@Suite("Bodies sent from memory files", .serialized)
struct BodyFileTests {
    /// `size` bytes (a multiple of 8) that say where they are: each 8 is its own offset in
    /// seven digits and a newline, so a byte sent from the wrong place shows.
    static func numbered(_ size: Int) -> [UInt8] {
        var bytes: [UInt8] = []
        bytes.reserveCapacity(size)
        for offset in stride(from: 0, to: size, by: 8) { bytes += Array(String(format: "%07d\n", offset).utf8) }
        return bytes
    }

    /// A response whose `body` is all `a` and whose file holds `numbered(size)`: what
    /// arrives tells which of the two was sent.
    static func response(size: Int) -> HTTPResponse {
        var response = HTTPResponse(status: .ok, contentType: "text/plain", body: [UInt8](repeating: 0x61, count: size))
        response.bodyFile = BodyFile.holding(numbered(size))
        return response
    }

    @Test func smallBodiesStayInMemoryAndLargeOnesGetAFile() throws {
        #expect(BodyFile.holding([UInt8](repeating: 1, count: BodyFile.worthwhileBytes - 1)) == nil)
        let file = try #require(BodyFile.holding(Self.numbered(BodyFile.worthwhileBytes)))
        #expect(file.count == BodyFile.worthwhileBytes)
        // Sealed: nothing, this process included, can change what every response sends.
        #expect(Glibc.write(file.descriptor, "x", 1) == -1)
        #expect(ftruncate(file.descriptor, 0) == -1)
        var read = [UInt8](repeating: 0, count: 16)
        #expect(pread(file.descriptor, &read, 16, 8) == 16)
        #expect(String(decoding: read, as: UTF8.self) == "0000008\n0000016\n")
    }

    @Test func aChangedBodyDropsItsFile() {
        var response = Self.response(size: 32 << 10)
        #expect(response.bodyFile != nil)
        response.body = Array("changed".utf8)
        #expect(response.bodyFile == nil)
    }

    @Test func fileBodiesGoOutOverTCPWithTheirHeadsInOrder() throws {
        let server = try TestServer()
        defer { server.stop() }
        let client = try LoopbackClient(port: server.port)
        // A file, a body from memory, a HEAD (no body at all), and a file again, pipelined.
        client.send("GET /file/100000 HTTP/1.1\r\nHost: a\r\n\r\nGET /echo/middle HTTP/1.1\r\nHost: a\r\n\r\n"
                    + "HEAD /file/40000 HTTP/1.1\r\nHost: a\r\n\r\nGET /file/40000 HTTP/1.1\r\nHost: a\r\n\r\n")
        let first = client.read(responses: 2)
        let head = client.read(responses: 1, headOnly: true)
        let last = client.read(responses: 1)
        #expect(first.count == 2 && head.count == 1 && last.count == 1)
        #expect(first.first?.head.contains("Content-Length: 100000") == true)
        #expect(first.first?.body == String(decoding: Self.numbered(100_000), as: UTF8.self), "the file's bytes, not the body's")
        #expect(first.last?.body == "middle")
        #expect(head.first?.head.contains("Content-Length: 40000") == true)
        #expect(last.first?.body == String(decoding: Self.numbered(40_000), as: UTF8.self))
    }

    /// Reads from `fd` until `done` holds on what came or the peer closes (or 5 s of silence).
    static func receive(_ fd: Int32, until done: ([UInt8]) -> Bool) -> (bytes: [UInt8], closed: Bool) {
        var received: [UInt8] = []
        var buffer = [UInt8](repeating: 0, count: 7_001)  // reads that end anywhere in the file
        while !done(received) {
            let count = buffer.withUnsafeMutableBytes { recv(fd, $0.baseAddress, $0.count, 0) }
            guard count > 0 else { return (received, count == 0) }
            received += buffer[0..<count]
        }
        return (received, false)
    }

    /// Where the first wrong byte of a `numbered` body starting at `start` is (nil: none).
    static func firstWrong(_ received: [UInt8], from start: Int, size: Int) -> Int? {
        let body = received[start..<min(received.count, start + size)]
        let expected = numbered(size)
        return body.indices.first { body[$0] != expected[$0 - start] }.map { $0 - start } ?? (body.count == size ? nil : body.count)
    }

    @Test func overTCPAHeadHeldBackThenAFullSocketThenTheRestAndACloseAfterIt() throws {
        let server = try TestServer()
        defer { server.stop() }
        let client = try LoopbackClient(port: server.port)
        var small: Int32 = 65_536
        setsockopt(client.fd, SOL_SOCKET, SO_RCVBUF, &small, socklen_t(MemoryLayout<Int32>.size))
        // 1 MiB, far past what the kernel takes at once (TCP_NOTSENT_LOWAT, a small window):
        // the file's send stops at EAGAIN and resumes; the last request asks to close after.
        let size = 1 << 20
        client.send("GET /file/\(size) HTTP/1.1\r\nHost: a\r\n\r\nGET /file/40000 HTTP/1.1\r\nHost: a\r\nConnection: close\r\n\r\n")
        Thread.sleep(forTimeInterval: 0.3)
        let (received, closed) = Self.receive(client.fd) { _ in false }
        #expect(closed, "closed after the second answer")
        let separator = Array("\r\n\r\n".utf8)
        let first = try #require(received.firstRange(of: separator)).upperBound
        let wrong = Self.firstWrong(received, from: first, size: size)
        #expect(wrong == nil, "the first body differs from offset \(wrong ?? -1)")
        let rest = Array(received[min(received.count, first + size)...])
        #expect(String(decoding: rest.prefix(15), as: UTF8.self) == "HTTP/1.1 200 OK")
        let second = try #require(rest.firstRange(of: separator)).upperBound
        #expect(Self.firstWrong(rest, from: second, size: 40_000) == nil && rest.count == second + 40_000, "the second whole, then the close")
    }

    @Test func aFileOfAnotherSizeThanTheBodyIsNotSent() throws {
        let server = try TestServer()
        defer { server.stop() }
        let client = try LoopbackClient(port: server.port)
        // Content-Length is the body's: sending the file's 24,000 bytes would break the framing.
        client.send("GET /mismatched HTTP/1.1\r\nHost: a\r\n\r\nGET /echo/after HTTP/1.1\r\nHost: a\r\n\r\n")
        let responses = client.read(responses: 2)
        #expect(responses.first?.head.contains("Content-Length: 20000") == true)
        #expect(responses.first?.body == String(repeating: "a", count: 20_000))
        #expect(responses.last?.body == "after")
    }

    @Test func aReaderThatFallsBehindGetsTheRestFromWhereItStopped() throws {
        let harness = try SocketPairHarness()
        defer { harness.stop() }
        let size = 1 << 20
        harness.send("GET /file/\(size) HTTP/1.1\r\nHost: a\r\n\r\nGET /n/9 HTTP/1.1\r\nHost: a\r\n\r\n")
        // Far more than a socket pair holds: the loop sends part, waits for room, and resumes.
        Thread.sleep(forTimeInterval: 0.2)
        var received: [UInt8] = []
        var buffer = [UInt8](repeating: 0, count: 7_001)  // reads that end anywhere in the file
        while received.count < size + 400 {
            let count = buffer.withUnsafeMutableBytes { recv(harness.peer, $0.baseAddress, $0.count, 0) }
            guard count > 0 else { break }
            received += buffer[0..<count]
            if received.count > size, received.suffix(5).elementsEqual("\r\n\r\n9".utf8) { break }
        }
        let text = String(decoding: received, as: UTF8.self)
        let bodyStart = try #require(received.firstRange(of: Array("\r\n\r\n".utf8))).upperBound
        let body = Array(received[bodyStart..<min(received.count, bodyStart + size)])
        // Compared outside #expect: a failure would otherwise print two 1 MiB arrays.
        let expected = Self.numbered(size)
        let firstWrong = body.indices.first { body[$0] != expected[$0] } ?? (body.count == size ? nil : body.count)
        #expect(firstWrong == nil, "the body differs from offset \(firstWrong ?? -1)")
        #expect(String(decoding: received[(bodyStart + size)...], as: UTF8.self).hasPrefix("HTTP/1.1 200 OK"))
        #expect(text.hasSuffix("\r\n\r\n9"))
    }
}
