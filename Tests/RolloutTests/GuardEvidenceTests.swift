import Foundation
import TestSupport
import Testing
@testable import Rollout

/// The guard's evidence on capped, multi-source input, and what the guard makes of it with
/// its default policy: a single install or network cannot move it, forged claims from the
/// wrong cohort are not candidate evidence, a regression spread over many installs trips it,
/// a healthy candidate with noise does not.
@Suite("Guard evidence")
struct GuardEvidenceTests {
    static let now = 1_795_000_000  // a fixed moment, mid-day UTC
    static let minute = now / 60

    static func evidence() -> GuardEvidence { GuardEvidence(candidate: 2, stable: 1, startMinute: minute - 60) }

    static func claim(_ candidate: Bool, failed: Bool, count: Int = 1, route: String = "product", build: String = "ios 5.3.0",
                      minute: Int = GuardEvidenceTests.minute) -> EvidenceClaim {
        EvidenceClaim(candidate: candidate, route: route, build: build, failure: failed ? "validationFailed" : nil, count: count, minute: minute)
    }

    static func source(_ index: Int) -> EvidenceSource { EvidenceSource(high: 7, low: UInt64(index)) }

    @Test func oneInstallWithAHugeCountCountsFive() {
        var evidence = Self.evidence()
        let counted = evidence.record([Self.claim(true, failed: true, count: 1_000_000)], source: Self.source(1), network: 1, cohort: 0, percent: 1, now: Self.now)
        #expect(counted == 5 && evidence.candidateCounts.overall.failures == 5)
        #expect(evidence.refused[.perSource] == 999_995)
        // The next day the install has a new key, and the caps start again.
        let tomorrow = evidence.record([Self.claim(true, failed: true, count: 9, minute: Self.minute + 1_440)], source: Self.source(1), network: 1,
                                       cohort: 0, percent: 1, now: Self.now + 86_400)
        #expect(tomorrow == 5)
    }

    @Test func oneNetworkWithManyInstallsCountsFiftyASide() {
        var evidence = Self.evidence()
        for index in 0..<1_000 {
            evidence.record([Self.claim(true, failed: true), Self.claim(false, failed: false)], source: Self.source(index), network: 42,
                            cohort: 0, percent: 1, now: Self.now)
        }
        #expect(evidence.candidateCounts.overall.total == 50 && evidence.stableCounts.overall.total == 50)
        #expect(evidence.refused[.perNetwork] == 1_900)
        #expect(evidence.candidateCounts.overall.failingNetworks.count == 1)
    }

    @Test("Forged failure claims for the candidate from installs it was not served to are not evidence")
    func forgedCohorts() {
        var evidence = Self.evidence()
        for index in 0..<120 {
            evidence.record([Self.claim(true, failed: true)], source: Self.source(index), network: UInt64(index), cohort: 1 + index % 99, percent: 1, now: Self.now)
            evidence.record([Self.claim(true, failed: true)], source: Self.source(1_000 + index), network: UInt64(index), cohort: nil, percent: 1, now: Self.now)
        }
        #expect(evidence.candidateCounts.overall.total == 0 && evidence.refused[.cohort] == 240)
    }

    @Test func lateAndEarlyEventsAreNotEvidence() {
        var evidence = Self.evidence()
        evidence.record([Self.claim(true, failed: false, minute: Self.minute - 11)], source: Self.source(1), network: 1, cohort: 0, percent: 1, now: Self.now)
        evidence.record([Self.claim(true, failed: false, minute: Self.minute - 9)], source: Self.source(2), network: 1, cohort: 0, percent: 1, now: Self.now)
        let early = GuardEvidence(candidate: 2, stable: 1, startMinute: Self.minute + 1)
        var started = early
        started.record([Self.claim(true, failed: false)], source: Self.source(3), network: 1, cohort: 0, percent: 1, now: Self.now)
        #expect(evidence.candidateCounts.overall.total == 1 && evidence.refused[.late] == 1)
        #expect(started.candidateCounts.overall.total == 0 && started.refused[.late] == 1)
    }

