import CivilDate
import HTTPCore
import HTTPServer
import ManifestStore
import Rollout
import RouteEngine
import Telemetry

/// Resolution telemetry: phones post batches (scope `telemetry:write`, answered once
/// durable); ops read counts and top groups (scope `telemetry:read`).
struct TelemetryEndpoints: EndpointGroup {
    let context: APIContext

    func register(on registry: inout EndpointRegistry) throws(RouterError) {
        try registry.addDeferred("POST", "/v1/telemetry", .scope(.telemetryWrite, action: "postTelemetry"),
                                 maximumBody: context.telemetry.options.limits.maximumBatchBytes) { request, call, responder throws(Refusal) in
            try ingest(request, call, responder)
        }
        let read = RouteDeclaration.Access.scope(.telemetryRead, action: "readTelemetry")
        // Counts are what the console's performance view reads: a `routes:publish` token
        // may read them too (rated as telemetry:read). The rest stays ops' own.
        let counts = RouteDeclaration.Access.eitherScope(.telemetryRead, or: .routesPublish, action: "readTelemetry")
        // Off the loops, in the reads lane with its per-caller share: a month of hours grouped
        // by six dimensions takes tens of milliseconds, which on a loop would stall every
        // connection it serves (manifests, landings).
        // The dashboards' reads: in the lane of internal readers, not behind QR codes.
        try registry.addOffLoop("GET", "/v1/telemetry/counts", counts, lane: .internalReads) { request, call throws(Refusal) in try self.counts(request, call) }
        try registry.addOffLoop("GET", "/v1/telemetry/top", read, lane: .internalReads) { request, call throws(Refusal) in try top(request, call) }
    }

    // MARK: Ingest

    /// Whether a `Content-Type` value is `application/json` (its media type compared without
    /// case, blanks ignored, parameters after `;` allowed), on the field's bytes: no array
    /// made, as every batch asks.
    static func isJSON(_ value: UnsafeBufferPointer<UInt8>) -> Bool {
        let expected: StaticString = "application/json"
        var matched = 0
        for byte in value {
            if byte == 0x3B { break }
            if byte == 0x20 || byte == 0x09 { continue }
            guard matched < expected.utf8CodeUnitCount, byte | 0x20 == expected.utf8Start[matched] else { return false }
            matched += 1
        }
        return matched == expected.utf8CodeUnitCount
    }

