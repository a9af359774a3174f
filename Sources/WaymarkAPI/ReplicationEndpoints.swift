import Foundation
import HTTPCore
import HTTPServer
import ManifestStore
import Replication
import RouteEngine
import Telemetry

/// The primary's side of followers (scope `replication`): what it holds, each stored
/// record byte for byte, the token hashes, and the counts followers forward.
struct ReplicationEndpoints: EndpointGroup {
    let context: APIContext

    static let maximumForwardBytes = Forward.maximumBytes

    func register(on registry: inout EndpointRegistry) throws(RouterError) {
        let replicate = RouteDeclaration.Access.scope(.replication, action: "replicate")
        try registry.add("GET", "/v1/replication/state", replicate) { _, _ throws(Refusal) in try state() }
        // A record is read from disk (history is not in memory): off the loop, in the lane
        // of internal readers (a QR flood in the reads lane does not hold a follower back).
        try registry.addOffLoop("GET", "/v1/replication/revisions/:number", replicate, lane: .replication) { _, call throws(Refusal) in
            try revisionRecord(call["number"])
        }
        try registry.add("GET", "/v1/replication/schemas/:platform/:version", replicate) { _, call throws(Refusal) in
            try schemaRecord(SchemaKey(platform: call["platform"], version: call["version"]))
        }
        try registry.add("GET", "/v1/replication/tokens", replicate) { _, _ throws(Refusal) in try tokenFile() }
        try registry.addDeferred("POST", "/v1/replication/telemetry", .scope(.replication, action: "forwardTelemetry"),
                                 maximumBody: Self.maximumForwardBytes) { request, call, responder throws(Refusal) in try forwarded(request, call, responder) }
    }

    private func state() throws(Refusal) -> HTTPResponse {
        let state = try reading("The replication state") { () throws(StoreError) in try ReplicationState(store: context.store) }
        return APIResponse.json(state.json, headers: [("Cache-Control", "no-store")])
    }

    private func revisionRecord(_ text: String) throws(Refusal) -> HTTPResponse {
        guard let number = Int(text), number >= 1, String(number) == text else {
            throw Refusal(.badRequest, "badRevision", "The revision must be a positive integer without leading zeros.")
        }
        guard let record = try reading("Revision \(number)", { () throws(StoreError) in try context.store.revisionRecord(number) }) else {
            throw Refusal(.notFound, "unknownRevision", "There is no revision \(number).")
        }
        return APIResponse.bytes(record, contentType: "application/octet-stream", cacheControl: RevisionEndpoints.immutable)
    }

    private func schemaRecord(_ key: SchemaKey) throws(Refusal) -> HTTPResponse {
        guard let record = try reading("The schema for \(key)", { () throws(StoreError) in try context.store.schemaRecord(key) }) else {
            throw Refusal(.notFound, "unknownBuild", "No schema is registered for \(key).")
        }
        return APIResponse.bytes(record, contentType: "application/octet-stream", cacheControl: "no-store")
    }

    private func tokenFile() throws(Refusal) -> HTTPResponse {
        let bytes = try reading("The tokens") { () throws(StoreError) in try context.store.tokens.fileBytes() }
        return APIResponse.bytes(bytes.isEmpty ? Array("[]".utf8) : bytes, contentType: "application/json", cacheControl: "no-store")
    }

    /// What `body` reads from the store, or a `500 storeFailed` naming `what`.
    private func reading<Value>(_ what: String, _ body: () throws(StoreError) -> Value) throws(Refusal) -> Value {
        do throws(StoreError) {
            return try body()
        } catch {
            throw Refusal(.internalServerError, "storeFailed", "\(what) could not be read: \(error.clientMessage).")
        }
    }

