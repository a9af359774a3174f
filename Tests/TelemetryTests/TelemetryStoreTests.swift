import SystemIO
import Foundation
import ManifestStore
import Synchronization
import Testing
@testable import Telemetry

final class TelemetryScratch {
    let path = NSTemporaryDirectory() + "waymark-telemetry-\(UUID().uuidString)"

    deinit { try? FileManager.default.removeItem(atPath: path) }

    func open(compactionBytes: Int = 64 << 20, now: Int = testNow) throws -> TelemetryStore {
        var options = TelemetryStore.Options()
        options.compactionBytes = compactionBytes
        options.clock = { now }
        // Not exclusive: a test reopens while the closed store object is still in scope.
        return try TelemetryStore(directory: DataDirectory(path: path, subdirectories: [], exclusive: false), options: options)
    }

    var log: String { path + "/telemetry/log" }
    var snapshot: String { path + "/telemetry/snapshot" }
}

/// Overwrites `bytes` at `offset` of the file at `path`.
func write(_ bytes: [UInt8], at offset: Int, to path: String) throws {
    let handle = try #require(FileHandle(forWritingAtPath: path))
    try handle.seek(toOffset: UInt64(offset))
    try handle.write(contentsOf: Data(bytes))
    try handle.close()
}

/// Submits and waits for the completion.
func commit(_ batch: Batch, to store: TelemetryStore) -> Result<Void, TelemetryError> {
    waitForCompletion { store.submit(batch, completion: $0) }
}

/// Calls `submit` with a completion and waits until it runs.
func waitForCompletion(_ submit: (@escaping TelemetryStore.Completion) -> Void) -> Result<Void, TelemetryError> {
    let done = DispatchSemaphore(value: 0)
    let result = Mutex<Result<Void, TelemetryError>?>(nil)
    submit { outcome in
        result.withLock { $0 = outcome }
        done.signal()
    }
    done.wait()
    return result.withLock { $0! }
}

func totals(_ store: TelemetryStore, by dimension: TelemetryDimension = .route) -> [String: UInt64] {
    var query = lastHour()
    query.groupBy = [dimension]
    return store.read { Dictionary(uniqueKeysWithValues: $0.query(query).groups.map { ($0.key[0].name, $0.total) }) }
}

@Suite("Telemetry store", .serialized)
struct TelemetryStoreTests {
    @Test func acceptedBatchesAreCountedAndSurviveAReopen() throws {
        let scratch = TelemetryScratch()
        let store = try scratch.open()
        #expect(throws: Never.self) { try commit(batch([(0, "proceed", nil, "product"), (0, "notFound", "expired", "orders")]), to: store).get() }
        #expect(throws: Never.self) { try commit(batch([(-60, "proceed", nil, "product")]), to: store).get() }
        #expect(totals(store) == ["product": 2, "orders": 1])
        store.close()
        let reopened = try scratch.open()
        #expect(reopened.openReport.replayedBatches == 2)
        #expect(totals(reopened) == ["product": 2, "orders": 1])
        #expect(reopened.currentStatistics.logBytes == 0, "replayed into a snapshot, the log starts again")
        let size = try #require(FileManager.default.attributesOfItem(atPath: scratch.log)[.size] as? Int)
        #expect(size == 1 << 20, "allocated ahead, 1 MB first")
        reopened.close()
        let again = try scratch.open()
        defer { again.close() }
        #expect(again.openReport.replayedBatches == 0, "the frames still in the file are in the snapshot")
        #expect(totals(again) == ["product": 2, "orders": 1])
    }

    @Test func concurrentBatchesShareCommits() throws {
        let scratch = TelemetryScratch()
        let store = try scratch.open()
        let one = try batch([(0, "proceed", nil, "product")])
        // Eight clients on threads of their own (concurrentPerform would run only one per core).
        let group = DispatchGroup()
        for _ in 0..<8 {
            group.enter()
            Thread {
                for _ in 0..<50 { _ = commit(one, to: store) }
                group.leave()
            }.start()
        }
        group.wait()
        let statistics = store.currentStatistics
        #expect(statistics.batches == 400)
        #expect(statistics.commits < 400, "group commit: \(statistics.commits) fdatasyncs for 400 batches")
        #expect(totals(store) == ["product": 400])
        store.close()
        let reopened = try scratch.open()
        defer { reopened.close() }
        #expect(totals(reopened) == ["product": 400])
    }

    @Test func aTornTailIsCutAndCountsNothing() throws {
        let scratch = TelemetryScratch()
        var store = try scratch.open()
        _ = commit(try batch([(0, "proceed", nil, "product")]), to: store)
        store.close()
        store = try scratch.open()  // snapshot taken, log empty
        _ = commit(try batch([(0, "proceed", nil, "orders")]), to: store)
        let tail = store.currentStatistics.logBytes
        store.close()
        // Half of a frame after the last one, as a crash mid-write leaves it.
        var frame: [UInt8] = []
        Frame.encode(try batch([(0, "proceed", nil, "product")]), sequence: 3, into: &frame)
        try write(Array(frame.prefix(frame.count / 2)), at: tail, to: scratch.log)
        let reopened = try scratch.open()
        defer { reopened.close() }
        #expect(reopened.openReport.truncatedBytes == frame.count / 2)
        #expect(totals(reopened) == ["product": 1, "orders": 1])
    }

