import Testing
@testable import Telemetry

/// The present is never blind: events older than the lateness window when their batch
/// arrived count in their hour only, and may take new cells only while the table is under
/// half its cap — so a flood of old events cannot fold the current minutes into `other`.
@Suite("Telemetry lateness")
struct LatenessTests {
    static func arrived(_ batch: Batch, at seconds: Int) -> Batch {
        var batch = batch
        batch.acceptedMinute = Int32(seconds / 60)
        return batch
    }

    @Test func lateEventsCountInTheirHourOnly() throws {
        var counts = Counts()
        counts.apply(Self.arrived(try batch([(-1_200, "proceed", nil, "product"), (-300, "proceed", nil, "product")]), at: testNow), sequence: 1, now: testNow)
        #expect(counts.query(lastHour()).total == 1, "the event 20 minutes old is not in the minutes")
        #expect(counts.query(lastHour(step: .hour)).total == 2, "both are in their hours")
        #expect(counts.lateEvents == 1)
        // A frame from before the rule (no arrival minute) counts as it always did.
        var old = Counts()
        old.apply(try batch([(-1_200, "proceed", nil, "product")]), sequence: 1, now: testNow)
        #expect(old.query(lastHour()).total == 1)
    }

    @Test func oldEventsCannotFillTheCellTable() throws {
        var limits = TelemetryLimits()
        limits.maximumCells = 1_000
        var counts = Counts(limits: limits)
        // A flood of old events, each in an hour of its own: they stop at half the cap.
        for hour in 1...2_000 {
            counts.apply(Self.arrived(try batch([(-3_600 * hour, "proceed", nil, "product")]), at: testNow), sequence: UInt64(hour), now: testNow)
        }
        #expect(counts.namedCells == 500, "named cells for old events stop at half the cap: \(counts.namedCells)")
        // The present still gets cells of its own, names kept.
        counts.apply(Self.arrived(try batch([(0, "notFound", "validationFailed", "product")], revision: 7), at: testNow), sequence: 3_000, now: testNow)
        var query = lastHour()
        query.groupBy = [.route, .revision]
        let groups = counts.query(query).groups.map { $0.key.map(\.name) }
        #expect(groups == [["product", "7"]], "\(groups)")
    }
}
