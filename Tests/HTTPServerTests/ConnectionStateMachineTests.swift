import Foundation
import HTTPCore
@testable import HTTPServer
import Testing

/// Drives a state machine the way the shell does, with a manual clock.
struct MachineDriver {
    var machine: ConnectionStateMachine
    var now: Int64 = 0
    var handled: [String] = []

    init(timeouts: ConnectionTimeouts = ConnectionTimeouts(), highWater: Int = 1 << 20,
         bodyLimit: @escaping @Sendable (HTTPRequestHead) -> Int? = { _ in nil }) {
        self.init(timeouts: timeouts, highWater: highWater, decide: { .read(maximumBody: bodyLimit($0), admittedAs: nil) })
    }

    init(timeouts: ConnectionTimeouts = ConnectionTimeouts(), highWater: Int = 1 << 20,
         decide: @escaping @Sendable (HTTPRequestHead) -> HeadDecision) {
        machine = ConnectionStateMachine(now: 0, timeouts: timeouts, highWater: highWater, decide: decide)
    }

    /// Feeds bytes; handles every request with a response of `responseBytes` bytes, the
    /// way the shell would, and returns every action but `.handle`.
    mutating func feed(_ text: String, responseBytes: Int = 100) -> [ConnectionStateMachine.Action] {
        var pending = Array(text.utf8).withUnsafeBytes { machine.received($0, now: now) }
        var others: [ConnectionStateMachine.Action] = []
        while !pending.isEmpty {
            let action = pending.removeFirst()
            if case .handle(let request) = action {
                handled.append(request.head.target)
                pending += machine.responseQueued(bytes: responseBytes, keepAlive: machine.mayKeepAlive(request), now: now)
            } else {
                others.append(action)
            }
        }
        return others
    }

    mutating func advance(seconds: Double) -> [ConnectionStateMachine.Action] {
        now += Int64(seconds * 1e9)
        return machine.tick(now: now)
    }
}

let get = "GET /a HTTP/1.1\r\nHost: x\r\n\r\n"

@Suite("Connection state machine")
struct ConnectionStateMachineTests {
    @Test func pipelinedRequestsAreHandledInOrder() {
        var driver = MachineDriver()
        let actions = driver.feed(get + get.replacingOccurrences(of: "/a", with: "/b") + get.replacingOccurrences(of: "/a", with: "/c"))
        #expect(actions.isEmpty)
        #expect(driver.handled == ["/a", "/b", "/c"])
    }

    @Test func connectionCloseClosesAfterTheResponseIsWritten() {
        var driver = MachineDriver()
        let actions = driver.feed("GET /a HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n" + get)
        #expect(driver.handled == ["/a"], "nothing after Connection: close is handled")
        #expect(actions == [.pauseReading])
        #expect(driver.machine.wrote(60, now: 0).isEmpty)
        #expect(driver.machine.wrote(40, now: 0) == [.close])
    }

    @Test func http10ClosesUnlessKeepAlive() {
        var driver = MachineDriver()
        #expect(driver.feed("GET /a HTTP/1.0\r\n\r\n") == [.pauseReading])
        var keepAlive = MachineDriver()
        #expect(keepAlive.feed("GET /a HTTP/1.0\r\nConnection: keep-alive\r\n\r\n").isEmpty)
    }

    @Test func framingErrorAnswersAndCloses() {
        var driver = MachineDriver()
        let actions = driver.feed("GET / HTTP/1.1\r\nHost: x\r\nContent-Length: 1\r\nTransfer-Encoding: chunked\r\n\r\n" + get)
        #expect(actions == [.sendError(.badRequest, message: HTTPParserError.contentLengthWithTransferEncoding.message)])
        #expect(driver.handled.isEmpty)
        #expect(!driver.machine.wantsRead)
    }

