import CivilDate
import Foundation
import ManifestStore
import Rollout
import RouteEngine
import Testing
import TestSupport
@testable import WaymarkAPI

/// What the guard counts from accepted batches: app resolutions of the rollout's two
/// revisions, capped per install and per network, the candidate only from the cohorts its
/// step serves, never a landing; and a look that trips only on broad evidence.
@Suite("The rollout's evidence and looks", .serialized)
struct RolloutWatchTests {
    /// A batch of `count` resolutions of `route` for `revision` from `source` (nil: none sent)
    /// in `cohort`, `failed` of them validationFailed.
    static func post(_ service: LiveService, revision: Int, source: Int?, cohort: Int?, route: String = "product",
                     count: Int, failed: Int = 0, entry: String = "universalLink") {
        let ts = Timestamp.format(Date())
        var events: [String] = []
        if count > failed { events.append(#"{"ts": "\#(ts)", "entry": "\#(entry)", "outcome": "proceed", "route": "\#(route)", "count": \#(count - failed)}"#) }
        if failed > 0 {
            events.append(#"{"ts": "\#(ts)", "entry": "\#(entry)", "outcome": "notFound", "reason": "validationFailed", "route": "\#(route)", "count": \#(failed)}"#)
        }
        var client = #""platform": "ios", "appVersion": "5.3.0", "revision": \#(revision)"#
        if let source { client += #", "source": "\#(String(format: "%032x", source))""# }
        if let cohort { client += #", "cohort": \#(cohort)"# }
        let body = #"{"client": {\#(client)}, "events": [\#(events.joined(separator: ","))]}"#
        let reply = service.call("POST", "/v1/telemetry", token: service.tokens[.telemetryWrite]!, body: body)
        #expect(reply.status == 202 && reply.json["rejected"]?.arrayValue?.isEmpty == true, "\(reply.text)")
    }

    static func startRollout(_ service: LiveService) throws {
        guard case .object(var body) = try JSONParser().parse(publishBody(extraRoute: "candidate")) else { return }
        body["rollout"] = [:]
        #expect(service.call("POST", "/v1/revisions", token: service.tokens[.routesPublish]!, headers: [("If-Match", "\"rev-1\"")],
                             body: JSONValue.object(body).serialized()).status == 201)
    }

    static func guardJSON(_ service: LiveService) -> JSONValue? {
        RolloutWatch.look(service.api.context, now: Date())
        return service.call("GET", "/v1/rollout", token: service.tokens[.routesRead]!).json["guard"]
    }

    @Test("Capped per install and per network; the candidate only from its step's cohorts; no landing")
    func capsAndCohorts() throws {
        let service = try LiveService(transport: .inProcess)
        try Self.startRollout(service)
        Self.post(service, revision: 2, source: 1, cohort: 0, count: 300)            // one install: 5 counted
        Self.post(service, revision: 2, source: 2, cohort: 50, count: 10)            // cohort 50 is not served at 1 %
        Self.post(service, revision: 2, source: 3, cohort: nil, count: 10)           // no cohort: never the candidate
        Self.post(service, revision: 1, source: 4, cohort: 50, count: 3, failed: 3)  // stable, fine
        Self.post(service, revision: 1, source: nil, cohort: nil, count: 2)          // an old client: its network is its source
        _ = service.call("GET", "/product/p1", host: "storefront.example", headers: [("User-Agent", "Mozilla/5.0 (iPhone; CPU iPhone OS 17_4 like Mac OS X)")])
        let look = try #require(Self.guardJSON(service))
        #expect(look["candidate"]?["resolutions"]?.intValue == 5)
        #expect(look["stable"]?["resolutions"]?.intValue == 5 && look["stable"]?["failures"]?.intValue == 3, "\(look)")
        #expect(look["refused"]?["perSource"]?.intValue == 295)
        #expect(look["refused"]?["cohort"]?.intValue == 20)
        #expect(look["minimumInstalls"]?.intValue == 25 && look["minimumNetworks"]?.intValue == 10)
        // Many installs on one network: the network's 50 a day, then no more.
        for source in 10..<40 { Self.post(service, revision: 2, source: source, cohort: 0, count: 5) }
        let after = try #require(Self.guardJSON(service))
        #expect(after["candidate"]?["resolutions"]?.intValue == 50, "\(after)")
        #expect(after["refused"]?["perNetwork"]?.intValue == 5 + 30 * 5 - 50 + 0 - 0, "\(after)")
    }

    @Test("A regression trips only when its failures come from enough installs and networks", arguments: [(1, true), (2, false)])
    func breadth(_ networks: Int, _ trips: Bool) throws {
        let service = try LiveService(transport: .inProcess) { options in
            options.guardPolicy.minimumInstalls = 20
            options.guardPolicy.minimumNetworks = networks  // in-process requests all come from one network
            options.evidencePolicy.perNetwork = 100_000
        }
        try Self.startRollout(service)
        for source in 0..<300 {
            Self.post(service, revision: 2, source: source, cohort: 0, count: 5, failed: 2)       // 40 % fail
            Self.post(service, revision: 1, source: 10_000 + source, cohort: 60, count: 5, failed: source % 10 == 0 ? 1 : 0)
        }
        let look = try #require(Self.guardJSON(service))
        #expect(look["candidate"]?["resolutions"]?.intValue == 1_500)
        #expect(look["candidate"]?["failingInstalls"]?.intValue == 256, "held up to the breadth cap")
        #expect((look["verdict"]?.stringValue == "tripped") == trips, "\(look)")
        #expect((service.store.snapshot.rollout?.status == .tripped) == trips)
    }
}

/// What telemetry refused shows as numbers, per reason: in `/v1/telemetry/counts`' `refused`
/// and in `/metrics`.
@Suite("Telemetry refusals, counted")
struct TelemetryRefusalTests {
    @Test func refusalsAreCountedPerReason() throws {
        let service = try LiveService(transport: .inProcess)
        let token = service.tokens[.telemetryWrite]!
        let batch = #"{"client": {"platform": "ios", "appVersion": "5.3.0"}, "events": [{"ts": "\#(Timestamp.format(Date()))", "entry": "push", "outcome": "proceed", "count": 5000}]}"#
        #expect(service.call("POST", "/v1/telemetry", token: token, headers: [("Content-Type", "text/plain")], body: batch).status == 415)
        #expect(service.call("POST", "/v1/telemetry", token: token, body: batch).status == 400)
        #expect(service.call("POST", "/v1/telemetry", token: token, body: batch).status == 400)
        let counts = service.call("GET", "/v1/telemetry/counts", token: service.tokens[.telemetryRead]!)
        #expect(counts.json["refused"]?["batches"]?["unsupportedMediaType"]?.intValue == 1)
        #expect(counts.json["refused"]?["batches"]?["countTooLarge"]?.intValue == 2)
        #expect(counts.json["refused"]?["batches"]?["invalidBatch"]?.intValue == 0)
        let metrics = service.call("GET", "/metrics", token: service.tokens[.telemetryRead]!).text
        #expect(metrics.contains(#"waymark_telemetry_batches_refused_total{code="countTooLarge"} 2"#))
        #expect(metrics.contains(#"waymark_rollout_evidence_refused_total{reason="perSource"} 0"#))
    }
}
