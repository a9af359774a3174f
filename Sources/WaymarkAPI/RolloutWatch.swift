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
        guard let rollout = context.store.snapshot.activeRollout else {
            context.rolloutLook.withLock { $0 = nil }
            return
        }
        let look = take(rollout, telemetry: context.telemetry, now: now, policy: GuardPolicy())
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

    static func take(_ rollout: RolloutState, telemetry: TelemetryStore, now: Date, policy: GuardPolicy) -> RolloutLook {
        let from = Int(rollout.stepStarted.timeIntervalSince1970)
        let to = Int(now.timeIntervalSince1970) + 1
        let (candidate, stable) = telemetry.read { counts in
            (guardCounts(counts, revision: rollout.candidate, from: from, to: to), guardCounts(counts, revision: rollout.stable, from: from, to: to))
        }
        // The same builds: the stable revision's resolutions on builds the candidate was not seen on say nothing about it.
        let builds = Set(candidate.cells.keys.map(\.build))
        let comparable = GuardCounts(stable.cells.filter { builds.contains($0.key.build) })
        return RolloutLook(time: now, candidate: rollout.candidate, version: rollout.version,
                           from: Date(timeIntervalSince1970: TimeInterval(from - ((from % 60) + 60) % 60)),
                           candidateCounts: candidate, stableCounts: comparable,
                           verdict: RolloutGuard.judge(candidate: candidate, stable: comparable, policy: policy))
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
