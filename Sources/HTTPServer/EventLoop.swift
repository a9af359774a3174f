import CivilDate
import SystemIO
import CSystemShim
import HTTPCore
import Synchronization
#if canImport(Glibc)
import Glibc
#endif

// One file, though long: the loop is one type whose handlers (accept, read, write, sweep,
// wake) share its descriptor tables and must be read together to see that every path
// closes what it opened.

/// One thread's epoll loop: its own listeners (SO_REUSEPORT), its connections, a sweep of
/// deadlines every 100 ms, and an eventfd other threads use to wake it for shutdown.
/// Level-triggered: simple, and a loop never starves a connection by draining another.
///
/// The fields the request path touches are `@exclusivity(unchecked)` (and `Connection`'s
/// too): each is touched only on this loop's thread, by code that never holds one across a
/// call that could touch it again, and the run-time check Swift makes of every access to a
/// class's stored property cost about 775 instructions a request (`make count-instructions`;
/// compile-time exclusivity checking still applies to them).
final class EventLoop: @unchecked Sendable {
    // @unchecked: every mutable field is touched only on this loop's thread; other threads
    // only call `wake()`, which writes to an eventfd, and read `isStopping` through it.
    let index: Int
    private let epoll: Int32
    private let wakeFD: Int32
    private var listeners: [Int32] = []
    @exclusivity(unchecked) private var listenersWatched = true
    @exclusivity(unchecked) private var connections = ConnectionTable()
    private let router: Router
    private let configuration: ServerConfiguration
    private let maximumConnections: Int
    /// `TCP_NOTSENT_LOWAT` (linux/tcp.h; not exported by Glibc's module) and the unsent
    /// bytes the kernel may hold per connection.
    static let notSentLowWater: Int32 = 25
    static let unsentKernelBytes: Int32 = 128 * 1024
    private let clock = MonotonicClock()
    @exclusivity(unchecked) private var readBuffer = [UInt8](repeating: 0, count: 64 * 1024)
    @exclusivity(unchecked) private var logBuffer: [UInt8] = []
    /// Each response's request id, unique and telling nothing of the count (`RequestIDSequence`).
    @exclusivity(unchecked) private var requestIDs: RequestIDSequence
    @exclusivity(unchecked) private var cachedDate = ""
    @exclusivity(unchecked) private var cachedDateLine: [UInt8] = []
    /// The request-id field's line: its name, `<prefix>-`, then the current request's id in
    /// 16 hex digits and CRLF (`nextRequestID`); the first `requestIDLineFixed` bytes never change.
    @exclusivity(unchecked) private var requestIDLine: [UInt8]
    private let requestIDLineFixed: Int
    /// Where the id (the field's value) starts in `requestIDLine`.
    private let requestIDStart: Int
    @exclusivity(unchecked) private var cachedSecond = -1
    @exclusivity(unchecked) private var stopDeadline: Int64?
    private let shutdownRequested = Atomic<Bool>(false)
    /// Connected descriptors handed over by other threads (`adopt`), taken on this thread.
    private let adoptions = Mutex<[(fd: Int32, peer: PeerAddress?)]>([])
    /// Answers of deferred handlers, from any thread, written out on this loop's thread.
    private let completions = Mutex<[Completion]>([])
    private let balancer: LoopBalancer
    private let peerTable: PeerTable
    private let bodyBudget: BodyBudget?
    private let outputBudget: OutputBudget?
    private let serverMetrics: HTTPMetrics?
    /// This loop's request counters, when the server keeps metrics.
    private let metrics: HTTPMetrics.Slot?
    private let openCount = Atomic<Int>(0)
    /// Connections this loop is serving now; safe from any thread.
    var openConnections: Int { openCount.load(ordering: .relaxed) }
    private let turnCount = Atomic<Int>(0)
    /// Returns from epoll_wait so far, for tests that a paused connection does not spin the loop.
    var turns: Int { turnCount.load(ordering: .relaxed) }
    /// Every loop of the server, this one included; set before `run()`, cleared after it.
    var peers: [EventLoop] = []

