import HTTPCore

// One file, though long: a connection's phases and deadlines are one state machine, pure
// and tested on a manual clock (HTTPServerTests); its transitions only make sense together.

/// How long each phase of a connection may take, in nanoseconds. Configuration, with defaults.
public struct ConnectionTimeouts: Hashable, Sendable {
    /// From the first byte of a request head to its end. Default 10 s (slowloris).
    public var head: Int64 = 10_000_000_000
    /// From the end of the head to the end of the body. Default 30 s (slow body).
    public var body: Int64 = 30_000_000_000
    /// From the end of a head that declares a body to the body's first byte. Default 5 s:
    /// a client sends its body with its head, or at once after `100 Continue`; a head
    /// left waiting would otherwise hold its reservation and its slot for `body`.
    public var bodyStart: Int64 = 5_000_000_000
    /// An open connection with no request in progress, once it has sent one. Default 60 s.
    /// A connection that has sent nothing yet gets `head` instead: a silent connection
    /// holds a slot no longer than a slow head would.
    public var idle: Int64 = 60_000_000_000
    /// From when output becomes pending to when all of it has been written; partial
    /// progress does not restart it, so a reader taking a few bytes a second is dropped.
    /// Default 30 s (slow read).
    public var write: Int64 = 30_000_000_000
    /// After an error answer that ends the connection (a refusal at the head, a framing
    /// error), how long what the client still sends is read and discarded once the answer
    /// is written and the write side shut (RFC 9112 §9.6): closing at once with its bytes
    /// unread would send an RST that can destroy the answer before the client reads it.
    /// Default 2 s; at most `lingerBytes` are discarded.
    public var linger: Int64 = 2_000_000_000

    public init() {}
}

/// What to do with a request's body once its head is in (`Router.decide`).
public enum HeadDecision: Hashable, Sendable {
    /// Read it, up to `maximumBody` (nil: the server's limit); `admittedAs` is the
    /// machine's `admittedAs` while the request is handled.
    case read(maximumBody: Int?, admittedAs: String?)
    /// Answer this and read nothing of the body: no `100 Continue`, and the connection
    /// closes once the answer is written (after a lingering close).
    case refuse(HTTPResponse)
}

/// A refusal's response, boxed for `ConnectionStateMachine.Action.refuse`.
public final class Refused: Hashable, Sendable {
    public let response: HTTPResponse

    public init(_ response: HTTPResponse) {
        self.response = response
    }

    public static func == (a: Refused, b: Refused) -> Bool { a.response == b.response }
    public func hash(into hasher: inout Hasher) { hasher.combine(response) }
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
        /// Write this response to a head refused before its body; the connection closes
        /// once it is written. Report it with `responseQueued`. (Boxed: an action is copied
        /// on every request, and an inline response would make every action larger.)
        case refuse(Refused)
        /// Shut the socket's write side (shutdown SHUT_WR): the answer is out, and what the
        /// client still sends is read and discarded until it closes (a lingering close).
        case shutdownWrite
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
        /// Written and shut for writing after an error answer: reading and discarding what
        /// the client still sends until it closes, `linger` passes or `lingerBytes` arrive.
        case lingering(since: Int64, discarded: Int)
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
    /// What to do with the body of a request whose head is in: the route's limit and
    /// admission check (`Router.decide`).
    private let decide: @Sendable (HTTPRequestHead) -> HeadDecision
    /// Who the head's admission check admitted for the request being read or handled (nil
    /// for a request without a body): pass it to the router with the `.handle` request.
    /// Cleared once that request's response is queued.
    public private(set) var admittedAs: String?
    /// Whether closing after the output is written goes through a lingering close.
    private var lingerAfterOutput = false
    /// Whether the peer has sent a byte yet (until then the head deadline is its idle one).
    private var hasSpoken = false
    /// Where this connection's body bytes are reserved (nil: no global budget), and how
    /// many it holds now.
    private let bodyBudget: BodyBudget?
    private var reservedBody = 0
    /// Whether the body of the request being read is chunked (reserved as it arrives).
    private var reservingAsItArrives = false
    /// Whether a byte of the current request's body has arrived (the `bodyStart` deadline).
    private var bodyStarted = false
    /// A chunked body reserves what has arrived, rounded up to this step: a byte costs at
    /// most a step, so a thousand one-byte bodies hold 4 MiB, not the 64 MiB a step of
    /// 64 KiB ahead made them hold; a read of many steps takes the budget's lock once.
    public static let reservationStep = 4 * 1024
    /// The connection's peer, given to every head it decodes (`HTTPRequestHead.peer`).
    private let peer: PeerAddress?
    /// Whether a body's bytes count against the share of the client a proxy on loopback
    /// names (`HTTPRequestHead.client(trustingForwardedFor:)`) instead of the proxy's.
    private let trustForwardedFor: Bool
    /// The peer whose share holds `reservedBody`: the connection's, or the client its
    /// request's head names behind a trusted proxy. Set at each head with a body.
    private var bodyPeer: PeerAddress?
    /// The event loop serving it, given to every head it decodes (`HTTPRequestHead.loop`).
    private let loop: Int
    /// The most a lingering close discards before it closes anyway.
    public static let lingerBytes = 1 << 20

