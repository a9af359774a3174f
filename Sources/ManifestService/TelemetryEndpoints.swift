import Foundation
import HTTPCore
import HTTPServer
import ManifestStore
import RouteEngine
import Synchronization
import Telemetry

/// What telemetry may name, rebuilt when the store changes: every route id any revision
/// ever had, the preconditions and app versions of the registered schemas, the newest
/// revision. Revisions are immutable, so each is read once.
final class VocabularyCache: Sendable {
    private struct State {
        var generation = -1
        var parser: BatchParser?
        var routeIDs: [String] = []
        var seenRoutes: Set<String> = []
        var revisionsRead = 0
    }

    private let state = Mutex(State())

    func parser(for store: ManifestStore, limits: TelemetryLimits) -> BatchParser {
        let generation = store.generation
        return state.withLock { state in
            if state.generation == generation, let parser = state.parser { return parser }
            let snapshot = store.snapshot
            for revision in snapshot.revisions.dropFirst(state.revisionsRead) {
                let routes = (try? JSONParser().parse(revision.routes))?["routes"]?.arrayValue ?? []
                for id in routes.compactMap({ $0["id"]?.stringValue }) where state.seenRoutes.insert(id).inserted {
                    state.routeIDs.append(id)
                }
            }
            state.revisionsRead = snapshot.revisions.count
            var versions: [Platform: [String]] = [:]
            var preconditions: [String] = []
            for stored in snapshot.orderedSchemas {
                if let platform = Platform.allCases.first(where: { $0.name == stored.schema.platform }) {
                    versions[platform, default: []].append(stored.schema.version)
                }
                preconditions += stored.schema.preconditions
            }
            let vocabulary = Vocabulary(routes: state.routeIDs, preconditions: preconditions, appVersions: versions,
                                        latestRevision: snapshot.current?.number ?? 0)
            let parser = BatchParser(vocabulary: vocabulary, limits: limits)
            state.parser = parser
            state.generation = generation
            return parser
        }
    }
}

extension ManifestService {
    func addTelemetryRoutes(to router: inout Router) {
        try! router.addDeferred("POST", "/v1/telemetry", maximumBody: telemetry.options.limits.maximumBatchBytes) { [self] request, _, responder in
            ingest(request, responder)
        }
        try! router.add("GET", "/v1/telemetry/counts") { [self] request, _ in counts(request) }
        try! router.add("GET", "/v1/telemetry/top") { [self] request, _ in top(request) }
    }

    // MARK: Ingest

    /// `POST /v1/telemetry`: parse and validate here, on the connection's loop; answer
    /// `202` from the committer once the batch is on disk.
    private func ingest(_ request: HTTPRequest, _ responder: Responder) {
        if case .failure(let refusal) = authorize(request, .telemetryWrite, action: "postTelemetry") {
            return responder.respond(refusal.response)
        }
        guard !request.body.isEmpty else {
            return responder.respond(API.error(.badRequest, "missingBody", "The body must be a batch: {\"client\": {…}, \"events\": […]}."))
        }
        let parser = vocabulary.parser(for: store, limits: telemetry.options.limits)
        let batch: Batch
        do throws(BatchError) {
            batch = try parser.parse(request.body, now: telemetry.options.clock())
        } catch {
            switch error {
            case .malformed(let message): return responder.respond(API.error(.badRequest, "invalidBatch", message + " Nothing was counted."))
            case .invalidClient(let message): return responder.respond(API.error(.badRequest, "invalidClient", message + " Nothing was counted."))
            case .tooManyEvents(let limit):
                return responder.respond(API.error(.contentTooLarge, "tooManyEvents",
                    "A batch holds at most \(limit) events; send the rest in another batch. Nothing was counted."))
            }
        }
        telemetryRejected.add(UInt64(batch.rejected.count), ordering: .relaxed)
        let accepted = Self.acceptedResponse(batch)
        telemetry.submit(batch) { result in responder.respond(Self.durable(result, answer: accepted, what: "batch")) }
    }

    /// `answer` once the committer made it durable, else `503` with `Retry-After`.
    static func durable(_ result: Result<Void, StoreError>, answer: HTTPResponse, what: String) -> HTTPResponse {
        guard case .failure(let error) = result else { return answer }
        var response = API.error(.serviceUnavailable, "telemetryUnavailable",
                                 "The \(what) could not be made durable (\(error.message)); nothing was counted. Retry later.")
        response.headers.add("Retry-After", "5")
        return response
    }

