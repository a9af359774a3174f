import Dispatch
import HTTPCore
import HTTPServer
import Synchronization
import SystemIO

/// Where the CPU work a request causes runs — validating a document, building a build's
/// view, reading a revision, a diff, a preview — so that no event loop spends more than a
/// lookup on any request and a slow document never delays the next connection.
///
/// Six lanes (`WorkLane`), below the loops' priority, so that one kind of caller cannot
/// starve another: reads never fill the lane changes run in, documents never fill the lane
/// rollout controls run in, building what a new generation serves is never refused, and
/// the costly reads anyone with a read token can multiply (QR codes) never delay the
/// operators' own readers (followers' revision records, the dashboards' counts: a serial
/// queue of their own, shared the same way).
/// Changes and builds run on concurrent queues; controls on a serial one, which gets a
/// thread even while every pooled thread is busy; reads on one serial queue per core but
/// one (at least one), so that however many reads are queued, a thread is left for a
/// change or a build. Changes, controls and costly reads each hold at most
/// `capacity` jobs waiting or running; in the reads lane one caller (a token) and one peer
/// (an IPv4 address, an IPv6 /64) hold at most `share` of them, and in the changes lane
/// one token at most `changesShare` (`WorkLane.sharer`), so one marketer validating large
/// documents leaves places, and turns, for everyone else. A job's place is given back as
/// its answer is handed over (`run`), not after: a client sending one request after
/// another never finds its own last one still holding it. One more is
/// refused with `503` and `Retry-After` rather than queued without bound
/// (`waymark_work_refused_total{lane}`).
///
/// Of the jobs that parse a document — every change, a costly read whose body is a draft
/// (more than `documentBody` bytes: a preview, a diff, an impact) or that reads a stored
/// one (a revision, a diff of two, a schedule's routes), a scheduled publish firing — at
/// most `documentsAtOnce` run at once (`DocumentTurns`), whatever their lane, on the
/// changes' concurrent queue:
/// each holds a parsed document while it validates it (a hundred MB for the worst a
/// request may send), so that, not the number of threads libdispatch happens to start,
/// bounds what documents cost (docs/operations.md, "Memory"). The rest wait without a
/// thread, one queue per token taken in turn, so a token with four documents queued
/// delays another's change by the one running, not by four.
final class WorkQueue: Sendable {
    /// Jobs each bounded lane may hold waiting or running.
    let capacity: Int
    /// Of the reads lane's `capacity`, what one token or one peer may hold.
    let share: Int
    /// What one token may hold of the changes lane: 4, a few documents queued (each may
    /// take a second of CPU); they take their turns with other tokens' (`DocumentTurns`).
    let changesShare: Int
    /// Of a caller's share of the reads lane, how many may be document jobs (a draft
    /// previewed, diffed or replayed; a stored revision or schedule read): 2. They wait for
    /// their turns (`DocumentTurns`) while holding their places, so with the whole share a
    /// few publishing tokens' drafts would fill the lane and leave QR codes, revision
    /// lists and followers' reads `503`; the console sends one at a time.
    static let documentShare = 2
    /// What one peer may hold of them: 4, so a few marketers behind one office's address
    /// preview at once.
    static let documentPeerShare = 4
    /// Peers' shares the peers of one network hold together in the reads lane: 2, as for
    /// request bodies (`BodyBudget.perNetwork`).
    static let networkShares = 2
    /// The lanes, by `WorkLane.rawValue`.
    let lanes: [Lane]
    private let turns: DocumentTurns
    /// Replays (`submitReplay`) one at a time, whoever asks.
    private let replays = DocumentTurns(atOnce: 1)
    /// Jobs held per token and per peer in each shared lane (`WorkLane.isShared`), only
    /// while they hold some.
    private let held = Mutex<[Shares]>(Array(repeating: Shares(), count: WorkLane.allCases.count))
    /// What is pending across the lanes, for releasing memory when all fall quiet.
    private let pendingAll = Atomic<Int>(0)

