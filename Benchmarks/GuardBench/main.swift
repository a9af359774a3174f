import Foundation
import Rollout

// The rollout guard on simulated fleets: how often a healthy candidate trips (the false-trip
// rate), and how fast a broken one is stopped, through the code the daemon runs
// (GuardEvidence: caps and looks; RolloutGuard: the exact stratified test with alpha spent
// over looks; RolloutState: steps). `make bench-guard` prints both tables.
//
// The fleet: 200,000 installs (cohort = id % 100; 2 % send no cohort, as old clients), three
// builds whose baselines differ (ios 5.2.0 fails product 11 %, the others 3 %) and which pick
// up a step at different moments (a build's installs refresh 20, 2 and 8 minutes late),
// 5,000 networks of 40 installs each, 3,400 resolutions a minute in 5-second looks (the daemon's interval), each
// one install's, binomial noise from a seeded generator. Usage: GuardBench [healthy runs]
// (`GuardBench --detectable`: the tables of what a fleet can see, `docs/rollouts.md`)

struct Generator {
    var state: UInt64
    mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }
    mutating func unit() -> Double { Double(next() >> 11) / Double(1 << 53) }
}

struct Build {
    var name: String
    var share: Double
    var lagMinutes: Int
    var rates: [String: Double]
}

let builds = [
    Build(name: "ios 5.2.0", share: 0.3, lagMinutes: 20, rates: ["product": 0.11, "home": 0.05, "category": 0.05, "search": 0.05, "orders": 0.05]),
    Build(name: "ios 5.3.0", share: 0.4, lagMinutes: 2, rates: ["product": 0.03, "home": 0.02, "category": 0.02, "search": 0.02, "orders": 0.02]),
    Build(name: "android 4.1.0", share: 0.3, lagMinutes: 8, rates: ["product": 0.03, "home": 0.02, "category": 0.02, "search": 0.02, "orders": 0.02]),
]
let routes: [(String, Double)] = [("product", 0.5), ("home", 0.2), ("category", 0.15), ("search", 0.1), ("orders", 0.05)]

struct Break {
    var build: String
    var route: String
    var rate: Double
    /// The break shows from this step on (0: from the start).
    var fromStep: Int
}

struct Outcome {
    var status: RolloutStatus
    var minutes: Int
    var step: Int
    var candidateResolutions: Int
    /// Since the break began showing, for a broken candidate.
    var minutesAfterBreak: Int?
    var resolutionsAfterBreak: Int?
    var finding: String?
}

func simulate(seed: UInt64, broken: Break?, policy: GuardPolicy = GuardPolicy()) -> Outcome {
    var random = Generator(state: seed)
    let start = Date(timeIntervalSince1970: 1_795_003_200)  // noon UTC: a run stays within one day
    var rollout = RolloutState(candidate: 2, stable: 1, now: start)
    var evidence = GuardEvidence(candidate: 2, stable: 1, startMinute: Int(start.timeIntervalSince1970) / 60)
    var previous: GuardVerdict?
    var percentAt: [(minute: Int, percent: Int)] = [(0, rollout.percent)]
    var breakStart: (tick: Int, resolutions: Int)?
    let perTick = 3_400 / 12
    for tick in 0..<(12 * 60 * 8) {
        let minute = tick / 12
        let now = Int(start.timeIntervalSince1970) + tick * 5
        if let broken, breakStart == nil, rollout.step >= broken.fromStep {
            breakStart = (tick, evidence.candidateCounts.overall.total)
        }
        for _ in 0..<perTick {
            let install = Int(random.next() % 200_000)
            let cohort: Int? = install % 50 == 49 ? nil : install % 100
            var pick = random.unit(), build = builds[0]
            for candidate in builds { if pick < candidate.share { build = candidate; break }; pick -= candidate.share }
            // The step this install's build has picked up: the percent of `lag` minutes ago.
            let seen = percentAt.last { $0.minute <= minute - build.lagMinutes }?.percent ?? 0
            let onCandidate = rollout.revision(forCohort: cohort) == 2 && cohort.map { $0 < seen } == true
            var which = random.unit(), route = routes[0].0
            for (name, share) in routes { if which < share { route = name; break }; which -= share }
            var rate = build.rates[route]!
            if onCandidate, let broken, breakStart != nil, broken.build == build.name, broken.route == route { rate = broken.rate }
            let failed = random.unit() < rate
            let claim = EvidenceClaim(candidate: onCandidate, route: route, build: build.name, failure: failed ? "validationFailed" : nil,
                                      count: 1, minute: now / 60)
            // 40 consecutive installs a network, so a network's installs spread over 40 cohorts, as
            // real ones do (cohorts come from install ids, networks from where people are); by
            // `install % 5_000` each network's installs all had one cohort, every candidate at
            // 1 % came from 50 networks that had no stable traffic at all.
            evidence.record([claim], source: EvidenceSource(high: 1, low: UInt64(install)), network: UInt64(install / 40),
                            cohort: cohort, percent: rollout.percent, now: now)
        }
        let look = evidence.look(at: rollout, policy: policy, previous: previous)
        if look.number != nil { previous = look.verdict }
        let date = start.addingTimeInterval(TimeInterval(tick * 5))
        switch rollout.evaluate(now: date, candidateResolutions: evidence.stepResolutions, verdict: look.decision) {
        case .advanced?: percentAt.append((minute, rollout.percent))
        case .tripped(let findings)?:
            return Outcome(status: .tripped, minutes: minute, step: rollout.step, candidateResolutions: evidence.candidateCounts.overall.total,
                           minutesAfterBreak: breakStart.map { (tick - $0.tick) / 12 },
                           resolutionsAfterBreak: breakStart.map { evidence.candidateCounts.overall.total - $0.resolutions },
                           finding: findings.first?.description)
        case .completed?:
            return Outcome(status: .completed, minutes: minute, step: rollout.step, candidateResolutions: evidence.candidateCounts.overall.total)
        case nil: break
        }
    }
    return Outcome(status: rollout.status, minutes: 8 * 60, step: rollout.step, candidateResolutions: evidence.candidateCounts.overall.total)
}