    /// `202 {"accepted": n, "rejected": [{"index", "error"}]}`, made before the commit so
    /// the committer only hands it over.
    static func acceptedResponse(_ batch: Batch) -> HTTPResponse {
        if batch.rejected.isEmpty {
            return HTTPResponse(status: .accepted, contentType: "application/json",
                                body: Array("{\"accepted\":\(batch.tallies.count),\"rejected\":[]}".utf8))
        }
        let rejected = batch.rejected.map { JSONValue.object(["index": .int($0.index), "error": .string($0.error)]) }
        return API.json(["accepted": .int(batch.tallies.count), "rejected": .array(rejected)], status: .accepted)
    }

    // MARK: Reading

    private static let filterNames = TelemetryDimension.allCases.map(\.rawValue)

    /// The range, filters and step shared by `counts` and `top`.
    private func countQuery(_ query: Query, now: Int, allowed: Set<String>, defaultSpan: Int) -> Result<CountQuery, Refusal> {
        let known = allowed.union(["from", "to", "step"]).union(Self.filterNames)
        if let unknown = query.pairs.map(\.name).first(where: { !known.contains($0) }) {
            return .failure(API.refusal(.badRequest, "unknownParameter",
                "Unknown query parameter \"\(unknown)\"; use from, to, step, \(Self.filterNames.joined(separator: ", ")) and \(allowed.sorted().joined(separator: ", "))."))
        }
        func time(_ name: String) -> Result<Int?, Refusal> {
            guard var text = query[name] else { return .success(nil) }
            guard let seconds = text.withUTF8(Timestamp.parse) else {
                return .failure(API.refusal(.badRequest, "badParameter", "\(name) must be an RFC 3339 time such as 2026-11-21T10:00:00Z."))
            }
            return .success(seconds)
        }
        let to: Int, from: Int
        switch (time("to"), time("from")) {
        case (.failure(let refusal), _), (_, .failure(let refusal)): return .failure(refusal)
        case (.success(let end), .success(let start)):
            // The range is [from, to): by default it ends just after this second, so an event
            // stamped now is in it even when now starts a minute.
            to = end ?? now + 1
            from = start ?? to - defaultSpan
        }
        guard from < to else { return .failure(API.refusal(.badRequest, "badParameter", "from must be before to.")) }
        let limits = telemetry.options.limits
        let minutesKept = now - limits.minuteRetention
        let step: Step
        switch query["step"] {
        case nil: step = from >= minutesKept ? .minute : .hour
        case "1m"?:
            guard from >= minutesKept - 60 else {
                return .failure(API.refusal(.badRequest, "badParameter",
                    "Per-minute counts are kept for \(limits.minuteRetention / 3_600) hours; use step=1h for older ranges."))
            }
            step = .minute
        case "1h"?: step = .hour
        case let other?: return .failure(API.refusal(.badRequest, "badParameter", "step must be 1m or 1h, not \"\(other)\"."))
        }
        var result = CountQuery(from: from, to: to, step: step)
        guard result.points <= 10_000 else {
            return .failure(API.refusal(.badRequest, "badParameter", "The range holds \(result.points) steps; at most 10,000 (use step=1h or a shorter range)."))
        }
        for dimension in TelemetryDimension.allCases {
            guard let value = query[dimension.rawValue] else { continue }
            guard Counts.isValid(value, for: dimension) else {
                return .failure(API.refusal(.badRequest, "badParameter", "\"\(value)\" is not a value \(dimension.rawValue) can have."))
            }
            result.filters[dimension] = value
        }
        return .success(result)
    }

    private static func dimensions(_ text: String, parameter: String) -> Result<[TelemetryDimension], Refusal> {
        var dimensions: [TelemetryDimension] = []
        for name in text.split(separator: ",", omittingEmptySubsequences: false) {
            guard let dimension = TelemetryDimension(rawValue: String(name)) else {
                return .failure(API.refusal(.badRequest, "badParameter",
                    "\(parameter) takes \(filterNames.joined(separator: ", ")); \"\(name)\" is none of them."))
            }
            if !dimensions.contains(dimension) { dimensions.append(dimension) }
        }
        return .success(dimensions)
    }

    private static func limit(_ query: Query, default value: Int) -> Result<Int, Refusal> {
        guard let text = query["limit"] else { return .success(value) }
        guard let number = Int(text), (1...1_000).contains(number) else {
            return .failure(API.refusal(.badRequest, "badParameter", "limit must be a whole number from 1 to 1000."))
        }
        return .success(number)
    }

