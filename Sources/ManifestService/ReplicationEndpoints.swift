import Foundation
import HTTPCore
import HTTPServer
import ManifestStore
import Replication
import RouteEngine
import Telemetry

/// The primary's side of followers (scope `replication`): what it holds, each stored
/// record byte for byte, the token hashes, and the counts followers forward.
extension ManifestService {
    func addReplicationRoutes(to router: inout Router) {
        try! router.add("GET", "/v1/replication/state") { [self] request, _ in replicationState(request) }
        try! router.add("GET", "/v1/replication/revisions/:number") { [self] request, parameters in revisionRecord(request, parameters["number"]) }
        try! router.add("GET", "/v1/replication/schemas/:platform/:version") { [self] request, parameters in
            schemaRecord(request, SchemaKey(platform: parameters["platform"] ?? "", version: parameters["version"] ?? ""))
        }
        try! router.add("GET", "/v1/replication/tokens") { [self] request, _ in tokenFile(request) }
        try! router.addDeferred("POST", "/v1/replication/telemetry", maximumBody: Self.maximumForwardBytes) { [self] request, _, responder in
            forwarded(request, responder)
        }
    }

    static let maximumForwardBytes = 64 << 20

    private static func octets(_ bytes: [UInt8], cacheControl: String) -> HTTPResponse {
        HTTPResponse(status: .ok, headers: HTTPHeaders([("Content-Type", "application/octet-stream"), ("Cache-Control", cacheControl)]), body: bytes)
    }

    private func replicationState(_ request: HTTPRequest) -> HTTPResponse {
        if let denied = denial(request, .replication, action: "replicate") { return denied }
        do throws(StoreError) {
            return API.json(try ReplicationState(store: store).json, headers: [("Cache-Control", "no-store")])
        } catch {
            return API.error(.internalServerError, "storeFailed", "The replication state could not be read: \(error.message).")
        }
    }

    private func revisionRecord(_ request: HTTPRequest, _ text: String?) -> HTTPResponse {
        if let denied = denial(request, .replication, action: "replicate") { return denied }
        guard let text, let number = Int(text), number >= 1, String(number) == text else {
            return API.error(.badRequest, "badRevision", "The revision must be a positive integer without leading zeros.")
        }
        do throws(StoreError) {
            guard let record = try store.revisionRecord(number) else { return API.error(.notFound, "unknownRevision", "There is no revision \(number).") }
            return Self.octets(record, cacheControl: "private, max-age=31536000, immutable")
        } catch {
            return API.error(.internalServerError, "storeFailed", "Revision \(number) could not be read: \(error.message).")
        }
    }

    private func schemaRecord(_ request: HTTPRequest, _ key: SchemaKey) -> HTTPResponse {
        if let denied = denial(request, .replication, action: "replicate") { return denied }
        do throws(StoreError) {
            guard let record = try store.schemaRecord(key) else { return API.error(.notFound, "unknownBuild", "No schema is registered for \(key).") }
            return Self.octets(record, cacheControl: "no-store")
        } catch {
            return API.error(.internalServerError, "storeFailed", "The schema for \(key) could not be read: \(error.message).")
        }
    }

    private func tokenFile(_ request: HTTPRequest) -> HTTPResponse {
        if let denied = denial(request, .replication, action: "replicate") { return denied }
        do throws(StoreError) {
            let bytes = try store.tokens.fileBytes()
            return HTTPResponse(status: .ok, headers: HTTPHeaders([("Content-Type", "application/json"), ("Cache-Control", "no-store")]),
                                body: bytes.isEmpty ? Array("[]".utf8) : bytes)
        } catch {
            return API.error(.internalServerError, "storeFailed", "The tokens could not be read: \(error.message).")
        }
    }

