import CivilDate
import Foundation
import HTTPCore
import HTTPServer
import RouteEngine

/// `GET /healthz` (the process answers) and `GET /readyz` (a revision is there to serve;
/// on a follower, how its mirroring stands). Both open.
struct HealthEndpoints: EndpointGroup {
    let context: APIContext

    func register(on registry: inout EndpointRegistry) throws(RouterError) {
        try registry.add("GET", "/healthz", .open) { _, _ in APIResponse.json(["status": "ok"]) }
        try registry.add("GET", "/readyz", .open) { _, _ throws(Refusal) in try readiness() }
    }

    private func readiness() throws(Refusal) -> HTTPResponse {
        let snapshot = context.store.snapshot
        let follower = followerReadiness()
        guard let current = snapshot.current else {
            throw Refusal(.serviceUnavailable, "notReady", follower == nil ? "No revision is published yet."
                : "No revision is mirrored from the primary yet.", details: follower)
        }
        // A follower that lost its primary still serves its last good revision, so it stays
        // ready and says so here (and in /metrics).
        var object: [String: JSONValue] = ["status": "ready", "revision": .int(current.number), "schemas": .int(snapshot.schemas.count)]
        if let follower { object["follower"] = follower }
        // A component that cannot write makes the node unready (503 degraded), with the
        // component named: the load balancer sends clients to a node that can take their
        // telemetry, and the node comes back by itself once the component repairs itself.
        let telemetry = context.telemetry.currentHealth
        var component: [String: JSONValue] = ["writable": .bool(telemetry.writable)]
        if let since = telemetry.failingSince { component["failingSince"] = .string(Timestamp.format(Date(timeIntervalSince1970: Double(since)))) }
        if let error = telemetry.error, !telemetry.writable { component["error"] = .string(error) }
        object["components"] = ["telemetry": .object(component)]
        guard telemetry.writable else {
            object["status"] = "degraded"
            return APIResponse.json(.object(object), status: .serviceUnavailable, headers: [("Retry-After", "5")])
        }
        return APIResponse.json(.object(object))
    }

    /// What `/readyz` adds on a follower.
    private func followerReadiness() -> JSONValue? {
        guard let follower = context.options.follower else { return nil }
        let status = follower.status
        var object: [String: JSONValue] = [
            "primary": .string(status.primary),
            "primaryReachable": .bool(status.primaryReachable),
            "diverged": .bool(status.diverged),
            "eventsNotForwarded": .int(Int(clamping: context.telemetry.eventsNotForwarded)),
        ]
        if let lastSync = status.lastSync {
            object["lastSync"] = .string(Timestamp.format(lastSync))
            object["secondsSinceSync"] = .int(Int(Date().timeIntervalSince(lastSync)))
        }
        if let revision = status.primaryRevision { object["primaryRevision"] = .int(revision) }
        if let error = status.lastError { object["error"] = .string(error) }
        if let error = status.forwardError { object["forwardError"] = .string(error) }
        return .object(object)
    }
}
