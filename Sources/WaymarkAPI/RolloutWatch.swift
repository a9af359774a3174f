import Foundation
import CivilDate
import ManifestStore
import RouteEngine
import Rollout
import Telemetry

/// One look at a rollout's step: the two revisions' resolutions over the step's window, on
/// the builds the candidate was seen on, and the guard's verdict on them.
struct RolloutLook: Sendable {
    var time: Date
    var candidate: Int
    /// The rollout's version when looked at: a person's action since makes the look stale.
    var version: Int
    /// The window: from the start of the minute the step began, to `time`.
    var from: Date
    /// Where the stable revision's side starts: `from`, or the rollout's start when the step's
    /// window holds too few of its resolutions (at 100 % only installs without a cohort get it).
    var stableFrom: Date
    var candidateCounts: GuardCounts
    var stableCounts: GuardCounts
    var verdict: GuardVerdict

    /// The look as `GET /v1/rollout` and the dashboard show it.
    var json: JSONValue {
        func side(_ counts: GuardCounts) -> JSONValue {
            let overall = counts.overall
            return ["resolutions": .int(overall.total), "failures": .int(overall.failures), "failureRate": .double(overall.rate)]
        }
        var object: [String: JSONValue] = ["checked": .string(Timestamp.format(time)), "from": .string(Timestamp.format(from)),
                                           "stableFrom": .string(Timestamp.format(stableFrom)),
                                           "candidate": side(candidateCounts), "stable": side(stableCounts)]
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

/// The primary's look at a running rollout, from the API's ticker: the telemetry counts of
/// the candidate and the stable revision since the step began, the guard's verdict, and the
/// store's change if the verdict makes one (a trip at once; the next step when the step's
/// minimums are met and the verdict is healthy). A follower never looks: it mirrors the
/// primary's decisions with the revisions.
enum RolloutWatch {
    static func look(_ context: APIContext, now: Date) {
        // An ended rollout keeps its last look (the one that tripped or completed it), for the resource and the dashboard.
        guard let rollout = context.store.snapshot.activeRollout else { return }
        let started = context.store.snapshot.revision(rollout.candidate)?.time ?? rollout.stepStarted
        let look = take(rollout, started: started, telemetry: context.telemetry, now: now, policy: GuardPolicy())
        context.rolloutLook.withLock { $0 = look }
        guard rollout.status == .running else { return }
        let change = try? context.store.evaluateRollout(candidateResolutions: look.candidateCounts.overall.total, verdict: look.verdict,
                                                        version: rollout.version, now: now)
        switch change {
        case .tripped?: context.rolloutTrips.add(1, ordering: .relaxed)
        case .completed?: context.publishes.add(1, ordering: .relaxed)
        case .advanced?, nil: break
        }
    }

    /// The step's window for both revisions, on the builds the candidate was seen on; when the
    /// stable revision has fewer than `policy.minimumResolutions` there (the last step, at
    /// 100 %, leaves it only the installs that send no cohort), its side is widened to the
    /// rollout's whole span from `started`, the best baseline left.
    static func take(_ rollout: RolloutState, started: Date, telemetry: TelemetryStore, now: Date, policy: GuardPolicy) -> RolloutLook {
        let from = Int(rollout.stepStarted.timeIntervalSince1970)
        let wide = min(from, Int(started.timeIntervalSince1970))
        let to = Int(now.timeIntervalSince1970) + 1
        // The same builds: the stable revision's resolutions on builds the candidate was not seen on say nothing about it.
        func comparable(_ stable: GuardCounts, _ candidate: GuardCounts) -> GuardCounts {
            let builds = Set(candidate.cells.keys.map(\.build))
            return GuardCounts(stable.cells.filter { builds.contains($0.key.build) })
        }
        let (candidate, stable, stableFrom) = telemetry.read { counts in
            let candidate = guardCounts(counts, revision: rollout.candidate, from: from, to: to)
            let inStep = comparable(guardCounts(counts, revision: rollout.stable, from: from, to: to), candidate)
            guard inStep.overall.total < policy.minimumResolutions, wide < from else { return (candidate, inStep, from) }
            return (candidate, comparable(guardCounts(counts, revision: rollout.stable, from: wide, to: to), candidate), wide)
        }
        func minute(_ seconds: Int) -> Date { Date(timeIntervalSince1970: TimeInterval(seconds - ((seconds % 60) + 60) % 60)) }
        return RolloutLook(time: now, candidate: rollout.candidate, version: rollout.version, from: minute(from), stableFrom: minute(stableFrom),
                           candidateCounts: candidate, stableCounts: stable,
                           verdict: RolloutGuard.judge(candidate: candidate, stable: stable, policy: policy))
    }

    /// One revision's resolutions in [from, to) by route and build (`"ios 5.3.0"`), with
    /// failures by reason, from the per-minute counts.
    static func guardCounts(_ counts: borrowing Counts, revision: Int, from: Int, to: Int) -> GuardCounts {
        var query = CountQuery(from: from, to: to, step: .minute)
        query.filters = [.revision: String(revision)]
        query.groupBy = [.route, .platform, .appVersion, .reason]
        query.limit = Int.max
        query.series = false
        var cells: [GuardCounts.Cell: GuardCounts.Outcomes] = [:]
        for group in counts.query(query).groups {
            let names = group.key.map(\.name)
            let cell = GuardCounts.Cell(route: names[0] == "none" ? "" : names[0], build: names[1] + " " + names[2])
            cells[cell, default: GuardCounts.Outcomes()].total += Int(group.total)
            cells[cell, default: GuardCounts.Outcomes()].failures += Int(group.failures)
            if names[3] != "none", group.failures > 0 { cells[cell, default: GuardCounts.Outcomes()].reasons[names[3], default: 0] += Int(group.failures) }
        }
        return GuardCounts(cells)
    }
}
