import CivilDate
import Foundation
import Synchronization
import SystemIO
#if canImport(Glibc)
import Glibc
#endif

// One file, though long: the log, its group commit, the snapshot and a follower's outbox
// share one committer thread and one lock order, which is what keeps a count once.

/// Accepted telemetry, durably: a log of batches with group commit, and the counts.
///
///     DIR/telemetry/log        frames; one fdatasync per group of batches
///     DIR/telemetry/snapshot   the counts as of a sequence number (written atomically)
///
/// `submit` queues a batch; one committer thread writes everything queued since its last
/// turn with one `pwrite` and one `fdatasync`, applies it to the counts, and only then
/// calls each batch's completion, so the cost of the sync is shared by every request in
/// flight and an acknowledged batch is on disk. When the log grows past `compactionBytes`
/// the counts are snapshotted and the log starts again from its beginning; on open the
/// log is replayed after the snapshot (frames carry sequence numbers, so a crash between
/// the two counts nothing twice).
///
/// The file is allocated ahead (zeros written and synced, 1 MB, then doubling up to
/// 8 MB at a time) and kept at its largest size: frames overwrite, never extend it, so a
/// commit's `fdatasync` flushes data only, not the inode's new size and blocks (through
/// the journal, where there is one) — half the cost of an append on this machine's
/// ext4 (110 against 230 µs for 5 KB). A scan of the log therefore stops at
/// zeros, at a frame whose sequence number does not rise (one from before the last
/// compaction), or at damage. On open, whatever follows the last whole frame is zeroed
/// (a torn group never acknowledged, or older frames), so no frame written there later
/// can be followed by an unacknowledged one that parses as its successor.
public final class TelemetryStore: Sendable {
    public struct Options: Sendable {
        public var limits = TelemetryLimits()
        /// Snapshot and empty the log once it is this large.
        public var compactionBytes = 64 << 20
        /// Seconds since 1970; tests move it.
        public var clock: @Sendable () -> Int = { Int(time(nil)) }
        /// A follower's: keep what is accepted, beside the counts, until it has been forwarded
        /// to the primary (`sealForward`, `acknowledgeForward`).
        public var forwarding = false

        public init() {}
    }

    /// What the store has done since it opened, for metrics.
    public struct Statistics: Sendable {
        public var batches: UInt64 = 0
        public var events: UInt64 = 0
        public var commits: UInt64 = 0
        public var failedCommits: UInt64 = 0
        /// Bytes of frames in the log since the last snapshot (where the next ones go).
        public var logBytes = 0
        public var compactions: UInt64 = 0
        /// A primary's: followers' forwards counted, and those already counted (retries).
        public var forwardsApplied: UInt64 = 0
        public var forwardsRepeated: UInt64 = 0
        /// A follower's: forwards sealed and acknowledged by the primary.
        public var forwardsSealed: UInt64 = 0
        public var forwardsAcknowledged: UInt64 = 0
    }

    /// Whether the log can be written: since when it cannot, and why (no path of the
    /// server's in it). Set by a failed commit; cleared by the next commit that succeeds or
    /// by the committer's own repair, which it tries every second while failing.
    public struct Health: Sendable {
        /// Seconds since 1970 of the first failure since the log was last written.
        public var failingSince: Int?
        public var error: String?

        public var writable: Bool { failingSince == nil }
    }

    /// What opening found, for the start-up log.
    public struct OpenReport: Sendable {
        public var replayedBatches = 0
        public var truncatedBytes = 0
        public var snapshotSequence: UInt64 = 0
    }

    public typealias Completion = @Sendable (Result<Void, TelemetryError>) -> Void

    /// How a batch with an id ended: counted now, or a repeat of one already accepted (or
    /// accepted while it waited), counted nothing.
    public enum Acceptance: Hashable, Sendable {
        case counted
        case duplicate
    }

    public typealias BatchCompletion = @Sendable (Result<Acceptance, TelemetryError>) -> Void

