import Foundation

/// How one revision's resolutions ended over a window, by route and app build.
public struct GuardCounts: Hashable, Sendable {
    /// A route (`""` for resolutions with no route: unknown links, malformed ones) on one build (`"ios 5.3.0"`).
    public struct Cell: Hashable, Sendable, Comparable {
        public var route: String
        public var build: String

        public init(route: String, build: String) {
            self.route = route
            self.build = build
        }

        public static func < (lhs: Cell, rhs: Cell) -> Bool { (lhs.route, lhs.build) < (rhs.route, rhs.build) }
    }

    /// Resolutions, failures (`notFound`) among them, and failures by reason.
    public struct Outcomes: Hashable, Sendable {
        public var total = 0
        public var failures = 0
        public var reasons: [String: Int] = [:]

        public init(total: Int = 0, failures: Int = 0, reasons: [String: Int] = [:]) {
            self.total = total
            self.failures = failures
            self.reasons = reasons
        }

        mutating func add(_ other: Outcomes) {
            total += other.total
            failures += other.failures
            reasons.merge(other.reasons, uniquingKeysWith: +)
        }

        public var rate: Double { total == 0 ? 0 : Double(failures) / Double(total) }
    }

    public var cells: [Cell: Outcomes]

    public init(_ cells: [Cell: Outcomes] = [:]) {
        self.cells = cells
    }

    public var overall: Outcomes { cells.values.reduce(into: Outcomes()) { $0.add($1) } }

    /// Per route, every build added up.
    public var byRoute: [String: Outcomes] {
        cells.reduce(into: [:]) { $0[$1.key.route, default: Outcomes()].add($1.value) }
    }
}

/// What the guard demands before it judges, and what it calls a regression.
public struct GuardPolicy: Hashable, Sendable {
    /// Resolutions each revision must have in the window before anything is judged.
    public var minimumResolutions = 200
    /// Resolutions each side of a per-route (or per route and build) comparison needs.
    public var minimumPerComparison = 50
    /// The false-alarm rate for a whole judgement, shared among its comparisons (Bonferroni).
    public var alpha = 0.001
    /// A rise must be at least this many failure-rate points (0.01 = one point)…
    public var minimumIncrease = 0.01
    /// …and at least this many times the stable rate.
    public var minimumRatio = 1.5
    /// Failures of a reason a route never had on the stable revision, at least, to count as new.
    public var minimumNewReasonFailures = 5

    public init() {}
}

/// One comparison that tripped the guard, with its numbers.
public struct GuardFinding: Hashable, Sendable, CustomStringConvertible {
    public enum Scope: String, Hashable, Sendable {
        /// Every route and build together.
        case overall
        /// One route, every build together.
        case route
        /// One route on one build.
        case routeOnBuild
        /// A failure reason a route never had on the stable revision.
        case newReason
    }

    public var scope: Scope
    public var route: String?
    public var build: String?
    public var reason: String?
    public var candidateFailures: Int
    public var candidateTotal: Int
    public var stableFailures: Int
    public var stableTotal: Int
    public var pValue: Double
    /// The p-value it had to be under (alpha shared among the comparisons made).
    public var threshold: Double

    public init(scope: Scope, route: String?, build: String?, reason: String?, candidateFailures: Int, candidateTotal: Int,
                stableFailures: Int, stableTotal: Int, pValue: Double, threshold: Double) {
        self.scope = scope
        self.route = route
        self.build = build
        self.reason = reason
        self.candidateFailures = candidateFailures
        self.candidateTotal = candidateTotal
        self.stableFailures = stableFailures
        self.stableTotal = stableTotal
        self.pValue = pValue
        self.threshold = threshold
    }

    public var description: String {
        let subject: String
        switch scope {
        case .overall: subject = "All routes"
        case .route: subject = "Route \(route.map { $0.isEmpty ? "(none)" : $0 } ?? "?")"
        case .routeOnBuild: subject = "Route \(route.map { $0.isEmpty ? "(none)" : $0 } ?? "?") on \(build ?? "?")"
        case .newReason: subject = "Route \(route.map { $0.isEmpty ? "(none)" : $0 } ?? "?") fails with \(reason ?? "?"), which it never did on the stable revision:"
        }
        func percent(_ failures: Int, _ total: Int) -> String { String(format: "%.2f%%", total == 0 ? 0 : 100 * Double(failures) / Double(total)) }
        return "\(subject) \(candidateFailures) of \(candidateTotal) failed on the candidate (\(percent(candidateFailures, candidateTotal))) "
            + "against \(stableFailures) of \(stableTotal) on the stable revision (\(percent(stableFailures, stableTotal))); "
            + String(format: "p = %.2g, under %.2g", pValue, threshold)
    }
}

/// The guard's answer for one look at a rollout step.
public enum GuardVerdict: Hashable, Sendable {
    /// Enough resolutions, and nothing worse than chance: the step may advance.
    case healthy(comparisons: Int)
    /// Too few resolutions to judge either way: the rollout waits rather than advances.
    case waiting(String)
    /// A regression: the rollout stops; the findings, most significant first.
    case tripped([GuardFinding])
}

