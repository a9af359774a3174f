import Foundation

/// What the guard demands before it judges, and what it calls a regression.
public struct GuardPolicy: Hashable, Sendable {
    /// Resolutions each revision must have before anything is judged; also the first look.
    public var minimumResolutions = 200
    /// Resolutions each side of a per-route (or per route and build) comparison needs.
    public var minimumPerComparison = 50
    /// The false-trip rate for a whole rollout: spent over its looks (`alpha(look:)`) and,
    /// within a look, shared among its comparisons (Bonferroni).
    public var alpha = 0.001
    /// Looks happen when the candidate's evidence has grown by this factor since the last
    /// one (200, 250, 313, … resolutions): the rollout is judged as often as new data can
    /// change the answer, and alpha is spent per look, not per tick of the clock.
    public var lookGrowth = 1.25
    /// A rise must be at least this many failure-rate points (0.01 = one point)…
    public var minimumIncrease = 0.01
    /// …and at least this many times the stable rate (standardised to the candidate's builds).
    public var minimumRatio = 1.5
    /// Failures of a reason a route never had on the stable revision, at least, to count as new.
    public var minimumNewReasonFailures = 5
    /// A reason is a route's on the stable revision only when it failed with it from at least
    /// this many networks (after bounding): one network claiming it once does not make it so.
    /// Few, so that a reason honest networks report now and then stays known; never more
    /// than `minimumNetworks` (a deployment that asks less breadth of a trip, such as one
    /// whose phones all come through one network, asks less of a reason too).
    public var minimumReasonNetworks = 3
    /// Breadth: a finding needs candidate failures from at least this many installs
    /// (install-days) and networks, and a step advances only on evidence from at least
    /// `minimumInstalls` installs. At most `GuardCounts.breadthCap`.
    public var minimumInstalls = 25
    public var minimumNetworks = 10
    /// A cell is evidence only when its stable resolutions come from `minimumNetworks`
    /// networks and from at least this share of every network on the stable side
    /// (`GuardCounts.shared`): an attacker must hold a quarter of the networks the fleet
    /// posts from to make a cell of its own.
    public var cellNetworkShare = 0.25
    /// A network counts for at most the larger of `networkFloor` resolutions and the
    /// `networkQuantile` of all networks' on its side (`GuardCounts.trimmed`).
    public var networkFloor = 5
    public var networkQuantile = 0.9
    /// A network's failures in a cell are at most the `1 − outlierTail` quantile of what its
    /// resolutions would show at the other networks' rate (`GuardCounts.bounded`), on both
    /// sides; bounds are recomputed up to `boundingRounds` times.
    public var outlierTail = 0.001
    public var boundingRounds = 8

    public init() {}

    /// The look a candidate with `resolutions` has reached: 0 before `minimumResolutions`,
    /// then 1, 2, … each time the evidence has grown by `lookGrowth`.
    public func look(forResolutions resolutions: Int) -> Int {
        guard resolutions >= max(1, minimumResolutions) else { return 0 }
        var look = 1
        var next = Double(max(1, minimumResolutions)) * lookGrowth
        while Double(resolutions) >= next, look < 10_000 {
            look += 1
            next *= lookGrowth
        }
        return look
    }

    /// The alpha spent at look `look` (≥ 1): alpha / (look × (look + 1)), which adds up to
    /// alpha over every look there can ever be, so the false-trip rate holds however long
    /// the rollout runs and however often it is looked at.
    public func alpha(look: Int) -> Double { alpha / (Double(max(1, look)) * Double(max(1, look) + 1)) }
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

    /// The comparisons a healthy verdict made; 1 otherwise.
    public var comparisons: Int {
        if case .healthy(let comparisons) = self { return max(1, comparisons) }
        return 1
    }
}
