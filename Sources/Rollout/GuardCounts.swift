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
