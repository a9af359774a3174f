import Foundation

/// The one statistical question the rollout guard asks: is the candidate's failure rate
/// higher than the stable revision's by more than chance explains? One-sided, on two
/// binomial samples (failures out of resolutions), within strata (app builds) whose
/// baselines may differ.
///
/// Exact everywhere: conditional on each stratum's margins, the candidate's failures in a
/// stratum are hypergeometric under "both revisions fail at the same rate", and the strata
/// are independent, so the p-value is the upper tail of the sum of independent
/// hypergeometrics (the exact form of the Cochran–Mantel–Haenszel test; with one stratum,
/// Fisher's exact test). No normal approximation: the guard's thresholds (alpha shared
/// among comparisons and looks) sit in far tails where it is anticonservative.
public enum GuardStatistics {
    /// One stratum: candidate failures of resolutions, stable failures of resolutions.
    public struct Stratum: Hashable, Sendable {
        public var candidateFailures: Int
        public var candidateTotal: Int
        public var stableFailures: Int
        public var stableTotal: Int

        public init(candidateFailures: Int, candidateTotal: Int, stableFailures: Int, stableTotal: Int) {
            (self.candidateFailures, self.candidateTotal) = (candidateFailures, candidateTotal)
            (self.stableFailures, self.stableTotal) = (stableFailures, stableTotal)
        }
    }

    /// P(candidate failures ≥ observed) under "both revisions fail at the same rate": Fisher's
    /// exact test, one-sided.
    public static func pValue(candidateFailures: Int, candidateTotal: Int, stableFailures: Int, stableTotal: Int) -> Double {
        pValue([Stratum(candidateFailures: candidateFailures, candidateTotal: candidateTotal,
                        stableFailures: stableFailures, stableTotal: stableTotal)])
    }

    /// The exact stratified p-value: P(Σ X_k ≥ Σ x_k) with X_k hypergeometric per stratum.
    /// Strata without resolutions on either side say nothing and are left out.
    /// - Complexity: O(Σ support) to tabulate, then a convolution of the tabulated supports
    ///   (terms below 1e-300, where a double's range ends, dropped).
    public static func pValue(_ strata: [Stratum]) -> Double {
        var distribution: [Double] = [1]
        var offset = 0
        var observed = 0
        for stratum in strata where stratum.candidateTotal > 0 && stratum.stableTotal > 0 {
            let total = stratum.candidateTotal + stratum.stableTotal
            let failures = stratum.candidateFailures + stratum.stableFailures
            let lowest = max(0, failures - stratum.stableTotal), highest = min(stratum.candidateTotal, failures)
            observed += stratum.candidateFailures
            guard highest > lowest else {
                offset += lowest
                continue
            }
            let (pmf, start) = hypergeometric(lowest: lowest, highest: highest, drawn: stratum.candidateTotal, failures: failures, total: total)
            distribution = convolve(distribution, pmf)
            offset += start
        }
        let first = observed - offset
        guard first > 0 else { return 1 }
        guard first < distribution.count else { return 0 }
        return min(1, distribution[first...].reduce(0, +))
    }

    /// The smallest k with P(X ≤ k) ≥ 1 − `tail`, for X binomial of `trials` at `rate`: the
    /// most failures `trials` resolutions plausibly show at that rate (`GuardCounts.bounded`).
    /// Summed from 0 in logarithms, so no term underflows into the sum before it matters.
    /// - Complexity: O(the bound).
    public static func binomialBound(trials: Int, rate: Double, tail: Double) -> Int {
        guard trials > 0, rate > 0 else { return 0 }
        guard rate < 1 else { return trials }
        let logOdds = log(rate) - log1p(-rate)
        var logTerm = Double(trials) * log1p(-rate)
        var below = exp(logTerm)
        var bound = 0
        while below < 1 - tail, bound < trials {
            logTerm += log(Double(trials - bound) / Double(bound + 1)) + logOdds
            bound += 1
            below += exp(logTerm)
        }
        return bound
    }

    /// The hypergeometric probabilities of lowest…highest candidate failures, without the
    /// negligible ends: the kept terms and the count the first one stands for.
    static func hypergeometric(lowest: Int, highest: Int, drawn: Int, failures: Int, total: Int) -> ([Double], Int) {
        func logChoose(_ n: Int, _ k: Int) -> Double { lgamma(Double(n + 1)) - lgamma(Double(k + 1)) - lgamma(Double(n - k + 1)) }
        let denominator = logChoose(total, drawn)
        var terms = [Double]()
        terms.reserveCapacity(highest - lowest + 1)
        for count in lowest...highest {
            terms.append(exp(logChoose(failures, count) + logChoose(total - failures, drawn - count) - denominator))
        }
        let first = terms.firstIndex { $0 >= 1e-300 } ?? 0
        let last = terms.lastIndex { $0 >= 1e-300 } ?? terms.count - 1
        return (Array(terms[first...last]), lowest + first)
    }

    /// The distribution of the sum of two independent counts: O(a × b). Plain loops over
    /// the buffers, the same sums in the same order as the textbook form, so the result is
    /// the same to the bit; a look's strata convolve supports thousands wide, and an
    /// enumerated sequence's iterator cost a debug build (the one `make test` runs the
    /// rollouts on) a generic-metadata lookup per term: a look at 5,000 failures a side
    /// took 19 s there.
    static func convolve(_ a: [Double], _ b: [Double]) -> [Double] {
        var out = [Double](repeating: 0, count: a.count + b.count - 1)
        out.withUnsafeMutableBufferPointer { out in
            a.withUnsafeBufferPointer { a in
                b.withUnsafeBufferPointer { b in
                    var i = 0
                    while i < a.count {
                        let x = a[i]
                        if x != 0 {
                            var j = 0
                            while j < b.count {
                                out[i + j] += x * b[j]
                                j += 1
                            }
                        }
                        i += 1
                    }
                }
            }
        }
        let last = out.lastIndex { $0 >= 1e-300 } ?? out.count - 1
        return Array(out[...last])
    }
}
