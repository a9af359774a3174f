import CivilDate
import Foundation
import HTTPCore
import HTTPServer
import LinkLanding
import ManifestStore
import RouteEngine
import Telemetry

/// `GET /v1/telemetry/unknown-links?limit=N` (scope `telemetry:read`): the unknown links
/// people follow, as shapes (`docs/link-shapes.md`), most followed first, each with when it
/// was first and last seen, its platforms and entry points, and a route suggestion that
/// validates against the registered schemas (`RouteSuggestion`). Off the loop: suggesting
/// validates. Suggestions are kept per shape for as long as the routes that could compete
/// with it and the schemas are unchanged (`SuggestionCache`), and one request makes at most
/// `suggestionsPerRequest` new ones, and none more once it has spent `suggestionSeconds` of
/// CPU on them: the rest are `null` and counted in `pending` (asked again, it makes the next
/// ones).
struct UnknownLinkEndpoints: EndpointGroup {
    let context: APIContext

    static let defaultLimit = 20
    static let maximumLimit = 200
    /// Suggestions one request makes that were not made before (each validates a document).
    static let suggestionsPerRequest = 20
    /// CPU one request spends making suggestions before it leaves the rest pending: one
    /// suggestion is always made (a validation of the routes of its length, at most a
    /// document's), the next only while the request has spent less than this.
    static let suggestionSeconds = 0.2

    func register(on registry: inout EndpointRegistry) throws(RouterError) {
        try registry.addOffLoop("GET", "/v1/telemetry/unknown-links", .scope(.telemetryRead, action: "readTelemetry")) { request, _ throws(Refusal) in
            try unknownLinks(request)
        }
    }

    private func unknownLinks(_ request: HTTPRequest) throws(Refusal) -> HTTPResponse {
        let query = try APIResponse.query(request)
        var limit = Self.defaultLimit
        if let text = query["limit"] {
            guard let number = Int(text), (1...Self.maximumLimit).contains(number), text.utf8.count <= 3 else {
                throw Refusal(.badRequest, "badLimit", "limit is a whole number from 1 to \(Self.maximumLimit).")
            }
            limit = number
        }
        let unknown = Set(query.pairs.map(\.name)).subtracting(["limit"])
        guard unknown.isEmpty else { throw Refusal(.badRequest, "unknownParameter", "Unknown parameter(s): \(unknown.sorted().joined(separator: ", ")); this takes limit.") }
        // Best first by what is certain (count − error), then by how many sources; a flood from
        // few sources, or yesterday's, cannot choose the list.
        // The sketch is taken under the store's lock (shared, not copied) and ranked after it.
        let sketch = context.telemetry.read { $0.shapes }
        let (top, total, capacity, windowStart) = (sketch.ranked(limit), sketch.total, sketch.capacity, sketch.windowStart)
        let snapshot = context.store.snapshot
        let schemas = snapshot.orderedSchemas.map(\.schema)
        let current = try snapshot.current.map { revision throws(Refusal) in try context.documents.read(revision) }
        let now = context.now()
        let schemaDigests = snapshot.orderedSchemas.map(\.sha256)
        let competitors = current.flatMap { current in
            current.document.map { context.suggestions.competitors(revision: current.number, routes: current.json, document: $0) }
        }
        let started = SuggestionCache.threadCPUSeconds()
        var (made, pending) = (0, 0)
        let shapes: [JSONValue] = top.map { entry in
            var item: [String: JSONValue] = [
                "shape": .string(entry.key), "count": .int(Int(clamping: entry.count)), "error": .int(Int(clamping: entry.error)),
                "lowerBound": .int(Int(clamping: entry.count - min(entry.error, entry.count))), "sources": .int(entry.note.sources.count),
                "firstSeen": .string(Timestamp.format(Int(entry.note.firstMinute) * 60)),
                "lastSeen": .string(Timestamp.format(Int(entry.note.lastMinute) * 60)),
                "platforms": .array(entry.note.platformNames.map(JSONValue.string)),
                "entries": .array(entry.note.entryNames.map(JSONValue.string)),
                "suggestion": .null,
            ]
            let path = String(entry.key.prefix { $0 != "?" })
            // A suggestion only for what several sources follow: one cannot put words in marketing's mouth.
            guard entry.note.sources.count >= context.options.sourcesForSuggestion, let current, let competitors else {
                return .object(item)
            }
            let length = path.split(separator: "/", omittingEmptySubsequences: true).count
            let key = SuggestionCache.Key(schemas: schemaDigests, competitors: competitors.digest(length: length))
            let suggestion: RouteSuggestion?
            if let kept = context.suggestions.suggestion(for: path, at: key) {
                suggestion = kept
            } else if made < Self.suggestionsPerRequest, made == 0 || SuggestionCache.threadCPUSeconds() - started < Self.suggestionSeconds {
                made += 1
                suggestion = RouteSuggestion.suggest(for: path, routes: current.json, index: competitors.index, against: schemas, now: now)
                context.suggestions.keep(suggestion, for: path, at: key)
            } else {
                pending += 1
                return .object(item)
            }
            if let suggestion {
                item["suggestion"] = ["route": .string(suggestion.route), "destination": .string(suggestion.destination),
                                      "pattern": .string(suggestion.pattern), "from": .string(suggestion.from)]
            }
            return .object(item)
        }
        return APIResponse.json(["total": .int(Int(clamping: total)), "capacity": .int(capacity), "revision": .int(snapshot.current?.number ?? 0),
                                 "since": .string(Timestamp.format((Int(windowStart) - Int(ShapeSketch.window)) * 60)),
                                 "refused": .int(Int(clamping: context.shapeAllowance.refused.load(ordering: .relaxed))), "pending": .int(pending),
                                 "shapes": .array(shapes)], headers: [("Cache-Control", "no-store")])
    }
}
