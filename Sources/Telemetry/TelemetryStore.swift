import Foundation
import ManifestStore
import Synchronization
#if canImport(Glibc)
import Glibc
#endif

/// Accepted telemetry, durably: a log of batches with group commit, and the counts.
///
///     DIR/telemetry/log        frames, appended; one fdatasync per group of batches
///     DIR/telemetry/snapshot   the counts as of a sequence number (written atomically)
///
/// `submit` queues a batch; one committer thread writes everything queued since its last
/// turn with one `write` and one `fdatasync`, applies it to the counts, and only then calls
/// each batch's completion, so the cost of the sync is shared by every request in flight
/// and an acknowledged batch is on disk. When the log grows past `compactionBytes` the
/// counts are snapshotted and the log emptied; on open the log is replayed after the
/// snapshot (frames carry sequence numbers, so a crash between the two counts nothing
/// twice) and a torn tail — a batch never acknowledged — is cut off.
public final class TelemetryStore: Sendable {
    public struct Options: Sendable {
        public var limits = TelemetryLimits()
        /// Snapshot and empty the log once it is this large.
        public var compactionBytes = 64 << 20
        /// Seconds since 1970; tests move it.
        public var clock: @Sendable () -> Int = { Int(time(nil)) }

        public init() {}
    }

    /// What the store has done since it opened, for metrics.
    public struct Statistics: Sendable {
        public var batches: UInt64 = 0
        public var events: UInt64 = 0
        public var commits: UInt64 = 0
        public var failedCommits: UInt64 = 0
        public var logBytes = 0
        public var compactions: UInt64 = 0
    }

    /// What opening found, for the start-up log.
    public struct OpenReport: Sendable {
        public var replayedBatches = 0
        public var truncatedBytes = 0
        public var snapshotSequence: UInt64 = 0
    }

    public typealias Completion = @Sendable (Result<Void, StoreError>) -> Void

    private struct Queue {
        var frames: [UInt8] = []
        var batches: [(sequence: UInt64, batch: Batch)] = []
        var completions: [Completion] = []
        var nextSequence: UInt64
        var closing = false
        /// Set when a failed write could not be undone: nothing more is accepted.
        var broken: StoreError?
    }

    static let subdirectory = "telemetry"
    static let logName = "telemetry/log"
    static let snapshotName = "snapshot"

    public let options: Options
    private let directory: DataDirectory
    private let logFD: Int32
    private let queue: Mutex<Queue>
    private let counts: Mutex<Counts>
    private let statistics = Mutex(Statistics())
    private let wake = DispatchSemaphore(value: 0)
    private let finished = DispatchSemaphore(value: 0)
    public let openReport: OpenReport

    /// Opens the telemetry in `directory`, replaying its log, and starts the committer.
    public init(directory: DataDirectory, options: Options = Options()) throws(StoreError) {
        self.directory = directory
        self.options = options
        try directory.makeSubdirectory(Self.subdirectory)
        _ = try directory.removeStaleTemporaries(in: [Self.subdirectory])
        var report = OpenReport()
        var counts = Counts(limits: options.limits)
        let snapshotPath = Self.subdirectory + "/" + Self.snapshotName
        if directory.exists(snapshotPath) {
            let bytes = try directory.read(snapshotPath)
            guard let restored = bytes.withUnsafeBytes({ SnapshotCodec.decode($0, limits: options.limits) }) else {
                throw StoreError("\(directory.path)/\(snapshotPath) is damaged (its checksum or layout is wrong); "
                    + "move it aside to start with no telemetry history, or restore it from a backup.")
            }
            counts = restored
            report.snapshotSequence = restored.lastSequence
        }
        let logPath = directory.path + "/" + Self.logName
        let fd = open(logPath, O_RDWR | O_CREAT | O_APPEND | O_CLOEXEC, 0o644)
        guard fd >= 0 else { throw .system("open", logPath) }
        logFD = fd
        let log = try directory.read(Self.logName)
        let (frames, validLength) = log.withUnsafeBytes { Frame.scan($0) }
        if validLength < log.count {
            // A torn tail: the batch in it was never acknowledged.
            try directory.truncate(Self.logName, to: validLength)
            report.truncatedBytes = log.count - validLength
        }
        let now = options.clock()
        var highest = counts.lastSequence
        for frame in frames {
            highest = max(highest, frame.sequence)
            guard frame.sequence > counts.lastSequence else { continue }
            counts.apply(frame.batch, sequence: frame.sequence, now: now)
            report.replayedBatches += 1
        }
        counts.prune(now: now)
        self.counts = Mutex(counts)
        queue = Mutex(Queue(nextSequence: highest + 1))
        openReport = report
        statistics.withLock { $0.logBytes = validLength }
        if validLength > 0 { try compact() }
        let thread = Thread { [self] in commitLoop() }
        thread.name = "waymark-commit"
        thread.start()
    }

