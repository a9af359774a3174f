import Testing
@testable import Telemetry

/// `Counts.opens`: what the draft impact reads — proceeded and gated resolutions of the
/// routes asked for, per route, build and hour, late ones included.
@Suite("Route opens by hour")
struct RouteOpensTests {
    @Test func opensOfTheRoutesAskedPerBuildAndHour() throws {
        var counts = Counts()
        let hour = testNow / 3_600 * 3_600
        // testNow is on an hour: -3_000 s is in the hour before, 0 in testNow's own.
        counts.apply(try batch([(-3_000, "proceed", nil, "product"), (-2_990, "gated", nil, "product"), (0, "proceed", nil, "product"),
                                (0, "notFound", "validationFailed", "product"), (0, "notFound", "unknownRoute", nil), (0, "proceed", nil, "orders")]),
                     sequence: 1, now: testNow)
        counts.apply(try batch([(-10, "proceed", nil, "product")], appVersion: "5.2.0"), sequence: 2, now: testNow)
        // An event 3 days old, late: in its hour only, and read.
        counts.apply(try batch([(-3 * 86_400, "proceed", nil, "product")]), sequence: 3, now: testNow)

        let opens = counts.opens(from: testNow - 7 * 86_400, to: testNow + 60, routes: ["product", "no-such-route"])
        let read = Set(opens.map { "\($0.route) \($0.platform) \($0.appVersion) \($0.hour - hour) \($0.count)" })
        // ios 5.2.0 has no schema in this vocabulary: its opens are counted as app version "other".
        #expect(read == ["product ios 5.3.0 -3600 2", "product ios 5.3.0 0 1", "product ios other -3600 1", "product ios 5.3.0 -259200 1"])
        #expect(counts.opens(from: testNow - 60, to: testNow + 60, routes: ["orders"]).map(\.count) == [1], "the range is whole hours")
        #expect(counts.opens(from: testNow, to: testNow, routes: ["orders"]).map(\.count) == [1], "the hour holding `to` is read whole")
        #expect(counts.opens(from: testNow - 3_600, to: testNow - 1, routes: ["orders"]).isEmpty, "and no later one")
        #expect(counts.opens(from: testNow - 7 * 86_400, to: testNow, routes: []).isEmpty)
        #expect(counts.opens(from: testNow - 7 * 86_400, to: testNow, routes: ["other", "none"]).isEmpty, "no route no revision had")
    }

    /// Opens under route `other` (an id no revision had, or folded past the cell cap) are
    /// what a replay cannot attribute: counted apart, beside all opens of the same hours.
    @Test func unattributedOpensAreCountedApart() throws {
        var counts = Counts()
        counts.apply(try batch([(0, "proceed", nil, "product"), (0, "gated", nil, "product"), (0, "proceed", nil, "no-such-route"),
                                (-10, "gated", nil, "no-such-route"), (0, "notFound", "unknownRoute", "no-such-route"), (0, "notFound", "unknownRoute", nil)]),
                     sequence: 1, now: testNow)
        let read = counts.unattributedOpens(from: testNow - 7 * 86_400, to: testNow)
        #expect(read.unattributed == 2 && read.total == 4, "\(read): failures are not opens; an unknown id's opens are unattributed")
        let later = counts.unattributedOpens(from: testNow + 3_600, to: testNow + 7_200)
        #expect(later.unattributed == 0 && later.total == 0)

        // Past the cell cap, a known route's opens fold into `other` too.
        var limits = TelemetryLimits()
        limits.maximumCells = 2
        var capped = Counts(limits: limits)
        capped.apply(try batch([(0, "proceed", nil, "orders"), (-120, "proceed", nil, "orders"), (0, "proceed", nil, "product"), (0, "gated", nil, "product")]),
                     sequence: 1, now: testNow)
        let folded = capped.unattributedOpens(from: testNow - 86_400, to: testNow)
        #expect(folded.total == 4 && folded.unattributed > 0, "\(folded)")
    }

    /// Crawlers' and link checkers' landings (entry `bot`) are no one's opens: the impact
    /// preview, the unattributed share and a query without an entry filter leave them out;
    /// asked for by name, they are there.
    @Test func botsAreNoOnesOpens() throws {
        var counts = Counts()
        var bots = try batch([(0, "proceed", nil, "product"), (0, "gated", nil, "product"), (0, "proceed", nil, "no-such-route")])
        for index in bots.tallies.indices { bots.tallies[index].entry = EntryPoint.bot.rawValue }
        counts.apply(bots, sequence: 1, now: testNow)
        counts.apply(try batch([(0, "proceed", nil, "product")]), sequence: 2, now: testNow)
        #expect(counts.opens(from: testNow - 3_600, to: testNow, routes: ["product"]).map(\.count) == [1])
        let share = counts.unattributedOpens(from: testNow - 3_600, to: testNow)
        #expect(share.total == 1 && share.unattributed == 0, "\(share)")
        var query = CountQuery(from: testNow - 3_600, to: testNow + 60, step: .hour)
        #expect(counts.query(query).total == 1, "people only")
        query.filters[.entry] = "bot"
        #expect(counts.query(query).total == 3, "bots asked for by name")
    }
}
