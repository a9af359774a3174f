import SystemIO
import HTTPCore

/// Everything an operator may set about the server, with defaults.
public struct ServerConfiguration: Sendable {
    /// Addresses to listen on; IPv4 and IPv6 literals. Default: loopback only.
    public var hosts: [String] = ["127.0.0.1", "::1"]
    /// 0 picks a free port (tests).
    public var port: UInt16 = 8080
    /// Event loops, one thread each. Default: one per core.
    public var threads: Int = max(1, System.coreCount)
    /// Pin loop i to the i-th CPU this process may run on (like nginx's `worker_cpu_affinity
    /// auto`). Helps tail latency on a machine the server has to itself; default off.
    public var pinThreads = false
    /// Open connections across all loops; beyond it, new ones wait in the listen backlog. Default 10,000.
    public var maximumConnections = 10_000
    /// Open connections from one peer (an IPv4 address, an IPv6 /64) across all loops;
    /// one more is accepted and closed at once. 0: no cap. Default 1,000. Behind a proxy
    /// every connection comes from the proxy: raise it, or set 0 and limit at the proxy.
    public var maximumConnectionsPerPeer = 1_000
    public var backlog: Int32 = 1024
    public var limits = HTTPLimits()
    public var timeouts = ConnectionTimeouts()
    /// Request body bytes all connections together may hold: a body's declared length is
    /// reserved at the end of its head, before any of it is read (a chunked body's bytes as
    /// they arrive), and given back once its request is answered. A head that does not fit
    /// is answered `503` with `Retry-After: 1`, its body unread. Default 256 MiB.
    public var maximumBufferedBodyBytes = 256 << 20
    /// The share of `maximumBufferedBodyBytes` one peer (an IPv4 address, an IPv6 /64) may
    /// hold: one address cannot take the whole budget from everyone else. 0: no share.
    /// Default 64 MiB (a quarter; `serve` keeps it at least one whole document). Behind a
    /// proxy every body is the proxy's: with `trustForwardedFor` each counts against the
    /// client the proxy names instead; without it, set 0.
    public var maximumBufferedBodyBytesPerPeer = 64 << 20
    /// Behind a reverse proxy on loopback: a body's bytes count against the share of the
    /// last address in its request's `X-Forwarded-For` (`HTTPRequestHead.client`). Only a
    /// connection from loopback is believed. Default off.
    public var trustForwardedFor = false
    /// Queued response bytes beyond which a connection stops reading (slow readers). Default 1 MiB.
    public var outputHighWater = 1 << 20
    /// Bytes of large response bodies (8 KiB or more) queued and not yet written, across
    /// every connection; past it each loop resets the connections whose output has waited
    /// longest (the slowest readers) until it holds. Default 128 MiB.
    public var maximumQueuedOutputBytes = 128 << 20
    /// Of those, what one peer (an IPv4 address, an IPv6 /64) may have queued; past it its
    /// slowest connections are reset. 0: no share. Default 32 MiB. Behind a proxy: 0.
    public var maximumQueuedOutputBytesPerPeer = 32 << 20
    /// On SIGTERM/SIGINT, how long requests in flight may take before connections are cut. Default 10 s.
    public var drainTimeout: Int64 = 10_000_000_000
    /// One JSON line per request on standard error.
    public var accessLog = true
    /// The response header carrying the request id.
    public var requestIDHeader = "X-Request-Id"

    public init() {}
}

/// Facts about the machine.
public enum System {
    public static var coreCount: Int {
        Int(onlineCoreCount())
    }
}