    init(index: Int, router: Router, configuration: ServerConfiguration, listeners: [Int32], requestIDPrefix: String,
         requestIDKey: UInt64 = 0, balancer: LoopBalancer, metrics: HTTPMetrics.Slot? = nil, peerTable: PeerTable = PeerTable(limit: 0),
         serverMetrics: HTTPMetrics? = nil, bodyBudget: BodyBudget? = nil, outputBudget: OutputBudget? = nil) throws(IOError) {
        self.index = index
        self.peerTable = peerTable
        self.bodyBudget = bodyBudget
        self.outputBudget = outputBudget
        self.serverMetrics = serverMetrics
        self.metrics = metrics
        self.balancer = balancer
        self.router = router
        self.configuration = configuration
        self.listeners = listeners
        // Through the serializer's own field writer: a CR or LF in the configured prefix becomes a space.
        requestIDs = RequestIDSequence(key: requestIDKey, loop: index)
        requestIDLine = HTTPResponseSerializer.fieldLine(configuration.requestIDHeader, "\(requestIDPrefix)-")
        requestIDLine.removeLast(2)
        requestIDLineFixed = requestIDLine.count
        requestIDStart = configuration.requestIDHeader.utf8.count + 2  // after "Name: "
        maximumConnections = max(1, configuration.maximumConnections / max(1, configuration.threads))
        // sendfile(2) to a closed peer raises SIGPIPE (it has no MSG_NOSIGNAL): ignored for
        // the process, as `HTTPServer.start` does, also for loops made without a server.
        signal(SIGPIPE, SIG_IGN)
        epoll = try syscallBlocking("epoll_create1") { epoll_create1(Int32(EPOLL_CLOEXEC)) }
        wakeFD = try EventFD.make()
        try control(EPOLL_CTL_ADD, wakeFD, events: EPOLLIN.rawValue)
        for listener in listeners { try control(EPOLL_CTL_ADD, listener, events: EPOLLIN.rawValue) }
    }

    deinit {
        FileSystem.close(epoll)
        FileSystem.close(wakeFD)
    }

    /// Hands an already-connected, non-blocking socket to this loop; safe from any thread.
    /// (Tests use it with socket pairs; a listener-less loop serves only adopted sockets.)
    func adopt(_ fd: Int32) {
        balancer.add(to: index)
        handOver(fd, peer: nil)
    }

    /// Queues an already-counted socket for this loop's thread.
    private func handOver(_ fd: Int32, peer: PeerAddress?) {
        adoptions.withLock { $0.append((fd, peer)) }
        EventFD.signal(wakeFD)
    }

    /// Asks the loop to stop accepting and drain; safe from any thread.
    func requestShutdown() {
        shutdownRequested.store(true, ordering: .releasing)
        EventFD.signal(wakeFD)
    }

    private func control(_ operation: Int32, _ fd: Int32, events: UInt32) throws(IOError) {
        try syscallBlocking("epoll_ctl") { waymark_epoll_ctl(epoll, operation, fd, events, UInt64(UInt32(bitPattern: fd))) }
    }

    /// Runs until shut down and every connection is closed.
    func run() {
        if configuration.pinThreads {
            do {
                try syscallBlocking("sched_setaffinity") { waymark_pin_to_allowed_cpu(Int32(index)) }
            } catch {
                log("{\"event\":\"pinThreads\",\"loop\":\(index),\"error\":\(JSONString.quoted("\(error)"))}")
            }
        }
        serve()
        // A socket handed over after this loop's last turn is closed, not leaked.
        let leftOver: [(fd: Int32, peer: PeerAddress?)] = adoptions.withLock { queue in defer { queue.removeAll() }; return queue }
        for adopted in leftOver {
            balancer.remove(from: index)
            if let peer = adopted.peer { peerTable.release(peer) }
            Socket.close(adopted.fd)
        }
        peers = []
    }