    private struct Queue {
        var frames: [UInt8] = []
        var entries: [(sequence: UInt64, entry: LogEntry)] = []
        var completions: [Completion] = []
        /// `sealForward` calls waiting for the committer.
        var seals: [@Sendable (Result<Forward?, TelemetryError>) -> Void] = []
        var nextSequence: UInt64
        var closing = false
        /// Set when a failed write could not be undone: nothing more is accepted.
        var broken: TelemetryError?
        /// Ids of batches queued or being committed, with the repeats waiting for them: a
        /// repeat is answered as its original ends (a duplicate if it was counted).
        var inFlight: [HexID: [BatchCompletion]] = [:]
    }

    static let subdirectory = "telemetry"
    static let logName = "telemetry/log"
    static let snapshotName = "snapshot"
    /// A follower's name, its last sealed forward, and the `through` the primary acknowledged.
    static let nodeName = "node"
    static let outboxName = "outbox"
    static let forwardedName = "forwarded"

    public let options: Options
    private let directory: DataDirectory
    private let logFD: Int32
    /// Where the next frames go, and the file's size; the committer's alone.
    private let logFile: Mutex<(tail: Int, allocated: Int)>
    private let queue: Mutex<Queue>
    private let counts: Mutex<Counts>
    /// A follower's counts not yet sealed into a forward (nil unless `options.forwarding`).
    private let outgoing: Mutex<Outgoing?>
    /// A follower's sealed forward the primary has not acknowledged yet.
    private let unsent: Mutex<Forward?>
    /// A follower's name for its data directory: 32 hex digits, made once.
    public let node: String?
    private let statistics = Mutex(Statistics())
    private let health = Mutex(Health())
    private let wake = DispatchSemaphore(value: 0)
    private let finished = DispatchSemaphore(value: 0)
    public let openReport: OpenReport

    /// Opens the telemetry in `directory`, replaying its log, and starts the committer.
    public init(directory: DataDirectory, options: Options = Options()) throws(TelemetryError) {
        self.directory = directory
        self.options = options
        try onDisk { () throws(IOError) in
            try directory.makeSubdirectory(Self.subdirectory)
            _ = try directory.removeStaleTemporaries(in: [Self.subdirectory])
        }
        var report = OpenReport()
        var counts = Counts(limits: options.limits)
        var snapshotOutgoing: Outgoing?
        let snapshotPath = Self.subdirectory + "/" + Self.snapshotName
        if directory.exists(snapshotPath) {
            let bytes = try onDisk { () throws(IOError) in try directory.read(snapshotPath) }
            guard let restored = bytes.withUnsafeBytes({ SnapshotCodec.decodeWithOutgoing($0, limits: options.limits) }) else {
                throw .damaged(file: "\(directory.path)/\(snapshotPath)", reason: "its checksum or layout is wrong; "
                    + "move it aside to start with no telemetry history, or restore it from a backup.")
            }
            counts = restored.counts
            snapshotOutgoing = restored.outgoing
            report.snapshotSequence = restored.counts.lastSequence
        }
        let logPath = directory.path + "/" + Self.logName
        let fd = try onDisk { () throws(IOError) in try FileSystem.open(logPath, O_RDWR | O_CREAT) }
        logFD = fd
        let log = try onDisk { () throws(IOError) in try directory.read(Self.logName) }
        let (frames, validLength, end) = log.withUnsafeBytes { Frame.scan($0) }
        if let last = log.lastIndex(where: { $0 != 0 }), last >= validLength {
            // Zero what follows the whole frames: a torn group was never acknowledged, and
            // older frames are in the snapshot.
            try onDisk { () throws(IOError) in
                try Self.writeZeros(fd, from: validLength, to: last + 1, logPath)
                try FileSystem.fdatasync(fd, path: logPath)
            }
            if end == .damaged { report.truncatedBytes = last + 1 - validLength }
        }
        logFile = Mutex((tail: validLength, allocated: log.count))
        let now = options.clock()
        let highest = frames.reduce(counts.lastSequence) { max($0, $1.sequence) }
        var outgoing: Outgoing?
        var unsent: Forward?
        if options.forwarding {
            let forwarding = try Self.openForwarding(directory, highest: highest, limits: options.limits, snapshot: snapshotOutgoing)
            node = forwarding.node
            outgoing = forwarding.outgoing
            unsent = forwarding.unsent
        } else {
            node = nil
        }
        for frame in frames where frame.sequence > counts.lastSequence {
            counts.apply(frame.entry, sequence: frame.sequence, now: now)
            if case .batch(let batch) = frame.entry, let after = outgoing?.after, frame.sequence > after {
                outgoing?.pending.apply(batch, sequence: frame.sequence, now: now)
            }
            report.replayedBatches += 1
        }
        counts.prune(now: now)
        outgoing?.pending.prune(now: now)
        self.counts = Mutex(counts)
        self.outgoing = Mutex(outgoing)
        self.unsent = Mutex(unsent)
        queue = Mutex(Queue(nextSequence: highest + 1))
        openReport = report
        if validLength > 0 { try compact() }
        let thread = Thread { [self] in commitLoop() }
        thread.name = "waymark-commit"
        thread.start()
    }