    /// `POST /v1/telemetry`: parse and validate here, on the connection's loop; answer
    /// `202` from the committer once the batch is on disk.
    private func ingest(_ request: HTTPRequest, _ call: RouteCall, _ responder: Responder) throws(Refusal) {
        // RFC 9110 §15.5.16: a body in a type this resource does not take is 415.
        let isJSON = request.head.headers.withValue("Content-Type", Self.isJSON) ?? false
        guard isJSON else {
            context.telemetryRefusals.refuse("unsupportedMediaType")
            throw Refusal(.unsupportedMediaType, "unsupportedMediaType", "A batch is sent as Content-Type: application/json. Nothing was counted.")
        }
        guard !request.body.isEmpty else {
            context.telemetryRefusals.refuse("missingBody")
            throw Refusal(.badRequest, "missingBody", "The body must be a batch: {\"client\": {…}, \"events\": […]}.")
        }
        let telemetry = context.telemetry
        let parser = context.vocabulary.parser(for: context.store, documents: context.documents, limits: telemetry.options.limits)
        var batch: Batch
        let now = telemetry.options.clock()
        do throws(BatchError) {
            batch = try parser.parse(request.body, now: now)
        } catch {
            context.telemetryRefusals.refuse(Self.code(error))
            switch error {
            case .malformed(let message): throw Refusal(.badRequest, "invalidBatch", message + " Nothing was counted.")
            case .invalidClient(let message): throw Refusal(.badRequest, "invalidClient", message + " Nothing was counted.")
            case .tooManyEvents(let limit):
                throw Refusal(.contentTooLarge, "tooManyEvents", "A batch holds at most \(limit) events; send the rest in another batch. Nothing was counted.")
            case .countTooLarge(let limit):
                throw Refusal(.badRequest, "countTooLarge", "An event's count is at most \(limit) (one install in one minute); split it. Nothing was counted.")
            case .batchTooLarge(let limit):
                throw Refusal(.badRequest, "batchTooLarge", "A batch's counts add up to at most \(limit); send the rest in another batch. Nothing was counted.")
            case .droppedTooLarge(let limit):
                throw Refusal(.badRequest, "droppedTooLarge", "client.dropped is at most \(limit). Nothing was counted.")
            }
        }
        context.telemetryRejected.add(UInt64(batch.rejected.count), ordering: .relaxed)
        let accepted = Self.acceptedResponse(batch)
        let network = EvidenceNetwork.of(request.head, trustForwardedFor: context.options.trustForwardedFor)
        if !batch.shapes.isEmpty {
            // Each shape counts once, from a source with its allowance left this minute, and
            // is remembered by its network: a source key is the client's own word, so one
            // address making up keys is still one of the sources a suggestion needs.
            let source = batch.source, allowance = context.shapeAllowance
            let hash = ShapeAllowance.sourceHash(source: nil, network: network)
            batch.shapes = batch.shapes.filter { _ in
                allowance.allow(source: source.map { $0.high ^ $0.low }, network: network, now: now)
            }.map { var shape = $0; shape.source = hash; return shape }
        }
        let context = context, submitted = batch
        if let shared = context.options.sharedTelemetry {
            // On a database: answered once committed there (counted once across the nodes by
            // its id); this node's own store then counts it too, for its own views.
            let offer = RolloutWatch.offer(submitted, network: network, context: context, now: now)
            shared.submit(id: submitted.id?.description, cells: Self.cells(submitted), evidence: offer?.json) { result in
                switch result {
                case .success(true):
                    telemetry.submitOnce(submitted) { _ in responder.respond(accepted) }
                case .success(false):
                    context.telemetryDuplicates.add(1, ordering: .relaxed)
                    responder.respond(HTTPResponse(status: .accepted, contentType: "application/json",
                                                   body: Array("{\"accepted\":0,\"rejected\":[],\"duplicate\":true}".utf8)))
                case .failure(let error):
                    responder.respond(APIResponse.error(.serviceUnavailable, "databaseUnavailable",
                                                        "The batch could not be committed to the database (\(error.clientMessage)); nothing was counted. Retry later.",
                                                        headers: [("Retry-After", "5")]))
                }
            }
            return
        }
        telemetry.submitOnce(submitted) { result in
            switch result {
            case .success(.duplicate):
                context.telemetryDuplicates.add(1, ordering: .relaxed)
                responder.respond(HTTPResponse(status: .accepted, contentType: "application/json",
                                               body: Array("{\"accepted\":0,\"rejected\":[],\"duplicate\":true}".utf8)))
            case .success(.counted):
                RolloutWatch.record(submitted, network: network, context: context, now: now)
                responder.respond(accepted)
            case .failure(let error):
                responder.respond(Self.durable(.failure(error), answer: accepted, what: "batch"))
            }
        }
    }

    /// A batch's counts as the database keeps them (`telemetry_counts`): one cell per
    /// minute, platform, app version, revision, entry, outcome, reason, route and
    /// precondition, its key the JSON array of those (`docs/postgres.md`, "Telemetry").
    static func cells(_ batch: Batch) -> [String: Int] {
        func name(_ slot: UInt16, _ names: [[UInt8]]) -> JSONValue {
            slot < 2 ? .string(slot == 0 ? "" : "other") : .string(String(decoding: names[Int(slot) - 2], as: UTF8.self))
        }
        let version: JSONValue = .string(batch.appVersion.map { String(decoding: $0, as: UTF8.self) } ?? "other")
        var cells: [String: Int] = [:]
        for tally in batch.tallies {
            let key = JSONValue.array([.int(Int(tally.minute)), .string(batch.platform.name), version, .int(Int(batch.revision)),
                                       .int(Int(tally.entry)), .int(Int(tally.outcome)), .int(Int(tally.reason)),
                                       name(tally.route, batch.routes), name(tally.precondition, batch.preconditions)]).serialized()
            cells[key, default: 0] += Int(tally.count)
        }
        return cells
    }

