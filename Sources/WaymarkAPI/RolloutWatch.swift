import Foundation
import CivilDate
import ManifestStore
import RouteEngine
import Rollout
import Telemetry

/// What one accepted batch offers the active rollout's guard (`RolloutWatch.offer`), as
/// `guard_evidence` keeps it (JSON, `docs/postgres.md`, "Telemetry").
struct EvidenceOffer: Sendable, Equatable {
    var candidate: Int
    var stable: Int
    var claims: [EvidenceClaim]
    /// Claims refused as on no registered build.
    var unregistered: Int
    var source: EvidenceSource?
    var network: UInt64
    var cohort: Int?
    var percent: Int
    var now: Int

    var json: String {
        let claims: [JSONValue] = self.claims.map { claim in
            ["c": .bool(claim.candidate), "r": .string(claim.route), "b": .string(claim.build),
             "f": claim.failure.map(JSONValue.string) ?? .null, "n": .int(claim.count), "m": .int(claim.minute)]
        }
        let object: [String: JSONValue] = [
            "candidate": .int(candidate), "stable": .int(stable), "claims": .array(claims), "unregistered": .int(unregistered),
            "source": source.map { .array([.string(String($0.high, radix: 16)), .string(String($0.low, radix: 16))]) } ?? .null,
            "network": .string(String(network, radix: 16)), "cohort": cohort.map(JSONValue.int) ?? .null, "percent": .int(percent), "now": .int(now)]
        return JSONValue.object(object).serialized()
    }

    init(candidate: Int, stable: Int, claims: [EvidenceClaim], unregistered: Int, source: EvidenceSource?, network: UInt64,
         cohort: Int?, percent: Int, now: Int) {
        (self.candidate, self.stable, self.claims, self.unregistered) = (candidate, stable, claims, unregistered)
        (self.source, self.network, self.cohort, self.percent, self.now) = (source, network, cohort, percent, now)
    }

    /// Nil for anything not made by `json` (a row damaged or made by other code).
    init?(json text: String) {
        guard case .object(let object)? = try? JSONParser().parse(Array(text.utf8)),
              let candidate = object["candidate"]?.intValue, let stable = object["stable"]?.intValue,
              case .array(let items)? = object["claims"], let unregistered = object["unregistered"]?.intValue,
              let network = object["network"]?.stringValue.flatMap({ UInt64($0, radix: 16) }),
              let percent = object["percent"]?.intValue, let now = object["now"]?.intValue else { return nil }
        var claims: [EvidenceClaim] = []
        for item in items {
            guard case .bool(let isCandidate)? = item["c"], let route = item["r"]?.stringValue, let build = item["b"]?.stringValue,
                  let count = item["n"]?.intValue, count >= 0, let minute = item["m"]?.intValue else { return nil }
            claims.append(EvidenceClaim(candidate: isCandidate, route: route, build: build, failure: item["f"]?.stringValue, count: count, minute: minute))
        }
        var source: EvidenceSource?
        if case .array(let words)? = object["source"] {
            guard words.count == 2, let high = words[0].stringValue.flatMap({ UInt64($0, radix: 16) }),
                  let low = words[1].stringValue.flatMap({ UInt64($0, radix: 16) }) else { return nil }
            source = EvidenceSource(high: high, low: low)
        }
        self.init(candidate: candidate, stable: stable, claims: claims, unregistered: max(0, unregistered), source: source, network: network,
                  cohort: object["cohort"]?.intValue, percent: percent, now: now)
    }
}

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
        if let offer = offer(batch, network: network, context: context, now: now) { count(offer, context: context) }
    }

    /// What an accepted batch offers the guard of the active rollout: made where the batch
    /// arrived, counted where the evidence is kept (here, or on a database by every node
    /// from `guard_evidence`). Nil when it offers nothing.
    static func offer(_ batch: Batch, network: UInt64, context: APIContext, now: Int) -> EvidenceOffer? {
        guard let rollout = context.store.snapshot.activeRollout, rollout.status.isActive else { return nil }
        let revision = Int(batch.revision)
        guard revision == rollout.candidate || revision == rollout.stable, !batch.tallies.isEmpty else { return nil }
        let version = batch.appVersion.map { String(decoding: $0, as: UTF8.self) }
        let build = batch.platform.name + " " + (version ?? "other")
        var offer = EvidenceOffer(candidate: rollout.candidate, stable: rollout.stable, claims: [], unregistered: 0,
                                  source: batch.source.map { EvidenceSource(high: $0.high, low: $0.low) }, network: network,
                                  cohort: batch.cohort.map(Int.init), percent: rollout.percent, now: now)
        // Claims on a build no schema is registered for are no build the fleet runs: not evidence.
        guard let version, context.store.snapshot.schemas[SchemaKey(platform: batch.platform.name, version: version)] != nil else {
            offer.unregistered = batch.tallies.reduce(0) { $0 + (EntryPoint(rawValue: $1.entry)?.isClients == true ? Int($1.count) : 0) }
            return offer.unregistered > 0 ? offer : nil
        }
        offer.claims = batch.tallies.compactMap { tally -> EvidenceClaim? in
            guard EntryPoint(rawValue: tally.entry)?.isClients == true else { return nil }
            let route = tally.route < 2 ? (tally.route == 0 ? "" : "other") : String(decoding: batch.routes[Int(tally.route) - 2], as: UTF8.self)
            let failure = tally.outcome == Outcome.notFound.rawValue ? FailureReason(rawValue: tally.reason)?.name : nil
            return EvidenceClaim(candidate: revision == rollout.candidate, route: route, build: build, failure: failure,
                                 count: Int(tally.count), minute: Int(tally.minute))
        }
        return offer
    }

    /// Counts `offer` into the active rollout's evidence; one made for another rollout (a
    /// row read late from the database) counts nothing.
    static func count(_ offer: EvidenceOffer, context: APIContext) {
        guard let rollout = context.store.snapshot.activeRollout, rollout.status.isActive,
              offer.candidate == rollout.candidate, offer.stable == rollout.stable else { return }
        let started = context.store.snapshot.revision(rollout.candidate)?.time ?? rollout.stepStarted
        context.guardEvidence.withLock { evidence in
            evidence = current(evidence, rollout: rollout, started: started, context: context)
            if offer.unregistered > 0 { evidence!.refuse(.unregistered, count: offer.unregistered) }
            if !offer.claims.isEmpty {
                evidence!.record(offer.claims, source: offer.source, network: offer.network, cohort: offer.cohort, percent: offer.percent, now: offer.now)
            }
        }
    }

    /// Rows of `guard_evidence` read at once.
    static let evidencePage = 10_000

    /// On a database: counts what batches accepted by any node offered since the last pull,
    /// in their commit order (every tick, on every node, so the one that holds the lease — or
    /// takes it — looks at the fleet's evidence). A row that cannot be read counts nothing.
    static func pull(_ context: APIContext, from shared: any SharedTelemetry) {
        var after = context.evidenceSeq.withLock { $0 }
        while true {
            guard let rows = try? shared.evidence(after: after, limit: evidencePage) else { return }
            for row in rows {
                if let offer = EvidenceOffer(json: row.evidence) { count(offer, context: context) }
                after = row.seq
            }
            context.evidenceSeq.withLock { $0 = after }
            if rows.count < evidencePage { return }
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