    public init(
        now: Int64, limits: HTTPLimits = HTTPLimits(), timeouts: ConnectionTimeouts = ConnectionTimeouts(),
        highWater: Int = 1 << 20, bodyBudget: BodyBudget? = nil, peer: PeerAddress? = nil, trustForwardedFor: Bool = false, loop: Int = 0,
        decide: @escaping @Sendable (HTTPRequestHead) -> HeadDecision = { _ in .read(maximumBody: nil, admittedAs: nil) }
    ) {
        self.bodyBudget = bodyBudget
        self.peer = peer
        self.bodyPeer = peer
        self.trustForwardedFor = trustForwardedFor
        self.loop = loop
        self.timeouts = timeouts
        self.highWater = highWater
        self.decide = decide
        phase = .idle(since: now)
        decoder = HTTPRequestDecoder(limits: limits)
    }

    public var isClosed: Bool { phase == .closed }
    /// Since when the connection has been idle — between requests, or silent since it
    /// opened — with nothing read, decoded or owed; nil otherwise.
    public var idleSince: Int64? {
        guard case .idle(let since) = phase, input.isEmpty, !awaitingResponse, outputPending == 0 else { return nil }
        return since
    }
    /// Since when output has been waiting to be written (nil: none waits): the slowest
    /// reader is the one waiting longest.
    public var outputPendingSince: Int64? { outputPending > 0 ? writeStartedAt : nil }
    /// Whether the shell should be reading from the socket.
    public var wantsRead: Bool { !isPaused && !awaitingResponse && phase != .closing && phase != .closed }

    // MARK: Events

    /// Bytes arrived from the peer.
    public mutating func received(_ bytes: UnsafeRawBufferPointer, now: Int64) -> [Action] {
        if case .lingering(let since, let discarded) = phase {
            guard discarded + bytes.count <= Self.lingerBytes else { return closeNow() }
            phase = .lingering(since: since, discarded: discarded + bytes.count)
            return []
        }
        guard phase != .closed, phase != .closing else { return [] }
        if !bytes.isEmpty { hasSpoken = true }
        input.append(contentsOf: bytes)
        return decodeNext(now: now)
    }

    /// The peer closed its side. A request in progress is abandoned; queued output is still written.
    public mutating func receivedEOF() -> [Action] {
        guard phase != .closed else { return [] }
        if case .lingering = phase { return closeNow() }
        if outputPending == 0, !awaitingResponse { return closeNow() }
        phase = .closing
        return []
    }

