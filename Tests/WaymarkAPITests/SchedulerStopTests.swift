import Dispatch
import Foundation
import ManifestStore
import Synchronization
import Testing
import TestSupport
@testable import WaymarkAPI

/// `API.stopScheduling` (at shutdown, after the last request): nothing fires after it, even
/// a firing already queued for a document's turn.
@Suite("Stopping the scheduler")
struct SchedulerStopTests {
    @Test("A firing queued for a document's turn when the scheduler stops fires nothing")
    func aQueuedFiringAfterStopFiresNothing() throws {
        let (harness, at) = try serviceWithASchedule()
        // Another's document job holds the one turn.
        let holding = DispatchSemaphore(value: 0), held = DispatchSemaphore(value: 0)
        harness.api.context.work.whenDocumentTurn(for: "someone", on: .global()) {
            holding.signal()
            held.wait()
        }
        holding.wait()
        // The first tick finds the schedule due and queues its firing behind that turn; the
        // tick reads the clock a second time after it has.
        let reads = Atomic<Int>(0), queued = DispatchSemaphore(value: 0)
        harness.api.startScheduling(every: 0.02) {
            if reads.add(1, ordering: .relaxed).newValue == 2 { queued.signal() }
            return at.addingTimeInterval(1)
        }
        queued.wait()
        harness.api.stopScheduling()
        held.signal()
        // A turn asked for after the firing's comes once the firing's has ended.
        let after = DispatchSemaphore(value: 0)
        harness.api.context.work.whenDocumentTurn(for: "someone else", on: .global()) { after.signal() }
        after.wait()
        #expect(harness.store.snapshot.schedules.first?.status == .pending, "it fired after stopScheduling")
        #expect(harness.store.snapshot.revisions.count == 1)
    }
}

/// A due schedule the store fails on (the disk, not a missing or damaged file) stays
/// pending, is counted for the operator's alert, and fires once the store reads it again.
@Suite("The scheduler when the store fails")
struct SchedulerStoreFailureTests {
    @Test("A schedule that cannot be read is counted in /metrics, stays pending, and fires once it can")
    func aFailingScheduleIsCountedAndTriedAgain() throws {
        let (harness, at) = try serviceWithASchedule()
        // A directory where its file was: reading it fails with EISDIR, as a failing disk
        // would fail it, and root's permissions would not.
        let file = harness.path + "/schedules/00000001"
        let stored = try Data(contentsOf: URL(fileURLWithPath: file))
        try FileManager.default.removeItem(atPath: file)
        try FileManager.default.createDirectory(atPath: file, withIntermediateDirectories: false)
        harness.api.startScheduling(every: 0.02) { at.addingTimeInterval(1) }
        #expect(waitUntil { harness.api.context.scheduleFailures.load(ordering: .relaxed) >= 2 }, "the failures were not counted")
        #expect(harness.store.snapshot.schedules.first?.status == .pending)
        #expect(harness.store.snapshot.revisions.count == 1)
        let metrics = harness.call("GET", "/metrics", token: harness.tokens[.telemetryRead]!).text
        let line = metrics.split(separator: "\n").first { $0.hasPrefix("waymark_schedule_failures_total ") }
        #expect(line.flatMap { UInt64($0.split(separator: " ")[1]) }.map { $0 >= 2 } == true, "\(line ?? "no line")")

        // Put back with the scheduler stopped: a look between the two steps would find the
        // file missing (or half written) and skip the schedule for good.
        harness.api.stopScheduling()
        try FileManager.default.removeItem(atPath: file)
        try stored.write(to: URL(fileURLWithPath: file))
        harness.api.startScheduling(every: 0.02) { at.addingTimeInterval(1) }
        defer { harness.api.stopScheduling() }
        #expect(waitUntil { harness.store.snapshot.schedules.first?.status == .fired(revision: 2) }, "it did not fire once readable")
    }
}

/// A service on revision 1 with one publish scheduled an hour from now, on it; and that hour.
private func serviceWithASchedule() throws -> (LiveService, Date) {
    let harness = try LiveService(transport: .inProcess)
    let at = Date().addingTimeInterval(3_600)
    #expect(harness.call("POST", "/v1/schedules", token: harness.tokens[.routesPublish]!, headers: [("If-Match", "\"rev-1\"")],
                         body: scheduleBody(extraRoute: "nine", at: at)).status == 201)
    return (harness, at)
}

/// Polls `condition` every 10 ms for up to 30 s (an event, not a speed: it comes within a
/// few ticks).
private func waitUntil(_ condition: () -> Bool) -> Bool {
    for _ in 0..<3_000 {
        if condition() { return true }
        usleep(10_000)
    }
    return condition()
}
