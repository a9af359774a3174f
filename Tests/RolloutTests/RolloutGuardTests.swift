import Foundation
import TestSupport
import Testing
@testable import Rollout

/// The guard's statistics against exact values (Python's exact binomial coefficients for
/// Fisher, erfc for the z-test), and its decisions as a table: sample sizes, a real
/// regression, noise that must not trip it, a new reason, a route that fails on one build,
/// too little data.
@Suite("Rollout guard")
struct RolloutGuardTests {
    /// (label, strata: (candidate failures, candidate total, stable failures, stable total) per
    /// build, exact p). The values are printed by `Tests/Scripts/guard-reference.py` (the rule
    /// written again in Python with 60-digit arithmetic; `make test-guard` runs its `--check`
    /// against this table).
    static let pValues: [(String, [(Int, Int, Int, Int)], Double)] = [
        ("fisher 3/50 v 0/50", [(3, 50, 0, 50)], 1.2121212121212121e-1),
        ("fisher 10/500 v 0/1000", [(10, 500, 0, 1000)], 1.5940702489668586e-5),
        ("fisher 8/500 v 0/1000", [(8, 500, 0, 1000)], 1.4679366987418669e-4),
        ("fisher 5/100 v 1/100", [(5, 100, 1, 100)], 1.0582392634786584e-1),
        ("fisher 1/10 v 1/10", [(1, 10, 1, 10)], 7.6315789473684211e-1),
        ("fisher 0/10 v 5/10", [(0, 10, 5, 10)], 1.0),
        ("fisher 40/100 v 50/5000", [(40, 100, 50, 5000)], 2.1726819277386152e-47),
        ("fisher 200/2000 v 1000/50000", [(200, 2000, 1000, 50000)], 3.7626062398236829e-70),
        ("fisher 16/500 v 400/20000", [(16, 500, 400, 20000)], 4.9974692792875077e-2),
        ("fisher 60/1000 v 40/1000", [(60, 1000, 40, 1000)], 2.5380064935374194e-2),
        ("the issue's healthy trip: 23/391 v 91/3745", [(23, 391, 91, 3745)], 3.1216547811310081e-4),
        ("two builds, different baselines, same rates", [(44, 400, 110, 1000), (12, 400, 30, 1000)], 5.2921762980941906e-1),
        ("two builds, one broken", [(44, 400, 110, 1000), (40, 400, 30, 1000)], 1.5235199348502638e-3),
        ("three builds", [(5, 120, 30, 900), (9, 80, 20, 700), (30, 300, 60, 3000)], 2.6641916485484309e-11),
    ]

    @Test(arguments: pValues)
    func pValue(_ label: String, _ strata: [(Int, Int, Int, Int)], _ expected: Double) {
        let p = GuardStatistics.pValue(strata.map { GuardStatistics.Stratum(candidateFailures: $0.0, candidateTotal: $0.1, stableFailures: $0.2, stableTotal: $0.3) })
        #expect(abs(p - expected) <= expected * 1e-9 + 1e-300, "\(label): \(p) against \(expected)")
    }

    /// The bound against the binomial quantile, from `Tests/Scripts/guard-reference.py`:
    /// (trials, rate, tail, bound).
    static let bounds: [(Int, Double, Double, Int)] = [
        (50, 0.03, 0.001, 6), (25, 0.03, 0.001, 4), (50, 0.155, 0.001, 16), (1, 0.5, 0.001, 1), (400, 0.0005, 0.001, 3),
        (100000, 0.1, 0.001, 10294), (20, 0.0, 0.001, 0), (20, 1.0, 0.001, 20),
    ]

    @Test(arguments: bounds)
    func binomialBound(_ row: (Int, Double, Double, Int)) {
        #expect(GuardStatistics.binomialBound(trials: row.0, rate: row.1, tail: row.2) == row.3, "\(row)")
    }

    /// The rule without breadth (these tables hold counts, not installs): the statistics alone.
    static let statisticsOnly: GuardPolicy = {
        var policy = GuardPolicy()
        policy.minimumInstalls = 0
        policy.minimumNetworks = 0
        policy.minimumReasonNetworks = 0
        return policy
    }()

    typealias Cell = GuardCounts.Cell
    typealias Outcomes = GuardCounts.Outcomes

