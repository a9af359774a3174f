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

    /// One network's resolutions and failures.
    public struct NetworkTally: Hashable, Sendable {
        public var total = 0
        public var failures = 0

        public init(total: Int = 0, failures: Int = 0) {
            (self.total, self.failures) = (total, failures)
        }
    }

    /// One install (its source key for the day) on one network.
    public struct Contributor: Hashable, Sendable {
        public var source: EvidenceSource
        public var network: UInt64

        public init(source: EvidenceSource, network: UInt64) {
            (self.source, self.network) = (source, network)
        }
    }

    /// The most distinct installs or networks a set of outcomes remembers: the breadth the
    /// guard asks for is at most this.
    public static let breadthCap = 256

    /// Resolutions, failures (`notFound`) among them, failures by reason, and the distinct
    /// installs and networks behind them (each set held up to `breadthCap`).
    public struct Outcomes: Hashable, Sendable {
        public var total = 0
        public var failures = 0
        public var reasons: [String: Int] = [:]
        public var installs: Set<EvidenceSource> = []
        public var failingInstalls: Set<EvidenceSource> = []
        public var failingNetworks: Set<UInt64> = []
        /// Per failure reason, the distinct networks that reported it (each set held up to
        /// `breadthCap`): a reason is the stable revision's own only when as many networks
        /// report it as a trip needs (`GuardPolicy.minimumNetworks`).
        public var reasonNetworks: [String: Set<UInt64>] = [:]
        /// Resolutions and failures by network (evidence only): a trip must stand without
        /// the networks that supplied the most failures (`GuardPolicy.minimumNetworks`).
        public var byNetwork: [UInt64: NetworkTally] = [:]

        public init(total: Int = 0, failures: Int = 0, reasons: [String: Int] = [:]) {
            self.total = total
            self.failures = failures
            self.reasons = reasons
        }

        mutating func add(_ other: Outcomes) {
            total += other.total
            failures += other.failures
            reasons.merge(other.reasons, uniquingKeysWith: +)
            Self.union(&installs, other.installs)
            Self.union(&failingInstalls, other.failingInstalls)
            Self.union(&failingNetworks, other.failingNetworks)
            for (reason, networks) in other.reasonNetworks { Self.union(&reasonNetworks[reason, default: []], networks) }
            byNetwork.merge(other.byNetwork) { NetworkTally(total: $0.total + $1.total, failures: $0.failures + $1.failures) }
        }

        /// These outcomes without the resolutions of `networks`.
        func excluding(_ networks: Set<UInt64>) -> Outcomes {
            var left = self
            for network in networks {
                guard let tally = byNetwork[network] else { continue }
                left.total -= tally.total
                left.failures -= tally.failures
                left.byNetwork[network] = nil
            }
            return left
        }

        /// These outcomes with only the resolutions of `kept` networks: the others' totals and
        /// failures taken out, the reasons cut in proportion, and they no longer count as
        /// failing. Outcomes without networks are returned as they are.
        func only(_ kept: Set<UInt64>) -> Outcomes {
            let others = Set(byNetwork.keys.filter { !kept.contains($0) })
            guard !others.isEmpty else { return self }
            var left = excluding(others)
            if left.failures < failures {
                let share = Double(left.failures) / Double(failures)
                left.reasons = reasons.mapValues { Int((Double($0) * share).rounded()) }.filter { $0.value > 0 }
            }
            left.failingNetworks.subtract(others)
            for reason in left.reasonNetworks.keys { left.reasonNetworks[reason]!.subtract(others) }
            return left
        }

        static func union<T>(_ set: inout Set<T>, _ other: Set<T>) {
            for item in other where set.count < GuardCounts.breadthCap { set.insert(item) }
        }

        public var rate: Double { total == 0 ? 0 : Double(failures) / Double(total) }
    }

    /// Adds `count` resolutions of `cell` from `contributor`, failed with `failure` (a reason) or not.
    public mutating func add(_ cell: Cell, count: Int, failure: String?, from contributor: Contributor) {
        var outcomes = cells[cell] ?? Outcomes()
        outcomes.total += count
        outcomes.byNetwork[contributor.network, default: NetworkTally()].total += count
        if outcomes.installs.count < Self.breadthCap { outcomes.installs.insert(contributor.source) }
        if let failure {
            outcomes.byNetwork[contributor.network, default: NetworkTally()].failures += count
            outcomes.failures += count
            outcomes.reasons[failure, default: 0] += count
            if outcomes.failingInstalls.count < Self.breadthCap { outcomes.failingInstalls.insert(contributor.source) }
            if outcomes.failingNetworks.count < Self.breadthCap { outcomes.failingNetworks.insert(contributor.network) }
            if outcomes.reasonNetworks[failure, default: []].count < Self.breadthCap { outcomes.reasonNetworks[failure, default: []].insert(contributor.network) }
        }
        cells[cell] = outcomes
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

extension GuardCounts {
    /// The cells honest traffic shares, and both sides kept to them. A cell (a route on a
    /// build) is evidence only when the stable revision's resolutions in it come from at least
    /// `policy.minimumNetworks` networks and at least `policy.cellNetworkShare` of every
    /// network on the stable side; in a cell kept, the candidate's resolutions count only from
    /// networks that also report its stable traffic. So a build or a route only an attacker
    /// reports (a build the fleet no longer runs, a route nobody opens) is no evidence either
    /// way, and every network whose candidate claims count is one the stable side vouches for
    /// in that cell. Counts whose stable side has no networks are returned as they are.
    /// - Complexity: O(cells × networks in them).
    public static func shared(candidate: GuardCounts, stable: GuardCounts, policy: GuardPolicy) -> (candidate: GuardCounts, stable: GuardCounts) {
        let reporting = stable.cells.mapValues { Set($0.byNetwork.lazy.filter { $0.value.total > 0 }.map(\.key)) }
        let everyNetwork = reporting.values.reduce(into: Set<UInt64>()) { $0.formUnion($1) }
        guard !everyNetwork.isEmpty else { return (candidate, stable) }
        let needed = max(policy.minimumNetworks, Int((policy.cellNetworkShare * Double(everyNetwork.count)).rounded(.up)))
        let kept = reporting.filter { $0.value.count >= needed }
        var (honestCandidate, honestStable) = (GuardCounts(), GuardCounts())
        for (cell, networks) in kept {
            honestStable.cells[cell] = stable.cells[cell]
            if let outcomes = candidate.cells[cell] { honestCandidate.cells[cell] = outcomes.only(networks) }
        }
        return (honestCandidate, honestStable)
    }

    /// The distinct networks behind these counts' resolutions.
    public var networks: Set<UInt64> {
        cells.values.reduce(into: Set<UInt64>()) { networks, outcomes in
            for (network, tally) in outcomes.byNetwork where tally.total > 0 { networks.insert(network) }
        }
    }

    /// These counts with each network's share capped, twice: a network whose resolutions
    /// (over every cell) exceed the larger of `policy.networkFloor` and the
    /// `policy.networkQuantile` of all networks' is scaled down to that; then, in each cell, a
    /// network whose resolutions there exceed the same quantile of the networks' in that cell
    /// is scaled down to it — its failure rate kept each time. So a network weighs like a
    /// typical one overall and in every comparison: it cannot pour its whole share into the
    /// one cell others spread over many. Counts without networks are returned as they are.
    /// - Complexity: O(cells × networks in them × log).
    public func trimmed(policy: GuardPolicy) -> GuardCounts {
        var perNetwork: [UInt64: Int] = [:]
        for outcomes in cells.values { for (network, tally) in outcomes.byNetwork { perNetwork[network, default: 0] += tally.total } }
        var result = self
        if let cap = Self.cap(perNetwork.values, policy: policy) {
            let scales = perNetwork.filter { $0.value > cap }.mapValues { Double(cap) / Double($0) }
            if !scales.isEmpty {
                for (cell, outcomes) in cells { result.cells[cell] = Self.scaled(outcomes, scales) }
            }
        }
        for (cell, outcomes) in result.cells {
            guard let cap = Self.cap(outcomes.byNetwork.values.lazy.map(\.total), policy: policy) else { continue }
            let scales = outcomes.byNetwork.filter { $0.value.total > cap }.mapValues { Double(cap) / Double($0.total) }
            if !scales.isEmpty { result.cells[cell] = Self.scaled(outcomes, scales) }
        }
        return result
    }

    /// The larger of the floor and the quantile of `totals`; nil for fewer than two.
    static func cap<Totals: Collection>(_ totals: Totals, policy: GuardPolicy) -> Int? where Totals.Element == Int {
        guard totals.count > 1 else { return nil }
        let sorted = totals.sorted()
        return max(policy.networkFloor, sorted[min(sorted.count - 1, Int(Double(sorted.count - 1) * policy.networkQuantile))])
    }

    /// `outcomes` with each network in `scales` scaled down by its factor, its rate kept; the
    /// failures removed are taken from the reasons in proportion.
    static func scaled(_ outcomes: Outcomes, _ scales: [UInt64: Double]) -> Outcomes {
        var trimmed = outcomes
        for (network, scale) in scales {
            guard let tally = outcomes.byNetwork[network] else { continue }
            let keptTotal = Int((Double(tally.total) * scale).rounded())
            let keptFailures = min(keptTotal, Int((Double(tally.failures) * scale).rounded()))
            trimmed.total -= tally.total - keptTotal
            let removedFailures = tally.failures - keptFailures
            if removedFailures > 0, trimmed.failures > 0 {
                let share = Double(trimmed.failures - removedFailures) / Double(trimmed.failures)
                trimmed.reasons = trimmed.reasons.mapValues { Int((Double($0) * share).rounded()) }
            }
            trimmed.failures -= removedFailures
            trimmed.byNetwork[network] = NetworkTally(total: keptTotal, failures: keptFailures)
        }
        return trimmed
    }
}

extension GuardCounts {
    /// These counts with each network's failures in each cell bounded by what its resolutions
    /// there plausibly show at the rate of the networks that are not outliers: at most the
    /// `1 − policy.outlierTail` quantile of a binomial of its resolutions at the rate of every
    /// other network in the cell not yet bounded (one failure and two resolutions added, so a
    /// rate is never 0 or 1). A network bounded once is an outlier: its failures no longer
    /// count in the others' rate, which is computed again, with the bounds, until no new
    /// network is bounded (at most `policy.boundingRounds` times). So networks claiming that
    /// everything failed are held to what their volume plausibly shows at the rate of the
    /// rest. Failures removed are taken from the cell's reasons in proportion, and a network
    /// left without failures stops counting as failing. Counts without networks are returned
    /// as they are. The guard bounds both sides together (`bounded(candidate:stable:policy:)`);
    /// one side alone is for tests, which compare the two.
    /// - Complexity: O(rounds × Σ over cells of its networks × their bound).
    func bounded(policy: GuardPolicy) -> GuardCounts { keeping(keptShares(policy: policy)) }

    /// Both sides bounded together: each network in each cell keeps the smaller of the shares
    /// of its failures that bounding each side alone would keep, on both sides. An honest
    /// network that fails more than most is then cut alike on both sides (the stable side,
    /// with more resolutions per network, is where its bound bites first: bounded alone, the
    /// stable rate fell and the candidate looked worse), while a network forging failures on
    /// one side loses them there and has none to lose on the other.
    public static func bounded(candidate: GuardCounts, stable: GuardCounts, policy: GuardPolicy) -> (candidate: GuardCounts, stable: GuardCounts) {
        var shares = candidate.keptShares(policy: policy)
        for (cell, networks) in stable.keptShares(policy: policy) {
            for (network, share) in networks { shares[cell, default: [:]][network] = min(share, shares[cell]?[network] ?? 1) }
        }
        return (candidate.keeping(shares), stable.keeping(shares))
    }

    /// Per cell, the share of each bounded network's failures that its bound keeps (below 1).
    func keptShares(policy: GuardPolicy) -> [Cell: [UInt64: Double]] {
        var result: [Cell: [UInt64: Double]] = [:]
        for (cell, outcomes) in cells where outcomes.failures > 0 && outcomes.byNetwork.count > 1 {
            var tallies = outcomes.byNetwork
            var outliers: Set<UInt64> = []
            for _ in 0..<max(1, policy.boundingRounds) {
                // The rate of the networks that are not outliers (each leaves itself out below).
                var (total, failures) = (0, 0)
                for (network, tally) in tallies where !outliers.contains(network) {
                    (total, failures) = (total + tally.total, failures + tally.failures)
                }
                var found: [UInt64] = []
                for (network, tally) in outcomes.byNetwork where tally.failures > 0 {
                    let own = outliers.contains(network) ? NetworkTally() : tally
                    let rate = Double(failures - own.failures + 1) / Double(total - own.total + 2)
                    // The bound is never below the median, which is at least ⌊trials × rate⌋.
                    let bound = Double(tally.failures) > Double(tally.total) * rate
                        ? GuardStatistics.binomialBound(trials: tally.total, rate: rate, tail: policy.outlierTail) : tally.failures
                    tallies[network]!.failures = min(tally.failures, bound)
                    guard tally.failures > bound else { continue }
                    if !outliers.contains(network) { found.append(network) }
                }
                guard !found.isEmpty else { break }
                outliers.formUnion(found)
            }
            for (network, tally) in tallies {
                let original = outcomes.byNetwork[network]!.failures
                if tally.failures < original { result[cell, default: [:]][network] = Double(tally.failures) / Double(original) }
            }
        }
        return result
    }

    /// These counts with each listed network's failures in a cell cut to its share (rounded
    /// to the nearest), the cell's reasons in proportion.
    func keeping(_ shares: [Cell: [UInt64: Double]]) -> GuardCounts {
        var result = self
        for (cell, networks) in shares {
            guard let outcomes = cells[cell] else { continue }
            var tallies = outcomes.byNetwork
            for (network, share) in networks {
                guard let tally = tallies[network], tally.failures > 0 else { continue }
                tallies[network]!.failures = min(tally.failures, Int((Double(tally.failures) * share).rounded()))
            }
            let kept = tallies.values.reduce(0) { $0 + $1.failures }
            guard kept < outcomes.failures else { continue }
            var bounded = outcomes
            let share = Double(kept) / Double(outcomes.failures)
            bounded.reasons = outcomes.reasons.mapValues { Int((Double($0) * share).rounded()) }
            bounded.failures = kept
            bounded.byNetwork = tallies
            for (network, tally) in tallies where tally.failures == 0 && (outcomes.byNetwork[network]?.failures ?? 0) > 0 {
                bounded.failingNetworks.remove(network)
                for reason in bounded.reasonNetworks.keys { bounded.reasonNetworks[reason]!.remove(network) }
            }
            result.cells[cell] = bounded
        }
        return result
    }
}

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
    /// What counts as evidence of the counts as reported: only the cells honest traffic
    /// shares, from networks that report their stable side (`shared`), each network weighing
    /// at most what a typical one gives (`trimmed`), and no network failing in a cell more
    /// than its resolutions plausibly would at the others' rate (`bounded`). What `judge` and
    /// `detectableRise` look at.
    static func evidence(candidate: GuardCounts, stable: GuardCounts, policy: GuardPolicy) -> (candidate: GuardCounts, stable: GuardCounts) {
        let (shared, sharedStable) = GuardCounts.shared(candidate: candidate, stable: stable, policy: policy)
        return GuardCounts.bounded(candidate: shared.trimmed(policy: policy), stable: sharedStable.trimmed(policy: policy), policy: policy)
    }

    /// Judges at `look` (≥ 1; `GuardPolicy.look(forResolutions:)`), spending that look's
    /// alpha among the comparisons it makes.
    public static func judge(candidate untrimmed: GuardCounts, stable untrimmed2: GuardCounts, policy: GuardPolicy = GuardPolicy(), look: Int = 1) -> GuardVerdict {
        // Each network counts for at most what a typical one gives (`trimmed`): however many
        // source keys a network makes up, it weighs like one of the larger honest ones.
        // And no network fails in a cell more than its resolutions plausibly would at the rate
        // of the others (`bounded`): a few networks claiming failures on the stable side
        // cannot raise its baseline over a broken candidate, nor claim the candidate fails.
        // Only cells honest traffic shares are evidence, and only from networks that report
        // their stable side (`shared`): an attacker cannot choose a cell where nobody else posts.
        let (candidate, stable) = evidence(candidate: untrimmed, stable: untrimmed2, policy: policy)
        let (candidateOverall, stableOverall) = (candidate.overall, stable.overall)
        guard candidateOverall.total >= policy.minimumResolutions, stableOverall.total >= policy.minimumResolutions else {
            return .waiting("The candidate has \(candidateOverall.total) resolutions and the stable revision \(stableOverall.total) counted as evidence; "
                + "at least \(policy.minimumResolutions) each are needed to judge.")
        }

        // Every comparison with enough data on both sides, each stratified by build, then one
        // shared threshold.
        struct Comparison {
            var scope: GuardFinding.Scope
            var route: String?
            var build: String?
            var reason: String?
            /// Per build: the candidate's and the stable revision's outcomes.
            var strata: [(candidate: GuardCounts.Outcomes, stable: GuardCounts.Outcomes)]
            var candidate: GuardCounts.Outcomes
        }
        func byBuild(_ filter: (GuardCounts.Cell) -> Bool) -> [(candidate: GuardCounts.Outcomes, stable: GuardCounts.Outcomes)] {
            var builds: [String: (candidate: GuardCounts.Outcomes, stable: GuardCounts.Outcomes)] = [:]
            for (cell, outcomes) in candidate.cells where filter(cell) { builds[cell.build, default: (.init(), .init())].candidate.add(outcomes) }
            for (cell, outcomes) in stable.cells where filter(cell) && builds[cell.build] != nil { builds[cell.build]!.stable.add(outcomes) }
            return builds.keys.sorted().map { builds[$0]! }
        }
        var comparisons = [Comparison(scope: .overall, strata: byBuild { _ in true }, candidate: candidateOverall)]
        func enough(_ outcomes: GuardCounts.Outcomes?) -> Bool { (outcomes?.total ?? 0) >= policy.minimumPerComparison }
        let (candidateRoutes, stableRoutes) = (candidate.byRoute, stable.byRoute)
        for route in candidateRoutes.keys.sorted() where enough(candidateRoutes[route]) && enough(stableRoutes[route]) {
            let (mine, theirs) = (candidateRoutes[route]!, stableRoutes[route]!)
            let strata = byBuild { $0.route == route }
            comparisons.append(Comparison(scope: .route, route: route, strata: strata, candidate: mine))
            // A reason is the stable revision's own when it failed with it from
            // `minimumReasonNetworks` networks: one cannot turn the comparison off by claiming it once.
            func known(_ reason: String) -> Bool {
                (theirs.reasons[reason] ?? 0) > 0
                    && (theirs.reasonNetworks[reason]?.count ?? 0) >= min(policy.minimumReasonNetworks, policy.minimumNetworks)
            }
            for reason in mine.reasons.keys.sorted() where !known(reason) && mine.reasons[reason]! >= policy.minimumNewReasonFailures {
                // The reason's failures against none: each build's candidate failures of that reason.
                let reasonStrata = strata.map { stratum -> (candidate: GuardCounts.Outcomes, stable: GuardCounts.Outcomes) in
                    var only = stratum.candidate
                    only.failures = stratum.candidate.reasons[reason] ?? 0
                    var none = stratum.stable
                    none.failures = 0
                    return (only, none)
                }
                var only = mine
                only.failures = mine.reasons[reason]!
                comparisons.append(Comparison(scope: .newReason, route: route, reason: reason, strata: reasonStrata, candidate: only))
            }
        }
        for cell in candidate.cells.keys.sorted() where enough(candidate.cells[cell]) && enough(stable.cells[cell]) {
            // A route on one build is only worth its own comparison when the route runs on several.
            guard candidate.cells.keys.contains(where: { $0.route == cell.route && $0.build != cell.build }) else { continue }
            comparisons.append(Comparison(scope: .routeOnBuild, route: cell.route, build: cell.build,
                                          strata: [(candidate.cells[cell]!, stable.cells[cell]!)], candidate: candidate.cells[cell]!))
        }

        let threshold = policy.alpha(look: look) / Double(comparisons.count)
        var findings: [GuardFinding] = []
        var thin: GuardFinding?
        for comparison in comparisons {
            let strata = comparison.strata.filter { $0.candidate.total > 0 && $0.stable.total > 0 }
            let candidateTotal = strata.reduce(0) { $0 + $1.candidate.total }
            let candidateFailures = strata.reduce(0) { $0 + $1.candidate.failures }
            guard candidateTotal > 0 else { continue }
            // The stable rate standardised to the candidate's builds: what the candidate would
            // fail if each build failed as it does on the stable revision.
            let expected = strata.reduce(0.0) { $0 + Double($1.candidate.total) * $1.stable.rate }
            let candidateRate = Double(candidateFailures) / Double(candidateTotal)
            let stableRate = expected / Double(candidateTotal)
            guard candidateRate - stableRate >= policy.minimumIncrease, candidateRate >= stableRate * policy.minimumRatio else { continue }
            let p = GuardStatistics.pValue(strata.map {
                GuardStatistics.Stratum(candidateFailures: $0.candidate.failures, candidateTotal: $0.candidate.total,
                                        stableFailures: $0.stable.failures, stableTotal: $0.stable.total)
            })
            guard p < threshold else { continue }
            let stableTotal = strata.reduce(0) { $0 + $1.stable.total }, stableFailures = strata.reduce(0) { $0 + $1.stable.failures }
            let finding = GuardFinding(scope: comparison.scope, route: comparison.route, build: comparison.build, reason: comparison.reason,
                                       candidateFailures: candidateFailures, candidateTotal: candidateTotal,
                                       stableFailures: stableFailures, stableTotal: stableTotal, pValue: p, threshold: threshold)
            // Breadth: a trip needs failures from `minimumInstalls` installs, and the rise must
            // stand — as significant, as large — without the `minimumNetworks - 1` networks
            // that supplied the most candidate failures: fewer networks cannot make it alone.
            // A rise that is significant on the trimmed evidence but not yet that broad holds
            // the rollout where it is (waiting for more evidence); one network alone cannot
            // make such a rise, since trimming weighs it like any other.
            guard comparison.candidate.failingInstalls.count >= policy.minimumInstalls,
                  comparison.candidate.failingNetworks.count >= policy.minimumNetworks,
                  Self.standsWithout(topNetworks: policy.minimumNetworks - 1, strata: strata, policy: policy, threshold: threshold) else {
                if thin == nil { thin = finding }
                continue
            }
            findings.append(finding)
        }
        guard findings.isEmpty else {
            // Most significant first; among equals, the most specific (it names what to fix).
            let specificity: [GuardFinding.Scope: Int] = [.newReason: 0, .routeOnBuild: 1, .route: 2, .overall: 3]
            return .tripped(findings.sorted { ($0.pValue, specificity[$0.scope]!) < ($1.pValue, specificity[$1.scope]!) })
        }
        if let thin {
            return .waiting("A rise not yet broad enough to trip (\(policy.minimumInstalls) installs and \(policy.minimumNetworks) networks, "
                + "standing without the \(policy.minimumNetworks - 1) largest): \(thin.description). Waiting for more evidence.")
        }
        guard candidateOverall.installs.count >= policy.minimumInstalls else {
            return .waiting("The candidate's evidence comes from \(candidateOverall.installs.count) install(s); "
                + "at least \(policy.minimumInstalls) are needed to call it healthy.")
        }
        // Advancing is a decision too: the same breadth as a trip, from networks the stable
        // side vouches for (counts without networks, in tables, have none to ask).
        let networks = candidate.networks.count
        guard networks >= policy.minimumNetworks || (networks == 0 && stable.networks.isEmpty) else {
            return .waiting("The candidate's evidence comes from \(networks) network(s) that also report the stable revision on the same "
                + "route and build; at least \(policy.minimumNetworks) are needed to call it healthy.")
        }
        return .healthy(comparisons: comparisons.count)
    }

    /// The smallest rise, in failure-rate points, that everything together would show as a
    /// regression on this much evidence: the candidate failing `d` points above the stable
    /// revision on every build (its resolutions as they are), significant at `look`'s alpha
    /// shared among `comparisons` comparisons, and as large as conditions 1 and 2 ask. What
    /// an operator reads as "this evidence can see a break of `d` points or more"; nil when
    /// either side is below `minimumResolutions` or no rise up to a rate of 1 would show.
    /// Breadth (installs, networks) comes on top of it.
    /// - Complexity: O(32 × the test's cost on the evidence).
    public static func detectableRise(candidate untrimmed: GuardCounts, stable untrimmed2: GuardCounts, policy: GuardPolicy = GuardPolicy(),
                                      look: Int = 1, comparisons: Int = 1) -> Double? {
        let (candidate, stable) = evidence(candidate: untrimmed, stable: untrimmed2, policy: policy)
        guard candidate.overall.total >= policy.minimumResolutions, stable.overall.total >= policy.minimumResolutions else { return nil }
        var builds: [String: (candidate: Int, stable: GuardCounts.Outcomes)] = [:]
        for (cell, outcomes) in candidate.cells { builds[cell.build, default: (0, .init())].candidate += outcomes.total }
        for (cell, outcomes) in stable.cells where builds[cell.build] != nil { builds[cell.build]!.stable.add(outcomes) }
        let strata = builds.values.filter { $0.candidate > 0 && $0.stable.total > 0 }
        let total = strata.reduce(0) { $0 + $1.candidate }
        guard total > 0 else { return nil }
        let stableRate = strata.reduce(0.0) { $0 + Double($1.candidate) * $1.stable.rate } / Double(total)
        let threshold = policy.alpha(look: look) / Double(max(1, comparisons))
        func shows(_ rise: Double) -> Bool {
            GuardStatistics.pValue(strata.map {
                GuardStatistics.Stratum(candidateFailures: min($0.candidate, Int((Double($0.candidate) * ($0.stable.rate + rise)).rounded(.up))),
                                        candidateTotal: $0.candidate, stableFailures: $0.stable.failures, stableTotal: $0.stable.total)
            }) < threshold
        }
        var (low, high) = (max(policy.minimumIncrease, (policy.minimumRatio - 1) * stableRate), 1 - stableRate)
        guard low <= high, shows(high) else { return nil }
        if shows(low) { return low }
        for _ in 0..<32 where high - low > 0.0005 {
            let middle = (low + high) / 2
            if shows(middle) { high = middle } else { low = middle }
        }
        return high
    }

    /// Whether a rise is still a regression once the `count` networks that supplied the most
    /// candidate failures across `strata` are left out of the candidate's side.
    static func standsWithout(topNetworks count: Int, strata: [(candidate: GuardCounts.Outcomes, stable: GuardCounts.Outcomes)],
                              policy: GuardPolicy, threshold: Double) -> Bool {
        guard count > 0 else { return true }
        var failures: [UInt64: Int] = [:]
        for stratum in strata { for (network, tally) in stratum.candidate.byNetwork { failures[network, default: 0] += tally.failures } }
        let top = Set(failures.sorted { ($0.value, $0.key) > ($1.value, $1.key) }.prefix(count).map(\.key))
        let rest = strata.map { (candidate: $0.candidate.excluding(top), stable: $0.stable) }.filter { $0.candidate.total > 0 && $0.stable.total > 0 }
        let candidateTotal = rest.reduce(0) { $0 + $1.candidate.total }, candidateFailures = rest.reduce(0) { $0 + $1.candidate.failures }
        guard candidateTotal > 0 else { return false }
        let stableRate = rest.reduce(0.0) { $0 + Double($1.candidate.total) * $1.stable.rate } / Double(candidateTotal)
        let candidateRate = Double(candidateFailures) / Double(candidateTotal)
        guard candidateRate - stableRate >= policy.minimumIncrease, candidateRate >= stableRate * policy.minimumRatio else { return false }
        return GuardStatistics.pValue(rest.map {
            GuardStatistics.Stratum(candidateFailures: $0.candidate.failures, candidateTotal: $0.candidate.total,
                                    stableFailures: $0.stable.failures, stableTotal: $0.stable.total)
        }) < threshold
    }
}
