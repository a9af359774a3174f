import HTTPCore
import SystemIO
import CSystemShim
#if canImport(Glibc)
import Glibc
#endif

/// Thin, typed socket operations on file descriptors, each through `syscall`.
enum Socket {
    /// A non-blocking listening socket bound to `host:port` (IPv4 or IPv6 literal).
    /// `SO_REUSEPORT` lets each event loop own a listener on the same port, and the
    /// kernel spreads incoming connections between them (socket(7)).
    static func listen(host: String, port: UInt16, backlog: Int32) throws(IOError) -> (fd: Int32, port: UInt16) {
        let fd = try bound(host: host, port: port, reusePort: true)
        do {
            try syscallBlocking("listen") { Glibc.listen(fd, backlog) }
            return (fd, try localPort(fd))
        } catch {
            close(fd)
            throw error
        }
    }

    /// Throws `EADDRINUSE` if anything listens on `host:port` — another process's
    /// `SO_REUSEPORT` group included, which `listen` would otherwise silently join (and
    /// the kernel would share the port's connections between two daemons). A bind
    /// without `SO_REUSEPORT` conflicts with every listener there; the socket is closed
    /// at once, never listening.
    static func ensureFree(host: String, port: UInt16) throws(IOError) {
        close(try bound(host: host, port: port, reusePort: false))
    }