    private func serve() {
        var events = [UInt32](repeating: 0, count: 256)
        var data = [UInt64](repeating: 0, count: 256)
        var nextSweep = clock.now() + 100_000_000
        while true {
            let count: Int32
            do {
                switch try syscall("epoll_wait", { waymark_epoll_wait(epoll, &events, &data, 256, 100) }) {
                case .processed(let ready): count = ready
                case .wouldBlock: count = 0
                }
            } catch {
                log("{\"event\":\"fatal\",\"error\":\(JSONString.quoted("\(error)"))}")
                return
            }
            turnCount.add(1, ordering: .relaxed)
            for slot in 0..<Int(count) {
                let fd = Int32(truncatingIfNeeded: data[slot])
                if fd == wakeFD {
                    EventFD.drain(wakeFD)
                    let adopted: [(fd: Int32, peer: PeerAddress?)] = adoptions.withLock { queue in defer { queue.removeAll() }; return queue }
                    for socket in adopted { register(socket.fd, peer: socket.peer) }
                    for completion in completions.withLock({ queue in defer { queue.removeAll() }; return queue }) { finish(completion) }
                } else if listeners.contains(fd) {
                    acceptAll(fd)
                } else if let connection = connections[fd] {
                    service(connection, events: events[slot])
                }
            }
            let now = clock.now()
            if shutdownRequested.load(ordering: .acquiring), stopDeadline == nil { beginShutdown(now: now) }
            if now >= nextSweep {
                sweep(now: now)
                nextSweep = now + 100_000_000
            }
            flushLog()
            if let deadline = stopDeadline {
                if connections.isEmpty { return }
                if now >= deadline {
                    for connection in Array(connections.values) { close(connection) }
                    return
                }
            }
        }
    }

    // MARK: Accepting

    private func acceptAll(_ listener: Int32) {
        while connections.count < maximumConnections || shedCandidate() != nil {
            let accepted: (fd: Int32, peer: PeerAddress)?
            do {
                accepted = try Socket.acceptWithPeer(listener)
            } catch {
                // EMFILE and friends: stop for now; the sweep re-arms the listeners.
                pauseListeners()
                return
            }
            guard let (fd, peer) = accepted else { return }
            guard peerTable.admit(peer) else {
                // Over its peer's cap: closed at once with a reset, before it costs a slot.
                serverMetrics?.refusedOverPeerCap.add(1, ordering: .relaxed)
                Socket.abort(fd)
                continue
            }
            try? Socket.setOption(fd, Int32(IPPROTO_TCP), TCP_NODELAY, 1)
            // The kernel holds at most this much not yet sent per connection (tcp(7)): a
            // reader that opens a tiny window cannot make the kernel buffer megabytes for
            // it (autotuning would grow the send buffer to tcp_wmem's 4 MB), so a few
            // hundred slow readers cannot push TCP into memory pressure, which slows every
            // other connection. What is in flight still grows with the path.
            try? Socket.setOption(fd, Int32(IPPROTO_TCP), Self.notSentLowWater, Self.unsentKernelBytes)
            let target = balancer.place(acceptedBy: index)
            if target == index || target >= peers.count {
                // At the limit, the connection idle longest (no request in progress, nothing
                // to write; a silent one counts) makes room: a new client gets in rather than
                // waiting behind connections doing nothing.
                if connections.count >= maximumConnections, let idle = shedCandidate() {
                    shedStack.removeLast()
                    serverMetrics?.shedIdle.add(1, ordering: .relaxed)
                    close(idle)
                }
                register(fd, peer: peer)
            } else {
                peers[target].handOver(fd, peer: peer)
            }
        }
        pauseListeners()
    }

    /// The idle connections to close next at the connection limit, the one idle longest
    /// last: one scan of the loop's connections finds up to `shedBatch` of them, so a flood
    /// of new connections costs a scan per `shedBatch` accepts, not one each.
    private var shedStack: [Connection] = []
    /// When a scan last found no idle connection: another waits 100 ms.
    private var fruitlessScanAt: Int64 = -1_000_000_000
    static let shedBatch = 64