    /// A crash can leave a group's first frame torn and a later one whole. Neither was
    /// acknowledged; the later one must not come back when, after a second crash, a new
    /// frame of the same length lies where the torn one was without the zeros a commit
    /// writes after its frames (new sequence numbers start again after the last whole
    /// frame, so the old one would parse as the new one's successor).
    @Test func aWholeFrameBehindATornOneNeverComesBack() throws {
        let scratch = TelemetryScratch()
        var store = try scratch.open()
        _ = commit(try batch([(0, "proceed", nil, "product")]), to: store)
        let tail = store.currentStatistics.logBytes
        store.close()
        var torn: [UInt8] = [], ghost: [UInt8] = []
        Frame.encode(try batch([(0, "proceed", nil, "orders")]), sequence: 2, into: &torn)
        Frame.encode(try batch([(0, "proceed", nil, "cart")]), sequence: 3, into: &ghost)
        let crashed = Array(torn.prefix(10)) + Array(repeating: 0xEE, count: torn.count - 10) + ghost
        try write(crashed, at: tail, to: scratch.log)
        store = try scratch.open()
        #expect(store.openReport.truncatedBytes == crashed.lastIndex { $0 != 0 }! + 1)
        #expect(totals(store) == ["product": 1])
        store.close()
        // The second crash: a new batch of the torn one's length, as sequence 2, reached
        // the disk but the zeros after it did not …
        var second: [UInt8] = []
        Frame.encode(try batch([(0, "proceed", nil, "orders")]), sequence: 2, into: &second)
        #expect(second.count == torn.count)
        try write(second, at: tail, to: scratch.log)
        // … and on the next open the whole frame behind it is not counted.
        let reopened = try scratch.open()
        defer { reopened.close() }
        #expect(totals(reopened) == ["product": 1, "orders": 1])
    }

    @Test func theLogStaysAtItsAllocatedSizeThroughCompactions() throws {
        let scratch = TelemetryScratch()
        let store = try scratch.open(compactionBytes: 64 << 10)
        let one = try batch((0..<40).map { _ in (0, "proceed", nil, "product") })
        for _ in 0..<600 { _ = commit(one, to: store) }
        #expect(store.currentStatistics.compactions > 3)
        store.close()
        #expect(try FileManager.default.attributesOfItem(atPath: scratch.log)[.size] as? Int == 1 << 20)
        let reopened = try scratch.open()
        defer { reopened.close() }
        #expect(totals(reopened) == ["product": 24_000])
    }

    @Test func aCrashBetweenSnapshotAndTruncationCountsNothingTwice() throws {
        let scratch = TelemetryScratch()
        let store = try scratch.open()
        for route in ["product", "orders", "product"] { _ = commit(try batch([(0, "proceed", nil, route)]), to: store) }
        store.close()
        let log = try Data(contentsOf: URL(fileURLWithPath: scratch.log))
        #expect(!log.isEmpty)
        let compacted = try scratch.open()  // replays, snapshots at sequence 3, empties the log
        compacted.close()
        // The crash: the snapshot was renamed into place but the log was never emptied.
        try log.write(to: URL(fileURLWithPath: scratch.log))
        let reopened = try scratch.open()
        defer { reopened.close() }
        #expect(reopened.openReport.replayedBatches == 0)
        #expect(totals(reopened) == ["product": 2, "orders": 1])
        _ = commit(try batch([(0, "proceed", nil, "orders")]), to: reopened)
        #expect(totals(reopened) == ["product": 2, "orders": 2], "new sequence numbers continue past the snapshot")
    }

    @Test func compactionWhileRunningKeepsEveryCount() throws {
        let scratch = TelemetryScratch()
        let store = try scratch.open(compactionBytes: 1)
        for index in 0..<20 { _ = commit(try batch([(0, "proceed", nil, index % 2 == 0 ? "product" : "orders")]), to: store) }
        store.close()
        #expect(store.currentStatistics.compactions == 20, "the snapshot follows each commit")
        let reopened = try scratch.open()
        defer { reopened.close() }
        #expect(totals(reopened) == ["product": 10, "orders": 10])
    }

    @Test func aDamagedSnapshotIsRefusedByName() throws {
        let scratch = TelemetryScratch()
        let store = try scratch.open(compactionBytes: 1)
        _ = commit(try batch([(0, "proceed", nil, "product")]), to: store)
        store.close()
        var bytes = try Data(contentsOf: URL(fileURLWithPath: scratch.snapshot))
        bytes[bytes.count / 2] ^= 0xFF
        try bytes.write(to: URL(fileURLWithPath: scratch.snapshot))
        #expect { try scratch.open() } throws: { error in
            guard case .damaged(let file, _)? = error as? TelemetryError else { return false }
            return file == scratch.path + "/telemetry/snapshot"
        }
    }

    @Test func retentionAppliesOnReplay() throws {
        let scratch = TelemetryScratch()
        let store = try scratch.open()
        _ = commit(try batch([(0, "proceed", nil, "product")]), to: store)
        store.close()
        let later = try scratch.open(now: testNow + 3 * 86_400)
        defer { later.close() }
        #expect(later.read { $0.bucketCounts.minutes } == 0)
        #expect(later.read { $0.bucketCounts.hours } == 1)
    }
}