/// Compares the candidate's resolutions with the stable revision's over the same window and
/// builds, and decides whether the candidate is worse: overall, per route, per route and
/// build, and by failure reasons a route never had. Pure; the rollout calls it at each look.
///
/// Each comparison is the one-sided test of `GuardStatistics`; a rise trips the guard only
/// when it is significant at `alpha` divided by the number of comparisons made (so a table
/// of a thousand routes does not trip on noise a thousand times as often), at least
/// `minimumIncrease` points and at least `minimumRatio` times the stable rate (so a
/// significant but harmless rise on millions of resolutions does not stop a campaign).
public enum RolloutGuard {
    public static func judge(candidate: GuardCounts, stable: GuardCounts, policy: GuardPolicy = GuardPolicy()) -> GuardVerdict {
        let (candidateOverall, stableOverall) = (candidate.overall, stable.overall)
        guard candidateOverall.total >= policy.minimumResolutions, stableOverall.total >= policy.minimumResolutions else {
            return .waiting("The candidate has \(candidateOverall.total) resolutions and the stable revision \(stableOverall.total) in the window; "
                + "at least \(policy.minimumResolutions) each are needed to judge.")
        }

        // Every comparison with enough data on both sides, then one shared threshold.
        struct Comparison {
            var scope: GuardFinding.Scope
            var route: String?
            var build: String?
            var reason: String?
            var candidate: (failures: Int, total: Int)
            var stable: (failures: Int, total: Int)
        }
        var comparisons = [Comparison(scope: .overall, candidate: (candidateOverall.failures, candidateOverall.total),
                                      stable: (stableOverall.failures, stableOverall.total))]
        func enough(_ outcomes: GuardCounts.Outcomes?) -> Bool { (outcomes?.total ?? 0) >= policy.minimumPerComparison }
        let (candidateRoutes, stableRoutes) = (candidate.byRoute, stable.byRoute)
        for route in candidateRoutes.keys.sorted() where enough(candidateRoutes[route]) && enough(stableRoutes[route]) {
            let (mine, theirs) = (candidateRoutes[route]!, stableRoutes[route]!)
            comparisons.append(Comparison(scope: .route, route: route, candidate: (mine.failures, mine.total), stable: (theirs.failures, theirs.total)))
            for reason in mine.reasons.keys.sorted() where (theirs.reasons[reason] ?? 0) == 0 && mine.reasons[reason]! >= policy.minimumNewReasonFailures {
                comparisons.append(Comparison(scope: .newReason, route: route, reason: reason, candidate: (mine.reasons[reason]!, mine.total),
                                              stable: (0, theirs.total)))
            }
        }
        for cell in candidate.cells.keys.sorted() where enough(candidate.cells[cell]) && enough(stable.cells[cell]) {
            // A route on one build is only worth its own comparison when the route runs on several.
            guard candidate.cells.keys.contains(where: { $0.route == cell.route && $0.build != cell.build }) else { continue }
            let (mine, theirs) = (candidate.cells[cell]!, stable.cells[cell]!)
            comparisons.append(Comparison(scope: .routeOnBuild, route: cell.route, build: cell.build, candidate: (mine.failures, mine.total),
                                          stable: (theirs.failures, theirs.total)))
        }

        let threshold = policy.alpha / Double(comparisons.count)
        var findings: [GuardFinding] = []
        for comparison in comparisons {
            let candidateRate = Double(comparison.candidate.failures) / Double(comparison.candidate.total)
            let stableRate = Double(comparison.stable.failures) / Double(comparison.stable.total)
            guard candidateRate - stableRate >= policy.minimumIncrease, candidateRate >= stableRate * policy.minimumRatio else { continue }
            let p = GuardStatistics.pValue(candidateFailures: comparison.candidate.failures, candidateTotal: comparison.candidate.total,
                                           stableFailures: comparison.stable.failures, stableTotal: comparison.stable.total)
            guard p < threshold else { continue }
            findings.append(GuardFinding(scope: comparison.scope, route: comparison.route, build: comparison.build, reason: comparison.reason,
                                         candidateFailures: comparison.candidate.failures, candidateTotal: comparison.candidate.total,
                                         stableFailures: comparison.stable.failures, stableTotal: comparison.stable.total,
                                         pValue: p, threshold: threshold))
        }
        guard findings.isEmpty else {
            // Most significant first; among equals, the most specific (it names what to fix).
            let specificity: [GuardFinding.Scope: Int] = [.newReason: 0, .routeOnBuild: 1, .route: 2, .overall: 3]
            return .tripped(findings.sorted { ($0.pValue, specificity[$0.scope]!) < ($1.pValue, specificity[$1.scope]!) })
        }
        return .healthy(comparisons: comparisons.count)
    }
}