    /// The connection idle longest that may be closed for a new one (still idle, still
    /// open), scanning for more when the last scan's are used up; nil if none is idle.
    private func shedCandidate() -> Connection? {
        while let top = shedStack.last {
            if connections[top.fd] === top, top.machine.idleSince != nil, !top.hasPendingOutput { return top }
            shedStack.removeLast()
        }
        let now = clock.now()
        guard now - fruitlessScanAt >= 100_000_000 else { return nil }
        var idle: [(connection: Connection, since: Int64)] = []
        for connection in connections.values {
            if let since = connection.machine.idleSince, !connection.hasPendingOutput { idle.append((connection, since)) }
        }
        guard !idle.isEmpty else {
            fruitlessScanAt = now
            return nil
        }
        idle.sort { $0.since > $1.since }  // the longest idle last, where the stack pops
        shedStack = idle.suffix(Self.shedBatch).map(\.connection)
        return shedStack.last
    }

    /// Starts serving a connected socket.
    private func register(_ fd: Int32, peer: PeerAddress?) {
        let router = router
        let machine = ConnectionStateMachine(
            now: clock.now(), limits: configuration.limits, timeouts: configuration.timeouts,
            highWater: configuration.outputHighWater, bodyBudget: bodyBudget, peer: peer,
            trustForwardedFor: configuration.trustForwardedFor, loop: index,
            decide: { router.decide($0) })
        let connection = Connection(fd: fd, machine: machine, peer: peer, outputBudget: outputBudget)
        connections[fd] = connection
        openCount.add(1, ordering: .relaxed)
        do {
            try control(EPOLL_CTL_ADD, fd, events: EPOLLIN.rawValue | EPOLLRDHUP.rawValue)
        } catch {
            close(connection)
            return
        }
        if stopDeadline != nil {
            // Handed over by a loop that accepted it just before shutdown.
            let actions = connection.machine.beginShutdown()
            if !actions.isEmpty { perform(actions, on: connection) }
        }
    }

    private func pauseListeners() {
        guard listenersWatched else { return }
        listenersWatched = false
        for listener in listeners { try? control(EPOLL_CTL_DEL, listener, events: 0) }
    }

    private func resumeListeners() {
        guard !listenersWatched, stopDeadline == nil, connections.count < maximumConnections || shedCandidate() != nil else { return }
        listenersWatched = true
        for listener in listeners { try? control(EPOLL_CTL_ADD, listener, events: EPOLLIN.rawValue) }
    }

    // MARK: Connections

    private func service(_ connection: Connection, events: UInt32) {
        if events & (EPOLLERR.rawValue | EPOLLHUP.rawValue) != 0, events & EPOLLIN.rawValue == 0 {
            close(connection)
            return
        }
        if events & EPOLLOUT.rawValue != 0 { write(connection) }
        // A write that failed closed it: its descriptor may already be someone else's.
        guard connection.isOpen, events & (EPOLLIN.rawValue | EPOLLRDHUP.rawValue) != 0 else { return }
        if connection.machine.wantsRead {
            read(connection)
        } else if !connection.machine.isClosed {
            // Input arrived while reading is paused: only now stop watching it (see updateInterest).
            updateInterest(connection, dropPausedReads: true)
        }
    }

    private func read(_ connection: Connection) {
        // A few reads per wake-up, so one busy client cannot monopolise the loop.
        for _ in 0..<4 {
            guard connection.isOpen, connection.machine.wantsRead, !connection.machine.isClosed else { return }
            let fd = connection.fd
            let attempt = readBuffer.withUnsafeMutableBytes { buffer in
                Result { () throws(IOError) in try Socket.read(fd, into: buffer) }
            }
            guard case .success(let result) = attempt else {
                close(connection)
                return
            }
            switch result {
            case .wouldBlock:
                return
            case .processed(0):
                perform(connection.machine.receivedEOF(), on: connection)
                return
            case .processed(let count):
                let now = clock.now()
                let actions = readBuffer.withUnsafeBytes { connection.machine.received(UnsafeRawBufferPointer(rebasing: $0[0..<count]), now: now) }
                perform(actions, on: connection)
                if count < readBuffer.count { return }
            }
        }
    }