    static func counts(_ cells: [(String, String, Int, Int, [String: Int])]) -> GuardCounts {
        var result: [Cell: Outcomes] = [:]
        for (route, build, total, failures, reasons) in cells {
            result[Cell(route: route, build: build)] = Outcomes(total: total, failures: failures,
                                                                reasons: reasons.isEmpty && failures > 0 ? ["validationFailed": failures] : reasons)
        }
        return GuardCounts(result)
    }

    /// (label, candidate, stable, expected: "healthy", "waiting", or the first finding as "scope route build reason")
    static let decisions: [(String, GuardCounts, GuardCounts, String)] = [
        ("too little candidate data: wait, do not advance",
         counts([("product", "ios 5.3.0", 150, 0, [:])]), counts([("product", "ios 5.3.0", 10_000, 200, [:])]), "waiting"),
        ("too little stable data: wait",
         counts([("product", "ios 5.3.0", 5_000, 100, [:])]), counts([("product", "ios 5.3.0", 120, 2, [:])]), "waiting"),
        ("three failures out of three is not a verdict",
         counts([("product", "ios 5.3.0", 3, 3, [:])]), counts([("product", "ios 5.3.0", 10_000, 200, [:])]), "waiting"),
        ("the same rate: healthy",
         counts([("product", "ios 5.3.0", 2_000, 40, [:])]), counts([("product", "ios 5.3.0", 50_000, 1_000, [:])]), "healthy"),
        ("noise: 3.2% against 2% on 500 resolutions is not significant",
         counts([("product", "ios 5.3.0", 500, 16, [:])]), counts([("product", "ios 5.3.0", 20_000, 400, [:])]), "healthy"),
        ("a real regression: 10% against 2% (one route: it is named, the most specific of equals)",
         counts([("product", "ios 5.3.0", 2_000, 200, [:])]), counts([("product", "ios 5.3.0", 50_000, 1_000, [:])]), "route product - -"),
        ("a regression spread over every route: overall first",
         counts([("product", "ios 5.3.0", 1_000, 60, [:]), ("home", "ios 5.3.0", 1_000, 60, [:]), ("search", "ios 5.3.0", 1_000, 60, [:])]),
         counts([("product", "ios 5.3.0", 20_000, 400, [:]), ("home", "ios 5.3.0", 20_000, 400, [:]), ("search", "ios 5.3.0", 20_000, 400, [:])]),
         "overall - - -"),
        ("significant but harmless: 2.5% against 2% on millions",
         counts([("product", "ios 5.3.0", 2_000_000, 50_000, [:])]), counts([("product", "ios 5.3.0", 2_000_000, 40_000, [:])]), "healthy"),
        ("better than stable: never a trip",
         counts([("product", "ios 5.3.0", 2_000, 0, [:])]), counts([("product", "ios 5.3.0", 50_000, 5_000, [:])]), "healthy"),
        ("one route broken among many healthy ones",
         counts([("product", "ios 5.3.0", 300, 150, [:]), ("home", "ios 5.3.0", 20_000, 20, [:]), ("search", "ios 5.3.0", 20_000, 200, [:])]),
         counts([("product", "ios 5.3.0", 3_000, 30, [:]), ("home", "ios 5.3.0", 200_000, 200, [:]), ("search", "ios 5.3.0", 200_000, 2_000, [:])]),
         "route product - -"),
        ("a route that fails only on one build",
         counts([("product", "ios 5.2.0", 5_000, 50, [:]), ("product", "ios 5.3.0", 100, 40, [:]), ("home", "ios 5.3.0", 20_000, 20, [:])]),
         counts([("product", "ios 5.2.0", 50_000, 500, [:]), ("product", "ios 5.3.0", 50_000, 500, [:]), ("home", "ios 5.3.0", 200_000, 200, [:])]),
         "routeOnBuild product ios 5.3.0 -"),
        ("a new failure reason the route never had",
         counts([("search", "ios 5.3.0", 500, 13, ["validationFailed": 3, "expired": 10]), ("home", "ios 5.3.0", 5_000, 5, [:])]),
         counts([("search", "ios 5.3.0", 1_000, 10, ["validationFailed": 10]), ("home", "ios 5.3.0", 50_000, 50, [:])]),
         "newReason search - expired"),
        ("a new reason seen three times is not yet a finding",
         counts([("search", "ios 5.3.0", 500, 8, ["validationFailed": 5, "expired": 3]), ("home", "ios 5.3.0", 5_000, 5, [:])]),
         counts([("search", "ios 5.3.0", 1_000, 10, ["validationFailed": 10]), ("home", "ios 5.3.0", 50_000, 50, [:])]),
         "healthy"),
        ("a route the stable revision does not have is not compared on its own",
         counts([("launch", "ios 5.3.0", 400, 20, [:]), ("home", "ios 5.3.0", 20_000, 20, [:])]),
         counts([("home", "ios 5.3.0", 200_000, 200, [:])]), "healthy"),
    ]

