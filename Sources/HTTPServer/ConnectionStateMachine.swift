import HTTPCore

/// How long each phase of a connection may take, in nanoseconds. Configuration, with defaults.
public struct ConnectionTimeouts: Hashable, Sendable {
    /// From the first byte of a request head to its end. Default 10 s (slowloris).
    public var head: Int64 = 10_000_000_000
    /// From the end of the head to the end of the body. Default 30 s (slow body).
    public var body: Int64 = 30_000_000_000
    /// An open connection with no request in progress. Default 60 s.
    public var idle: Int64 = 60_000_000_000
    /// From when output becomes pending to when all of it has been written; partial
    /// progress does not restart it, so a reader taking a few bytes a second is dropped.
    /// Default 30 s (slow read).
    public var write: Int64 = 30_000_000_000

    public init() {}
}

/// One connection's lifecycle as a value: events in, actions out, no I/O. The connection
/// shell performs the actions; tests drive it with a manual clock (times are nanoseconds).
///
/// Requests are decoded one at a time, and the next is decoded only once the previous
/// response is queued, so pipelined responses go out in request order. While more than
/// `highWater` bytes of output wait for a slow reader, no more input is read or decoded.
public struct ConnectionStateMachine: Sendable {
    public enum Action: Hashable, Sendable {
        /// Call the handler, then report the queued response with `responseQueued`.
        case handle(HTTPRequest)
        /// Write `HTTP/1.1 100 Continue` before reading the body.
        case sendContinue
        /// Write this error response; the connection closes once it is written.
        case sendError(HTTPStatus, message: String)
        case pauseReading
        case resumeReading
        /// Close the socket now.
        case close
        /// Reset the connection now (SO_LINGER 0): a timed-out peer gets no more of the
        /// output the kernel still holds for it, and that memory is freed at once.
        case abort
    }

    enum Phase: Hashable, Sendable {
        case idle(since: Int64)
        case head(since: Int64)
        case body(since: Int64)
        /// No further requests: finish writing, then close.
        case closing
        case closed
    }

    public let timeouts: ConnectionTimeouts
    public let highWater: Int
    private(set) var phase: Phase
    private var decoder: HTTPRequestDecoder
    private var input: [UInt8] = []
    private var outputPending = 0
    private var writeStartedAt: Int64 = 0
    private var isPaused = false
    private var isShuttingDown = false
    /// A request was handed out and its response is not queued yet (a deferred handler).
    private(set) var awaitingResponse = false
    /// The body limit for a request head, e.g. the route's; nil keeps the default.
    private let bodyLimit: @Sendable (HTTPRequestHead) -> Int?

    public init(
        now: Int64, limits: HTTPLimits = HTTPLimits(), timeouts: ConnectionTimeouts = ConnectionTimeouts(),
        highWater: Int = 1 << 20, bodyLimit: @escaping @Sendable (HTTPRequestHead) -> Int? = { _ in nil }
    ) {
        self.timeouts = timeouts
        self.highWater = highWater
        self.bodyLimit = bodyLimit
        phase = .idle(since: now)
        decoder = HTTPRequestDecoder(limits: limits)
    }

    public var isClosed: Bool { phase == .closed }
    /// Whether the shell should be reading from the socket.
    public var wantsRead: Bool { !isPaused && !awaitingResponse && phase != .closing && phase != .closed }

    // MARK: Events

    /// Bytes arrived from the peer.
    public mutating func received(_ bytes: UnsafeRawBufferPointer, now: Int64) -> [Action] {
        guard phase != .closed, phase != .closing else { return [] }
        input.append(contentsOf: bytes)
        return decodeNext(now: now)
    }

    /// The peer closed its side. A request in progress is abandoned; queued output is still written.
    public mutating func receivedEOF() -> [Action] {
        guard phase != .closed else { return [] }
        if outputPending == 0, !awaitingResponse { return closeNow() }
        phase = .closing
        return []
    }

    /// The shell queued a response of `bytes` bytes for the last `.handle`.
    public mutating func responseQueued(bytes: Int, keepAlive requested: Bool, now: Int64) -> [Action] {
        awaitingResponse = false
        if outputPending == 0 { writeStartedAt = now }
        outputPending += bytes
        if !requested || isShuttingDown || phase == .closing {
            phase = .closing
            return isPaused ? [] : [.pauseReading]
        }
        phase = .idle(since: now)
        return decodeNext(now: now)
    }