    /// `installs` installs on `networks` networks each post `perInstall` resolutions to each
    /// side; the candidate fails at `candidateRate`, the stable revision at `stableRate`
    /// (deterministic: every k-th resolution of a side fails). Extra failure claims for the
    /// candidate from `attackers` networks, `perAttacker` installs each (negative: that many
    /// installs claiming the candidate proceeded, to hide a regression).
    static func judged(installs: Int, networks: Int, candidateRate: Double, stableRate: Double,
                       attackers: Int = 0, perAttacker: Int = 0, percent: Int = 50) -> GuardVerdict {
        var evidence = Self.evidence()
        var random = SplitMix(seed: 11)
        func fails(_ rate: Double) -> Bool { Double(random.next() % 1_000_000) < rate * 1_000_000 }
        for index in 0..<installs {
            let network = UInt64((index / 2) % networks)  // each network has installs on both sides, as real ones do
            let candidate = index % 2 == 0
            let claims = (0..<5).map { _ in Self.claim(candidate, failed: fails(candidate ? candidateRate : stableRate)) }
            evidence.record(claims, source: Self.source(index), network: network, cohort: candidate ? 0 : 99, percent: percent, now: Self.now)
        }
        for attacker in 0..<attackers {
            for index in 0..<abs(perAttacker) {
                evidence.record([Self.claim(true, failed: perAttacker > 0, count: 5)], source: Self.source(1_000_000 + attacker * 10_000 + index),
                                network: 1_000 + UInt64(attacker), cohort: 0, percent: percent, now: Self.now)
            }
        }
        return RolloutGuard.judge(candidate: evidence.candidateCounts, stable: evidence.stableCounts, look: 1)
    }

    static func kind(_ verdict: GuardVerdict) -> String {
        switch verdict {
        case .healthy: "healthy"
        case .waiting: "waiting"
        case .tripped: "tripped"
        }
    }

    /// (label, installs, networks, candidate rate, stable rate, attacker networks, installs each, expected)
    static let rows: [(String, Int, Int, Double, Double, Int, Int, String)] = [
        ("a regression spread over 300 installs on 100 networks", 600, 100, 0.40, 0.03, 0, 0, "tripped"),
        ("a regression of 8 % against 3 % over 4,000 installs", 8_000, 400, 0.08, 0.03, 0, 0, "tripped"),
        ("a healthy candidate with noise", 8_000, 400, 0.03, 0.03, 0, 0, "healthy"),
        ("too few installs to call it healthy", 40, 40, 0.03, 0.03, 0, 0, "waiting"),
        ("a healthy candidate and one network of forged failures", 8_000, 400, 0.03, 0.03, 1, 500, "healthy"),
        ("nine networks of forged failures (fewer than J = 10) cannot trip it; bounded, they no longer hold its step", 2_000, 200, 0.03, 0.03, 9, 60, "healthy"),
        ("a regression under proceed claims from three networks of 1,000 installs each", 2_000, 200, 0.40, 0.03, 3, -1_000, "tripped"),
        ("an 8 % regression under proceed claims from twenty networks", 8_000, 400, 0.08, 0.03, 20, -100, "tripped"),
    ]

    @Test(arguments: rows)
    func judge(_ label: String, _ installs: Int, _ networks: Int, _ candidateRate: Double, _ stableRate: Double,
               _ attackers: Int, _ perAttacker: Int, _ expected: String) {
        let verdict = Self.judged(installs: installs, networks: networks, candidateRate: candidateRate, stableRate: stableRate,
                                  attackers: attackers, perAttacker: perAttacker)
        #expect(Self.kind(verdict) == expected, "\(label): \(verdict)")
    }