    deinit {
        Glibc.close(logFD)
    }

    /// Queues a parsed batch; `completion` runs on the committer thread once the batch is
    /// durable and counted, or failed. A batch with no accepted events completes at once.
    public func submit(_ batch: Batch, completion: @escaping Completion) {
        guard !batch.tallies.isEmpty else { return completion(.success(())) }
        let refusal: StoreError? = queue.withLock { queue in
            if let broken = queue.broken { return broken }
            if queue.closing { return StoreError("The telemetry store is closing.") }
            Frame.encode(batch, sequence: queue.nextSequence, into: &queue.frames)
            queue.batches.append((queue.nextSequence, batch))
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

    public var currentStatistics: Statistics { statistics.withLock { $0 } }

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

    // MARK: The committer

    private func commitLoop() {
        var lastPrune = options.clock()
        while true {
            _ = wake.wait(timeout: .now() + .seconds(30))
            let (frames, batches, completions, closing) = queue.withLock { queue in
                defer {
                    queue.frames.removeAll(keepingCapacity: true)
                    queue.batches.removeAll(keepingCapacity: true)
                    queue.completions.removeAll(keepingCapacity: true)
                }
                return (queue.frames, queue.batches, queue.completions, queue.closing)
            }
            if !frames.isEmpty { commit(frames, batches, completions) }
            let now = options.clock()
            if now - lastPrune >= 60 {
                counts.withLock { $0.prune(now: now) }
                lastPrune = now
            }
            if closing, frames.isEmpty {
                finished.signal()
                return
            }
        }
    }

    private func commit(_ frames: [UInt8], _ batches: [(sequence: UInt64, batch: Batch)], _ completions: [Completion]) {
        let logPath = directory.path + "/" + Self.logName
        let before = statistics.withLock { $0.logBytes }
        do throws(StoreError) {
            try DataDirectory.writeAll(logFD, frames, logPath)
            guard fdatasync(logFD) == 0 else { throw StoreError.system("fdatasync", logPath) }
        } catch {
            // Undo the partial append so a replay cannot count what was refused.
            if ftruncate(logFD, off_t(before)) != 0 || fdatasync(logFD) != 0 {
                queue.withLock { $0.broken = StoreError("Telemetry is not accepted: the log could not be repaired after \(error.message).") }
            }
            statistics.withLock { $0.failedCommits += 1 }
            for completion in completions { completion(.failure(error)) }
            return
        }
        let now = options.clock()
        var events: UInt64 = 0
        counts.withLock { counts in
            for (sequence, batch) in batches {
                counts.apply(batch, sequence: sequence, now: now, live: true)
                events += UInt64(batch.tallies.count)
            }
        }
        let logBytes = statistics.withLock { statistics in
            statistics.batches += UInt64(batches.count)
            statistics.events += events
            statistics.commits += 1
            statistics.logBytes += frames.count
            return statistics.logBytes
        }
        for completion in completions { completion(.success(())) }
        if logBytes >= options.compactionBytes {
            do { try compact() } catch {
                // The log keeps growing and stays correct; the next commit tries again.
            }
        }
    }

    /// Writes the counts as a snapshot, then empties the log. Only the committer (or the
    /// initializer, before it starts) calls this, so no frame is appended in between.
    private func compact() throws(StoreError) {
        let bytes = counts.withLock { SnapshotCodec.encode($0) }
        try directory.writeDurably(bytes, subdirectory: Self.subdirectory, name: Self.snapshotName, replacing: true)
        let logPath = directory.path + "/" + Self.logName
        guard ftruncate(logFD, 0) == 0, fdatasync(logFD) == 0 else { throw .system("ftruncate", logPath) }
        statistics.withLock {
            $0.logBytes = 0
            $0.compactions += 1
        }
    }
}
