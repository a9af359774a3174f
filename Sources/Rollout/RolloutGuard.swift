import Foundation

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
