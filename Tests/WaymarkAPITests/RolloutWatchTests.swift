import CivilDate
import Foundation
import ManifestStore
import Rollout
import RouteEngine
import Testing
import TestSupport
@testable import WaymarkAPI

/// What a look counts: each revision's resolutions by route and build over the step's
/// window, the stable side on the candidate's builds only, widened to the rollout's span
/// when the step's window holds too little of it.
@Suite("The rollout's looks at telemetry", .serialized)
struct RolloutWatchTests {
    static let start = Date(timeIntervalSince1970: TimeInterval(Int(Date().timeIntervalSince1970) / 60 * 60 - 3_600))

    /// `count` resolutions of `route` on `build` for `revision` at `time`, `failed` of them validationFailed.
    static func post(_ service: LiveService, revision: Int, build: String, route: String, count: Int, failed: Int, at time: Date) {
        let ts = Timestamp.format(time)
        var events: [String] = []
        if count > failed { events.append(#"{"ts": "\#(ts)", "entry": "universalLink", "outcome": "proceed", "route": "\#(route)", "count": \#(count - failed)}"#) }
        if failed > 0 {
            events.append(#"{"ts": "\#(ts)", "entry": "universalLink", "outcome": "notFound", "reason": "validationFailed", "route": "\#(route)", "count": \#(failed)}"#)
        }
        let body = #"{"client": {"platform": "ios", "appVersion": "\#(build)", "revision": \#(revision)}, "events": [\#(events.joined(separator: ","))]}"#
        let reply = service.call("POST", "/v1/telemetry", token: service.tokens[.telemetryWrite]!, body: body)
        #expect(reply.status == 202 && reply.json["rejected"]?.arrayValue?.isEmpty == true, "\(reply.text)")
    }

    @Test("By route and build over the step's window; the stable side only on the candidate's builds")
    func countsOverTheStepsWindow() throws {
        let service = try LiveService(transport: .inProcess)
        guard case .object(var body) = try JSONParser().parse(publishBody(extraRoute: "candidate")) else { return }
        body["rollout"] = [:]
        #expect(service.call("POST", "/v1/revisions", token: service.tokens[.routesPublish]!, headers: [("If-Match", "\"rev-1\"")],
                             body: JSONValue.object(body).serialized()).status == 201)
        let rollout = try #require(service.store.snapshot.activeRollout)
        // The step began at `start + 10 min`; events before that minute are outside its window.
        let stepStart = Self.start.addingTimeInterval(600)
        let state = RolloutState(candidate: rollout.candidate, stable: 1, steps: rollout.steps, now: stepStart)
        Self.post(service, revision: 2, build: "5.3.0", route: "product", count: 300, failed: 120, at: stepStart.addingTimeInterval(60))
        Self.post(service, revision: 2, build: "5.3.0", route: "product", count: 500, failed: 500, at: Self.start)  // before the step
        Self.post(service, revision: 1, build: "5.3.0", route: "product", count: 400, failed: 8, at: stepStart.addingTimeInterval(120))
        Self.post(service, revision: 1, build: "5.2.0", route: "product", count: 900, failed: 300, at: stepStart.addingTimeInterval(120))
        let look = RolloutWatch.take(state, started: Self.start, telemetry: service.telemetry, now: stepStart.addingTimeInterval(300),
                                     policy: GuardPolicy())
        let candidate = look.candidateCounts.cells[GuardCounts.Cell(route: "product", build: "ios 5.3.0")]
        #expect(candidate == GuardCounts.Outcomes(total: 300, failures: 120, reasons: ["validationFailed": 120]))
        #expect(look.candidateCounts.cells.count == 1, "the events before the step's minute are not in its window")
        #expect(look.stableCounts.overall.total == 400 && look.stableCounts.overall.failures == 8,
                "the stable side counts 5.3.0 only, which the candidate was seen on: \(look.stableCounts)")
        #expect(look.stableFrom == stepStart)
        guard case .tripped(let findings) = look.verdict else { Issue.record("not tripped: \(look.verdict)"); return }
        #expect(findings.contains { $0.route == "product" })
    }

    @Test("The stable side widens to the rollout's span when the step's window holds too little of it (the 100 % step)")
    func widensTheStableSide() throws {
        let service = try LiveService(transport: .inProcess)
        guard case .object(var body) = try JSONParser().parse(publishBody(extraRoute: "candidate")) else { return }
        body["rollout"] = [:]
        #expect(service.call("POST", "/v1/revisions", token: service.tokens[.routesPublish]!, headers: [("If-Match", "\"rev-1\"")],
                             body: JSONValue.object(body).serialized()).status == 201)
        let steps = try #require(service.store.snapshot.activeRollout).steps
        let stepStart = Self.start.addingTimeInterval(1_800)
        let state = RolloutState(candidate: 2, stable: 1, steps: steps, now: stepStart)
        Self.post(service, revision: 1, build: "5.3.0", route: "product", count: 600, failed: 12, at: Self.start.addingTimeInterval(300))
        Self.post(service, revision: 1, build: "5.3.0", route: "product", count: 10, failed: 1, at: stepStart.addingTimeInterval(60))
        Self.post(service, revision: 2, build: "5.3.0", route: "product", count: 600, failed: 12, at: stepStart.addingTimeInterval(60))
        let look = RolloutWatch.take(state, started: Self.start, telemetry: service.telemetry, now: stepStart.addingTimeInterval(120),
                                     policy: GuardPolicy())
        #expect(look.stableFrom == Self.start && look.stableCounts.overall.total == 610)
        guard case .healthy = look.verdict else { Issue.record("the same rates on the widened side: \(look.verdict)"); return }
    }
}