    /// `POST /v1/replication/telemetry`: a follower's `Forward`, answered `200` once it is
    /// durable here — counted, or recognised as counted before (a retry).
    private func forwarded(_ request: HTTPRequest, _ call: RouteCall, _ responder: Responder) throws(Refusal) {
        if let follower = context.options.follower {
            throw Refusal(.conflict, "follower", "This node follows \(follower.client.base); forward counts to the primary.")
        }
        let telemetry = context.telemetry
        let vocabulary = context.vocabulary.parser(for: context.store, documents: context.documents, limits: telemetry.options.limits).vocabulary
        // Held to what a phone's batch is held to: a follower's token is one credential, and
        // what it forwards counts like its fleet's.
        // Decoded into a variable of its own, so holding it changes the batches in place.
        var forward: Forward
        switch Forward.decode(request.body) {
        case .failure(let error):
            context.forwardsRefused.add(1, ordering: .relaxed)
            throw Refusal(.badRequest, "invalidForward", error.message + " Nothing was counted.")
        case .success(let value): forward = value
        }
        let clamped: Forward.Clamped
        switch forward.hold(to: telemetry.options.limits, vocabulary: vocabulary, now: telemetry.options.clock()) {
        case .failure(let error):
            context.forwardsRefused.add(1, ordering: .relaxed)
            throw Refusal(.badRequest, "invalidForward", error.message + " Nothing was counted.")
        case .success(let value): clamped = value
        }
        var fields: [String: JSONValue] = ["node": .string(String(decoding: forward.node, as: UTF8.self)), "through": .int(Int(clamping: forward.through))]
        if !clamped.isEmpty {
            // Counted, less what a phone's batches could not have carried: said, so the
            // follower's operator can see it in the primary's answer and metrics.
            fields["clamped"] = .object(["events": .int(Int(clamping: clamped.events)), "shapeCounts": .int(Int(clamping: clamped.shapeCounts)),
                                         "moved": .int(Int(clamping: clamped.moved))])
        }
        let answer = APIResponse.json(.object(fields))
        // Counted once durable, and only for a forward not applied before (a retry after a
        // lost answer is held the same way again, and is not a second clamping).
        let node = forward.node, through = forward.through
        let firstTime = telemetry.read { ($0.forwarded[node] ?? 0) < through }
        let context = context
        telemetry.submit(forward) { result in
            if case .success = result, firstTime, !clamped.isEmpty {
                context.forwardsClamped.add(1, ordering: .relaxed)
                context.forwardEventsDropped.add(clamped.events, ordering: .relaxed)
            }
            responder.respond(TelemetryEndpoints.durable(result, answer: answer, what: "forward"))
        }
    }

    /// `/metrics` lines for replication: a primary's forwards received, a follower's state.
    static func metrics(_ context: APIContext) -> [(name: String, type: String, help: String, value: UInt64)] {
        let statistics = context.telemetry.currentStatistics
        var metrics: [(name: String, type: String, help: String, value: UInt64)] = [
            ("waymark_telemetry_forwards_applied_total", "counter", "Followers' forwards of counts counted here since start.", statistics.forwardsApplied),
            ("waymark_telemetry_forwards_repeated_total", "counter", "Followers' forwards received again and not counted twice since start.",
             statistics.forwardsRepeated),
            ("waymark_telemetry_forwards_refused_total", "counter", "Followers' forwards refused whole (damaged, or naming what no follower makes) since start.",
             context.forwardsRefused.load(ordering: .relaxed)),
            ("waymark_telemetry_forwards_clamped_total", "counter",
             "Followers' forwards counted less what a phone's batches could not carry (events past a minute's bound, shapes past their events) since start.",
             context.forwardsClamped.load(ordering: .relaxed)),
            ("waymark_telemetry_forward_events_dropped_total", "counter", "Events in followers' forwards past a minute's bound, not counted, since start.",
             context.forwardEventsDropped.load(ordering: .relaxed)),
        ]
        guard let follower = context.options.follower else { return metrics }
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
             context.telemetry.eventsNotForwarded),
        ]
        return metrics
    }
}
