import Foundation
import Synchronization
import Testing
@testable import Telemetry

/// Submits a batch that may carry an id and waits for how it ended.
func commitOnce(_ batch: Batch, to store: TelemetryStore) -> Result<TelemetryStore.Acceptance, TelemetryError> {
    let done = DispatchSemaphore(value: 0)
    let result = Mutex<Result<TelemetryStore.Acceptance, TelemetryError>?>(nil)
    store.submitOnce(batch) { outcome in
        result.withLock { $0 = outcome }
        done.signal()
    }
    done.wait()
    return result.withLock { $0! }
}

/// Exactly once: a batch retried with its id (after a lost `202`) is counted once — in
/// flight, after the commit, after a reopen (replayed from the log or read from the
/// snapshot) — and ids are forgotten past the window or the bound.
@Suite("Batch ids", .serialized)
struct BatchIDTests {
    static let first = HexID(high: 0x9f1c_4e0a_7b2d_4c55, low: 0xa1e3_f0d2_c6b8_a417)
    static let second = HexID(high: 1, low: 2)

    static func withID(_ id: HexID?) throws -> Batch {
        var one = try batch([(0, "proceed", nil, "product")])
        one.id = id
        return one
    }

    @Test("HexID reads exactly 32 lowercase hex digits", arguments: [
        ("9f1c4e0a7b2d4c55a1e3f0d2c6b8a417", true), ("00000000000000000000000000000000", true),
        ("9F1C4E0A7B2D4C55A1E3F0D2C6B8A417", false), ("9f1c4e0a7b2d4c55a1e3f0d2c6b8a41", false),
        ("9f1c4e0a7b2d4c55a1e3f0d2c6b8a4170", false), ("9f1c4e0a-b2d4c55a1e3f0d2c6b8a4170", false), ("", false),
    ])
    func hex(_ text: String, _ valid: Bool) {
        let id = HexID(hex: Array(text.utf8))
        #expect((id != nil) == valid)
        if let id { #expect(id.description == text) }
    }

    @Test func aRepeatIsCountedOnceAcrossAReopenAndACompaction() throws {
        let scratch = TelemetryScratch()
        var store = try scratch.open()
        #expect(try commitOnce(Self.withID(Self.first), to: store).get() == .counted)
        #expect(try commitOnce(Self.withID(Self.first), to: store).get() == .duplicate, "the 202 was lost; the client sends it again")
        #expect(try commitOnce(Self.withID(Self.second), to: store).get() == .counted)
        #expect(try commitOnce(Self.withID(nil), to: store).get() == .counted)
        #expect(try commitOnce(Self.withID(nil), to: store).get() == .counted, "without an id nothing can be told apart")
        #expect(totals(store) == ["product": 4])
        store.close()
        store = try scratch.open()  // replayed from the log, then compacted into the snapshot
        #expect(store.openReport.replayedBatches == 4)
        #expect(try commitOnce(Self.withID(Self.first), to: store).get() == .duplicate)
        store.close()
        store = try scratch.open()  // read from the snapshot
        defer { store.close() }
        #expect(store.openReport.replayedBatches == 0)
        #expect(try commitOnce(Self.withID(Self.second), to: store).get() == .duplicate)
        #expect(totals(store) == ["product": 4])
    }

    @Test func repeatsInFlightWaitForTheOriginal() throws {
        let scratch = TelemetryScratch()
        let store = try scratch.open()
        defer { store.close() }
        let one = try Self.withID(Self.first)
        let outcomes = Mutex<[TelemetryStore.Acceptance]>([])
        let group = DispatchGroup()
        for _ in 0..<16 {
            group.enter()
            Thread {
                if case .success(let acceptance) = commitOnce(one, to: store) { outcomes.withLock { $0.append(acceptance) } }
                group.leave()
            }.start()
        }
        group.wait()
        #expect(outcomes.withLock { $0.filter { $0 == .counted }.count } == 1)
        #expect(outcomes.withLock { $0.count } == 16)
        #expect(totals(store) == ["product": 1])
    }

    @Test func idsAreForgottenPastTheWindowAndTheBound() {
        var ids = BatchIDs(window: 3_600, capacity: 3)
        for low in UInt64(0)..<4 { ids.insert(HexID(high: 0, low: low), minute: 100) }
        #expect(ids.count == 3 && !ids.contains(HexID(high: 0, low: 0)) && ids.contains(HexID(high: 0, low: 3)), "the oldest goes first")
        ids.insert(HexID(high: 0, low: 9), minute: 200)
        ids.prune(now: 200 * 60 + 3_600 - 60)
        #expect(ids.count == 1 && ids.contains(HexID(high: 0, low: 9)), "an hour after minute 100, its ids are gone")
        ids.prune(now: 200 * 60 + 3_600 + 60)
        #expect(ids.count == 0)
    }
}