    /// What `counts` and `top` share: the scope, the query string, range, filters and limit.
    private func telemetryRead(_ request: HTTPRequest, allowed: Set<String>, defaultSpan: Int, defaultLimit: Int)
        -> Result<(query: Query, countQuery: CountQuery), Refusal> {
        if let denied = denial(request, .telemetryRead, action: "readTelemetry") { return .failure(Refusal(response: denied)) }
        guard let query = API.query(request) else { return .failure(API.refusal(.badRequest, "badQuery", "The query string has a malformed %-escape.")) }
        return countQuery(query, now: telemetry.options.clock(), allowed: allowed, defaultSpan: defaultSpan).flatMap { countQuery in
            Self.limit(query, default: defaultLimit).map { limit in
                var countQuery = countQuery
                countQuery.limit = limit
                return (query, countQuery)
            }
        }
    }

    private static func filtersJSON(_ countQuery: CountQuery) -> JSONValue {
        .object(Dictionary(uniqueKeysWithValues: countQuery.filters.map { ($0.key.rawValue, JSONValue.string($0.value)) }))
    }

    /// `GET /v1/telemetry/counts`: series of counts with totals and failure rates per group.
    private func counts(_ request: HTTPRequest) -> HTTPResponse {
        let query: Query
        var countQuery: CountQuery
        switch telemetryRead(request, allowed: ["groupBy", "limit"], defaultSpan: 3_600, defaultLimit: 100) {
        case .failure(let refusal): return refusal.response
        case .success(let value): (query, countQuery) = value
        }
        if let groupBy = query["groupBy"], !groupBy.isEmpty {
            switch Self.dimensions(groupBy, parameter: "groupBy") {
            case .failure(let refusal): return refusal.response
            case .success(let value): countQuery.groupBy = value
            }
        }
        let result = telemetry.read { $0.query(countQuery) }
        let groups: [JSONValue] = result.groups.map { group in
            .object(["key": .object(Dictionary(uniqueKeysWithValues: group.key.map { ($0.dimension.rawValue, JSONValue.string($0.name)) })),
                     "total": .int(Int(group.total)), "failures": .int(Int(group.failures)), "failureRate": .double(group.failureRate),
                     "counts": .array(group.counts.map { .int(Int($0)) }), "failureCounts": .array(group.failureCounts.map { .int(Int($0)) })])
        }
        return API.json(["from": .string(Timestamp.format(countQuery.from)), "to": .string(Timestamp.format(countQuery.to)),
                         "step": .string(countQuery.step.name), "groupBy": .array(countQuery.groupBy.map { .string($0.rawValue) }),
                         "filters": Self.filtersJSON(countQuery),
                         "buckets": .array(result.bucketStarts.map { .string(Timestamp.format($0)) }),
                         "total": .int(Int(result.total)), "failures": .int(Int(result.failures)), "failureRate": .double(result.failureRate),
                         "groups": .array(groups), "omittedGroups": .int(result.omittedGroups)],
                        headers: [("Cache-Control", "no-store")])
    }

    /// `GET /v1/telemetry/top?outcome=notFound&by=route&limit=20`: the largest groups of one or more
    /// dimensions, totals only.
    private func top(_ request: HTTPRequest) -> HTTPResponse {
        let query: Query
        var countQuery: CountQuery
        switch telemetryRead(request, allowed: ["by", "limit"], defaultSpan: 86_400, defaultLimit: 20) {
        case .failure(let refusal): return refusal.response
        case .success(let value): (query, countQuery) = value
        }
        switch Self.dimensions(query["by"] ?? "route", parameter: "by") {
        case .failure(let refusal): return refusal.response
        case .success(let value): countQuery.groupBy = value
        }
        countQuery.series = false
        let result = telemetry.read { $0.query(countQuery) }
        let items: [JSONValue] = result.groups.map { group in
            var item: [String: JSONValue] = ["count": .int(Int(group.total)), "failures": .int(Int(group.failures)),
                                             "failureRate": .double(group.failureRate),
                                             "share": .double(result.total == 0 ? 0 : Double(group.total) / Double(result.total))]
            for part in group.key { item[part.dimension.rawValue] = .string(part.name) }
            return .object(item)
        }
        return API.json(["from": .string(Timestamp.format(countQuery.from)), "to": .string(Timestamp.format(countQuery.to)),
                         "by": .string(countQuery.groupBy.map(\.rawValue).joined(separator: ",")), "total": .int(Int(result.total)),
                         "filters": Self.filtersJSON(countQuery),
                         "items": .array(items), "omitted": .int(result.omittedGroups)],
                        headers: [("Cache-Control", "no-store")])
    }
}