    private func perform(_ actions: [ConnectionStateMachine.Action], on connection: Connection) {
        guard connection.isOpen else { return }
        var pending = actions
        var index = 0
        while index < pending.count {
            let action = pending[index]
            index += 1
            switch action {
            case .handle(let request):
                let started = clock.now()
                // The body's bytes stay counted for as long as the request is held, even
                // past its connection (a deferred job still queued when its client resets).
                let body = connection.machine.handOverBody()
                switch router.route(request, admittedAs: connection.machine.admittedAs) {
                case .response(let response, let route):
                    // Answered: the bytes go back before the next pipelined head reserves its own.
                    body?.release()
                    let next = queue(response, to: request, on: connection, started: started, route: route)
                    if !next.isEmpty { pending += next }
                case .deferred(let handler, let parameters, let route):
                    // Nothing more is decoded or read on this connection until it answers.
                    let ticket = Ticket(connection: connection, request: request, body: body, started: started, route: route)
                    let responder = Responder { [self] response in
                        // One wake-up per batch of answers: the loop takes them all at once.
                        let first = completions.withLock { queue in
                            queue.append(Completion(ticket: ticket, response: response))
                            return queue.count == 1
                        }
                        if first { EventFD.signal(wakeFD) }
                    }
                    handler(request, parameters, responder)
                }
            case .sendContinue:
                connection.enqueue(HTTPResponseSerializer.continueResponse)
            case .sendError(let status, let message):
                let response = HTTPResponse.error(status, message: message)
                let bytes = connection.enqueue { out in
                    HTTPResponseSerializer.serialize(response, date: date(), isHead: false, keepAlive: false, into: &out)
                }
                if configuration.accessLog { log("{\"status\":\(status.code),\"error\":\(JSONString.quoted(message)),\"bytes\":\(bytes)}") }
                metrics?.record(route: -1, status: status.code, nanoseconds: 0)
                pending += connection.machine.responseQueued(bytes: bytes, keepAlive: false, now: clock.now())
            case .refuse(let refused):
                let response = refused.response
                let bytes = connection.enqueue { out in
                    HTTPResponseSerializer.serialize(response, date: date(), isHead: false, keepAlive: false, into: &out)
                }
                if configuration.accessLog { log("{\"status\":\(response.status.code),\"refusedAtHead\":true,\"bytes\":\(bytes)}") }
                metrics?.record(route: -1, status: response.status.code, nanoseconds: 0)
                pending += connection.machine.responseQueued(bytes: bytes, keepAlive: false, now: clock.now())
            case .shutdownWrite:
                Socket.shutdownWrite(connection.fd)
            case .pauseReading, .resumeReading:
                break  // reflected in `wantsRead` when interest is updated below
            case .close:
                close(connection)
                return
            case .abort:
                close(connection, abort: true)
                return
            }
        }
        write(connection)
    }

    /// Serializes the response to `request`, logs it, and tells the state machine.
    private func queue(_ response: HTTPResponse, to request: HTTPRequest, on connection: Connection, started: Int64,
                       route: Int) -> [ConnectionStateMachine.Action] {
        let keepAlive = connection.machine.mayKeepAlive(request)
        nextRequestID()
        let isHead = request.head.method == "HEAD"
        let dateLine = dateLine()
        // An answer queued behind output not yet written: its client sends requests without
        // reading the answers (pipelining), so even a small one counts in the output budget.
        let behindUnwritten = connection.hasPendingOutput
        var bytes = connection.enqueue { out in
            HTTPResponseSerializer.serializeHead(response, dateLine: dateLine, keepAlive: keepAlive,
                                                 fieldName: configuration.requestIDHeader, fieldLine: requestIDLine, into: &out)
        }
        var counted = 0
        if HTTPResponseSerializer.sendsContent(response, isHead: isHead) {
            // The file only when it is the body's size: Content-Length and the budget count `body`.
            if let file = response.bodyFile, file.count == response.body.count { connection.enqueue(file) } else { connection.enqueue(response.body) }
            bytes += response.body.count
            if response.body.count >= Connection.shareThreshold { counted = response.body.count }
        }
        if counted == 0, behindUnwritten { counted = bytes }
        if counted > 0, let outputBudget {
            connection.countQueued(counted)
            // Past the budget: the slowest readers make room (never this connection,
            // whose answer is being queued; the sweep sees to it if it stays slow).
            if outputBudget.isOver || outputBudget.isOver(connection.peer) { shedSlowReaders(sparing: connection) }
        }
        if configuration.accessLog { logAccess(request, response, id: requestID(), bytes: bytes, started: started) }
        let queued = clock.now()
        metrics?.record(route: route, status: response.status.code, nanoseconds: queued - started)
        return connection.machine.responseQueued(bytes: bytes, keepAlive: keepAlive, now: queued)
    }