    @Test func expectContinueIsAnsweredBeforeTheBody() {
        var driver = MachineDriver()
        let actions = driver.feed("POST /p HTTP/1.1\r\nHost: x\r\nExpect: 100-continue\r\nContent-Length: 2\r\n\r\n")
        #expect(actions == [.sendContinue])
        #expect(driver.handled.isEmpty)
        #expect(driver.feed("ok").isEmpty)
        #expect(driver.handled == ["/p"])
        // The 100 Continue counts as output: once it and the response are written, an
        // idle connection closes at once on shutdown rather than waiting for the drain deadline.
        _ = driver.machine.wrote(HTTPResponseSerializer.continueResponse.count + 100, now: driver.now)
        #expect(driver.machine.beginShutdown() == [.close])
    }

    @Test func expectContinueOverTheLimitGetsOnly413() {
        var driver = MachineDriver(bodyLimit: { _ in 3 })
        let actions = driver.feed("POST /p HTTP/1.1\r\nHost: x\r\nExpect: 100-continue\r\nContent-Length: 4\r\n\r\n")
        #expect(actions == [.sendError(.contentTooLarge, message: HTTPParserError.bodyTooLarge.message)])
    }

    @Test func perRouteBodyLimitIsApplied() {
        var driver = MachineDriver(bodyLimit: { $0.target == "/small" ? 3 : nil })
        let actions = driver.feed("POST /small HTTP/1.1\r\nHost: x\r\nContent-Length: 4\r\n\r\nabcd")
        #expect(actions == [.sendError(.contentTooLarge, message: HTTPParserError.bodyTooLarge.message)])
        var other = MachineDriver(bodyLimit: { $0.target == "/small" ? 3 : nil })
        #expect(other.feed("POST /big HTTP/1.1\r\nHost: x\r\nContent-Length: 4\r\n\r\nabcd").isEmpty)
        #expect(other.handled == ["/big"])
    }

    static let unauthorized = HTTPResponse.error(.unauthorized, message: "no token")

    /// A head the route refuses: its answer at once, no `100 Continue`, nothing of the
    /// body read or handled; then a lingering close that discards what still comes.
    @Test func aRefusedHeadIsAnsweredBeforeItsBodyAndNeverInvitesIt() {
        var driver = MachineDriver(decide: { $0.target == "/guarded" ? .refuse(Self.unauthorized) : .read(maximumBody: nil, admittedAs: nil) })
        let actions = driver.feed("POST /guarded HTTP/1.1\r\nHost: x\r\nExpect: 100-continue\r\nContent-Length: 16777216\r\n\r\nabc")
        #expect(actions == [.refuse(Refused(Self.unauthorized))], "no .sendContinue, no .handle")
        #expect(driver.handled.isEmpty)
        #expect(!driver.machine.wantsRead, "nothing is read until the answer is out")
        #expect(driver.machine.responseQueued(bytes: 80, keepAlive: true, now: 0) == [.pauseReading])
        #expect(driver.machine.wrote(80, now: 0) == [.shutdownWrite])
        #expect(driver.machine.wantsRead, "lingering: read and discard")
        #expect(driver.feed(String(repeating: "x", count: 64 << 10)).isEmpty)
        #expect(driver.handled.isEmpty, "what arrives while lingering is never decoded")
        #expect(driver.machine.receivedEOF() == [.close])
    }

    @Test func aLingeringCloseEndsAtItsTimeoutOrPastItsBytes() {
        var timed = MachineDriver(decide: { _ in .refuse(Self.unauthorized) })
        _ = timed.feed("POST /p HTTP/1.1\r\nHost: x\r\nContent-Length: 9\r\n\r\n")
        _ = timed.machine.responseQueued(bytes: 10, keepAlive: false, now: 0)
        #expect(timed.machine.wrote(10, now: 0) == [.shutdownWrite])
        #expect(timed.advance(seconds: 1.9).isEmpty)
        #expect(timed.advance(seconds: 0.2) == [.close])

        var flooded = MachineDriver(decide: { _ in .refuse(Self.unauthorized) })
        _ = flooded.feed("POST /p HTTP/1.1\r\nHost: x\r\nContent-Length: 99999999\r\n\r\n")
        _ = flooded.machine.responseQueued(bytes: 10, keepAlive: false, now: 0)
        _ = flooded.machine.wrote(10, now: 0)
        #expect(flooded.feed(String(repeating: "x", count: ConnectionStateMachine.lingerBytes)).isEmpty)
        #expect(flooded.feed("x") == [.close], "past lingerBytes it closes at once")
    }