    /// 8,000 installs on 400 networks post 5 resolutions each of `product`, half on each side
    /// (every network reaches its 50 a side): the stable revision fails `stableRate`
    /// (validationFailed), the candidate the same plus `newReason` at `newRate`, or
    /// `candidateRate` in all. Then `attackers` networks of 10 installs post their network's 50
    /// stable claims, all failed with `forgedReason`.
    static func stableForged(candidateRate: Double, stableRate: Double, newReason: Double = 0, attackers: Int,
                             forgedReason: String = "validationFailed") -> GuardVerdict {
        var evidence = Self.evidence()
        var random = SplitMix(seed: 23)
        func fails(_ rate: Double) -> Bool { Double(random.next() % 1_000_000) < rate * 1_000_000 }
        for index in 0..<8_000 {
            let candidate = index % 2 == 0
            let claims = (0..<5).map { _ -> EvidenceClaim in
                if candidate, newReason > 0, fails(newReason) {
                    return EvidenceClaim(candidate: true, route: "product", build: "ios 5.3.0", failure: "expired", count: 1, minute: Self.minute)
                }
                return Self.claim(candidate, failed: fails(candidate ? candidateRate : stableRate))
            }
            evidence.record(claims, source: Self.source(index), network: UInt64((index / 2) % 400), cohort: candidate ? 0 : 99, percent: 50, now: Self.now)
        }
        for attacker in 0..<attackers {
            for index in 0..<10 {
                let forged = EvidenceClaim(candidate: false, route: "product", build: "ios 5.3.0", failure: forgedReason, count: 5, minute: Self.minute)
                evidence.record([forged], source: Self.source(2_000_000 + attacker * 100 + index), network: 5_000 + UInt64(attacker),
                                cohort: 99, percent: 50, now: Self.now)
            }
        }
        #expect(evidence.stableCounts.overall.failures >= attackers * 50, "the forged claims are within the caps: they count")
        return RolloutGuard.judge(candidate: evidence.candidateCounts, stable: evidence.stableCounts, look: 1)
    }

    /// (label, candidate rate, stable rate, the candidate's new reason, attacker networks, the reason they forge, expected)
    static let stableRows: [(String, Double, Double, Double, Int, String, String)] = [
        ("a 20 % regression under stable failures forged from 60 networks (15 % of them), each within its caps",
         0.20, 0.03, 0, 60, "validationFailed", "tripped"),
        ("the same regression under stable failures forged from 200 networks (a third of them)", 0.20, 0.03, 0, 200, "validationFailed", "tripped"),
        ("a healthy candidate under the same forged stable failures", 0.03, 0.03, 0, 60, "validationFailed", "healthy"),
        ("a new reason at 4 points over an 11 % baseline", 0.11, 0.11, 0.04, 0, "validationFailed", "tripped"),
        ("the same, with the reason claimed once for the stable revision from one network", 0.11, 0.11, 0.04, 1, "expired", "tripped"),
        ("the same, with the reason claimed from 2 networks (fewer than minimumReasonNetworks)", 0.11, 0.11, 0.04, 2, "expired", "tripped"),
    ]

    @Test(arguments: stableRows)
    func stableSideForgeries(_ label: String, _ candidateRate: Double, _ stableRate: Double, _ newReason: Double, _ attackers: Int,
                             _ forgedReason: String, _ expected: String) {
        let verdict = Self.stableForged(candidateRate: candidateRate, stableRate: stableRate, newReason: newReason, attackers: attackers,
                                        forgedReason: forgedReason)
        #expect(Self.kind(verdict) == expected, "\(label): \(verdict)")
    }

    /// 8,000 installs on 400 networks post 5 resolutions each of `product` on ios 5.3.0, half
    /// on each side, the candidate failing at `candidateRate` against 3 %. Then `attackers`
    /// networks of 10 made-up installs each post their day's share (50) of candidate claims on
    /// a cell of their own — `route` on `build` — every one failed, and, with `forgeStable`,
    /// their day's stable successes there too, so the cell has a stable side of theirs.
    static func ownCell(attackers: Int, route: String, build: String, forgeStable: Bool, candidateRate: Double = 0.03) -> GuardVerdict {
        var evidence = Self.evidence()
        var random = SplitMix(seed: 31)
        func fails(_ rate: Double) -> Bool { Double(random.next() % 1_000_000) < rate * 1_000_000 }
        for index in 0..<8_000 {
            let candidate = index % 2 == 0
            let claims = (0..<5).map { _ in Self.claim(candidate, failed: fails(candidate ? candidateRate : 0.03)) }
            evidence.record(claims, source: Self.source(index), network: UInt64((index / 2) % 400), cohort: candidate ? 0 : 99, percent: 50, now: Self.now)
        }
        for attacker in 0..<attackers {
            for index in 0..<10 {
                let source = Self.source(3_000_000 + attacker * 100 + index), network = 7_000 + UInt64(attacker)
                evidence.record([Self.claim(true, failed: true, count: 5, route: route, build: build)], source: source, network: network,
                                cohort: 0, percent: 50, now: Self.now)
                if forgeStable {
                    evidence.record([Self.claim(false, failed: false, count: 5, route: route, build: build)], source: Self.source(4_000_000 + attacker * 100 + index),
                                    network: network, cohort: 99, percent: 50, now: Self.now)
                }
            }
        }
        #expect(evidence.candidateCounts.overall.failures >= attackers * 50, "the forged claims are within the caps: they count")
        return RolloutGuard.judge(candidate: evidence.candidateCounts, stable: evidence.stableCounts, look: 1)
    }