    /// The shell queued a response of `bytes` bytes for the last `.handle`.
    public mutating func responseQueued(bytes: Int, keepAlive requested: Bool, now: Int64) -> [Action] {
        releaseBody()
        awaitingResponse = false
        admittedAs = nil
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
    /// `mutating` though it changes nothing: so the shell calls it on its connection's
    /// machine in place (a non-mutating call there copied the whole machine, ~300
    /// instructions a request).
    public mutating func mayKeepAlive(_ request: HTTPRequest) -> Bool {
        request.head.wantsKeepAlive && !isShuttingDown && phase != .closing
    }

    /// The shell wrote `bytes` of queued output.
    public mutating func wrote(_ bytes: Int, now: Int64) -> [Action] {
        outputPending -= bytes
        // The write deadline restarts only once everything queued has been written.
        if outputPending == 0 { writeStartedAt = now }
        if outputPending == 0, phase == .closing {
            guard lingerAfterOutput else { return closeNow() }
            phase = .lingering(since: now, discarded: 0)
            isPaused = false
            return [.shutdownWrite]
        }
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
            releaseBody()
            return [.abort]
        }
        switch phase {
        case .idle(let since) where input.isEmpty && !awaitingResponse && now - since > (hasSpoken ? timeouts.idle : timeouts.head):
            // A connection that never sent a byte is closed without an answer, like an idle one.
            return closeNow()
        case .head(let since) where now - since > timeouts.head:
            return fail(.requestTimeout, "The request head took too long.")
        case .body(let since) where !bodyStarted && now - since > timeouts.bodyStart:
            return fail(.requestTimeout, "The request body did not start in time.")
        case .body(let since) where now - since > timeouts.body:
            return fail(.requestTimeout, "The request body took too long.")
        case .lingering(let since, _) where now - since > timeouts.linger:
            return closeNow()
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
            if case .body = phase, step.consumed > 0 { bodyStarted = true }
            // A chunked body's bytes are promised as they arrive, not the route's maximum
            // at its head: a head alone holds nothing.
            if reservingAsItArrives, decoder.bodyBytes > reservedBody, !reserveArrived() {
                return actions + refuse(Self.overBudget)
            }
            switch step.event {
            case .needMoreData:
                if case .idle = phase { phase = .head(since: now) }
                return actions
            case .head(var head):
                head.peer = peer
                head.loop = loop
                switch decide(head) {
                case .refuse(let response):
                    // Nothing of the body is read or invited: answer, then a lingering close.
                    return actions + refuse(response)
                case .read(let limit, let admitted):
                    if let limit { decoder.maximumBody = limit }
                    admittedAs = admitted
                }
                // Memory for a body of declared length is promised before any of it is
                // read (no more than the route takes); a chunked body's as it arrives.
                if let budget = bodyBudget {
                    switch try? HTTPBodyFraming.of(head) {
                    case .contentLength(let length)?:
                        let need = min(length, decoder.maximumBody)
                        if need > 0 {
                            holdBodies(for: head)
                            guard budget.reserve(need, for: bodyPeer) else { return actions + refuse(Self.overBudget) }
                            reservedBody = need
                        }
                    case .chunked?:
                        holdBodies(for: head)
                        reservingAsItArrives = true
                    default:
                        break
                    }
                }
                bodyStarted = false
                phase = .body(since: now)
                stepAfterHead = true
                // 100 Continue only once the next step has checked the declared length.
                continueIfAccepted = head.expectsContinue
            case .request(var request):
                request.head.peer = peer
                request.head.loop = loop
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

    /// A framing error or timeout: answer it, read nothing more, close after writing
    /// (lingering, so the answer survives what the client is still sending).
    private mutating func fail(_ status: HTTPStatus, _ message: String) -> [Action] {
        phase = .closing
        input.removeAll()
        releaseBody()
        lingerAfterOutput = true
        return [.sendError(status, message: message)]
    }

    /// A head refused before its body: the same, with the route's own answer.
    private mutating func refuse(_ response: HTTPResponse) -> [Action] {
        phase = .closing
        input.removeAll()
        lingerAfterOutput = true
        awaitingResponse = true
        return [.refuse(Refused(response))]
    }

    private mutating func closeNow() -> [Action] {
        phase = .closed
        input.removeAll()
        releaseBody()
        return [.close]
    }

    /// Gives this connection's reserved body bytes back (the request is answered, or the
    /// connection is closing); the shell calls it when it closes a connection itself.
    public mutating func releaseBody() {
        reservingAsItArrives = false
        guard reservedBody > 0 else { return }
        bodyBudget?.release(reservedBody, for: bodyPeer)
        reservedBody = 0
    }

    /// Hands the bytes reserved for the request just given out with `.handle` to whoever
    /// holds that request (nil: none reserved): they are given back when the lease is
    /// released, not when this connection answers or closes. Called by the shell.
    public mutating func handOverBody() -> BodyLease? {
        reservingAsItArrives = false
        guard reservedBody > 0, let budget = bodyBudget else { return nil }
        defer { reservedBody = 0 }
        return BodyLease(budget, bytes: reservedBody, peer: bodyPeer)
    }

    /// Makes the client `head` comes from the peer whose share its body's bytes take
    /// (`bodyPeer`): the connection's, or behind a trusted proxy the client it names. The
    /// next head's body may be another client's, so what an earlier request still held (the
    /// shell hands it over at `.handle`) goes back to its own peer first.
    private mutating func holdBodies(for head: HTTPRequestHead) {
        if reservedBody > 0 { releaseBody() }
        bodyPeer = trustForwardedFor ? head.client(trustingForwardedFor: true) : peer
    }

    /// Reserves what a chunked body has brought past its reservation, rounded up to a
    /// `reservationStep` (never past the route's limit, which the decoder enforces); false
    /// when it does not fit.
    private mutating func reserveArrived() -> Bool {
        guard let budget = bodyBudget else { return true }
        let rounded = (decoder.bodyBytes + Self.reservationStep - 1) / Self.reservationStep * Self.reservationStep
        let target = min(rounded, max(decoder.maximumBody, decoder.bodyBytes))
        guard budget.reserve(target - reservedBody, for: bodyPeer) else { return false }
        reservedBody = target
        return true
    }

    /// The answer to a head whose body does not fit the server's body budget.
    static let overBudget: HTTPResponse = {
        var response = HTTPResponse.error(.serviceUnavailable, code: "busy",
                                          message: "The server is reading as many request bodies as it holds at once, for this address or in all; retry in a moment.")
        response.headers.add("Retry-After", "1")
        return response
    }()
}
