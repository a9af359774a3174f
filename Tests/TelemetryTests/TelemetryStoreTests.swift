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

/// Submits and waits for the completion.
func commit(_ batch: Batch, to store: TelemetryStore) -> Result<Void, StoreError> {
    let done = DispatchSemaphore(value: 0)
    let result = Mutex<Result<Void, StoreError>?>(nil)
    store.submit(batch) { outcome in
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
        defer { reopened.close() }
        #expect(reopened.openReport.replayedBatches == 2)
        #expect(totals(reopened) == ["product": 2, "orders": 1])
        #expect(try FileManager.default.attributesOfItem(atPath: scratch.log)[.size] as? Int == 0, "replayed into a snapshot, log emptied")
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
        store.close()
        // Half of a frame, as a crash mid-write leaves it.
        var frame: [UInt8] = []
        Frame.encode(try batch([(0, "proceed", nil, "product")]), sequence: 99, into: &frame)
        let handle = try #require(FileHandle(forWritingAtPath: scratch.log))
        handle.seekToEndOfFile()
        handle.write(Data(frame.prefix(frame.count / 2)))
        try handle.close()
        let reopened = try scratch.open()
        defer { reopened.close() }
        #expect(reopened.openReport.truncatedBytes == frame.count / 2)
        #expect(totals(reopened) == ["product": 1, "orders": 1])
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
            (error as? StoreError)?.message.contains("telemetry/snapshot is damaged") == true
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