    @Test func aFramingErrorLingersToo() {
        var driver = MachineDriver(bodyLimit: { _ in 3 })
        #expect(driver.feed("POST /p HTTP/1.1\r\nHost: x\r\nContent-Length: 4\r\n\r\nabcd")
                == [.sendError(.contentTooLarge, message: HTTPParserError.bodyTooLarge.message)])
        _ = driver.machine.responseQueued(bytes: 10, keepAlive: false, now: 0)
        #expect(driver.machine.wrote(10, now: 0) == [.shutdownWrite])
        #expect(driver.machine.receivedEOF() == [.close])
    }

    /// Who the head's check admitted is the machine's while that request is handled, and
    /// not the next one's.
    @Test func theAdmittedNameRidesOnItsRequestOnly() {
        var machine = ConnectionStateMachine(now: 0, decide: { .read(maximumBody: nil, admittedAs: $0.target == "/p" ? "ci" : nil) })
        let text = "POST /p HTTP/1.1\r\nHost: x\r\nContent-Length: 1\r\n\r\na" + "GET /q HTTP/1.1\r\nHost: x\r\n\r\n"
        var pending = Array(text.utf8).withUnsafeBytes { machine.received($0, now: 0) }
        var admitted: [String: String] = [:]
        while !pending.isEmpty {
            if case .handle(let request) = pending.removeFirst() {
                admitted[request.head.target] = machine.admittedAs ?? "none"
                pending += machine.responseQueued(bytes: 10, keepAlive: true, now: 0)
            }
        }
        #expect(admitted == ["/p": "ci", "/q": "none"])
    }

    /// A connection that never sends a byte holds its slot only as long as a slow head may
    /// (10 s), not the 60 s a client that has been served may idle between requests.
    @Test func aSilentConnectionClosesAtTheHeadDeadline() {
        var silent = MachineDriver()
        #expect(silent.advance(seconds: 9.9).isEmpty)
        #expect(silent.advance(seconds: 0.2) == [.close], "silence gets the head deadline, closed without an answer")
        var served = MachineDriver()
        _ = served.feed(get)
        _ = served.machine.wrote(100, now: served.now)
        #expect(served.advance(seconds: 10.1).isEmpty, "a served client idles as long as the idle deadline")
        #expect(served.advance(seconds: 50) == [.close])
    }

    @Test func idleConnectionClosesAfterTheIdleTimeout() {
        var driver = MachineDriver()
        _ = driver.feed(get)
        _ = driver.machine.wrote(100, now: driver.now)
        #expect(driver.advance(seconds: 59).isEmpty)
        #expect(driver.advance(seconds: 2) == [.close])
    }

    @Test func slowHeadGets408() {
        var driver = MachineDriver()
        #expect(driver.feed("GET / HTTP/1.1\r\nHo").isEmpty)
        #expect(driver.advance(seconds: 9).isEmpty)
        #expect(driver.feed("st: x\r\nX-Slow").isEmpty, "trickling bytes does not reset the head deadline")
        #expect(driver.advance(seconds: 2) == [.sendError(.requestTimeout, message: "The request head took too long.")])
    }

    @Test func slowBodyGets408() {
        var driver = MachineDriver()
        #expect(driver.feed("POST / HTTP/1.1\r\nHost: x\r\nContent-Length: 10\r\n\r\nab").isEmpty)
        #expect(driver.advance(seconds: 29).isEmpty)
        #expect(driver.advance(seconds: 2) == [.sendError(.requestTimeout, message: "The request body took too long.")])
    }

    @Test func slowReaderIsPausedThenDropped() {
        var driver = MachineDriver(highWater: 250)
        // Three responses of 100 bytes exceed the high-water mark: reading pauses after them.
        let actions = driver.feed(get + get + get + get + get)
        #expect(actions == [.pauseReading])
        #expect(driver.handled.count == 3)
        #expect(!driver.machine.wantsRead)
        // Draining below half the mark resumes reading and decodes what was buffered.
        let resumed = driver.machine.wrote(200, now: driver.now)
        #expect(resumed.first == .resumeReading)
        // A reader that keeps taking a few bytes is still dropped at the write deadline.
        var trickle = MachineDriver()
        _ = trickle.feed(get, responseBytes: 10_000)
        for _ in 0..<29 {
            #expect(trickle.advance(seconds: 1).isEmpty)
            #expect(trickle.machine.wrote(8, now: trickle.now).isEmpty)
        }
        #expect(trickle.advance(seconds: 2) == [.abort])
        // A reader that stops reading entirely is dropped at the write deadline.
        var stuck = MachineDriver()
        _ = stuck.feed(get)
        #expect(stuck.advance(seconds: 29).isEmpty)
        #expect(stuck.advance(seconds: 2) == [.abort])
    }

    @Test func shutdownClosesIdleAndFinishesInFlight() {
        var idle = MachineDriver()
        #expect(idle.machine.beginShutdown() == [.close])
        var busy = MachineDriver()
        #expect(busy.feed("POST / HTTP/1.1\r\nHost: x\r\nContent-Length: 2\r\n\r\na").isEmpty)
        #expect(busy.machine.beginShutdown().isEmpty)
        #expect(busy.feed("b") == [.pauseReading], "the in-flight request is answered, then the connection closes")
        #expect(busy.handled == ["/"])
        #expect(busy.machine.wrote(100, now: busy.now) == [.close])
    }

    @Test func awaitingADeferredAnswerReadsNothingAndOutlivesIdleAndShutdown() {
        var machine = ConnectionStateMachine(now: 0)
        let actions = Array((get + "GET /b HTTP/1.1\r\nHost: x\r\n\r\n").utf8).withUnsafeBytes { machine.received($0, now: 0) }
        guard case .handle(let first)? = actions.last else { Issue.record("no request"); return }
        #expect(!machine.wantsRead, "no reading while the answer is outstanding")
        #expect(machine.tick(now: 120_000_000_000).isEmpty, "the idle timeout does not apply to a request being answered")
        #expect(machine.beginShutdown().isEmpty, "shutdown waits for the answer")
        let keepsAlive = machine.mayKeepAlive(first)
        #expect(!keepsAlive, "answered during shutdown: Connection: close")
        let next = machine.responseQueued(bytes: 10, keepAlive: false, now: 1)
        #expect(next == [.pauseReading], "answered during shutdown: close after writing, decode nothing more")
        #expect(machine.wrote(10, now: 2) == [.close])
    }

    @Test func eofWhileAwaitingADeferredAnswerWritesItThenCloses() {
        var machine = ConnectionStateMachine(now: 0)
        let actions = Array(get.utf8).withUnsafeBytes { machine.received($0, now: 0) }
        guard case .handle(let request)? = actions.last else { Issue.record("no request"); return }
        #expect(machine.receivedEOF().isEmpty, "the answer is still to be written")
        let keepsAlive = machine.mayKeepAlive(request)
        #expect(!keepsAlive)
        #expect(machine.responseQueued(bytes: 10, keepAlive: false, now: 1) == [.pauseReading])
        #expect(machine.wrote(10, now: 2) == [.close])
    }

    @Test func eofMidRequestClosesAndEofAfterResponseWaitsForTheWrite() {
        var driver = MachineDriver()
        _ = driver.feed("GET / HTTP/1.1\r\nHo")
        #expect(driver.machine.receivedEOF() == [.close])
        var pending = MachineDriver()
        _ = pending.feed(get)
        #expect(pending.machine.receivedEOF().isEmpty)
        #expect(pending.machine.wrote(100, now: 0) == [.close])
    }
}