    /// `<prefix>-<id in 16 hex digits>`: written into `requestIDLine` after its fixed part.
    private func nextRequestID() {
        let digits = 16
        requestIDLine.removeSubrange(requestIDLineFixed...)
        var value = requestIDs.next()
        var hex: (UInt64, UInt64) = (0, 0)
        withUnsafeMutableBytes(of: &hex) { buffer in
            for position in stride(from: digits - 1, through: 0, by: -1) {
                buffer[position] = UInt8(ascii: "0") + UInt8(value & 0xF) + (value & 0xF >= 10 ? 39 : 0)
                value >>= 4
            }
            requestIDLine.append(contentsOf: UnsafeRawBufferPointer(rebasing: buffer[0..<digits]))
        }
        requestIDLine.append(0x0D)
        requestIDLine.append(0x0A)
    }

    /// The request id in `requestIDLine`, as a string (for the access log).
    private func requestID() -> String {
        String(decoding: requestIDLine[requestIDStart..<(requestIDLine.count - 2)], as: UTF8.self)
    }

    /// A deferred handler answered: queue it if the connection is still the one that asked.
    private func finish(_ completion: Completion) {
        let ticket = completion.ticket
        let connection = ticket.connection
        ticket.body?.release()
        guard connection.isOpen, !connection.machine.isClosed else { return }
        perform(queue(completion.response, to: ticket.request, on: connection, started: ticket.started, route: ticket.route), on: connection)
    }

    private func write(_ connection: Connection) {
        guard connection.isOpen, !connection.machine.isClosed else { return }
        if connection.hasPendingOutput {
            do {
                let written = try connection.flush()
                if written > 0 {
                    let actions = connection.machine.wrote(written, now: clock.now())
                    if !actions.isEmpty {
                        perform(actions, on: connection)
                        return
                    }
                }
            } catch {
                close(connection)
                return
            }
        }
        updateInterest(connection)
    }

    /// Lazily: a connection that pauses reading (awaiting a deferred answer, or output
    /// backed up) stays watched for input until input actually arrives, so a client that
    /// waits for each answer before it sends again (most do) costs no epoll_ctl at all.
    /// Input while paused wakes `service`, which drops the interest then.
    private func updateInterest(_ connection: Connection, dropPausedReads: Bool = false) {
        guard connection.isOpen, !connection.machine.isClosed else { return }
        let reads = connection.machine.wantsRead || (connection.isWatchingReads && !dropPausedReads)
        let writes = connection.hasPendingOutput
        guard reads != connection.isWatchingReads || writes != connection.isWatchingWrites else { return }
        connection.setWatching(reads: reads, writes: writes)
        // RDHUP is level-triggered: watched only with reads, or a half-closed peer whose
        // input is paused would wake the loop on every turn.
        var events: UInt32 = 0
        if reads { events |= EPOLLIN.rawValue | EPOLLRDHUP.rawValue }
        if writes { events |= EPOLLOUT.rawValue }
        do {
            try control(EPOLL_CTL_MOD, connection.fd, events: events)
        } catch {
            close(connection)
        }
    }

    private func close(_ connection: Connection, abort: Bool = false) {
        // Once only, and by the connection itself, never by its descriptor number: after
        // the close, the number may come back for a connection this loop registers.
        guard connection.isOpen else { return }
        connection.isOpen = false
        connections.removeValue(forKey: connection.fd)
        connection.machine.releaseBody()
        connection.releaseOutput()
        balancer.remove(from: index)
        if let peer = connection.peer { peerTable.release(peer) }
        openCount.subtract(1, ordering: .relaxed)
        try? control(EPOLL_CTL_DEL, connection.fd, events: 0)
        if abort { Socket.abort(connection.fd) } else { Socket.close(connection.fd) }
        resumeListeners()
    }

