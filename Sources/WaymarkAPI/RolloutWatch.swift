import Foundation
import CivilDate
import ManifestStore
import RouteEngine
import Rollout
import Telemetry

/// One look at a rollout: the guard's evidence for the two revisions (capped per source,
/// every step so far) and its verdict on them.
struct RolloutLook: Sendable {
    var time: Date
    var candidate: Int
    /// The rollout's version when looked at: a person's action since makes the look stale.
    var version: Int
    /// Where the evidence starts: the candidate's publish.
    var from: Date
    /// The look's number (each spends its own alpha; 0: no look was due yet).
    var look: Int
    var candidateCounts: GuardCounts
    var stableCounts: GuardCounts
    var verdict: GuardVerdict
    /// The guard's own verdict at the last look (before the step's breadth is asked for).
    var judged: GuardVerdict
    var policy: GuardPolicy
    /// The step's own evidence: capped candidate resolutions and the installs behind them.
    var stepResolutions: Int
    var stepInstalls: Int
    var refused: [EvidenceRefusal: Int]
    /// The smallest rise in failure-rate points everything together would show on this
    /// evidence (`RolloutGuard.detectableRise`); nil before both sides have enough.
    var detectableRise: Double?

    /// The look as `GET /v1/rollout` and the dashboard show it.
    var json: JSONValue {
        func side(_ counts: GuardCounts) -> JSONValue {
            let overall = counts.overall
            return ["resolutions": .int(overall.total), "failures": .int(overall.failures), "failureRate": .double(overall.rate),
                    "installs": .int(overall.installs.count), "failingInstalls": .int(overall.failingInstalls.count),
                    "failingNetworks": .int(overall.failingNetworks.count)]
        }
        var object: [String: JSONValue] = ["checked": .string(Timestamp.format(time)), "from": .string(Timestamp.format(from)),
                                           "stableFrom": .string(Timestamp.format(from)), "look": .int(look),
                                           "alpha": .double(look > 0 ? policy.alpha(look: look) : 0),
                                           "candidate": side(candidateCounts), "stable": side(stableCounts),
                                           "step": ["resolutions": .int(stepResolutions), "installs": .int(stepInstalls)],
                                           "minimumInstalls": .int(policy.minimumInstalls), "minimumNetworks": .int(policy.minimumNetworks),
                                           "detectableRise": detectableRise.map { .double(($0 * 10_000).rounded() / 10_000) } ?? .null,
                                           "refused": .object(Dictionary(uniqueKeysWithValues: EvidenceRefusal.allCases.map { ($0.rawValue, JSONValue.int(refused[$0] ?? 0)) }))]
        switch verdict {
        case .healthy(let comparisons):
            object["verdict"] = "healthy"
            object["detail"] = .string("No rise beyond chance in \(comparisons) comparison(s).")
        case .waiting(let why):
            object["verdict"] = "waiting"
            object["detail"] = .string(why)
        case .tripped(let findings):
            object["verdict"] = "tripped"
            object["detail"] = .string(findings.first?.description ?? "")
        }
        return .object(object)
    }
}