/// The server-wide budget of buffered body bytes, on machines that share one.
@Suite("Body budget")
struct BodyBudgetTests {
    static func machine(_ budget: BodyBudget, limit: Int? = nil) -> ConnectionStateMachine {
        ConnectionStateMachine(now: 0, bodyBudget: budget, decide: { _ in .read(maximumBody: limit, admittedAs: nil) })
    }

    static func post(_ length: Int) -> String { "POST /p HTTP/1.1\r\nHost: x\r\nContent-Length: \(length)\r\n\r\n" }

    static func feed(_ machine: inout ConnectionStateMachine, _ text: String) -> [ConnectionStateMachine.Action] {
        Array(text.utf8).withUnsafeBytes { machine.received($0, now: 0) }
    }

    @Test func aHeadWhoseBodyDoesNotFitIsRefusedUnread() {
        let budget = BodyBudget(limit: 100)
        var first = Self.machine(budget), second = Self.machine(budget)
        #expect(Self.feed(&first, Self.post(80)).isEmpty, "80 of 100 reserved; the body is awaited")
        #expect(budget.reserved == 80)
        let refused = Self.feed(&second, Self.post(50) + String(repeating: "x", count: 50))
        guard case .refuse(let answer)? = refused.first else {
            Issue.record("\(refused)")
            return
        }
        #expect(answer.response.status == .serviceUnavailable && answer.response.headers["Retry-After"] == "1")
        #expect(budget.reserved == 80, "the refused head reserved nothing")
        // The first body arrives and is answered: its bytes are given back.
        let handled = Self.feed(&first, String(repeating: "x", count: 80))
        guard case .handle? = handled.first else {
            Issue.record("\(handled)")
            return
        }
        _ = first.responseQueued(bytes: 10, keepAlive: true, now: 0)
        #expect(budget.reserved == 0)
        var third = Self.machine(budget)
        #expect(Self.feed(&third, Self.post(100)).isEmpty, "the whole budget is free again")
        // A connection closed mid-body gives its bytes back too.
        _ = third.receivedEOF()
        third.releaseBody()
        #expect(budget.reserved == 0)
    }