    static func code(_ error: BatchError) -> String {
        switch error {
        case .malformed: "invalidBatch"
        case .invalidClient: "invalidClient"
        case .tooManyEvents: "tooManyEvents"
        case .countTooLarge: "countTooLarge"
        case .batchTooLarge: "batchTooLarge"
        case .droppedTooLarge: "droppedTooLarge"
        }
    }

    /// What was refused or capped, per reason, since start: whole batches by code, shapes
    /// over an allowance, events too late for the minutes, and the active rollout's claims
    /// not counted as evidence.
    static func refusedJSON(_ context: APIContext) -> JSONValue {
        let late = context.telemetry.read { $0.lateEvents }
        let evidence = context.guardEvidence.withLock { $0?.refused } ?? [:]
        return ["batches": .object(Dictionary(uniqueKeysWithValues: context.telemetryRefusals.byCode.map { ($0.code, JSONValue.int(Int(clamping: $0.count))) })),
                "duplicateBatches": .int(Int(clamping: context.telemetryDuplicates.load(ordering: .relaxed))),
                "shapes": .int(Int(clamping: context.shapeAllowance.refused.load(ordering: .relaxed))),
                "lateEvents": .int(Int(clamping: late)),
                "evidence": .object(Dictionary(uniqueKeysWithValues: EvidenceRefusal.allCases.map { ($0.rawValue, JSONValue.int(evidence[$0] ?? 0)) }))]
    }

    /// `answer` once the committer made it durable, else `503` with `Retry-After`.
    static func durable(_ result: Result<Void, TelemetryError>, answer: HTTPResponse, what: String) -> HTTPResponse {
        guard case .failure(let error) = result else { return answer }
        return APIResponse.error(.serviceUnavailable, "telemetryUnavailable",
                                 "The \(what) could not be made durable (\(error.clientMessage)); nothing was counted. Retry later.",
                                 headers: [("Retry-After", "5")])
    }

    /// `202 {"accepted": n, "rejected": [{"index", "error"}]}`, made before the commit so
    /// the committer only hands it over.
    static func acceptedResponse(_ batch: Batch) -> HTTPResponse {
        if batch.rejected.isEmpty {
            return HTTPResponse(status: .accepted, contentType: "application/json",
                                body: Array("{\"accepted\":\(batch.tallies.count),\"rejected\":[]}".utf8))
        }
        let rejected = batch.rejected.map { JSONValue.object(["index": .int($0.index), "error": .string($0.error)]) }
        return APIResponse.json(["accepted": .int(batch.tallies.count), "rejected": .array(rejected)], status: .accepted)
    }

    // MARK: Reading

