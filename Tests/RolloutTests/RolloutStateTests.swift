import Foundation
import Testing
@testable import Rollout

/// The rollout as a value: the cohort split, looks with the guard's verdict on a manual
/// clock, and people's controls with the version they read.
@Suite("Rollout state")
struct RolloutStateTests {
    static let start = Date(timeIntervalSince1970: 1_795_000_000)
    static let healthy = GuardVerdict.healthy(comparisons: 1)
    static let finding = GuardFinding(scope: .route, route: "product", build: nil, reason: nil, candidateFailures: 50, candidateTotal: 100,
                                      stableFailures: 10, stableTotal: 1_000, pValue: 1e-20, threshold: 1e-4)

    static func at(_ minutes: Double) -> Date { start.addingTimeInterval(minutes * 60) }

    @Test("Cohorts below the step's percent get the candidate; no cohort gets stable; ended rollouts are one revision")
    func split() throws {
        var rollout = RolloutState(candidate: 8, stable: 7, now: Self.start)
        #expect((0..<100).filter { rollout.revision(forCohort: $0) == 8 } == [0])
        #expect(rollout.revision(forCohort: nil) == 7)
        _ = rollout.evaluate(now: Self.at(10), candidateResolutions: 200, verdict: Self.healthy)
        #expect((0..<100).filter { rollout.revision(forCohort: $0) == 8 } == Array(0..<10), "cohort 0 keeps it as steps grow")
        var aborted = rollout
        try aborted.abort(version: aborted.version)
        #expect((0..<100).allSatisfy { aborted.revision(forCohort: $0) == 7 })
        _ = try rollout.promote(version: rollout.version)
        #expect((0..<100).allSatisfy { rollout.revision(forCohort: $0) == 8 } && rollout.revision(forCohort: nil) == 8)
    }

    /// (label, minutes since the step began, candidate resolutions, verdict, expected change)
    static let looks: [(String, Double, Int, GuardVerdict, RolloutChange?)] = [
        ("healthy, time and resolutions reached: advance", 10, 200, healthy, .advanced(toStep: 1, percent: 10)),
        ("healthy but too soon: wait", 9.9, 5_000, healthy, nil),
        ("healthy but too few resolutions: wait", 60, 199, healthy, nil),
        ("too little data to judge: wait, even past the minimums", 60, 5_000, .waiting("few"), nil),
        ("a finding: trip at once, even before the minimums", 0.5, 3, .tripped([finding]), .tripped([finding])),
    ]

    @Test(arguments: looks)
    func look(_ label: String, _ minutes: Double, _ resolutions: Int, _ verdict: GuardVerdict, _ expected: RolloutChange?) {
        var rollout = RolloutState(candidate: 8, stable: 7, now: Self.start)
        #expect(rollout.evaluate(now: Self.at(minutes), candidateResolutions: resolutions, verdict: verdict) == expected, "\(label)")
    }

    @Test("A healthy rollout walks 1 → 10 → 50 → 100 % and completes; each change bumps the version")
    func walk() {
        var rollout = RolloutState(candidate: 8, stable: 7, now: Self.start)
        var changes: [RolloutChange] = []
        var minutes = 0.0
        while rollout.status == .running, minutes < 1_000 {
            minutes += 5
            if let change = rollout.evaluate(now: Self.at(minutes), candidateResolutions: 250, verdict: Self.healthy) { changes.append(change) }
        }
        #expect(changes == [.advanced(toStep: 1, percent: 10), .advanced(toStep: 2, percent: 50), .advanced(toStep: 3, percent: 100), .completed])
        #expect(rollout.status == .completed && rollout.version == 5)
        #expect(rollout.evaluate(now: Self.at(2_000), candidateResolutions: 1, verdict: .tripped([Self.finding])) == nil, "an ended rollout decides nothing")
    }

    @Test("Controls: pause holds, resume restarts the step's clock, advance and promote skip, abort ends; a stale version is refused")
    func controls() throws {
        var rollout = RolloutState(candidate: 8, stable: 7, now: Self.start)
        #expect(throws: RolloutRefusal.staleVersion(current: 1)) { try rollout.pause(version: 0) }
        try rollout.pause(version: 1)
        #expect(rollout.evaluate(now: Self.at(60), candidateResolutions: 1_000, verdict: Self.healthy) == nil, "paused: nothing advances")
        #expect(rollout.evaluate(now: Self.at(60), candidateResolutions: 1_000, verdict: .tripped([Self.finding])) == nil)
        #expect(throws: RolloutRefusal.notApplicable(action: "pause", status: .paused)) { try rollout.pause(version: rollout.version) }
        try rollout.resume(version: rollout.version, now: Self.at(60))
        #expect(rollout.evaluate(now: Self.at(65), candidateResolutions: 1_000, verdict: Self.healthy) == nil, "the step's time counts from the resume")
        #expect(rollout.evaluate(now: Self.at(70), candidateResolutions: 1_000, verdict: Self.healthy) == .advanced(toStep: 1, percent: 10))
        #expect(try rollout.advanceNow(version: rollout.version, now: Self.at(71)) == .advanced(toStep: 2, percent: 50))
        var promoted = rollout
        #expect(try promoted.promote(version: promoted.version) == .completed)
        #expect(promoted.percent == 100)
        try rollout.abort(version: rollout.version)
        #expect(throws: RolloutRefusal.notApplicable(action: "resume", status: .aborted)) { try rollout.resume(version: rollout.version, now: Self.at(80)) }
        #expect(throws: RolloutRefusal.notApplicable(action: "promote", status: .aborted)) { _ = try rollout.promote(version: rollout.version) }
    }

    /// (label, percents, expected error or nil)
    static let plans: [(String, [Int], String?)] = [
        ("the defaults", [1, 10, 50, 100], nil),
        ("one step", [100], nil),
        ("no steps", [], "A rollout needs at least one step."),
        ("not ending at 100", [1, 10, 50], "The last step must be 100%."),
        ("not growing", [10, 10, 100], "Steps must grow: step 2 (10%) is not above step 1 (10%)."),
        ("zero", [0, 100], "Step 1's percent must be 1 to 100, not 0."),
    ]

    @Test(arguments: plans)
    func plan(_ label: String, _ percents: [Int], _ expected: String?) {
        #expect(RolloutState.validate(percents.map { RolloutStep(percent: $0, minimumDuration: 60, minimumResolutions: 10) }) == expected, "\(label)")
    }
}
