import Dispatch
import Foundation
import HTTPCore
import HTTPServer
import Synchronization
import Testing
import TestSupport
@testable import WaymarkAPI

/// Work that grows with a document runs on the work queue, never on a loop, in lanes: reads
/// never fill the lane changes run in, building what a new generation serves is never
/// refused, and in the reads lane one token or one peer holds at most its share. While a
/// lane is full, what is cached is still answered at once, what needs that lane is refused
/// with `503 busy` and `Retry-After` rather than queued without bound, and the other lanes
/// go on.
@Suite("Off-loop work", .serialized)
struct OffLoopWorkTests {
    /// Holds `jobs` of `queue`'s `lane` (one for each of `callers`) until `release` is called:
    /// each counts from when it is taken, whether it has started yet (a reads lane runs a
    /// few at a time) or not.
    final class Hold: Sendable {
        private let gate = DispatchSemaphore(value: 0)
        let count: Int

        init(_ queue: WorkQueue, _ lane: WorkLane = .changes, callers: [WorkCaller], document: Bool = false) {
            count = callers.count
            let gate = gate
            // A job that just answered its request leaves the count only as it returns, a
            // moment after its client has the answer: retry briefly rather than race it.
            for caller in callers {
                var accepted = false
                for _ in 0..<1_000 where !accepted {
                    accepted = queue.submit(lane, for: caller, document: document) { gate.wait() } == nil
                    if !accepted { usleep(1_000) }
                }
                #expect(accepted, "the lane had room for the held jobs")
            }
        }

        convenience init(_ queue: WorkQueue, _ lane: WorkLane = .changes, jobs: Int) {
            self.init(queue, lane, callers: (0..<jobs).map { WorkCaller(token: "holder-\($0)") })
        }

        func release() {
            for _ in 0..<count { gate.signal() }
        }
    }

    @Test func aFullLaneRefusesMoreAndTakesWorkAgainOnceFree() {
        let queue = WorkQueue(capacity: 2)
        let hold = Hold(queue, jobs: 2)
        #expect(queue.queued == 2 && queue.queued(.changes) == 2)
        #expect(queue.submit(.changes) {} == .full, "a third job is refused")
        #expect(queue.refused == 1 && queue.refused(.changes) == 1)
        hold.release()
        let done = DispatchSemaphore(value: 0)
        var accepted = false
        for _ in 0..<1_000 where !accepted {  // the held jobs leave the count as they return
            accepted = queue.submit(.changes) { done.signal() } == nil
            if !accepted { usleep(1_000) }
        }
        #expect(accepted)
        done.wait()
    }

    static let alice = PeerAddress(high: 0xFFFF, low: 0x0A00_0001)
    static let bob = PeerAddress(high: 0xFFFF, low: 0x0A00_0002)