    /// `GET /v1/telemetry/counts`: series of counts with totals and failure rates per group.
    private func counts(_ request: HTTPRequest, _ call: RouteCall) throws(Refusal) -> HTTPResponse {
        var (query, countQuery) = try TelemetryQuery.read(request, context: context, allowed: ["groupBy", "limit"],
                                                          defaultSpan: 3_600, defaultLimit: 100)
        if let groupBy = query["groupBy"], !groupBy.isEmpty { countQuery.groupBy = try TelemetryQuery.dimensions(groupBy, parameter: "groupBy") }
        // The window is taken under the store's lock (no cell read); the scan runs without it.
        // An answer's size is bounded before it is made (groups kept × buckets), and what it
        // holds while it is made is reserved first: readers together hold at most the budget.
        var reserved = 0
        defer { context.answersInMaking.release(reserved) }
        let result = context.telemetry.read { $0.window(for: countQuery) }.query(countQuery) { values in
            let bytes = values * AnswerBudget.bytesPerValue
            guard context.answersInMaking.reserve(bytes) else { return false }
            reserved = bytes
            return true
        }
        guard !result.notAdmitted else {
            throw Refusal(.serviceUnavailable, "busy", "Other counts answers are being made; retry in a moment.", headers: [("Retry-After", "1")])
        }
        guard !result.tooLarge else {
            let buckets = result.bucketStarts.count
            throw Refusal(.badRequest, "answerTooLarge",
                          "This answer would hold \(result.groups.count + result.omittedGroups) group(s) of \(buckets) step(s), \(result.seriesValues) values; "
                            + "at most \(countQuery.maximumSeriesValues): ask fewer groups (limit), a shorter range or step=1h.",
                          details: ["values": .int(result.seriesValues), "buckets": .int(buckets), "maximum": .int(countQuery.maximumSeriesValues)])
        }
        let groups: [JSONValue] = result.groups.map { group in
            .object(["key": .object(Dictionary(uniqueKeysWithValues: group.key.map { ($0.dimension.rawValue, JSONValue.string($0.name)) })),
                     "total": .int(Int(clamping: group.total)), "failures": .int(Int(clamping: group.failures)), "failureRate": .double(group.failureRate),
                     "counts": .array(group.counts.map { .int(Int(clamping: $0)) }), "failureCounts": .array(group.failureCounts.map { .int(Int(clamping: $0)) })])
        }
        return APIResponse.json(["from": .string(Timestamp.format(countQuery.from)), "to": .string(Timestamp.format(countQuery.to)),
                                 "step": .string(countQuery.step.name), "groupBy": .array(countQuery.groupBy.map { .string($0.rawValue) }),
                                 "filters": TelemetryQuery.filtersJSON(countQuery),
                                 "buckets": .array(result.bucketStarts.map { .string(Timestamp.format($0)) }),
                                 "total": .int(Int(clamping: result.total)), "failures": .int(Int(clamping: result.failures)), "failureRate": .double(result.failureRate),
                                 "groups": .array(groups), "omittedGroups": .int(result.omittedGroups), "refused": Self.refusedJSON(context)],
                                headers: [("Cache-Control", "no-store")])
    }

    /// `GET /v1/telemetry/top?outcome=notFound&by=route&limit=20`: the largest groups of one
    /// or more dimensions, totals only.
    private func top(_ request: HTTPRequest, _ call: RouteCall) throws(Refusal) -> HTTPResponse {
        var (query, countQuery) = try TelemetryQuery.read(request, context: context, allowed: ["by", "limit"],
                                                          defaultSpan: 86_400, defaultLimit: 20)
        countQuery.groupBy = try TelemetryQuery.dimensions(query["by"] ?? "route", parameter: "by")
        countQuery.series = false
        // The window is taken under the store's lock (no cell read); the scan runs without it.
        let result = context.telemetry.read { $0.window(for: countQuery) }.query(countQuery)
        let items: [JSONValue] = result.groups.map { group in
            var item: [String: JSONValue] = ["count": .int(Int(clamping: group.total)), "failures": .int(Int(clamping: group.failures)),
                                             "failureRate": .double(group.failureRate),
                                             "share": .double(result.total == 0 ? 0 : Double(group.total) / Double(result.total))]
            for part in group.key { item[part.dimension.rawValue] = .string(part.name) }
            return .object(item)
        }
        return APIResponse.json(["from": .string(Timestamp.format(countQuery.from)), "to": .string(Timestamp.format(countQuery.to)),
                                 "by": .string(countQuery.groupBy.map(\.rawValue).joined(separator: ",")), "total": .int(Int(clamping: result.total)),
                                 "filters": TelemetryQuery.filtersJSON(countQuery),
                                 "items": .array(items), "omitted": .int(result.omittedGroups)],
                                headers: [("Cache-Control", "no-store")])
    }
}
