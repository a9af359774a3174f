#!/usr/bin/env python3
"""The rollout guard's rule, written again from docs/rollouts.md in Python with 60-digit
arithmetic (mpmath), as the reference the Swift tables are checked against:

  - the exact stratified p-value: P(sum X_k >= sum x_k), X_k hypergeometric per build
    (Fisher's exact test with one stratum), every term summed, nothing pruned;
  - alpha spending over looks: look j spends alpha / (j (j + 1));
  - the rise a trip needs: the candidate's rate against the stable rate standardised to the
    candidate's builds, at least min_increase points and min_ratio times;
  - the bound on one network's failures in a cell (`GuardCounts.bounded`): the smallest k
    with P(X <= k) >= 1 - tail, X binomial of its resolutions at the others' rate.

`python3 guard-reference.py` prints the p-values, boundary rows and bounds that
Tests/RolloutTests/RolloutGuardTests.swift holds; `--check` recomputes them and exits 1 if any
differs from the values in that file by more than 1e-9 relative.
"""
import re
import sys
from mpmath import mp, mpf, binomial

mp.dps = 60


def stratified_p(strata):
    """strata: [(candidate failures, candidate total, stable failures, stable total)]."""
    dist = {0: mpf(1)}
    observed = 0
    for x, n, y, m in strata:
        if n == 0 or m == 0:
            continue
        f, total = x + y, n + m
        lo, hi = max(0, f - m), min(n, f)
        observed += x
        denominator = binomial(total, n)
        pmf = {k: binomial(f, k) * binomial(total - f, n - k) / denominator for k in range(lo, hi + 1)}
        new = {}
        for a, pa in dist.items():
            for b, pb in pmf.items():
                new[a + b] = new.get(a + b, mpf(0)) + pa * pb
        dist = new
    return min(mpf(1), sum((p for s, p in dist.items() if s >= observed), mpf(0)))


def alpha_at(look, alpha=0.001):
    return alpha / (look * (look + 1))


# (label, strata) — single strata are Fisher's exact test.
P_ROWS = [
    ("fisher 3/50 v 0/50", [(3, 50, 0, 50)]),
    ("fisher 10/500 v 0/1000", [(10, 500, 0, 1000)]),
    ("fisher 8/500 v 0/1000", [(8, 500, 0, 1000)]),
    ("fisher 5/100 v 1/100", [(5, 100, 1, 100)]),
    ("fisher 1/10 v 1/10", [(1, 10, 1, 10)]),
    ("fisher 0/10 v 5/10", [(0, 10, 5, 10)]),
    ("fisher 40/100 v 50/5000", [(40, 100, 50, 5000)]),
    ("fisher 200/2000 v 1000/50000", [(200, 2000, 1000, 50000)]),
    ("fisher 16/500 v 400/20000", [(16, 500, 400, 20000)]),
    ("fisher 60/1000 v 40/1000", [(60, 1000, 40, 1000)]),
    ("the issue's healthy trip: 23/391 v 91/3745", [(23, 391, 91, 3745)]),
    ("two builds, different baselines, same rates", [(44, 400, 110, 1000), (12, 400, 30, 1000)]),
    ("two builds, one broken", [(44, 400, 110, 1000), (40, 400, 30, 1000)]),
    ("three builds", [(5, 120, 30, 900), (9, 80, 20, 700), (30, 300, 60, 3000)]),
]


# The sequential test's boundary: one route on one build (two comparisons, so each look's
# alpha is halved), 400 candidate resolutions against 12 failures of 1,000 on the stable
# revision; the fewest candidate failures that trip at each look.
BOUNDARY_LOOKS = (1, 2, 10)


def boundary(look):
    threshold = alpha_at(look) / 2
    return next(x for x in range(401) if stratified_p([(x, 400, 12, 1000)]) < threshold)


# (trials, rate, tail): the bound GuardStatistics.binomialBound must give.
BOUND_ROWS = [(50, "0.03", "0.001"), (25, "0.03", "0.001"), (50, "0.155", "0.001"), (1, "0.5", "0.001"),
              (400, "0.0005", "0.001"), (100000, "0.1", "0.001"), (20, "0.0", "0.001"), (20, "1.0", "0.001")]


def binomial_bound(trials, rate, tail):
    rate, tail = mpf(rate), mpf(tail)
    if trials == 0 or rate == 0:
        return 0
    if rate >= 1:
        return trials
    below = mpf(0)
    for k in range(trials + 1):
        below += binomial(trials, k) * rate ** k * (1 - rate) ** (trials - k)
        if below >= 1 - tail:
            return k
    return trials


def main():
    rows = [(label, strata, stratified_p(strata)) for label, strata in P_ROWS]
    if "--check" in sys.argv:
        text = open(sys.argv[sys.argv.index("--check") + 1]).read()
        bad = 0
        for label, strata, p in rows:
            match = re.search(r'\("%s", \[[^\]]*\], ([0-9.e+-]+)\)' % re.escape(label), text)
            if not match:
                print("missing row: %s" % label)
                bad += 1
                continue
            held = mpf(match.group(1))
            if abs(held - p) > p * mpf("1e-9") + mpf("1e-300"):
                print("%s: table %s, reference %s" % (label, match.group(1), mp.nstr(p, 17)))
                bad += 1
        for look in BOUNDARY_LOOKS:
            trips = boundary(look)
            if "(look: %d, trips: %d)" % (look, trips) not in text:
                print("boundary at look %d: the reference trips at %d failures, the table says otherwise" % (look, trips))
                bad += 1
        for trials, rate, tail in BOUND_ROWS:
            row = "(%d, %s, %s, %d)" % (trials, rate, tail, binomial_bound(trials, rate, tail))
            if row not in text:
                print("bound %s: the table does not hold the reference's row" % row)
                bad += 1
        print("guard-reference: %d rows, %d boundaries and %d bounds, %d differ" % (len(rows), len(BOUNDARY_LOOKS), len(BOUND_ROWS), bad))
        sys.exit(1 if bad else 0)
    for label, strata, p in rows:
        print('("%s", [%s], %s),' % (label, ", ".join("(%d, %d, %d, %d)" % s for s in strata), mp.nstr(p, 17, min_fixed=0, max_fixed=0)))
    for look in (1, 2, 3, 10, 100):
        print("alpha at look %d: %s" % (look, alpha_at(look)))
    for look in BOUNDARY_LOOKS:
        print("(look: %d, trips: %d)" % (look, boundary(look)))
    for trials, rate, tail in BOUND_ROWS:
        print("(%d, %s, %s, %d)," % (trials, rate, tail, binomial_bound(trials, rate, tail)))


if __name__ == "__main__":
    main()