    /// `readers`: how many reads may run at once (default: one per core but one, at least one);
    /// `documentsAtOnce`: how many jobs parsing a document (default: one).
    init(capacity: Int, readers: Int = max(1, System.coreCount - 1), documentsAtOnce: Int = 1) {
        self.capacity = capacity
        share = max(1, capacity / 4)
        changesShare = min(share, 4)
        turns = DocumentTurns(atOnce: max(1, documentsAtOnce))
        // Changes and builds are few and someone waits on each (an operator, every phone
        // after a publish): above the reads, which anyone with a read token can multiply.
        lanes = [Lane("changes", qos: .userInitiated), Lane("builds", qos: .userInitiated),
                 Lane("reads", qos: .utility, serial: max(1, readers)),
                 // Serial: a serial queue gets a thread of its own (libdispatch's overcommit
                 // pool) when the pool's threads are all busy with documents; a concurrent
                 // one waits behind their queued jobs (an abort took 4-6 s behind one
                 // marketer's validations). Controls are short, and the store takes them one
                 // at a time anyway.
                 Lane("controls", qos: .userInitiated, serial: 1),
                 // Serial, one: counts and revision records take milliseconds, and a thread of
                 // its own is what the QR codes queued in the reads lane cannot take from them.
                 Lane("internal", qos: .utility, serial: 1),
                 // Serial, one: a follower asks one record at a time, and each is a file read.
                 Lane("replication", qos: .utility, serial: 1)]
    }

    /// Jobs waiting or running now, in all lanes.
    var queued: Int { pendingAll.load(ordering: .relaxed) }
    /// Jobs waiting or running now in `lane`.
    func queued(_ lane: WorkLane) -> Int { lanes[lane.rawValue].pending.load(ordering: .relaxed) }
    /// What one caller may hold of `lane`.
    func share(of lane: WorkLane) -> Int { lane == .changes ? changesShare : share }
    /// Jobs refused in `lane` since start (a full lane, or a caller past its share).
    func refused(_ lane: WorkLane) -> UInt64 { lanes[lane.rawValue].refused.load(ordering: .relaxed) }
    /// Jobs refused in all lanes since start.
    var refused: UInt64 { lanes.reduce(0) { $0 + $1.refused.load(ordering: .relaxed) } }
    /// Reads `token` holds now (tests).
    func reads(heldBy token: String) -> Int { held(in: .reads, by: token) }
    /// Jobs `token` holds now in `lane` (tests).
    func held(in lane: WorkLane, by token: String) -> Int { held.withLock { $0[lane.rawValue].tokens[token, default: 0] } }

    /// Runs `job` off the loop in `lane`; the reason it was not run (nothing run) when the
    /// lane is full or, in a shared lane, `caller` holds its share.
    func submit(_ lane: WorkLane, for caller: WorkCaller = WorkCaller(), document: Bool = false,
                _ job: @escaping @Sendable () -> Void) -> WorkRefusal? {
        submit(lane, for: caller, document: document, releasing: { _ in job() })
    }

    /// A body larger than this makes a costly read a document in work (a draft): it waits
    /// for a document's turn. Smaller ones (a URL to preview, a short draft) parse into
    /// little.
    static let documentBody = 64 << 10

    /// Runs `job` on `queue` when a document's turn comes: a lane's document job, or one
    /// outside any lane (a scheduled publish firing). What the document's parse freed goes
    /// back before the next one is parsed, perhaps on another thread and so in another
    /// malloc arena, where it would be added to what this one keeps (311 MB at peak where
    /// one document in work measures 121 MB, `documents_in_work`).
    func whenDocumentTurn(for holder: String, on queue: DispatchQueue, _ job: @escaping @Sendable () -> Void) {
        whenDocumentTurn(for: holder, on: queue) { _ in job() }
    }