/// What a fleet can see (`docs/rollouts.md`): the smallest rise `RolloutGuard.detectableRise`
/// finds on one build at a 3 % baseline, for a candidate's evidence at each default step
/// (the stable side's `(100 − p) / p` times as large, as a step splits the fleet), at the
/// look that evidence reaches, its alpha shared among 16 comparisons (everything, 5 routes,
/// 5 routes on 2 builds); then the candidate evidence each break needs, and the fleet's
/// capped resolutions a minute that brings it within a step's default 10 minutes.
func detectable() {
    let policy = GuardPolicy(), comparisons = 16, baseline = 0.03
    func rise(candidate: Int, percent: Int) -> Double? {
        let stable = candidate * (100 - percent) / percent
        let cell = GuardCounts.Cell(route: "product", build: "ios 5.3.0")
        let candidateCounts = GuardCounts([cell: .init(total: candidate, failures: Int(Double(candidate) * baseline))])
        let stableCounts = GuardCounts([cell: .init(total: stable, failures: Int(Double(stable) * baseline))])
        return RolloutGuard.detectableRise(candidate: candidateCounts, stable: stableCounts, policy: policy,
                                           look: policy.look(forResolutions: candidate), comparisons: comparisons)
    }
    let sizes = [200, 500, 1_000, 2_000, 5_000, 10_000, 50_000]
    print("The smallest rise seen (failure-rate points over a 3 % baseline), by the candidate's evidence and the step")
    print("| candidate resolutions | " + [1, 10, 50].map { "at \($0) %" }.joined(separator: " | ") + " |")
    print("|---|---|---|---|")
    for size in sizes {
        let cells = [1, 10, 50].map { percent in rise(candidate: size, percent: percent).map { String(format: "%.1f", $0 * 100) } ?? "–" }
        print("| \(size) | " + cells.joined(separator: " | ") + " |")
    }
    print("")
    print("The candidate evidence a break needs, and the fleet's capped resolutions a minute that bring it in a step's 10 minutes")
    print("| break (points over 3 %) | " + [1, 10, 50].map { "at \($0) %" }.joined(separator: " | ") + " |")
    print("|---|---|---|---|")
    for points in [2.0, 5.0, 10.0, 20.0, 40.0] {
        let cells = [1, 10, 50].map { percent -> String in
            var (low, high) = (200, 2_000_000)
            guard let seen = rise(candidate: high, percent: percent), seen <= points / 100 else { return "over 2,000,000" }
            while high - low > max(1, low / 100) {
                let middle = (low + high) / 2
                if let seen = rise(candidate: middle, percent: percent), seen <= points / 100 { high = middle } else { low = middle }
            }
            return "\(high) (\(high * 100 / percent / 10) a minute)"
        }
        print("| \(Int(points)) | " + cells.joined(separator: " | ") + " |")
    }
}

if CommandLine.arguments.dropFirst().first == "--detectable" {
    detectable()
    exit(0)
}

let healthyRuns = CommandLine.arguments.count > 1 ? Int(CommandLine.arguments[1]) ?? 50 : 50
let clock = ContinuousClock()
let began = clock.now
var trips: [String] = []
var minutes: [Int] = []
for run in 0..<healthyRuns {
    let outcome = simulate(seed: 1_000 + UInt64(run), broken: nil)
    if outcome.status == .tripped { trips.append("run \(run): \(outcome.finding ?? "")") }
    if outcome.status == .completed { minutes.append(outcome.minutes) }
}
minutes.sort()
print("Healthy candidates: \(healthyRuns) runs, \(trips.count) tripped (documented bound: alpha = \(GuardPolicy().alpha) per rollout), "
    + "\(minutes.count) completed, median \(minutes.isEmpty ? 0 : minutes[minutes.count / 2]) min to 100 %")
for trip in trips { print("  false trip: \(trip)") }
print("")
print("Detection: product broken on ios 5.3.0 against its 3 % baseline, from the step it shows at")
print("| rate | from step | outcome | tripped at | minutes after the break | candidate resolutions after the break |")
print("|---|---|---|---|---|---|")
for rate in [0.40, 0.20, 0.08] {
    for fromStep in 0..<4 {
        let outcome = simulate(seed: 77 + UInt64(fromStep), broken: Break(build: "ios 5.3.0", route: "product", rate: rate, fromStep: fromStep))
        let steps = [1, 10, 50, 100]
        print("| \(Int(rate * 100)) % | \(steps[fromStep]) % | \(outcome.status.rawValue) | \(steps[outcome.step]) % | "
            + "\(outcome.minutesAfterBreak.map(String.init) ?? "–") | \(outcome.resolutionsAfterBreak.map(String.init) ?? "–") |")
    }
}
print("")
print("(\(clock.now - began) of simulation)")