/// The primary's look at a running rollout, from the API's ticker: the guard's evidence
/// (`GuardEvidence`, fed by accepted batches through `record`), a judgement when a look is
/// due (`GuardEvidence.nextLook`), and the store's change if the verdict makes one (a trip
/// at once; the next step when the step's minimums are met, the step's own look was
/// healthy and enough installs supplied it). A follower never looks: it mirrors the
/// primary's decisions with the revisions.
enum RolloutWatch {
    /// Counts an accepted batch's app resolutions of the active rollout's two revisions as
    /// evidence, capped by its source and network (landings never come here: the guard
    /// compares app resolutions with app resolutions).
    static func record(_ batch: Batch, network: UInt64, context: APIContext, now: Int) {
        guard let rollout = context.store.snapshot.activeRollout, rollout.status.isActive else { return }
        let revision = Int(batch.revision)
        guard revision == rollout.candidate || revision == rollout.stable, !batch.tallies.isEmpty else { return }
        let version = batch.appVersion.map { String(decoding: $0, as: UTF8.self) }
        let build = batch.platform.name + " " + (version ?? "other")
        // Claims on a build no schema is registered for are no build the fleet runs: not evidence.
        guard let version, context.store.snapshot.schemas[SchemaKey(platform: batch.platform.name, version: version)] != nil else {
            let claimed = batch.tallies.reduce(0) { $0 + (EntryPoint(rawValue: $1.entry)?.isClients == true ? Int($1.count) : 0) }
            context.guardEvidence.withLock { evidence in
                let started = context.store.snapshot.revision(rollout.candidate)?.time ?? rollout.stepStarted
                evidence = current(evidence, rollout: rollout, started: started, context: context)
                evidence!.refuse(.unregistered, count: claimed)
            }
            return
        }
        let claims = batch.tallies.compactMap { tally -> EvidenceClaim? in
            guard EntryPoint(rawValue: tally.entry)?.isClients == true else { return nil }
            let route = tally.route < 2 ? (tally.route == 0 ? "" : "other") : String(decoding: batch.routes[Int(tally.route) - 2], as: UTF8.self)
            let failure = tally.outcome == Outcome.notFound.rawValue ? FailureReason(rawValue: tally.reason)?.name : nil
            return EvidenceClaim(candidate: revision == rollout.candidate, route: route, build: build, failure: failure,
                                 count: Int(tally.count), minute: Int(tally.minute))
        }
        let source = batch.source.map { EvidenceSource(high: $0.high, low: $0.low) }
        let started = context.store.snapshot.revision(rollout.candidate)?.time ?? rollout.stepStarted
        context.guardEvidence.withLock { evidence in
            evidence = current(evidence, rollout: rollout, started: started, context: context)
            evidence!.record(claims, source: source, network: network, cohort: batch.cohort.map(Int.init), percent: rollout.percent, now: now)
        }
    }

    /// The evidence for `rollout`: the one held if it is about this rollout, else a new one.
    static func current(_ evidence: GuardEvidence?, rollout: RolloutState, started: Date, context: APIContext) -> GuardEvidence {
        var evidence = evidence
        if evidence?.candidate != rollout.candidate || evidence?.stable != rollout.stable {
            let minute = Int(started.timeIntervalSince1970) / 60
            evidence = GuardEvidence(candidate: rollout.candidate, stable: rollout.stable, startMinute: minute, policy: context.options.evidencePolicy)
        }
        evidence!.begin(step: rollout.step)
        return evidence!
    }

    static func look(_ context: APIContext, now: Date) {
        // An ended rollout keeps its last look (the one that tripped or completed it), for the resource and the dashboard.
        guard let rollout = context.store.snapshot.activeRollout else { return }
        let started = context.store.snapshot.revision(rollout.candidate)?.time ?? rollout.stepStarted
        let policy = context.options.guardPolicy
        let previous = context.rolloutLook.withLock { $0 }.flatMap { $0.candidate == rollout.candidate ? $0 : nil }
        let (evidence, judged) = context.guardEvidence.withLock { held in
            var evidence = current(held, rollout: rollout, started: started, context: context)
            let judged = evidence.look(at: rollout, policy: policy, previous: previous?.judged)
            held = evidence
            return (evidence, judged)
        }
        let decision = judged.decision
        let number = judged.number
        var look = RolloutLook(time: now, candidate: rollout.candidate, version: rollout.version, from: Date(timeIntervalSince1970: TimeInterval(evidence.startMinute * 60)),
                               look: number ?? evidence.looks, candidateCounts: evidence.candidateCounts, stableCounts: evidence.stableCounts,
                               verdict: decision, judged: judged.verdict, policy: policy, stepResolutions: evidence.stepResolutions, stepInstalls: evidence.stepInstalls,
                               refused: evidence.refused,
                               detectableRise: RolloutGuard.detectableRise(candidate: evidence.candidateCounts, stable: evidence.stableCounts, policy: policy,
                                                                           look: max(1, evidence.looks), comparisons: judged.verdict.comparisons))
        guard rollout.status == .running else {
            context.rolloutLook.withLock { $0 = look }
            return
        }
        let change = try? context.store.evaluateRollout(candidateResolutions: evidence.stepResolutions, verdict: decision,
                                                        version: rollout.version, now: now)
        // Shown once the state reflects it: a trip or a step the store did not take (a
        // person acted in between) is not shown as done.
        if change == nil, case .tripped = decision {
            look.verdict = .waiting("A regression was found, but the rollout changed in between; the next look judges again.")
        }
        context.rolloutLook.withLock { $0 = look }
        switch change {
        case .tripped?: context.rolloutTrips.add(1, ordering: .relaxed)
        case .completed?: context.publishes.add(1, ordering: .relaxed)
        case .advanced?, nil: break
        }
    }
}