    deinit {
        FileSystem.close(logFD)
    }

    /// Queues a parsed batch; `completion` runs on the committer thread once the batch is
    /// durable and counted, or failed. A batch with no accepted events (nor shapes) completes at once.
    public func submit(_ batch: Batch, completion: @escaping Completion) {
        guard !batch.tallies.isEmpty || !batch.shapes.isEmpty else { return completion(.success(())) }
        var batch = batch
        if batch.acceptedMinute == 0 { batch.acceptedMinute = Int32(clamping: options.clock() / 60) }
        submit(.batch(batch), completion: completion)
    }

    /// Queues a batch that may carry an id, the same way; a repeat of a batch this store
    /// remembers (`Counts.batchIDs`), or of one still in flight, counts nothing and ends
    /// `.duplicate` — the one in flight first: if it fails, so does the repeat.
    public func submitOnce(_ batch: Batch, completion: @escaping BatchCompletion) {
        guard let id = batch.id else { return submit(batch) { completion($0.map { .counted }) } }
        var batch = batch
        batch.acceptedMinute = Int32(clamping: options.clock() / 60)
        enum Decision { case refused(TelemetryError), waiting, known, empty, queued }
        let decision: Decision = queue.withLock { queue in
            if let broken = queue.broken { return .refused(broken) }
            if queue.closing { return .refused(.closing) }
            if queue.inFlight[id] != nil {
                queue.inFlight[id]!.append(completion)
                return .waiting
            }
            if counts.withLock({ $0.batchIDs.contains(id) }) { return .known }
            guard !batch.tallies.isEmpty || !batch.shapes.isEmpty else { return .empty }
            queue.inFlight[id] = []
            return .queued
        }
        switch decision {
        case .refused(let error): return completion(.failure(error))
        case .waiting: return
        case .known: return completion(.success(.duplicate))
        case .empty: return completion(.success(.counted))  // nothing to count, nothing to remember
        case .queued: break
        }
        submit(.batch(batch)) { [self] result in
            completion(result.map { .counted })
            let repeats = queue.withLock { $0.inFlight.removeValue(forKey: id) ?? [] }
            for waiting in repeats { waiting(result.map { .duplicate }) }
        }
    }

    /// Queues a follower's forward, the same way: once durable it is counted, unless this
    /// store counted the same `(node, through)` before (a retry), when it only completes.
    public func submit(_ forward: Forward, completion: @escaping Completion) {
        submit(.forward(forward), completion: completion)
    }

    private func submit(_ entry: LogEntry, completion: @escaping Completion) {
        let refusal: TelemetryError? = queue.withLock { queue in
            if let broken = queue.broken { return broken }
            if queue.closing { return .closing }
            Frame.encode(entry, sequence: queue.nextSequence, into: &queue.frames)
            queue.entries.append((queue.nextSequence, entry))
            queue.completions.append(completion)
            queue.nextSequence += 1
            return nil
        }
        if let refusal { return completion(.failure(refusal)) }
        wake.signal()
    }

    /// Runs `body` on the counts as they are now.
    public func read<T>(_ body: (borrowing Counts) -> T) -> T {
        counts.withLock { body($0) }
    }

    public var currentHealth: Health { health.withLock { $0 } }

    public var currentStatistics: Statistics {
        var current = statistics.withLock { $0 }
        current.logBytes = logFile.withLock { $0.tail }
        return current
    }