    private func sweep(now: Int64) {
        for connection in Array(connections.values) {
            let actions = connection.machine.tick(now: now)
            if !actions.isEmpty { perform(actions, on: connection) }
        }
        if let outputBudget, outputBudget.queued > 0, outputBudget.isAnyOver { shedSlowReaders(sparing: nil) }
        resumeListeners()
    }

    /// While the output budget is past its limit, or a peer past its share, resets this
    /// loop's connections whose output has waited longest (of that peer, for a share), so
    /// slow readers cannot hold the server's memory: the other loops do the same with
    /// theirs. `sparing` is the connection whose answer is being queued now.
    /// - Complexity: O(connections with counted output queued × log) when past, else O(1).
    private func shedSlowReaders(sparing: Connection?) {
        guard let outputBudget else { return }
        var waiting: [(connection: Connection, since: Int64)] = []
        for connection in connections.values where connection !== sparing && connection.budgeted > 0 {
            if let since = connection.machine.outputPendingSince { waiting.append((connection, since)) }
        }
        guard !waiting.isEmpty else { return }
        waiting.sort { $0.since < $1.since }
        for (connection, _) in waiting {
            guard outputBudget.isOver || outputBudget.isOver(connection.peer) else { continue }
            outputBudget.shed.add(1, ordering: .relaxed)
            close(connection, abort: true)
        }
    }

    private func beginShutdown(now: Int64) {
        stopDeadline = now + configuration.drainTimeout
        // Close the listeners, not just stop watching them: the kernel would otherwise
        // keep completing handshakes into the backlog that nobody will ever accept.
        pauseListeners()
        for listener in listeners { Socket.close(listener) }
        listeners.removeAll()
        for connection in Array(connections.values) {
            let actions = connection.machine.beginShutdown()
            if !actions.isEmpty { perform(actions, on: connection) }
        }
    }

    // MARK: Date and access log

    /// The IMF-fixdate of the current second, formatted once per second.
    private func date() -> String {
        let second = Int(time(nil))
        if second != cachedSecond {
            cachedSecond = second
            cachedDate = HTTPDate.format(secondsSince1970: second)
            cachedDateLine = Array("Date: \(cachedDate)\r\n".utf8)
        }
        return cachedDate
    }

    /// `Date: …` and CRLF, for this second.
    private func dateLine() -> [UInt8] {
        _ = date()
        return cachedDateLine
    }

    private func logAccess(_ request: HTTPRequest, _ response: HTTPResponse, id: String, bytes: Int, started: Int64) {
        let microseconds = (clock.now() - started) / 1000
        log("{\"method\":\(JSONString.quoted(request.head.method)),\"path\":\(JSONString.quoted(String(request.head.path))),\"status\":\(response.status.code),"
            + "\"bytes\":\(bytes),\"durationUs\":\(microseconds),\"requestId\":\"\(id)\"}")
    }

    private func log(_ line: String) {
        logBuffer.append(contentsOf: line.utf8)
        logBuffer.append(0x0A)
        if logBuffer.count > 32 * 1024 { flushLog() }
    }

    private func flushLog() {
        guard !logBuffer.isEmpty else { return }
        logBuffer.withUnsafeBytes { writeToStandardError($0) }
        logBuffer.removeAll(keepingCapacity: true)
    }
}

/// A request handed to a deferred handler, as its loop will need it back.
private struct Ticket: @unchecked Sendable {
    // @unchecked: the connection is only dereferenced on its own loop's thread (`finish`).
    let connection: Connection
    let request: HTTPRequest
    /// The request body's bytes in the body budget, given back with the ticket: once the
    /// handler and the loop are both done with the request.
    let body: BodyLease?
    let started: Int64
    let route: Int
}

/// A deferred handler's answer on its way back to the loop that owns the connection.
private struct Completion: Sendable {
    let ticket: Ticket
    let response: HTTPResponse
}

/// Escapes what could break a JSON string; paths are already restricted to URL characters.