    /// Each row: jobs held in a queue of capacity 8 (a share of 2), then one more submitted:
    /// taken (nil) or refused, and why.
    static let lanes: [(String, [(WorkLane, WorkCaller)], (WorkLane, WorkCaller), WorkRefusal?)] = [
        ("reads fill their lane: a change still runs",
         (0..<8).map { (.reads, WorkCaller(token: "r\($0)")) }, (.changes, WorkCaller(token: "ops")), nil),
        ("reads fill their lane: a build still runs",
         (0..<8).map { (.reads, WorkCaller(token: "r\($0)")) }, (.builds, WorkCaller()), nil),
        ("changes fill their lane: a read still runs",
         (0..<8).map { (.changes, WorkCaller(token: "c\($0)")) }, (.reads, WorkCaller(token: "reader")), nil),
        ("builds are never refused",
         (0..<12).map { _ in (.builds, WorkCaller()) }, (.builds, WorkCaller()), nil),
        ("another token gets its share beside one that holds its own",
         [(.reads, WorkCaller(token: "qr", peer: alice)), (.reads, WorkCaller(token: "qr", peer: bob))], (.reads, WorkCaller(token: "ops", peer: bob)), nil),
        ("an anonymous caller from another peer gets its share",
         [(.reads, WorkCaller(peer: alice)), (.reads, WorkCaller(peer: alice))], (.reads, WorkCaller(peer: bob)), nil),
        ("a full reads lane refuses a read",
         (0..<8).map { (.reads, WorkCaller(token: "r\($0)")) }, (.reads, WorkCaller(token: "late")), .full),
        ("a full changes lane refuses a change",
         (0..<8).map { (.changes, WorkCaller(token: "c\($0)")) }, (.changes, WorkCaller(token: "late")), .full),
        ("a token past its share, whatever its peer",
         [(.reads, WorkCaller(token: "qr", peer: alice)), (.reads, WorkCaller(token: "qr", peer: bob))], (.reads, WorkCaller(token: "qr")), .overShare),
        ("a peer past its share, whatever its token",
         [(.reads, WorkCaller(token: "a", peer: alice)), (.reads, WorkCaller(token: "b", peer: alice))], (.reads, WorkCaller(token: "c", peer: alice)), .overShare),
        ("anonymous callers are known by their peer",
         [(.reads, WorkCaller(peer: alice)), (.reads, WorkCaller(peer: alice))], (.reads, WorkCaller(peer: alice)), .overShare),
        ("a token past its share of the changes lane, whatever its peer",
         [(.changes, WorkCaller(token: "mkt", peer: alice)), (.changes, WorkCaller(token: "mkt", peer: bob))],
         (.changes, WorkCaller(token: "mkt", peer: bob)), .overShare),
        ("in the changes lane a peer holds no share: an operator behind the marketer's proxy gets in",
         [(.changes, WorkCaller(token: "mkt", peer: alice)), (.changes, WorkCaller(token: "mkt", peer: alice))],
         (.changes, WorkCaller(token: "ops", peer: alice)), nil),
        ("changes fill their lane: a rollout control still runs",
         (0..<8).map { (.changes, WorkCaller(token: "c\($0)")) }, (.controls, WorkCaller(token: "ops")), nil),
        ("reads fill their lane: a rollout control still runs",
         (0..<8).map { (.reads, WorkCaller(token: "r\($0)")) }, (.controls, WorkCaller(token: "ops")), nil),
        ("a full controls lane refuses a control",
         (0..<8).map { _ in (.controls, WorkCaller(token: "ops")) }, (.controls, WorkCaller(token: "ops")), .full),
    ]

    @Test(arguments: lanes)
    func lanesAndShares(_ label: String, _ held: [(WorkLane, WorkCaller)], _ next: (WorkLane, WorkCaller), _ expected: WorkRefusal?) {
        let queue = WorkQueue(capacity: 8)
        #expect(queue.share(of: .reads) == 2 && queue.share(of: .changes) == 2)
        let large = WorkQueue(capacity: 64)
        #expect(large.share(of: .reads) == 16 && large.share(of: .changes) == 4, "a token holds a few documents' changes at once")
        let holds = WorkLane.allCases.map { lane in Hold(queue, lane, callers: held.filter { $0.0 == lane }.map(\.1)) }
        let ran = DispatchSemaphore(value: 0)
        let outcome = queue.submit(next.0, for: next.1) { ran.signal() }
        #expect(outcome == expected, "\(label)")
        for hold in holds { hold.release() }
        if outcome == nil { ran.wait() }
    }

