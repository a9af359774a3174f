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
        let harness = try LiveService(transport: .inProcess)
        let at = Date().addingTimeInterval(3_600)
        #expect(harness.call("POST", "/v1/schedules", token: harness.tokens[.routesPublish]!, headers: [("If-Match", "\"rev-1\"")],
                             body: scheduleBody(extraRoute: "nine", at: at)).status == 201)
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