    /// `whenDocumentTurn`, with `job` given what leaves the turn before it ends: a job whose
    /// document is parsed and checked, and whose remaining work holds only what it decoded,
    /// lets the next document start (a replay, `submit(replay:)`).
    private func whenDocumentTurn(for holder: String, on queue: DispatchQueue,
                                  leaving job: @escaping @Sendable (_ leaveTurn: @escaping @Sendable () -> Void) -> Void) {
        turns.enqueue(for: holder) { next in
            queue.async {
                let left = Once()
                let leave: @Sendable () -> Void = {
                    guard left.first() else { return }
                    Memory.releaseFree()
                    next()
                }
                job(leave)
                leave()
            }
        }
    }

    /// `submit`, with `job` given what gives its caller's share back: called when its answer
    /// is handed over, so a client that sends its next request as it reads the answer finds
    /// its place free (and is not refused because the job had not yet returned); called
    /// again, to no effect, when the job ends.
    /// `document`: the job parses a document (every change does), so it waits for a turn.
    func submit(_ lane: WorkLane, for caller: WorkCaller = WorkCaller(), document: Bool = false,
                releasing job: @escaping @Sendable (_ releaseShare: @escaping @Sendable () -> Void) -> Void) -> WorkRefusal? {
        submit(lane, for: caller, document: document, replay: false) { releaseShare, _ in job(releaseShare) }
    }

    /// A replay (a draft's impact): a costly read whose document is parsed and checked in a
    /// document's turn, and whose long part — replaying a week of traffic against what it
    /// decoded — runs after `leaveTurn`, so a change waits for the draft's parse, not for the
    /// replay. Replays take a turn of their own first (`replays`, one at a time), so at most
    /// one decoded draft is held outside the document turns (docs/operations.md, "Memory").
    func submitReplay(for caller: WorkCaller, document: Bool,
                      _ job: @escaping @Sendable (_ leaveTurn: @escaping @Sendable () -> Void) -> Void) -> WorkRefusal? {
        submit(.reads, for: caller, document: document, replay: true) { _, leaveTurn in job(leaveTurn) }
    }

    private func submit(_ lane: WorkLane, for caller: WorkCaller, document: Bool, replay: Bool,
                        job: @escaping @Sendable (_ releaseShare: @escaping @Sendable () -> Void, _ leaveTurn: @escaping @Sendable () -> Void) -> Void) -> WorkRefusal? {
        let caller = lane.sharer(caller)
        let slot = lanes[lane.rawValue]
        if lane != .builds {
            guard slot.pending.add(1, ordering: .acquiringAndReleasing).newValue <= capacity else {
                slot.pending.subtract(1, ordering: .relaxed)
                slot.refused.add(1, ordering: .relaxed)
                return .full
            }
        } else {
            // Never refused: at most one per connection waits (its request is in flight),
            // and a job queued behind the one that builds finds what it built.
            slot.pending.add(1, ordering: .relaxed)
        }
        let countsDocument = document && lane == .reads
        if lane.isShared, let refusal = takeShare(caller, in: lane, document: countsDocument) {
            slot.pending.subtract(1, ordering: .relaxed)
            slot.refused.add(1, ordering: .relaxed)
            return refusal
        }
        pendingAll.add(1, ordering: .relaxed)
        // A document's job runs on the changes' concurrent queue whatever its lane: on a
        // serial reads queue it would hold its turn while the reads queued there ran first.
        let queue = lane == .changes || document ? lanes[WorkLane.changes.rawValue].queue : slot.queue
        let given = Once()
        let release: @Sendable () -> Void = { [self] in
            if lane.isShared, given.first() { giveShare(caller, in: lane, document: countsDocument) }
        }
        let run: @Sendable (_ leaveTurn: @escaping @Sendable () -> Void) -> Void = { [self] leaveTurn in
            job(release, leaveTurn)
            release()
            slot.pending.subtract(1, ordering: .relaxed)
            if pendingAll.subtract(1, ordering: .relaxed).newValue == 0 { releaseMemory(on: lanes[WorkLane.builds.rawValue].queue) }
        }
        // Peers are named with a space, which no token name holds (`TokenRecord.isValidName`).
        let holder = caller.token ?? caller.peer.map { "peer \($0)" } ?? ""
        if replay {
            // The replay's turn first, then (a draft) the document's: a replay waiting for the
            // one before it holds no document turn and has decoded nothing.
            replays.enqueue(for: holder) { [self] leaveReplay in
                let replayRun: @Sendable (_ leaveTurn: @escaping @Sendable () -> Void) -> Void = { leaveTurn in
                    run(leaveTurn)
                    leaveReplay()
                }
                if document { whenDocumentTurn(for: holder, on: queue, leaving: replayRun) } else { queue.async { replayRun {} } }
            }
        } else if lane == .changes || document {
            whenDocumentTurn(for: holder, on: queue, leaving: run)
        } else {
            queue.async { run {} }
        }
        return nil
    }