    /// Whether the response to the request just handled may keep the connection open.
    public func mayKeepAlive(_ request: HTTPRequest) -> Bool {
        request.head.wantsKeepAlive && !isShuttingDown && phase != .closing
    }

    /// The shell wrote `bytes` of queued output.
    public mutating func wrote(_ bytes: Int, now: Int64) -> [Action] {
        outputPending -= bytes
        // The write deadline restarts only once everything queued has been written.
        if outputPending == 0 { writeStartedAt = now }
        if outputPending == 0, phase == .closing { return closeNow() }
        if isPaused, phase != .closing, outputPending <= highWater / 2 {
            isPaused = false
            return [.resumeReading] + decodeNext(now: now)
        }
        return []
    }

    /// Time passed: enforce the phase deadlines.
    public mutating func tick(now: Int64) -> [Action] {
        if outputPending > 0, now - writeStartedAt > timeouts.write {
            phase = .closed
            input.removeAll()
            return [.abort]
        }
        switch phase {
        case .idle(let since) where input.isEmpty && !awaitingResponse && now - since > timeouts.idle:
            return closeNow()
        case .head(let since) where now - since > timeouts.head:
            return fail(.requestTimeout, "The request head took too long.")
        case .body(let since) where now - since > timeouts.body:
            return fail(.requestTimeout, "The request body took too long.")
        default:
            return []
        }
    }

    /// The server is stopping: an idle connection closes now; one mid-request finishes
    /// that request, answers it with `Connection: close`, and then closes.
    public mutating func beginShutdown() -> [Action] {
        isShuttingDown = true
        if case .idle = phase, input.isEmpty, outputPending == 0, !awaitingResponse { return closeNow() }
        return []
    }

    // MARK: Decoding

    private mutating func decodeNext(now: Int64) -> [Action] {
        if outputPending > highWater {
            guard !isPaused else { return [] }
            isPaused = true
            return [.pauseReading]
        }
        var actions: [Action] = []
        // After a head, step once more even with no input: the decoder then applies the
        // route's body limit to the declared length before any body byte arrives.
        var stepAfterHead = false
        var continueIfAccepted = false
        while !input.isEmpty || stepAfterHead {
            stepAfterHead = false
            let step: (event: HTTPRequestDecoder.Event, consumed: Int)
            do throws(HTTPParserError) {
                step = try input.withUnsafeBufferPointer { (bytes) throws(HTTPParserError) in try decoder.decode(bytes) }
            } catch {
                // A body we would refuse is refused before the client is invited to send it.
                return actions + fail(error.status, error.message)
            }
            if continueIfAccepted {
                continueIfAccepted = false
                // The interim response is output like any other: count it, or the
                // connection would never look drained.
                if outputPending == 0 { writeStartedAt = now }
                outputPending += HTTPResponseSerializer.continueResponse.count
                actions.append(.sendContinue)
            }
            input.removeFirst(step.consumed)
            switch step.event {
            case .needMoreData:
                if case .idle = phase { phase = .head(since: now) }
                return actions
            case .head(let head):
                if let limit = bodyLimit(head) { decoder.maximumBody = limit }
                phase = .body(since: now)
                stepAfterHead = true
                // 100 Continue only once the next step has checked the declared length.
                continueIfAccepted = head.expectsContinue
            case .request(let request):
                // The response must be queued before the next request is decoded.
                phase = .idle(since: now)
                awaitingResponse = true
                actions.append(.handle(request))
                return actions
            }
        }
        if case .idle = phase { phase = .idle(since: now) }
        return actions
    }

    /// A framing error or timeout: answer it, read nothing more, close after writing.
    private mutating func fail(_ status: HTTPStatus, _ message: String) -> [Action] {
        phase = .closing
        input.removeAll()
        return [.sendError(status, message: message)]
    }

    private mutating func closeNow() -> [Action] {
        phase = .closed
        input.removeAll()
        return [.close]
    }
}