// MARK: Prometheus

extension ManifestService {
    func addMetricsRoute(to router: inout Router) {
        try! router.add("GET", "/metrics") { [self] request, _ in metrics(request) }
    }

    /// `GET /metrics` (scope telemetry:read): Prometheus text format 0.0.4.
    private func metrics(_ request: HTTPRequest) -> HTTPResponse {
        if let denied = denial(request, .telemetryRead, action: "readMetrics") { return denied }
        var out = ""
        func family(_ name: String, _ type: String, _ help: String) { out += "# HELP \(name) \(help)\n# TYPE \(name) \(type)\n" }
        func label(_ text: String) -> String {
            text.replacingOccurrences(of: "\\", with: "\\\\").replacingOccurrences(of: "\"", with: "\\\"").replacingOccurrences(of: "\n", with: "\\n")
        }
        let resolutions: [(String, UInt64)] = telemetry.read { counts in
            counts.sinceStart.map { key, count in
                let labels = [TelemetryDimension.platform, .outcome, .reason, .route].map { dimension in
                    "\(dimension.rawValue)=\"\(label(counts.name(of: dimension.value(of: key), for: dimension)))\""
                }
                return (labels.joined(separator: ","), count)
            }
        }
        family("waymark_resolutions_total", "counter", "Resolutions reported by clients since start, by platform, outcome, reason and route (bounded: unknown routes are \"other\").")
        for (labels, count) in resolutions.sorted(by: { $0.0 < $1.0 }) { out += "waymark_resolutions_total{\(labels)} \(count)\n" }
        let statistics = telemetry.currentStatistics
        let snapshot = store.snapshot
        let storeBytes = snapshot.revisions.reduce(0) { $0 + $1.routes.count } + snapshot.schemas.values.reduce(0) { $0 + $1.bytes.count }
        let single: [(name: String, type: String, help: String, value: UInt64)] = [
            ("waymark_telemetry_events_accepted_total", "counter", "Telemetry events accepted (durable and counted) since start.", statistics.events),
            ("waymark_telemetry_events_rejected_total", "counter", "Telemetry events rejected one by one inside accepted batches since start.",
             telemetryRejected.load(ordering: .relaxed)),
            ("waymark_telemetry_batches_total", "counter", "Telemetry batches made durable since start.", statistics.batches),
            ("waymark_telemetry_commits_total", "counter", "Group commits (one fdatasync each) of the telemetry log since start.", statistics.commits),
            ("waymark_telemetry_commit_failures_total", "counter", "Telemetry commits that failed (their batches were answered 503).", statistics.failedCommits),
            ("waymark_telemetry_log_bytes", "gauge", "Bytes in the telemetry log since the last snapshot.", UInt64(statistics.logBytes)),
            ("waymark_publishes_total", "counter", "Revisions published (rollbacks included) since start.", publishes.load(ordering: .relaxed)),
            ("waymark_link_check_fetches_total", "counter", "Outbound link-check fetches (fallbacks and associated-domain files, cache hits not counted) since start.",
             UInt64(linkChecker?.fetches.load(ordering: .relaxed) ?? 0)),
            ("waymark_link_check_findings_total", "counter", "Problems the link checks reported on validations and publishes since start.",
             linkFindings.load(ordering: .relaxed)),
            ("waymark_revision_current", "gauge", "The number of the current revision (0: none).", UInt64(snapshot.current?.number ?? 0)),
            ("waymark_store_revisions", "gauge", "Revisions stored.", UInt64(snapshot.revisions.count)),
            ("waymark_store_schemas", "gauge", "App build schemas stored.", UInt64(snapshot.schemas.count)),
            ("waymark_store_bytes", "gauge", "Bytes of stored revision documents and schemas.", UInt64(storeBytes)),
        ] + replicationMetrics()
        for metric in single {
            family(metric.name, metric.type, metric.help)
            out += "\(metric.name) \(metric.value)\n"
        }
        out += httpMetrics.exposition()
        return HTTPResponse(status: .ok, headers: HTTPHeaders([("Content-Type", "text/plain; version=0.0.4; charset=utf-8"), ("Cache-Control", "no-store")]),
                            body: Array(out.utf8))
    }
}