    /// (label, attacker networks, route, build, stable side forged too, candidate rate, expected)
    static let ownCellRows: [(String, Int, String, String, Bool, Double, String)] = [
        ("10 networks' failures on a build nobody else reports", 10, "product", "ios 9.9.9", false, 0.03, "healthy"),
        ("20 networks' failures and stable successes on a build of their own", 20, "product", "ios 9.9.9", true, 0.03, "healthy"),
        ("50 networks' failures and stable successes on a build of their own", 50, "product", "ios 9.9.9", true, 0.03, "healthy"),
        ("50 networks' failures and stable successes on a route nobody opens, on the fleet's build", 50, "promo", "ios 5.3.0", true, 0.03, "healthy"),
        ("a real 20 % break beside 50 networks on a build of their own", 50, "product", "ios 9.9.9", true, 0.20, "tripped"),
    ]

    @Test("A cell only attackers fill is no evidence either way", arguments: ownCellRows)
    func cellOfTheirOwn(_ label: String, _ attackers: Int, _ route: String, _ build: String, _ forgeStable: Bool, _ candidateRate: Double,
                        _ expected: String) {
        let verdict = Self.ownCell(attackers: attackers, route: route, build: build, forgeStable: forgeStable, candidateRate: candidateRate)
        #expect(Self.kind(verdict) == expected, "\(label): \(verdict)")
        if case .tripped(let findings) = verdict {
            #expect(findings.allSatisfy { $0.build != build || build == "ios 5.3.0" }, "no finding on the attackers' build: \(findings)")
        }
    }

    /// 60 stable installs on 20 networks and no honest candidate evidence; `attackers` networks
    /// post candidate successes under 50 made-up source keys (5 each, within every cap).
    @Test("Forged successes alone advance nothing", arguments: [5, 10, 20])
    func forgedSuccessesAlone(_ attackers: Int) {
        var evidence = Self.evidence()
        for index in 0..<60 {
            evidence.record((0..<5).map { _ in Self.claim(false, failed: index == 0) }, source: Self.source(index), network: UInt64(index % 20),
                            cohort: 99, percent: 10, now: Self.now)
        }
        for key in 0..<50 {
            evidence.record([Self.claim(true, failed: false, count: 5)], source: Self.source(5_000_000 + key), network: 8_000 + UInt64(key % attackers),
                            cohort: 0, percent: 10, now: Self.now)
        }
        #expect(evidence.candidateCounts.overall.total == 250 && evidence.candidateCounts.overall.installs.count == 50)
        let verdict = RolloutGuard.judge(candidate: evidence.candidateCounts, stable: evidence.stableCounts, policy: GuardPolicy(), look: 1)
        #expect(Self.kind(verdict) == "waiting", "\(attackers) networks: \(verdict)")
    }