    /// At most `documentsAtOnce` changes run at once, whatever libdispatch would start; the
    /// rest wait by token and take turns, the token whose job just ran last: a token with
    /// jobs queued delays another's by the one running, not by all (first come, first
    /// served would run a1 a2 a3 b1 c1; turns without the last going last a1 a2 b1 c1 a3).
    @Test func changesRunAFewAtOnceEachTokenInTurn() {
        let queue = WorkQueue(capacity: 64, documentsAtOnce: 1)
        let order = Mutex<[String]>([]), running = Atomic<Int>(0), most = Atomic<Int>(0)
        let first = DispatchSemaphore(value: 0), done = DispatchGroup()
        func submit(_ name: String, token: String, wait: DispatchSemaphore? = nil) {
            done.enter()
            let refusal = queue.submit(.changes, for: WorkCaller(token: token)) {
                let now = running.add(1, ordering: .relaxed).newValue
                most.max(now, ordering: .relaxed)
                wait?.wait()
                usleep(2_000)  // long enough for another job to start beside it, were one let
                order.withLock { $0.append(name) }
                running.subtract(1, ordering: .relaxed)
                done.leave()
            }
            #expect(refusal == nil, "\(name) was taken")
        }
        submit("a1", token: "a", wait: first)
        submit("a2", token: "a")
        submit("a3", token: "a")
        submit("b1", token: "b")
        submit("c1", token: "c")
        first.signal()
        done.wait()
        #expect(order.withLock { $0 } == ["a1", "b1", "c1", "a2", "a3"])
        #expect(most.load(ordering: .relaxed) == 1, "one change at a time")

        let two = WorkQueue(capacity: 64, documentsAtOnce: 2)
        let twoRunning = Atomic<Int>(0), twoMost = Atomic<Int>(0), twoDone = DispatchGroup()
        for index in 0..<16 {
            twoDone.enter()
            #expect(two.submit(.changes, for: WorkCaller(token: "t\(index % 4)")) {
                twoMost.max(twoRunning.add(1, ordering: .relaxed).newValue, ordering: .relaxed)
                usleep(5_000)
                twoRunning.subtract(1, ordering: .relaxed)
                twoDone.leave()
            } == nil)
        }
        twoDone.wait()
        #expect(twoMost.load(ordering: .relaxed) == 2, "two at once, never more")
    }

    /// A costly read whose body is a draft waits for a document's turn, like a change; one
    /// without a draft does not, and neither does a change wait for a read without one.
    @Test func aDraftTakesADocumentsTurnWhateverItsLane() {
        let queue = WorkQueue(capacity: 64, documentsAtOnce: 1)
        let held = DispatchSemaphore(value: 0), started = DispatchSemaphore(value: 0)
        #expect(queue.submit(.changes, for: WorkCaller(token: "ops")) { started.signal(); held.wait() } == nil)
        started.wait()
        let draftRan = Atomic<Bool>(false), plainRan = DispatchSemaphore(value: 0), draftDone = DispatchSemaphore(value: 0)
        #expect(queue.submit(.reads, for: WorkCaller(token: "mkt"), document: true) { draftRan.store(true, ordering: .relaxed); draftDone.signal() } == nil)
        #expect(queue.submit(.reads, for: WorkCaller(token: "mkt")) { plainRan.signal() } == nil)
        plainRan.wait()
        usleep(20_000)
        let ranEarly = draftRan.load(ordering: .relaxed)
        #expect(!ranEarly, "the draft waits while a change holds the one turn")
        held.signal()
        draftDone.wait()
    }

    /// The peers of one network (an IPv4 /24) hold at most two peers' shares of the reads
    /// lane together; a peer of another network still finds its places, and the internal
    /// readers' lane (followers, dashboards) is not the reads lane at all.
    @Test func oneNetworksPeersHoldTwoSharesOfTheReadsAndInternalReadsAreApart() {
        let queue = WorkQueue(capacity: 64, documentsAtOnce: 1)
        let gate = DispatchSemaphore(value: 0), done = DispatchGroup()
        var taken = 0
        for host in 1...8 {
            for _ in 0..<queue.share {
                let caller = WorkCaller(peer: PeerAddress(high: 0xFFFF, low: 0xC633_6400 + UInt64(host)))
                done.enter()
                if queue.submit(.reads, for: caller, { gate.wait(); done.leave() }) == nil { taken += 1 } else { done.leave() }
            }
        }
        #expect(taken == WorkQueue.networkShares * queue.share, "eight addresses of 198.51.100.0/24 hold two shares")
        let other = WorkCaller(peer: PeerAddress(high: 0xFFFF, low: 0xCB00_7107))
        #expect(queue.wouldRefuse(.reads, for: other) == nil, "another network's peer is not refused")
        let internalRan = DispatchSemaphore(value: 0)
        #expect(queue.submit(.internalReads, for: WorkCaller(token: "followers", peer: PeerAddress(high: 0xFFFF, low: 0xC633_6401))) { internalRan.signal() } == nil)
        #expect(internalRan.wait(timeout: .now() + 10) == .success, "an internal read runs while the reads lane's jobs wait")
        for _ in 0..<taken { gate.signal() }
        done.wait()
    }

    /// A dashboard's costly counts hold the internal lane; a follower's record is not behind them.
    @Test func aFollowersReadIsNotBehindTheDashboardsCounts() {
        let queue = WorkQueue(capacity: 64, documentsAtOnce: 1)
        let gate = DispatchSemaphore(value: 0), done = DispatchGroup()
        let dashboard = WorkCaller(token: "marketing", peer: PeerAddress(high: 0xFFFF, low: 0xC633_6401))
        var held = 0
        for _ in 0..<queue.share {
            done.enter()
            if queue.submit(.internalReads, for: dashboard, { gate.wait(); done.leave() }) == nil { held += 1 } else { done.leave() }
        }
        #expect(held == queue.share)
        let mirrored = DispatchSemaphore(value: 0)
        #expect(queue.submit(.replication, for: WorkCaller(token: "follower", peer: PeerAddress(high: 0xFFFF, low: 0xCB00_7101))) { mirrored.signal() } == nil)
        #expect(mirrored.wait(timeout: .now() + 10) == .success, "a follower's record runs while the dashboard's counts wait")
        for _ in 0..<held { gate.signal() }
        done.wait()
    }

    /// A replay (an impact) holds the document turn while its draft is parsed and lets the
    /// next document start as it leaves it: a change waits for the parse, not for the
    /// replay. A second replay waits for the first to end, turn or no turn.
    @Test func aReplayLeavesTheTurnAfterItsParseAndReplaysOneAtATime() {
        let queue = WorkQueue(capacity: 64, documentsAtOnce: 1)
        let parsed = DispatchSemaphore(value: 0), leave = DispatchSemaphore(value: 0), left = DispatchSemaphore(value: 0)
        let replaying = DispatchSemaphore(value: 0), finish = DispatchSemaphore(value: 0)
        #expect(queue.submitReplay(for: WorkCaller(token: "mkt"), document: true) { leaveTurn in
            parsed.signal()
            leave.wait()
            leaveTurn()
            left.signal()
            replaying.wait()
            finish.signal()
        } == nil)
        parsed.wait()
        let changeRan = DispatchSemaphore(value: 0)
        #expect(queue.submit(.changes, for: WorkCaller(token: "ops")) { changeRan.signal() } == nil)
        #expect(changeRan.wait(timeout: .now() + .milliseconds(50)) == .timedOut, "the change waits while the draft is parsed")
        let secondStarted = Atomic<Bool>(false), secondDone = DispatchSemaphore(value: 0)
        #expect(queue.submitReplay(for: WorkCaller(token: "other"), document: true) { _ in
            secondStarted.store(true, ordering: .relaxed)
            secondDone.signal()
        } == nil)
        leave.signal()
        left.wait()
        #expect(changeRan.wait(timeout: .now() + 10) == .success, "the change runs while the replay goes on")
        usleep(20_000)
        let early = secondStarted.load(ordering: .relaxed)
        #expect(!early, "a second replay waits for the first to end")
        replaying.signal()
        finish.wait()
        #expect(secondDone.wait(timeout: .now() + 10) == .success)
    }

    /// Of its share of the reads lane, a token or a peer holds at most `documentShare`
    /// document jobs (drafts, stored revisions), waiting or running: their turns come one
    /// document at a time, so a few publishing tokens' drafts would otherwise hold the whole
    /// lane while they wait. Reads without a document, and other callers' drafts, still run.
    @Test func aCallerHoldsAtMostTwoDocumentReads() {
        let queue = WorkQueue(capacity: 64, documentsAtOnce: 1)
        #expect(WorkQueue.documentShare == 2 && WorkQueue.documentPeerShare == 4)
        let held = DispatchSemaphore(value: 0), started = DispatchSemaphore(value: 0), done = DispatchGroup()
        #expect(queue.submit(.changes, for: WorkCaller(token: "ops")) { started.signal(); held.wait() } == nil)
        started.wait()
        func submit(_ caller: WorkCaller, document: Bool = true) -> WorkRefusal? {
            done.enter()
            let refusal = queue.submit(.reads, for: caller, document: document) { done.leave() }
            if refusal != nil { done.leave() }
            return refusal
        }
        let mkt = WorkCaller(token: "mkt", peer: Self.alice)
        #expect(submit(mkt) == nil && submit(mkt) == nil, "two drafts wait for their turns")
        #expect(queue.wouldRefuse(.reads, for: mkt, document: true) == .overDocumentShare)
        #expect(submit(WorkCaller(token: "mkt", peer: Self.bob)) == .overDocumentShare, "a third of the token's, from another peer")
        #expect(submit(mkt, document: false) == nil, "a read without a document is still taken")
        #expect(submit(WorkCaller(token: "other", peer: Self.bob)) == nil, "another caller's draft is taken")
        // The peer holds 2; two more tokens behind it (an office's address) hold 2 more.
        #expect(submit(WorkCaller(token: "second", peer: Self.alice)) == nil && submit(WorkCaller(token: "third", peer: Self.alice)) == nil)
        #expect(submit(WorkCaller(token: "fourth", peer: Self.alice)) == .overDocumentShare, "a fifth from the peer, whatever its token")
        #expect(submit(WorkCaller(peer: Self.alice)) == .overDocumentShare, "an anonymous caller is its peer")
        #expect(queue.refused(.reads) == 3)
        held.signal()
        done.wait()
        #expect(submit(mkt) == nil, "the places are given back as the drafts end")
        done.wait()
    }

    /// Who a job is for: the token, unless the caller has none; the connection's peer, or
    /// behind a proxy on loopback trusted with `--trust-forwarded-for`, the address it names
    /// (else every caller behind the proxy would be one peer with one share).
    static let callers: [(String, String, String?, Bool, String?, String?)] = [
        ("a token from an address", "10.0.0.9", nil, false, "mkt", "10.0.0.9"),
        ("behind a trusted proxy: the address it names", "127.0.0.1", "198.51.100.1, 203.0.113.7", true, "mkt", "203.0.113.7"),
        ("a proxy not trusted: the proxy", "127.0.0.1", "203.0.113.7", false, "mkt", "127.0.0.1"),
        ("a forwarded address from off the host is ignored", "10.0.0.9", "203.0.113.7", true, "mkt", "10.0.0.9"),
        ("anonymous: its peer alone", "127.0.0.1", "203.0.113.7", true, nil, "203.0.113.7"),
    ]

    @Test(arguments: callers)
    func workCallers(_ label: String, _ peer: String, _ forwarded: String?, _ trusted: Bool, _ token: String?, _ expected: String?) {
        var fields = [("Host", "waymark.test")]
        if let forwarded { fields.append(("X-Forwarded-For", forwarded)) }
        var head = HTTPRequestHead(method: "GET", target: "/v1/revisions/1", headers: HTTPHeaders(fields))
        head.peer = PeerAddress(written: peer)
        let caller = WorkCaller(head, actor: token ?? "anonymous", trustForwardedFor: trusted)
        #expect(caller.token == token, "\(label)")
        #expect(caller.peer == expected.flatMap(PeerAddress.init(written:)), "\(label)")
    }

    /// A document's job, once its turn comes, runs beside the reads queued before it, not
    /// behind them on a serial reads queue, where it would hold the turn while they ran.
    @Test func aDraftsTurnIsNotSpentWaitingBehindReads() {
        let queue = WorkQueue(capacity: 64, readers: 1, documentsAtOnce: 1)
        let held = DispatchSemaphore(value: 0), started = DispatchSemaphore(value: 0), draft = DispatchSemaphore(value: 0)
        #expect(queue.submit(.reads, for: WorkCaller(token: "app")) { started.signal(); held.wait() } == nil)
        started.wait()
        #expect(queue.submit(.reads, for: WorkCaller(token: "mkt"), document: true) { draft.signal() } == nil)
        let ran = draft.wait(timeout: .now() + 5) == .success
        held.signal()
        #expect(ran, "the draft ran while a read held the only reads queue")
        if !ran { draft.wait() }
    }

    @Test func revisionAndDiffAnswersAreMadeOncePerRevision() throws {
        let service = try LiveService(transport: .inProcess)
        let token = service.tokens[.routesPublish]
        #expect(service.call("POST", "/v1/revisions", token: token, headers: rev1, body: publishBody(extraRoute: "off-loop")).status == 201)
        let cache = service.api.context.revisionAnswers
        let first = service.call("GET", "/v1/revisions/1", token: token)
        let again = service.call("GET", "/v1/revisions/1", token: token)
        #expect(first.status == 200 && first.body == again.body && cache.count == 1)
        let diff = service.call("GET", "/v1/revisions/1/diff/2", token: token)
        #expect(diff.status == 200 && service.call("GET", "/v1/revisions/1/diff/2", token: token).body == diff.body && cache.count == 2)
        #expect(service.call("GET", "/v1/revisions/9", token: token).status == 404 && cache.count == 2, "a refusal is not kept")
        let notModified = service.call("GET", "/v1/revisions/1", token: token, headers: [("If-None-Match", "\"rev-1\"")])
        #expect(notModified.status == 304)
    }

    @Test func whileTheReadsLaneIsFullChangesAndBuildsAreAnswered() throws {
        let service = try LiveService(maximumQueuedWork: 4)
        let read = service.reader
        let hold = Hold(service.api.context.work, .reads, jobs: 4)
        defer { hold.release() }
        let refusedBefore = service.api.context.work.refused
        #expect(service.call("GET", "/v1/revisions/1", token: read).status == 503, "a costly read waits for its lane")
        #expect(service.call("GET", "/v1/manifest?platform=ios&version=5.2.0", token: read).status == 200, "a build is never refused")
        #expect(service.call("POST", "/v1/validate", token: service.tokens[.routesPublish], body: storefrontRoutesText).status == 200)
        let publish = service.call("POST", "/v1/revisions", token: service.tokens[.routesPublish], headers: rev1,
                                   body: publishBody(extraRoute: "lanes"))
        #expect(publish.status == 201, "\(publish.text.prefix(200))")
        let metrics = service.call("GET", "/metrics", token: service.tokens[.telemetryRead]).text
        #expect(metrics.contains("waymark_work_refused_total \(refusedBefore + 1)"))
    }

    /// A job's share is given back as its answer is handed over, not when the job returns:
    /// a client that sends its next change as it reads the answer is not refused by its own
    /// last one (`crash-test.py`'s writers, one token, were refused 503 that way).
    @Test func aShareIsGivenBackWithTheAnswer() {
        // Two changes at once: one held, the other answering.
        let queue = WorkQueue(capacity: 8, documentsAtOnce: 2)
        let marketer = WorkCaller(token: "mkt")
        let other = Hold(queue, .changes, callers: [marketer])
        defer { other.release() }
        let answered = DispatchSemaphore(value: 0), finish = DispatchSemaphore(value: 0), ended = DispatchSemaphore(value: 0)
        let responder = Responder { _ in answered.signal() }
        queue.run(responder, in: .changes, for: marketer) { answering in
            answering.respond(HTTPResponse(status: .ok, contentType: "text/plain", body: Array("ok".utf8)))
            finish.wait()  // the job goes on after its answer (a log line, a release of memory)
            ended.signal()
        }
        answered.wait()
        #expect(queue.wouldRefuse(.changes, for: marketer) == nil, "its next change is taken while the last one's job ends")
        #expect(queue.held(in: .changes, by: "mkt") == 1, "only the held job counts")
        finish.signal()
        ended.wait()
    }

    @Test func whileTheChangesLaneIsFullCachedManifestsAreServedAndChangesAre503() throws {
        let service = try LiveService(maximumQueuedWork: 1)
        let read = service.tokens[.manifestRead]
        let cached = "/v1/manifest?platform=ios&version=5.3.0"
        #expect(service.call("GET", cached, token: read).status == 200, "built once, on the work queue")
        let hold = Hold(service.api.context.work, jobs: 1)
        defer { hold.release() }
        // Hold's own retries may have been refused while the build's job was returning.
        let refusedBefore = service.api.context.work.refused

        let fetch = service.call("GET", cached, token: read)
        #expect(fetch.status == 200, "a cached view is answered on the loop: \(fetch.text.prefix(200))")
        let unbuilt = service.call("GET", "/v1/manifest?platform=ios&version=5.2.0", token: read)
        #expect(unbuilt.status == 200, "a build has its own lane: \(unbuilt.text.prefix(200))")
        let validate = service.call("POST", "/v1/validate", token: service.tokens[.routesPublish], body: storefrontRoutesText)
        #expect(validate.status == 503 && validate.errorCode == "busy" && validate["Retry-After"] == "1", "\(validate.text)")
        let publish = service.call("POST", "/v1/revisions", token: service.tokens[.routesPublish], headers: rev1,
                                   body: "{\"routes\": \(storefrontRoutesText)}")
        #expect(publish.status == 503 && publish.errorCode == "busy")
        #expect(service.store.snapshot.revisions.count == 1, "a refused publish changes nothing")
        #expect(service.call("GET", "/healthz").status == 200)
        let metrics = service.call("GET", "/metrics", token: service.tokens[.telemetryRead]).text
        #expect(metrics.contains("waymark_work_refused_total \(refusedBefore + 2)"), "\(metrics.split(separator: "\n").filter { $0.contains("work") })")

        hold.release()
        var reply = validate
        for _ in 0..<1_000 where reply.status == 503 {
            usleep(1_000)
            reply = service.call("POST", "/v1/validate", token: service.tokens[.routesPublish], body: storefrontRoutesText)
        }
        #expect(reply.status == 200, "answered once the lane is free")
    }

    @Test func aCostlyReadItsCallerCannotQueueIsRefusedAtTheHeadItsBodyUnread() throws {
        let service = try LiveService(maximumQueuedWork: 4, transport: .inProcess)
        let router = try service.api.router()
        let context = service.api.context
        func decide(_ target: String, token: String) -> HeadDecision {
            router.decide(HTTPRequestHead(method: "POST", target: target, headers: HTTPHeaders([
                ("Host", "waymark.test"), ("Authorization", "Bearer \(token)"), ("Content-Type", "application/json"), ("Content-Length", "300000")])))
        }
        let publisher = service.tokens[.routesPublish]!, reader = service.tokens[.routesRead]!
        let costly = ["/v1/revisions/1/impact", "/v1/revisions/1/diff", "/v1/resolve"]
        for target in costly {
            guard case .read = decide(target, token: publisher) else { Issue.record("\(target) is read while the caller has room"); continue }
        }
        // The publishing token holds its share of the reads lane (a quarter of 4: one).
        let hold = Hold(context.work, .reads, callers: [WorkCaller(token: "routes:publish")])
        defer { hold.release() }
        let refusedBefore = context.work.refused(.reads)
        for target in costly {
            guard case .refuse(let response) = decide(target, token: publisher) else { Issue.record("\(target) was admitted past the share"); continue }
            #expect(response.status == .serviceUnavailable && response.headers["Retry-After"] == "1", "\(target)")
            #expect(String(decoding: response.body, as: UTF8.self).contains("busy"), "\(target)")
        }
        #expect(context.work.refused(.reads) == refusedBefore + UInt64(costly.count), "refusals at the head are counted")
        guard case .read = decide("/v1/resolve", token: reader) else { Issue.record("another token's read is refused"); return }
    }

    /// A draft (a body past `WorkQueue.documentBody`) or a stored revision its caller
    /// cannot queue because it holds its two document jobs is refused at the head too;
    /// the same caller's small reads are still taken.
    @Test func aThirdDocumentIsRefusedAtTheHead() throws {
        let service = try LiveService(maximumQueuedWork: 64, transport: .inProcess)
        let router = try service.api.router()
        let context = service.api.context
        let publisher = service.tokens[.routesPublish]!
        func decide(_ method: String, _ target: String, length: Int) -> HeadDecision {
            var fields = [("Host", "waymark.test"), ("Authorization", "Bearer \(publisher)")]
            if length > 0 { fields += [("Content-Type", "application/json"), ("Content-Length", "\(length)")] }
            return router.decide(HTTPRequestHead(method: method, target: target, headers: HTTPHeaders(fields)))
        }
        let hold = Hold(context.work, .reads, callers: Array(repeating: WorkCaller(token: "routes:publish"), count: 2), document: true)
        defer { hold.release() }
        for (method, target, length) in [("POST", "/v1/resolve", 300_000), ("POST", "/v1/revisions/1/diff", 300_000),
                                         ("POST", "/v1/revisions/1/impact", 300_000), ("GET", "/v1/revisions/1", 0)] {
            guard case .refuse(let response) = decide(method, target, length: length) else { Issue.record("\(target) was admitted"); continue }
            #expect(response.status == .serviceUnavailable && String(decoding: response.body, as: UTF8.self).contains("documents"), "\(target)")
        }
        guard case .read = decide("POST", "/v1/resolve", length: 200) else { Issue.record("a small preview is refused"); return }
    }
}