    /// Commits what is queued, stops the committer and waits for it. Later calls return at once.
    public func close() {
        let wasClosing = queue.withLock { queue in
            defer { queue.closing = true }
            return queue.closing
        }
        guard !wasClosing else { return }
        wake.signal()
        finished.wait()
    }

    // MARK: Writing

    private static let terminator = [UInt8](repeating: 0, count: 8)

    static func writeZeros(_ fd: Int32, from start: Int, to end: Int, _ path: String) throws(IOError) {
        let zeros = [UInt8](repeating: 0, count: min(1 << 20, max(0, end - start)))
        var offset = start
        while offset < end {
            let piece = min(zeros.count, end - offset)
            try FileSystem.writeAll(fd, piece == zeros.count ? zeros : Array(zeros[0..<piece]), at: offset, path: path)
            offset += piece
        }
    }

    // MARK: The committer

    private func commitLoop() {
        var lastPrune = options.clock()
        while true {
            // While the log cannot be written, wake every second to repair it: telemetry
            // recovers when space returns even if no client is posting.
            let failing = !health.withLock { $0.writable }
            _ = wake.wait(timeout: .now() + .seconds(failing ? 1 : 30))
            let (frames, entries, completions, seals, closing) = queue.withLock { queue in
                defer {
                    queue.frames.removeAll(keepingCapacity: true)
                    queue.entries.removeAll(keepingCapacity: true)
                    queue.completions.removeAll(keepingCapacity: true)
                    queue.seals.removeAll()
                }
                return (queue.frames, queue.entries, queue.completions, queue.seals, queue.closing)
            }
            if !frames.isEmpty { commit(frames, entries, completions) }
            if !health.withLock({ $0.writable }) { repair() }
            if !seals.isEmpty {
                let sealed = Result { () throws(TelemetryError) in try seal() }
                for answer in seals { answer(sealed) }
            }
            let now = options.clock()
            if now - lastPrune >= 60 {
                counts.withLock { $0.prune(now: now) }
                outgoing.withLock { $0?.pending.prune(now: now) }
                lastPrune = now
            }
            if closing, frames.isEmpty {
                finished.signal()
                return
            }
        }
    }

    private func commit(_ frames: [UInt8], _ entries: [(sequence: UInt64, entry: LogEntry)], _ completions: [Completion]) {
        let logPath = directory.path + "/" + Self.logName
        let (tail, allocated) = logFile.withLock { $0 }
        do throws(IOError) {
            // The frames and eight zero bytes after them, so that a scan ends at zeros rather
            // than in the middle of an older frame (the next commit overwrites them).
            var written = frames
            written.append(contentsOf: Self.terminator)
            if tail + written.count > allocated {
                var size = allocated
                while size < tail + written.count { size += min(max(size, 1 << 20), 8 << 20) }
                try Self.writeZeros(logFD, from: allocated, to: size, logPath)
                logFile.withLock { $0.allocated = size }
            }
            try FileSystem.writeAll(logFD, written, at: tail, path: logPath)
            try FileSystem.fdatasync(logFD, path: logPath)
            logFile.withLock { $0.tail = tail + frames.count }
        } catch {
            // Cut what may have been written so a replay cannot count what was refused:
            // shrinking the file needs no space, so this works on a full disk too.
            let failure = TelemetryError.io(error)
            let now = options.clock()
            health.withLock { health in
                if health.failingSince == nil { health.failingSince = now }
                health.error = error.withoutPath
            }
            do throws(IOError) {
                try FileSystem.truncate(logFD, to: tail, path: logPath)
                try FileSystem.fsync(logFD, path: logPath)
                logFile.withLock { $0.allocated = tail }
            } catch {
                queue.withLock { $0.broken = .unrepaired(error) }
            }
            statistics.withLock { $0.failedCommits += 1 }
            for completion in completions { completion(.failure(failure)) }
            return
        }
        if !health.withLock({ $0.writable }) { health.withLock { $0 = Health() } }
        let now = options.clock()
        var events: UInt64 = 0, batches: UInt64 = 0, applied: UInt64 = 0, repeated: UInt64 = 0
        counts.withLock { counts in
            for (sequence, entry) in entries {
                switch entry {
                case .batch(let batch):
                    counts.apply(batch, sequence: sequence, now: now, live: true)
                    events += UInt64(batch.tallies.count)
                    batches += 1
                case .forward(let forward):
                    if counts.apply(forward, sequence: sequence, now: now) { applied += 1 } else { repeated += 1 }
                }
            }
        }
        outgoing.withLock { outgoing in
            guard outgoing != nil else { return }
            for case (let sequence, .batch(let batch)) in entries { outgoing!.pending.apply(batch, sequence: sequence, now: now) }
        }
        statistics.withLock { statistics in
            statistics.batches += batches
            statistics.events += events
            statistics.commits += 1
            statistics.forwardsApplied += applied
            statistics.forwardsRepeated += repeated
        }
        for completion in completions { completion(.success(())) }
        if tail + frames.count >= options.compactionBytes {
            do { try compact() } catch {
                // The log keeps growing and stays correct; the next commit tries again.
            }
        }
    }