    /// A step whose own evidence comes only from networks the stable side never saw does not
    /// advance, though the rollout's evidence as a whole is healthy.
    @Test func aStepAdvancesOnHonestNetworksOnly() {
        var evidence = Self.evidence()
        let start = Date(timeIntervalSince1970: TimeInterval(Self.now - 7_200))
        var rollout = RolloutState(candidate: 2, stable: 1, steps: [RolloutStep(percent: 50, minimumDuration: 60, minimumResolutions: 200),
                                                                  RolloutStep(percent: 100, minimumDuration: 60, minimumResolutions: 200)], now: start)
        var random = SplitMix(seed: 3)
        for index in 0..<4_000 {
            let candidate = index % 2 == 0
            let claims = (0..<5).map { _ in Self.claim(candidate, failed: random.next() % 100 < 3) }
            evidence.record(claims, source: Self.source(index), network: UInt64((index / 2) % 200), cohort: candidate ? 0 : 99, percent: 50, now: Self.now)
        }
        let first = evidence.look(at: rollout, policy: GuardPolicy(), previous: nil)
        #expect(Self.kind(first.decision) == "healthy", "\(first.decision)")
        #expect(rollout.evaluate(now: start.addingTimeInterval(600), candidateResolutions: evidence.stepResolutions, verdict: first.decision) == .advanced(toStep: 1, percent: 100))
        evidence.begin(step: rollout.step)
        for key in 0..<300 {
            evidence.record([Self.claim(true, failed: false, count: 5)], source: Self.source(6_000_000 + key), network: 9_000 + UInt64(key % 20),
                            cohort: 0, percent: 100, now: Self.now)
        }
        #expect(evidence.stepResolutions >= 200 && evidence.stepInstalls >= 25)
        let second = evidence.look(at: rollout, policy: GuardPolicy(), previous: first.verdict)
        #expect(Self.kind(second.verdict) == "healthy", "the rollout's evidence is healthy: \(second.verdict)")
        #expect(Self.kind(second.decision) == "waiting", "but the step's own comes from no network the stable side vouches for: \(second.decision)")
    }

    @Test("The rise an evidence can see shrinks as it grows, and a rise that large trips")
    func detectableRise() {
        func counts(_ installs: Int, candidateRate: Double) -> (GuardCounts, GuardCounts) {
            var evidence = Self.evidence()
            var random = SplitMix(seed: 13)
            for index in 0..<installs {
                let candidate = index % 2 == 0
                let claims = (0..<5).map { _ in Self.claim(candidate, failed: Double(random.next() % 1_000_000) < (candidate ? candidateRate : 0.03) * 1_000_000) }
                evidence.record(claims, source: Self.source(index), network: UInt64((index / 2) % 400), cohort: candidate ? 0 : 99, percent: 50, now: Self.now)
            }
            return (evidence.candidateCounts, evidence.stableCounts)
        }
        let (few, fewStable) = counts(40, candidateRate: 0.03)
        #expect(RolloutGuard.detectableRise(candidate: few, stable: fewStable) == nil, "below the minimum of resolutions")
        let (small, smallStable) = counts(400, candidateRate: 0.03)
        let (large, largeStable) = counts(8_000, candidateRate: 0.03)
        let seen = RolloutGuard.detectableRise(candidate: small, stable: smallStable)!
        let seenLarge = RolloutGuard.detectableRise(candidate: large, stable: largeStable)!
        #expect(seenLarge < seen && seenLarge >= 0.01 && seen < 0.97, "\(seen) then \(seenLarge)")
        let (broken, brokenStable) = counts(8_000, candidateRate: 0.03 + seenLarge + 0.02)
        #expect(Self.kind(RolloutGuard.judge(candidate: broken, stable: brokenStable)) == "tripped")
    }

    @Test("Bounding leaves honest noise alone and brings one network's forged rate down to a plausible one")
    func boundedFailures() {
        var counts = GuardCounts()
        var random = SplitMix(seed: 5)
        let cell = GuardCounts.Cell(route: "product", build: "ios 5.3.0")
        for network in 0..<400 {
            for index in 0..<50 {
                let failed = random.next() % 100 < 3
                counts.add(cell, count: 1, failure: failed ? "validationFailed" : nil,
                           from: .init(source: Self.source(network * 100 + index), network: UInt64(network)))
            }
        }
        let honest = counts.cells[cell]!.failures
        #expect(counts.bounded(policy: GuardPolicy()).cells[cell]!.failures >= honest - 2, "at most a network or two of 400 lose a failure")
        for index in 0..<50 {
            counts.add(cell, count: 1, failure: "expired", from: .init(source: Self.source(1_000_000 + index), network: 9_999))
        }
        let bounded = counts.bounded(policy: GuardPolicy()).cells[cell]!
        let forged = bounded.byNetwork[9_999]!
        #expect(forged.total == 50 && forged.failures <= 7, "50 of 50 at a 3 % rate is bounded to what 50 plausibly show: \(forged)")
        #expect(abs(bounded.failures - bounded.reasons.values.reduce(0, +)) <= 2, "reasons follow the failures")
    }

