import Foundation

/// The one statistical question the rollout guard asks: is the candidate's failure rate
/// higher than the stable revision's by more than chance explains? One-sided, on two
/// binomial samples (failures out of resolutions).
///
/// Fisher's exact test when any expected cell count is below 5 (the usual condition for
/// the normal approximation, which breaks down exactly where a route fails rarely), the
/// pooled two-proportion z-test otherwise (exact enough there, and constant time however
/// many resolutions are counted).
public enum GuardStatistics {
    /// P(candidate failures ≥ observed) under "both revisions fail at the same rate".
    /// - Parameters: `candidateFailures` of `candidateTotal`, `stableFailures` of `stableTotal`.
    public static func pValue(candidateFailures: Int, candidateTotal: Int, stableFailures: Int, stableTotal: Int) -> Double {
        let total = candidateTotal + stableTotal
        let failures = candidateFailures + stableFailures
        guard candidateTotal > 0, stableTotal > 0, failures > 0, failures < total else { return 1 }
        let expected = [
            Double(candidateTotal) * Double(failures) / Double(total),
            Double(candidateTotal) * Double(total - failures) / Double(total),
            Double(stableTotal) * Double(failures) / Double(total),
            Double(stableTotal) * Double(total - failures) / Double(total),
        ]
        if expected.contains(where: { $0 < 5 }) {
            return fisherUpperTail(candidateFailures, candidateTotal: candidateTotal, failures: failures, total: total)
        }
        return zTestUpperTail(candidateFailures: candidateFailures, candidateTotal: candidateTotal,
                              stableFailures: stableFailures, stableTotal: stableTotal)
    }

    /// The pooled two-proportion z statistic's upper tail: 1 − Φ(z).
    static func zTestUpperTail(candidateFailures: Int, candidateTotal: Int, stableFailures: Int, stableTotal: Int) -> Double {
        let p1 = Double(candidateFailures) / Double(candidateTotal)
        let p2 = Double(stableFailures) / Double(stableTotal)
        let pooled = Double(candidateFailures + stableFailures) / Double(candidateTotal + stableTotal)
        let standardError = (pooled * (1 - pooled) * (1 / Double(candidateTotal) + 1 / Double(stableTotal))).squareRoot()
        guard standardError > 0 else { return p1 > p2 ? 0 : 1 }
        let z = (p1 - p2) / standardError
        return 0.5 * erfc(z / 2.0.squareRoot())
    }

    /// Fisher's exact test, one-sided: the hypergeometric probability of `observed` or more
    /// of the `failures` falling among the candidate's `candidateTotal` of `total`
    /// resolutions. Terms are summed from the observed count up until they no longer
    /// change the sum, so the cost is the tail's length, not the counts'.
    static func fisherUpperTail(_ observed: Int, candidateTotal: Int, failures: Int, total: Int) -> Double {
        let highest = min(candidateTotal, failures)
        guard observed <= highest else { return 0 }
        let lowest = max(0, failures - (total - candidateTotal))
        guard observed > lowest else { return 1 }
        func logChoose(_ n: Int, _ k: Int) -> Double { lgamma(Double(n + 1)) - lgamma(Double(k + 1)) - lgamma(Double(n - k + 1)) }
        let denominator = logChoose(total, candidateTotal)
        var sum = 0.0
        for count in observed...highest {
            let term = exp(logChoose(failures, count) + logChoose(total - failures, candidateTotal - count) - denominator)
            sum += term
            if term < sum * 1e-16 { break }
        }
        return min(1, sum)
    }
}