    /// After a failed commit: cut the log back to its last whole frame (again, if that
    /// failed before) and allocate room ahead; once both succeed the log is writable again
    /// and batches are accepted. Zeros past the tail are what allocation writes anyway, so
    /// a repair that fails halfway leaves nothing a replay would read.
    private func repair() {
        let logPath = directory.path + "/" + Self.logName
        let tail = logFile.withLock { $0.tail }
        do throws(IOError) {
            try FileSystem.truncate(logFD, to: tail, path: logPath)
            let size = tail + (1 << 20)
            try Self.writeZeros(logFD, from: tail, to: size, logPath)
            try FileSystem.fsync(logFD, path: logPath)
            logFile.withLock { $0.allocated = size }
            queue.withLock { $0.broken = nil }
            health.withLock { $0 = Health() }
        } catch {
            health.withLock { $0.error = error.withoutPath }
        }
    }

    /// Writes the counts as a snapshot, then starts the log again from its beginning (the
    /// frames there are all in the snapshot). Only the committer (or the initializer,
    /// before it starts) calls this, so no frame is written in between.
    private func compact() throws(TelemetryError) {
        let pending = outgoing.withLock { $0 }
        // Encoded from a copy taken under the lock (every table shared, nothing copied): the
        // committer is the only writer of the counts, so nothing is written while it encodes,
        // and a batch arriving meanwhile checks its id without waiting for the encoding.
        let copy = counts.withLock { $0 }
        let bytes = SnapshotCodec.encode(copy, outgoing: pending)
        try onDisk { () throws(IOError) in try directory.writeDurably(bytes, subdirectory: Self.subdirectory, name: Self.snapshotName, replacing: true) }
        logFile.withLock { $0.tail = 0 }
        statistics.withLock { $0.compactions += 1 }
    }

    // MARK: Forwarding (a follower's)