    /// An honest fleet whose networks fail at different rates: 10 % of 300 fail at 40 %, the
    /// rest at 2 %, alike on both sides; each has 80 stable resolutions in the cell and 12
    /// candidate ones. Bounded each on its own, the stable side (more resolutions, a tighter
    /// bound) loses far more of its failures and the candidate looks worse; bounded together,
    /// the two rates stay alike.
    @Test func bothSidesAreBoundedAlike() {
        var random = SplitMix(seed: 9)
        var (candidate, stable) = (GuardCounts(), GuardCounts())
        let cell = GuardCounts.Cell(route: "product", build: "ios 5.3.0")
        for network in 0..<300 {
            let rate = network % 10 == 0 ? 0.40 : 0.02
            for (side, count) in [(0, 80), (1, 12)] {
                for index in 0..<count {
                    let failed = Double(random.next() % 1_000_000) < rate * 1_000_000
                    let from = GuardCounts.Contributor(source: Self.source(network * 1_000 + side * 500 + index), network: UInt64(network))
                    if side == 0 { stable.add(cell, count: 1, failure: failed ? "validationFailed" : nil, from: from) }
                    else { candidate.add(cell, count: 1, failure: failed ? "validationFailed" : nil, from: from) }
                }
            }
        }
        let policy = GuardPolicy()
        func ratio(_ c: GuardCounts, _ s: GuardCounts) -> Double { c.cells[cell]!.rate / s.cells[cell]!.rate }
        let raw = ratio(candidate, stable)
        let alone = ratio(candidate.bounded(policy: policy), stable.bounded(policy: policy))
        let together = GuardCounts.bounded(candidate: candidate, stable: stable, policy: policy)
        let joint = ratio(together.candidate, together.stable)
        #expect(alone > raw * 1.2, "bounded alone, the candidate looks worse: \(raw) -> \(alone)")
        #expect(abs(joint - raw) < raw * 0.1, "bounded together, the ratio stays: \(raw) -> \(joint)")
    }

    @Test("Looks come as the evidence grows by a quarter, and once per step at its minimum")
    func lookSchedule() {
        var evidence = Self.evidence()
        let policy = GuardPolicy()
        var looks: [Int] = []
        for index in 0..<200 {
            evidence.record([Self.claim(true, failed: false), Self.claim(false, failed: false)], source: Self.source(index), network: UInt64(index),
                            cohort: 0, percent: 1, now: Self.now)
            if evidence.nextLook(policy: policy, stepMinimum: 1_000) != nil { looks.append(evidence.candidateCounts.overall.total) }
        }
        #expect(looks == [200])
        for index in 200..<400 {
            evidence.record([Self.claim(true, failed: false), Self.claim(false, failed: false)], source: Self.source(index), network: UInt64(index),
                            cohort: 0, percent: 1, now: Self.now)
            if evidence.nextLook(policy: policy, stepMinimum: 1_000) != nil { looks.append(evidence.candidateCounts.overall.total) }
        }
        #expect(looks == [200, 250, 313, 392])
        evidence.begin(step: 1)
        for index in 400..<420 {
            evidence.record([Self.claim(true, failed: false)], source: Self.source(index), network: UInt64(index), cohort: 0, percent: 10, now: Self.now)
            if evidence.nextLook(policy: policy, stepMinimum: 10) != nil { looks.append(evidence.candidateCounts.overall.total) }
        }
        #expect(looks == [200, 250, 313, 392, 410], "the new step's look comes at its own minimum of 10")
        #expect(policy.alpha(look: 1) == 0.0005 && abs(policy.alpha(look: 4) - 0.00005) < 1e-18)
    }
}
