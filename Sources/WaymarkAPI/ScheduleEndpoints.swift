import CivilDate
import Foundation
import HTTPCore
import HTTPServer
import ManifestStore
import RouteEngine

/// Scheduled publishing (scope `routes:publish` to schedule and cancel, `manifest:read` to
/// look): `POST /v1/schedules`, `GET /v1/schedules`, `GET /v1/schedules/:id`,
/// `DELETE /v1/schedules/:id`. The primary fires them (`API.startScheduling`).
struct ScheduleEndpoints: EndpointGroup {
    let context: APIContext

    func register(on registry: inout EndpointRegistry) throws(RouterError) {
        try registry.addOffLoop("POST", "/v1/schedules", .scope(.routesPublish, action: "schedule"),
                                maximumBody: context.options.maximumDocumentBytes, lane: .changes) { request, call throws(Refusal) in try schedule(request, call) }
        try registry.add("GET", "/v1/schedules", .scope(.routesRead, action: "readSchedules")) { _, _ in list() }
        // Its routes are read from disk and parsed: a costly read, off the loop.
        try registry.addOffLoop("GET", "/v1/schedules/:id", .scope(.routesRead, action: "readSchedule"), readsDocument: true) { _, call throws(Refusal) in
            try one(call)
        }
        try registry.addOffLoop("DELETE", "/v1/schedules/:id", .scope(.routesPublish, action: "cancelSchedule"), maximumBody: 0, lane: .controls) {
            _, call throws(Refusal) in try cancel(call)
        }
    }

    /// `{"at": RFC 3339, "message": "…", "routes": {…routes document…}}` with `If-Match` as for a publish.
    private func schedule(_ request: HTTPRequest, _ call: RouteCall) throws(Refusal) -> HTTPResponse {
        try context.requirePrimary()
        let base = try PublishingEndpoints.base(request, context: context)
        // The publish's envelope, with the time.
        let body = try PublishingEndpoints.envelope(request, requireRoutes: true, also: ["at", "rollout"])
        // `"rollout": {}` or `{"steps": [...]}`: at its time it starts a rollout over its base.
        let rollout = try body.object["rollout"].map(RolloutEndpoints.requestedSteps)
        guard let atText = body.object["at"]?.stringValue, let at = Timestamp.parse(atText) else {
            throw Refusal(.badRequest, "badTime", "at must be an RFC 3339 time such as 2026-12-01T09:00:00Z.")
        }
        let (message, routes) = (body.message, try PublishingEndpoints.stored(body.routes, context: context))
        let outcome: ScheduleOutcome
        do throws(StoreError) {
            outcome = try context.store.schedule(routes: routes, parsed: body.routes, at: at, base: base, author: call.actor, message: message,
                                                  rollout: rollout, now: context.now())
        } catch {
            throw Refusal.storeFailed(error, "The schedule could not be stored", "Nothing was scheduled.")
        }
        switch outcome {
        case .scheduled(let item):
            return APIResponse.json(item.json, status: .created, headers: [("Location", "/v1/schedules/\(item.id)")])
        case .invalid(let report):
            throw Refusal(.unprocessableContent, "invalidRoutes",
                          "The routes fail validation (\(report.errorCount) error(s)); nothing was scheduled.", details: report.json)
        case .staleBase(let current):
            throw Refusal(.preconditionFailed, "staleBase",
                          "Revision \(current.map(String.init) ?? "none") is current, not the one named; schedule on top of it.",
                          details: ["current": current.map(JSONValue.int) ?? .null])
        case .badTime(let message):
            throw Refusal(.badRequest, "badTime", message)
        case .badRollout(let message):
            throw Refusal(.badRequest, "badRollout", message)
        case .full(let message):
            throw Refusal(.conflict, "tooManySchedules", message)
        }
    }

    /// Every pending schedule and the newest ended ones (`ManifestStore.maximumEndedSchedules`),
    /// made once per store generation: any manifest:read token (the app's too) may ask.
    private func list() -> HTTPResponse {
        context.scheduleList.response(for: context.store.generation) {
            APIResponse.json(["schedules": .array(context.store.snapshot.schedules.map(\.json))]).prepared()
        }
    }

    private func found(_ text: String) throws(Refusal) -> ScheduledPublish {
        guard text.utf8.allSatisfy({ (48...57).contains($0) }), let id = Int(text), id >= 1 else {
            throw Refusal(.badRequest, "badSchedule", "A schedule id is a positive integer, not \"\(text.prefix(20))\".")
        }
        guard let item = context.store.snapshot.schedules.first(where: { $0.id == id }) else {
            throw Refusal(.notFound, "unknownSchedule", "There is no schedule \(id).")
        }
        return item
    }

    /// One schedule, with its routes document (read from its file and checked).
    private func one(_ call: RouteCall) throws(Refusal) -> HTTPResponse {
        let item = try found(call["id"])
        guard case .object(var object) = item.json else { return APIResponse.json(item.json) }
        // Only a pending schedule keeps its document (`ManifestStore.setStatus`).
        guard item.status == .pending else {
            object["routes"] = .null
            return APIResponse.json(.object(object))
        }
        let routes: [UInt8]
        do throws(StoreError) {
            routes = try context.store.scheduledRoutes(of: item)
        } catch {
            // It may have ended (fired, skipped, cancelled) since it was looked up, and its
            // file been written again without the document: then it is answered as it is now.
            if let now = try? found(call["id"]), now.status != .pending, case .object(var ended) = now.json {
                ended["routes"] = .null
                return APIResponse.json(.object(ended))
            }
            throw Refusal.storeFailed(error, "Schedule \(item.id)'s routes could not be read", "Nothing else is affected.")
        }
        object["routes"] = (try? JSONParser().parse(routes)) ?? .null
        return APIResponse.json(.object(object))
    }

    private func cancel(_ call: RouteCall) throws(Refusal) -> HTTPResponse {
        try context.requirePrimary()
        let item = try found(call["id"])
        let outcome: CancelOutcome
        do throws(StoreError) {
            outcome = try context.store.cancelSchedule(item.id, actor: call.actor, now: context.now())
        } catch {
            throw Refusal.storeFailed(error, "The schedule could not be cancelled", "Nothing changed.")
        }
        switch outcome {
        case .cancelled(let cancelled): return APIResponse.json(cancelled.json)
        case .unknownSchedule(let id): throw Refusal(.notFound, "unknownSchedule", "There is no schedule \(id).")
        case .notPending(let ended):
            throw Refusal(.conflict, "notPending", "Schedule \(ended.id) is \(ended.status.name), not pending; nothing changed.", details: ended.json)
        }
    }
}