    @Test func aChunkedHeadReservesNothingAndAnOversizedLengthNothing() {
        let budget = BodyBudget(limit: 1_000)
        var chunked = Self.machine(budget, limit: 300)
        _ = Self.feed(&chunked, "POST /p HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n")
        #expect(budget.reserved == 0, "a chunked body is reserved as it arrives, not at its head")
        _ = Self.feed(&chunked, "5\r\nhello\r\n")
        #expect(budget.reserved == 300, "a step ahead, but never past the route's limit")
        var oversized = Self.machine(budget, limit: 200)
        let actions = Self.feed(&oversized, Self.post(5_000))
        #expect(actions.contains { if case .sendError(.contentTooLarge, _) = $0 { true } else { false } }, "\(actions)")
        #expect(budget.reserved == 300, "a body refused as too large holds nothing")
    }

    @Test func aBodyTimeoutReleasesToo() {
        let budget = BodyBudget(limit: 100)
        var machine = ConnectionStateMachine(now: 0, timeouts: ConnectionTimeouts(), bodyBudget: budget,
                                             decide: { _ in .read(maximumBody: nil, admittedAs: nil) })
        _ = Self.feed(&machine, Self.post(40))
        #expect(budget.reserved == 40)
        _ = machine.tick(now: 31_000_000_000)
        #expect(budget.reserved == 0, "the body timeout failed the request")
    }
}