    /// `POST /v1/replication/telemetry`: a follower's `Forward`, answered `200` once it is
    /// durable here — counted, or recognised as counted before (a retry).
    private func forwarded(_ request: HTTPRequest, _ responder: Responder) {
        if let denied = denial(request, .replication, action: "forwardTelemetry") { return responder.respond(denied) }
        if let follower = options.follower {
            return responder.respond(API.error(.conflict, "follower", "This node follows \(follower.client.base); forward counts to the primary."))
        }
        let forward: Forward
        switch Forward.decode(request.body) {
        case .failure(let error): return responder.respond(API.error(.badRequest, "invalidForward", error.message + " Nothing was counted."))
        case .success(let value): forward = value
        }
        let limits = telemetry.options.limits
        let latestMinute = (telemetry.options.clock() + limits.maximumClockSkew) / 60
        for (index, batch) in forward.batches.enumerated() {
            if let tally = batch.tallies.first(where: { Int($0.minute) > latestMinute || $0.count == 0 }) {
                return responder.respond(API.error(.badRequest, "invalidForward",
                    "Batch \(index) of the forward has a count of \(tally.count) at minute \(tally.minute), in the future or empty. Nothing was counted."))
            }
        }
        let answer = API.json(["node": .string(String(decoding: forward.node, as: UTF8.self)), "through": .int(Int(clamping: forward.through))])
        telemetry.submit(forward) { result in responder.respond(Self.durable(result, answer: answer, what: "forward")) }
    }

    // MARK: A follower's own answers

    /// Writes go to the primary: on a follower they are refused and change nothing.
    func followerRefusal() -> HTTPResponse? {
        guard let follower = options.follower else { return nil }
        return API.error(.conflict, "follower", "This node is a read-only follower of \(follower.client.base); "
            + "publish, roll back and register schemas there.", details: ["primary": .string(follower.client.base)])
    }

    /// What `/readyz` adds on a follower.
    func followerReadiness() -> JSONValue? {
        guard let follower = options.follower else { return nil }
        let status = follower.status
        var object: [String: JSONValue] = [
            "primary": .string(status.primary),
            "primaryReachable": .bool(status.primaryReachable),
            "diverged": .bool(status.diverged),
            "eventsNotForwarded": .int(Int(clamping: telemetry.eventsNotForwarded)),
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

    /// `/metrics` lines for replication: a primary's forwards received, a follower's state.
    func replicationMetrics() -> [(name: String, type: String, help: String, value: UInt64)] {
        let statistics = telemetry.currentStatistics
        var metrics: [(name: String, type: String, help: String, value: UInt64)] = [
            ("waymark_telemetry_forwards_applied_total", "counter", "Followers' forwards of counts counted here since start.", statistics.forwardsApplied),
            ("waymark_telemetry_forwards_repeated_total", "counter", "Followers' forwards received again and not counted twice since start.",
             statistics.forwardsRepeated),
        ]
        guard let follower = options.follower else { return metrics }
        let status = follower.status
        metrics += [
            ("waymark_follower", "gauge", "1 on a follower.", 1),
            ("waymark_follower_primary_up", "gauge", "1 when the last poll of the primary succeeded.", status.primaryReachable ? 1 : 0),
            ("waymark_follower_diverged", "gauge", "1 when the primary's history differs from this store's (mirroring stopped).", status.diverged ? 1 : 0),
            ("waymark_follower_last_sync_timestamp_seconds", "gauge", "When the store last matched the primary (0: never).",
             UInt64(max(0, status.lastSync?.timeIntervalSince1970 ?? 0))),
            ("waymark_follower_primary_revision", "gauge", "The primary's newest revision when last seen.", UInt64(status.primaryRevision ?? 0)),
            ("waymark_follower_sync_failures_total", "counter", "Polls of the primary that failed since start.", status.syncFailures),
            ("waymark_follower_records_mirrored_total", "counter", "Revisions, schemas and token files mirrored since start.", status.recordsMirrored),
            ("waymark_follower_forwards_total", "counter", "Forwards of counts the primary acknowledged since start.", statistics.forwardsAcknowledged),
            ("waymark_follower_forward_failures_total", "counter", "Forwards of counts that failed (to be retried) since start.", status.forwardFailures),
            ("waymark_follower_events_not_forwarded", "gauge", "Telemetry events accepted here and not yet acknowledged by the primary.",
             telemetry.eventsNotForwarded),
        ]
        return metrics
    }
}