    /// Takes one of `lane`'s places for `caller`'s token and peer (a document job's too);
    /// the refusal (nothing taken) when either holds its share. Anonymous and public
    /// callers are one peer each.
    private func takeShare(_ caller: WorkCaller, in lane: WorkLane, document: Bool) -> WorkRefusal? {
        held.withLock { lanes -> WorkRefusal? in
            if lanes[lane.rawValue].holdsShare(caller, share(of: lane), byNetwork: lane == .reads) { return .overShare }
            if document, lanes[lane.rawValue].holdsDocuments(caller) { return .overDocumentShare }
            lanes[lane.rawValue].add(caller, 1, document: document, byNetwork: lane == .reads)
            return nil
        }
    }

    private func giveShare(_ caller: WorkCaller, in lane: WorkLane, document: Bool) {
        held.withLock { $0[lane.rawValue].add(caller, -1, document: document, byNetwork: lane == .reads) }
    }

    /// Monotonic nanoseconds of the last `Memory.releaseFree`, and whether one is due.
    private let lastRelease = Atomic<UInt64>(0)
    private let releaseScheduled = Atomic<Bool>(false)

    /// When the lanes fall quiet, at most once a second: what their jobs freed (a document's
    /// parse, a resolver) goes back to the system instead of staying in malloc's arenas.
    /// A moment later, not at once: the job's request and answer are freed only after it
    /// returns, on the loop that writes the answer.
    private func releaseMemory(on queue: DispatchQueue) {
        guard releaseScheduled.compareExchange(expected: false, desired: true, ordering: .acquiringAndReleasing).exchanged else { return }
        let now = DispatchTime.now().uptimeNanoseconds
        let due = max(now + 200_000_000, lastRelease.load(ordering: .relaxed) + 1_000_000_000)
        queue.asyncAfter(deadline: DispatchTime(uptimeNanoseconds: due)) { [self] in
            if pendingAll.load(ordering: .relaxed) == 0 {
                Memory.releaseFree()
                lastRelease.store(DispatchTime.now().uptimeNanoseconds, ordering: .relaxed)
            }
            releaseScheduled.store(false, ordering: .releasing)
        }
    }

    /// Why a job for `caller` in `lane` would be refused now (nil: it would be taken). Read
    /// at the end of a request's head, so a costly read past its share is refused before a
    /// byte of its body is read; `submit` decides again when the job comes.
    /// `document`: the job would be a document job (`submit`).
    func wouldRefuse(_ lane: WorkLane, for caller: WorkCaller, document: Bool = false) -> WorkRefusal? {
        guard lane != .builds else { return nil }
        if lanes[lane.rawValue].pending.load(ordering: .relaxed) >= capacity { return .full }
        guard lane.isShared else { return nil }
        let caller = lane.sharer(caller)
        return held.withLock { lanes -> WorkRefusal? in
            if lanes[lane.rawValue].holdsShare(caller, share(of: lane), byNetwork: lane == .reads) { return .overShare }
            if document, lane == .reads, lanes[lane.rawValue].holdsDocuments(caller) { return .overDocumentShare }
            return nil
        }
    }
}

/// True the first time it is asked, from any thread.
private final class Once: Sendable {
    private let done = Atomic<Bool>(false)

    func first() -> Bool { !done.exchange(true, ordering: .acquiringAndReleasing) }
}