    static func describe(_ verdict: GuardVerdict) -> String {
        switch verdict {
        case .healthy: "healthy"
        case .waiting: "waiting"
        case .tripped(let findings):
            [findings[0].scope.rawValue, findings[0].route ?? "-", findings[0].build ?? "-", findings[0].reason ?? "-"].joined(separator: " ")
        }
    }

    @Test(arguments: decisions)
    func decision(_ label: String, _ candidate: GuardCounts, _ stable: GuardCounts, _ expected: String) {
        let verdict = RolloutGuard.judge(candidate: candidate, stable: stable, policy: Self.statisticsOnly)
        #expect(Self.describe(verdict) == expected, "\(label): \(verdict)")
    }

    /// The sequential test's boundary, from `Tests/Scripts/guard-reference.py`: one route on
    /// one build (two comparisons), 400 candidate resolutions against 12 failures of 1,000;
    /// the fewest candidate failures that trip at each look (alpha / (j (j + 1)) / 2). One
    /// fewer does not.
    static let boundaries: [(look: Int, trips: Int)] = [(look: 1, trips: 19), (look: 2, trips: 20), (look: 10, trips: 23)]

    @Test(arguments: boundaries)
    func sequentialBoundary(_ boundary: (look: Int, trips: Int)) {
        func verdict(_ failures: Int) -> String {
            Self.describe(RolloutGuard.judge(candidate: Self.counts([("product", "ios 5.3.0", 400, failures, [:])]),
                                             stable: Self.counts([("product", "ios 5.3.0", 1_000, 12, [:])]), policy: Self.statisticsOnly, look: boundary.look))
        }
        #expect(verdict(boundary.trips) == "route product - -", "look \(boundary.look) at \(boundary.trips)")
        #expect(verdict(boundary.trips - 1) == "healthy", "look \(boundary.look) at \(boundary.trips - 1)")
    }

    @Test("A thousand routes of pure noise do not trip it (the threshold is shared among the comparisons)")
    func manyRoutesOfNoise() {
        var random = SplitMix(seed: 7)
        var candidate: [Cell: Outcomes] = [:], stable: [Cell: Outcomes] = [:]
        for index in 0..<1_000 {
            let cell = Cell(route: "r\(index)", build: "ios 5.3.0")
            let failed = { (count: Int) in (0..<count).filter { _ in random.next() % 100 < 2 }.count }
            let (mine, theirs) = (failed(100), failed(1_000))
            candidate[cell] = Outcomes(total: 100, failures: mine, reasons: mine > 0 ? ["validationFailed": mine] : [:])
            stable[cell] = Outcomes(total: 1_000, failures: theirs, reasons: theirs > 0 ? ["validationFailed": theirs] : [:])
        }
        let verdict = RolloutGuard.judge(candidate: GuardCounts(candidate), stable: GuardCounts(stable), policy: Self.statisticsOnly)
        guard case .healthy(let comparisons) = verdict else { Issue.record("\(verdict)"); return }
        #expect(comparisons == 1_001)
    }

    @Test("A finding says which route and which numbers")
    func findingText() {
        let verdict = RolloutGuard.judge(candidate: Self.counts([("product", "ios 5.3.0", 2_000, 200, [:])]),
                                         stable: Self.counts([("product", "ios 5.3.0", 50_000, 1_000, [:])]), policy: Self.statisticsOnly)
        guard case .tripped(let findings) = verdict else { Issue.record("\(verdict)"); return }
        #expect(findings.map(\.scope) == [.route, .overall], "equal p-values: the most specific first")
        #expect(findings[0].description.hasPrefix("Route product 200 of 2000 failed on the candidate (10.00%) against 1000 of 50000 on the stable revision (2.00%); p = "))
    }
}