    /// A follower's name, sealed forward and pending counts as the files and the snapshot
    /// left them. Of the snapshot's pending counts, only those after the last sealed
    /// forward are still pending: a forward sealed after the snapshot already holds them.
    private static func openForwarding(_ directory: DataDirectory, highest: UInt64, limits: TelemetryLimits,
                                       snapshot: Outgoing?) throws(TelemetryError) -> (node: String, outgoing: Outgoing, unsent: Forward?) {
        let nodePath = subdirectory + "/" + nodeName, forwardedPath = subdirectory + "/" + forwardedName
        let outboxPath = subdirectory + "/" + outboxName
        var acknowledged: UInt64 = 0
        let node: String
        if directory.exists(nodePath) {
            node = String(decoding: try onDisk { () throws(IOError) in try directory.read(nodePath) }, as: UTF8.self)
                .trimmingCharacters(in: .whitespacesAndNewlines)
            guard node.utf8.count == Forward.nodeLength else { throw .damaged(file: "\(directory.path)/\(nodePath)", reason: "not a node name.") }
            if directory.exists(forwardedPath) {
                let text = String(decoding: try onDisk { () throws(IOError) in try directory.read(forwardedPath) }, as: UTF8.self)
                    .trimmingCharacters(in: .whitespacesAndNewlines)
                guard let through = UInt64(text) else { throw .damaged(file: "\(directory.path)/\(forwardedPath)", reason: "not a sequence number.") }
                acknowledged = through
            }
        } else {
            // Newly a follower: what was accepted before is this node's own, never forwarded.
            var generator = SystemRandomNumberGenerator()
            node = (0..<16).map { _ in UInt8.random(in: 0...255, using: &generator) }.map { zeroPadded(String($0, radix: 16), width: 2) }.joined()
            acknowledged = highest
            try onDisk { () throws(IOError) in
                try directory.writeDurably(Array("\(acknowledged)\n".utf8), subdirectory: subdirectory, name: forwardedName, replacing: true)
                try directory.writeDurably(Array((node + "\n").utf8), subdirectory: subdirectory, name: nodeName, replacing: true)
            }
        }
        var unsent: Forward?
        if directory.exists(outboxPath) {
            switch Forward.decode(try onDisk { () throws(IOError) in try directory.read(outboxPath) }) {
            case .success(let forward) where forward.through > acknowledged: unsent = forward
            case .success: break  // acknowledged before the crash
            case .failure(let error):
                throw .damaged(file: "\(directory.path)/\(outboxPath)", reason: "\(error.message); it holds counts not yet forwarded to the primary.")
            }
        }
        let after = max(acknowledged, unsent?.through ?? 0, snapshot?.after ?? 0)
        let pending = snapshot.flatMap { $0.after == after ? $0.pending : nil } ?? Counts(limits: limits)
        return (node, Outgoing(pending: pending, after: after), unsent)
    }

    /// A follower's forward that is sealed but not acknowledged: send it (again) first.
    public var unacknowledgedForward: Forward? { unsent.withLock { $0 } }

    /// The counts accepted since the last forward, sealed into a new one: durable in the
    /// outbox before it is returned, and no longer pending. Returns the unacknowledged
    /// forward instead while there is one, and nil when nothing is pending.
    public func sealForward() throws(TelemetryError) -> Forward? {
        guard node != nil else { return nil }
        let answer = Mutex<Result<Forward?, TelemetryError>?>(nil)
        let done = DispatchSemaphore(value: 0)
        let refused: TelemetryError? = queue.withLock { queue in
            if let broken = queue.broken { return broken }
            if queue.closing { return .closing }
            queue.seals.append { result in
                answer.withLock { $0 = result }
                done.signal()
            }
            return nil
        }
        if let refused { throw refused }
        wake.signal()
        done.wait()
        return try answer.withLock { $0! }.get()
    }

    /// On the committer, between commits: nothing is applied while the outbox is written.
    private func seal() throws(TelemetryError) -> Forward? {
        if let unsent = unsent.withLock({ $0 }) { return unsent }
        guard let node, let current = outgoing.withLock({ $0 }), !current.pending.isEmpty else { return nil }
        let through = counts.withLock { $0.lastSequence }
        let forward = Forward(node: Array(node.utf8), through: through, batches: current.pending.batches())
        try onDisk { () throws(IOError) in try directory.writeDurably(forward.encoded, subdirectory: Self.subdirectory, name: Self.outboxName, replacing: true) }
        outgoing.withLock { $0 = Outgoing(pending: Counts(limits: options.limits), after: through) }
        unsent.withLock { $0 = forward }
        statistics.withLock { $0.forwardsSealed += 1 }
        return forward
    }

    /// The primary has the forward: it is never sent again, even after a restart.
    public func acknowledgeForward(_ forward: Forward) throws(TelemetryError) {
        try onDisk { () throws(IOError) in try directory.writeDurably(Array("\(forward.through)\n".utf8), subdirectory: Self.subdirectory, name: Self.forwardedName, replacing: true) }
        unsent.withLock { if $0?.through == forward.through { $0 = nil } }
        statistics.withLock { $0.forwardsAcknowledged += 1 }
    }

    /// A follower's events accepted and not yet acknowledged by the primary.
    public var eventsNotForwarded: UInt64 {
        let pending = outgoing.withLock { $0?.pending.totalEvents ?? 0 }
        return pending + (unsent.withLock { $0?.events } ?? 0)
    }
}