    private static func bound(host: String, port: UInt16, reusePort: Bool) throws(IOError) -> Int32 {
        var address6 = sockaddr_in6()
        var address4 = sockaddr_in()
        let isIPv6 = host.contains(":")
        if isIPv6 {
            address6.sin6_family = sa_family_t(AF_INET6)
            address6.sin6_port = port.bigEndian
            guard inet_pton(AF_INET6, host, &address6.sin6_addr) == 1 else { throw IOError(call: "inet_pton(\(host))", errno: EINVAL) }
        } else {
            address4.sin_family = sa_family_t(AF_INET)
            address4.sin_port = port.bigEndian
            guard inet_pton(AF_INET, host, &address4.sin_addr) == 1 else { throw IOError(call: "inet_pton(\(host))", errno: EINVAL) }
        }
        let fd = try syscallBlocking("socket") {
            socket(isIPv6 ? AF_INET6 : AF_INET, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_NONBLOCK.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        }
        do {
            try setOption(fd, SOL_SOCKET, SO_REUSEADDR, 1)
            if reusePort { try setOption(fd, SOL_SOCKET, SO_REUSEPORT, 1) }
            if isIPv6 { try setOption(fd, Int32(IPPROTO_IPV6), IPV6_V6ONLY, 1) }
            if isIPv6 {
                _ = try withUnsafePointer(to: &address6) { pointer throws(IOError) in
                    try pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) { address throws(IOError) in
                        try syscallBlocking("bind") { bind(fd, address, socklen_t(MemoryLayout<sockaddr_in6>.size)) }
                    }
                }
            } else {
                _ = try withUnsafePointer(to: &address4) { pointer throws(IOError) in
                    try pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) { address throws(IOError) in
                        try syscallBlocking("bind") { bind(fd, address, socklen_t(MemoryLayout<sockaddr_in>.size)) }
                    }
                }
            }
            return fd
        } catch {
            close(fd)
            throw error
        }
    }

    static func localPort(_ fd: Int32) throws(IOError) -> UInt16 {
        var storage = sockaddr_storage()
        var length = socklen_t(MemoryLayout<sockaddr_storage>.size)
        _ = try withUnsafeMutablePointer(to: &storage) { pointer throws(IOError) in
            try pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) { address throws(IOError) in
                try syscallBlocking("getsockname") { getsockname(fd, address, &length) }
            }
        }
        if Int32(storage.ss_family) == AF_INET6 {
            return withUnsafePointer(to: &storage) { $0.withMemoryRebound(to: sockaddr_in6.self, capacity: 1) { UInt16(bigEndian: $0.pointee.sin6_port) } }
        }
        return withUnsafePointer(to: &storage) { $0.withMemoryRebound(to: sockaddr_in.self, capacity: 1) { UInt16(bigEndian: $0.pointee.sin_port) } }
    }

    /// accept4 with the new socket non-blocking and close-on-exec, and the peer's key
    /// (`waymark_accept4_peer`); nil when none is pending.
    static func acceptWithPeer(_ listener: Int32) throws(IOError) -> (fd: Int32, peer: PeerAddress)? {
        var high: UInt64 = 0, low: UInt64 = 0
        switch try syscall("accept4", { waymark_accept4_peer(listener, &high, &low) }) {
        case .processed(let fd): return (fd, PeerAddress(high: high, low: low))
        case .wouldBlock: return nil
        }
    }


    static func setOption(_ fd: Int32, _ level: Int32, _ name: Int32, _ value: Int32) throws(IOError) {
        var value = value
        try syscallBlocking("setsockopt") { setsockopt(fd, level, name, &value, socklen_t(MemoryLayout<Int32>.size)) }
    }

    /// Reads what is available; 0 means the peer closed its side.
    static func read(_ fd: Int32, into buffer: UnsafeMutableRawBufferPointer) throws(IOError) -> IOResult<Int> {
        try syscall("read") { Glibc.read(fd, buffer.baseAddress, buffer.count) }
    }

    /// Writes what the socket takes; `MSG_NOSIGNAL` so a closed peer is an error, not SIGPIPE.
    /// `more` (a response's head whose body follows from a file) adds `MSG_MORE`, which holds
    /// a partial segment back (as TCP_CORK would, for this call only) so the head leaves with
    /// the body's first bytes, not in a packet of its own.
    static func send(_ fd: Int32, _ bytes: UnsafeRawBufferPointer, more: Bool = false) throws(IOError) -> IOResult<Int> {
        let flags = Int32(more ? MSG_NOSIGNAL | MSG_MORE : MSG_NOSIGNAL)
        return try syscall("send") { Glibc.send(fd, bytes.baseAddress, bytes.count, flags) }
    }

    /// Sends `count` bytes of `file` from `offset` (sendfile(2)): the kernel takes the
    /// file's pages by reference, copying nothing from the process. sendfile has no
    /// MSG_NOSIGNAL: the server ignores SIGPIPE (`HTTPServer.start`, `EventLoop.init`).
    static func sendFile(_ fd: Int32, _ file: Int32, from offset: Int, count: Int) throws(IOError) -> IOResult<Int> {
        var position = Int64(offset)
        return try syscall("sendfile") { waymark_sendfile(fd, file, &position, count) }
    }

    /// Writes two buffers with one call (sendmsg(2), a gather write), without SIGPIPE.
    static func send(_ fd: Int32, _ first: UnsafeRawBufferPointer, _ second: UnsafeRawBufferPointer) throws(IOError) -> IOResult<Int> {
        var vectors = (iovec(iov_base: UnsafeMutableRawPointer(mutating: first.baseAddress), iov_len: first.count),
                       iovec(iov_base: UnsafeMutableRawPointer(mutating: second.baseAddress), iov_len: second.count))
        return try withUnsafeMutablePointer(to: &vectors) { pointer throws(IOError) in
            try pointer.withMemoryRebound(to: iovec.self, capacity: 2) { iov throws(IOError) in
                var message = msghdr()
                message.msg_iov = iov
                message.msg_iovlen = 2
                return try syscall("sendmsg") { sendmsg(fd, &message, Int32(MSG_NOSIGNAL)) }
            }
        }
    }

    /// Resets the connection: SO_LINGER with a zero timeout makes close(2) send RST and
    /// discard unsent data (socket(7)), instead of trickling it to a reader that stalls.
    static func abort(_ fd: Int32) {
        var linger = Glibc.linger(l_onoff: 1, l_linger: 0)
        _ = setsockopt(fd, SOL_SOCKET, SO_LINGER, &linger, socklen_t(MemoryLayout<Glibc.linger>.size))
        close(fd)
    }

    /// shutdown(SHUT_WR): a FIN after the queued output, reading still possible (a
    /// lingering close). A peer already gone is no error worth reporting.
    static func shutdownWrite(_ fd: Int32) {
        _ = try? syscall("shutdown") { Glibc.shutdown(fd, Int32(SHUT_WR)) }
    }

    static func close(_ fd: Int32) {
        // close(2): do not retry on EINTR; the descriptor is released either way on Linux.
        FileSystem.close(fd)
    }
}
