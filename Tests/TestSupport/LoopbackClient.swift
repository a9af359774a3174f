import Foundation
#if canImport(Glibc)
import Glibc
#endif

/// A blocking test client on a real socket, with a receive timeout so a test never hangs.
public final class LoopbackClient {
    public let fd: Int32
    /// Bytes received but not yet returned as a response.
    private var pending: [UInt8] = []

    public init(port: UInt16, host: String = "127.0.0.1") throws {
        let isIPv6 = host.contains(":")
        fd = socket(isIPv6 ? AF_INET6 : AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        guard fd >= 0 else { throw POSIXError(.EIO) }
        var timeout = timeval(tv_sec: 5, tv_usec: 0)
        setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
        var result: Int32
        if isIPv6 {
            var address = sockaddr_in6()
            address.sin6_family = sa_family_t(AF_INET6)
            address.sin6_port = port.bigEndian
            inet_pton(AF_INET6, host, &address.sin6_addr)
            result = withUnsafePointer(to: &address) { $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { connect(fd, $0, socklen_t(MemoryLayout<sockaddr_in6>.size)) } }
        } else {
            var address = sockaddr_in()
            address.sin_family = sa_family_t(AF_INET)
            address.sin_port = port.bigEndian
            inet_pton(AF_INET, host, &address.sin_addr)
            result = withUnsafePointer(to: &address) { $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { connect(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) } }
        }
        guard result == 0 else {
            close(fd)
            throw POSIXError(.ECONNREFUSED)
        }
    }

    private var isClosed = false

    deinit { if !isClosed { close(fd) } }

    /// Resets the connection (SO_LINGER 0, then close): the server sees ECONNRESET, as from
    /// a client that gave up mid-request.
    public func reset() {
        guard !isClosed else { return }
        var linger = Glibc.linger(l_onoff: 1, l_linger: 0)
        setsockopt(fd, SOL_SOCKET, SO_LINGER, &linger, socklen_t(MemoryLayout<Glibc.linger>.size))
        close(fd)
        isClosed = true
    }

    public func send(_ text: String) { send(bytes: Array(text.utf8)) }

    public func send(bytes: [UInt8]) {
        var offset = 0
        while offset < bytes.count {
            let sent = bytes[offset...].withUnsafeBytes { Glibc.send(fd, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) }
            if sent <= 0 { return }
            offset += sent
        }
    }

    /// Reads until the peer closes or `timeout` seconds pass without data.
    public func readAll() -> String {
        String(decoding: readAllBytes(), as: UTF8.self)
    }

    public func readAllBytes() -> [UInt8] {
        var data = pending
        pending = []
        var buffer = [UInt8](repeating: 0, count: 65536)
        while true {
            let count = buffer.withUnsafeMutableBytes { recv(fd, $0.baseAddress, $0.count, 0) }
            if count <= 0 { break }
            data.append(contentsOf: buffer[0..<count])
        }
        return data
    }

    /// Reads exactly `responses` complete responses (Content-Length framed), or what came before a close.
    public func read(responses: Int, headOnly: Bool = false) -> [(head: String, body: String)] {
        var data = pending
        defer { pending = data }
        var buffer = [UInt8](repeating: 0, count: 65536)
        var parsed: [(String, String)] = []
        while parsed.count < responses {
            if let (head, body, used) = Self.parseOne(data, headOnly: headOnly) {
                parsed.append((head, body))
                data.removeFirst(used)
                continue
            }
            let count = buffer.withUnsafeMutableBytes { recv(fd, $0.baseAddress, $0.count, 0) }
            if count <= 0 { break }
            data.append(contentsOf: buffer[0..<count])
        }
        return parsed
    }

    /// Whether the server closed the connection (a read returns 0 within the timeout).
    public func isClosedByPeer() -> Bool {
        var byte: UInt8 = 0
        return recv(fd, &byte, 1, 0) == 0
    }

    private static func parseOne(_ data: [UInt8], headOnly: Bool) -> (String, String, Int)? {
        let text = String(decoding: data, as: UTF8.self)
        guard let end = text.range(of: "\r\n\r\n") else { return nil }
        let head = String(text[..<end.lowerBound])
        let headBytes = text[..<end.upperBound].utf8.count
        var length = 0
        for line in head.split(separator: "\r\n") where line.lowercased().hasPrefix("content-length:") {
            length = Int(line.split(separator: ":")[1].trimmingCharacters(in: .whitespaces)) ?? 0
        }
        let status = head.split(separator: " ").dropFirst().first.flatMap { Int($0) } ?? 0
        if headOnly || head.hasPrefix("HTTP/1.1 100") || status == 304 || status == 204 { length = 0 }
        guard data.count >= headBytes + length else { return nil }
        return (head, String(decoding: data[headBytes..<(headBytes + length)], as: UTF8.self), headBytes + length)
    }
}
