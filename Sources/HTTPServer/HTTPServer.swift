import SystemIO
import HTTPCore
import Dispatch
import Foundation
#if canImport(Glibc)
import Glibc
#endif

/// The server: a `Router` served by `threads` epoll loops on every configured address.
/// Each loop has its own listening sockets on the same port (SO_REUSEPORT); a loop that
/// accepted more than its share hands the connection to the least-loaded loop
/// (`LoopBalancer`), and no lock is shared on the request path.
public final class HTTPServer: @unchecked Sendable {
    // @unchecked: `loops` and `threads` are written once in `start()` before any other
    // thread can see them; afterwards only `shutdown()` (thread-safe per loop) touches them.
    public let configuration: ServerConfiguration
    private let router: Router
    /// Requests by route and status, with latency; nil when not kept.
    public let metrics: HTTPMetrics?
    private var loops: [EventLoop] = []
    private var threads: [Thread] = []
    private let finished = DispatchGroup()
    private let balancer: LoopBalancer
    private let peerTable: PeerTable
    /// Request body bytes held across every connection (`maximumBufferedBodyBytes`).
    public let bodyBudget: BodyBudget
    /// Large response bytes queued across every connection (`maximumQueuedOutputBytes`).
    public let outputBudget: OutputBudget
    private var signalSources: [DispatchSourceSignal] = []
    /// The port actually bound (useful when configured as 0).
    public private(set) var port: UInt16 = 0

    public init(configuration: ServerConfiguration, router: Router, metrics: HTTPMetrics? = nil) {
        self.configuration = configuration
        self.router = router
        self.metrics = metrics
        balancer = LoopBalancer(loops: max(1, configuration.threads))
        peerTable = PeerTable(limit: configuration.maximumConnectionsPerPeer)
        bodyBudget = BodyBudget(limit: configuration.maximumBufferedBodyBytes, perPeer: configuration.maximumBufferedBodyBytesPerPeer)
        outputBudget = OutputBudget(limit: configuration.maximumQueuedOutputBytes, perPeer: configuration.maximumQueuedOutputBytesPerPeer)
    }

    /// Connections each event loop is serving now.
    public var openConnectionsPerLoop: [Int] { loops.map(\.openConnections) }

    /// Binds every address and starts the loops. Returns once the server accepts connections.
    public func start() throws(IOError) {
        // A write to a closed socket must be an error, not a process-killing signal.
        signal(SIGPIPE, SIG_IGN)
        if !BodyFile.isAvailable {
            let line = "{\"event\":\"bodyFiles\",\"available\":false,\"message\":\"memory files cannot be sent with sendfile here: large answers are sent from memory\"}\n"
            Array(line.utf8).withUnsafeBytes { writeToStandardError($0) }
        }
        var port = configuration.port
        let prefix = String(UInt32.random(in: 0...UInt32.max), radix: 36)
        let requestIDKey = UInt64.random(in: 0...UInt64.max)
        let slots = metrics?.configure(routes: router.routeLabels, loops: max(1, configuration.threads))
        metrics?.attach(bodyBudget)
        metrics?.attach(outputBudget)
        if port != 0 {
            for host in configuration.hosts { try Socket.ensureFree(host: host, port: port) }
        }
        for index in 0..<max(1, configuration.threads) {
            var listeners: [Int32] = []
            for host in configuration.hosts {
                let (fd, bound) = try Socket.listen(host: host, port: port, backlog: configuration.backlog)
                listeners.append(fd)
                port = bound  // port 0: every later listener joins the port the first one got
            }
            loops.append(try EventLoop(index: index, router: router, configuration: configuration, listeners: listeners,
                                       requestIDPrefix: prefix, requestIDKey: requestIDKey, balancer: balancer, metrics: slots?[index],
                                       peerTable: peerTable, serverMetrics: metrics, bodyBudget: bodyBudget,
                                       outputBudget: outputBudget))
        }
        for loop in loops { loop.peers = loops }  // each loop clears its list when it stops
        self.port = port
        for loop in loops {
            finished.enter()
            let thread = Thread { [finished] in
                loop.run()
                finished.leave()
            }
            thread.name = "waymark-loop-\(loop.index)"
            thread.start()
            threads.append(thread)
        }
    }

    /// Stops accepting, lets requests in flight finish (within `drainTimeout`), closes idle connections.
    public func shutdown() {
        for loop in loops { loop.requestShutdown() }
    }

    /// Blocks until every loop has stopped.
    public func wait() {
        finished.wait()
    }

    /// SIGTERM and SIGINT start a graceful shutdown.
    public func shutdownOnSignals(then action: @escaping @Sendable () -> Void = {}) {
        for signalNumber in [SIGTERM, SIGINT] {
            signal(signalNumber, SIG_IGN)
            let source = DispatchSource.makeSignalSource(signal: signalNumber, queue: .global())
            source.setEventHandler { [weak self] in
                action()
                self?.shutdown()
            }
            source.resume()
            signalSources.append(source)
        }
    }
}
