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
/// validates.
struct UnknownLinkEndpoints: EndpointGroup {
    let context: APIContext

    static let defaultLimit = 20
    static let maximumLimit = 200

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
        let (held, total, capacity) = context.telemetry.read { counts in (counts.shapes.entries, counts.shapes.total, counts.shapes.capacity) }
        // Most followed first; equal counts by the smaller error, then by shape, so the list is stable.
        let top = held.sorted { ($1.count, $0.error, $0.key) < ($0.count, $1.error, $1.key) }.prefix(limit)
        let snapshot = context.store.snapshot
        let schemas = snapshot.orderedSchemas.map(\.schema)
        let current = snapshot.current.map { context.documents.document($0) }
        let now = context.now()
        let shapes: [JSONValue] = top.map { entry in
            var item: [String: JSONValue] = [
                "shape": .string(entry.key), "count": .int(Int(entry.count)), "error": .int(Int(entry.error)),
                "firstSeen": .string(Timestamp.format(Int(entry.note.firstMinute) * 60)),
                "lastSeen": .string(Timestamp.format(Int(entry.note.lastMinute) * 60)),
                "platforms": .array(entry.note.platformNames.map(JSONValue.string)),
                "entries": .array(entry.note.entryNames.map(JSONValue.string)),
                "suggestion": .null,
            ]
            let path = String(entry.key.prefix { $0 != "?" })
            if let current, let document = current.document,
               let suggestion = RouteSuggestion.suggest(for: path, routes: current.json, document: document, against: schemas, now: now) {
                item["suggestion"] = ["route": .string(suggestion.route), "destination": .string(suggestion.destination),
                                      "pattern": .string(suggestion.pattern), "from": .string(suggestion.from)]
            }
            return .object(item)
        }
        return APIResponse.json(["total": .int(Int(total)), "capacity": .int(capacity), "revision": .int(snapshot.current?.number ?? 0),
                                 "shapes": .array(shapes)], headers: [("Cache-Control", "no-store")])
    }
}
