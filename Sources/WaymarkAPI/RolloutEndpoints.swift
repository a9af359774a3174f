import CivilDate
import Foundation
import HTTPCore
import HTTPServer
import ManifestStore
import Rollout
import RouteEngine

/// Staged rollouts (`docs/rollouts.md`): started by a publish with `"rollout"`, read at
/// `GET /v1/rollout` (scope `manifest:read`), controlled by `POST /v1/rollout/ACTION`
/// (scope `routes:publish`, `If-Match` on the rollout's ETag).
struct RolloutEndpoints: EndpointGroup {
    let context: APIContext
    static let actions = ["pause", "resume", "advance", "promote", "abort"]

    func register(on registry: inout EndpointRegistry) throws(RouterError) {
        try registry.add("GET", "/v1/rollout", .scope(.routesRead, action: "readRollout")) { _, _ throws(Refusal) in try read() }
        try registry.addOffLoop("POST", "/v1/rollout/:action", .scope(.routesPublish, action: "controlRollout"), maximumBody: 0, lane: .controls) {
            request, call throws(Refusal) in try control(request, call)
        }
    }

    static func etag(_ rollout: RolloutState) -> String { "\"rollout-\(rollout.candidate)-\(rollout.version)\"" }

    static func json(_ rollout: RolloutState) -> JSONValue {
        [
            "candidate": .int(rollout.candidate), "stable": .int(rollout.stable), "status": .string(rollout.status.rawValue),
            "step": .int(rollout.step), "percent": .int(rollout.percent), "version": .int(rollout.version),
            "stepStarted": .string(Timestamp.format(rollout.stepStarted)),
            "steps": .array(rollout.steps.map { ["percent": .int($0.percent), "minimumDuration": .int(Int($0.minimumDuration)),
                                                 "minimumResolutions": .int($0.minimumResolutions)] }),
            "findings": .array(rollout.findings.map(ManifestStore.json(of:))),
        ]
    }

    private func read() throws(Refusal) -> HTTPResponse {
        guard let rollout = context.store.snapshot.rollout else { throw Refusal(.notFound, "noRollout", "No revision has been rolled out yet.") }
        guard case .object(var object) = Self.json(rollout) else { return APIResponse.json(.null) }
        // The primary's latest look at this rollout's telemetry (for an ended one, its last: the one that tripped or completed it).
        if let look = context.rolloutLook.withLock({ $0 }), look.candidate == rollout.candidate {
            object["guard"] = look.json
        }
        return APIResponse.json(.object(object), headers: [("ETag", Self.etag(rollout))])
    }

    private func control(_ request: HTTPRequest, _ call: RouteCall) throws(Refusal) -> HTTPResponse {
        try context.requirePrimary()
        let action = call["action"]
        guard Self.actions.contains(action) else {
            throw Refusal(.notFound, "unknownAction", "A rollout can \(Self.actions.joined(separator: ", ")); not \"\(action.prefix(20))\".")
        }
        guard let tag = request.head.headers["If-Match"]?.trimmingCharacters(in: .whitespaces) else {
            throw Refusal(.preconditionRequired, "versionRequired", "Send If-Match with the rollout's ETag (GET /v1/rollout gives it).")
        }
        let parts = tag.hasPrefix("\"rollout-") && tag.hasSuffix("\"") ? tag.dropFirst(9).dropLast().split(separator: "-") : []
        guard parts.count == 2, let candidate = Int(parts[0]), let version = Int(parts[1]) else {
            throw Refusal(.preconditionFailed, "staleVersion", "If-Match must be a rollout ETag such as \"rollout-8-3\".")
        }
        guard candidate == context.store.snapshot.rollout?.candidate else {
            throw Refusal(.preconditionFailed, "staleVersion", "That rollout is not the current one; read GET /v1/rollout again.")
        }
        let now = context.now()
        let result: Result<RolloutState, RolloutRefusal>
        do throws(StoreError) {
            result = try context.store.controlRollout(action, version: version, actor: call.actor, now: now) { rollout throws(RolloutRefusal) in
                switch action {
                case "pause": try rollout.pause(version: version)
                case "resume": try rollout.resume(version: version, now: now)
                case "advance": _ = try rollout.advanceNow(version: version, now: now)
                case "promote": _ = try rollout.promote(version: version)
                default: try rollout.abort(version: version)
                }
            }
        } catch {
            throw Refusal.storeFailed(error, "The rollout could not be changed", "Nothing changed.")
        }
        switch result {
        case .success(let rollout):
            if rollout.status == .completed { context.publishes.add(1, ordering: .relaxed) }
            return APIResponse.json(Self.json(rollout), headers: [("ETag", Self.etag(rollout))])
        case .failure(.staleVersion(let current)):
            throw Refusal(.preconditionFailed, "staleVersion", RolloutRefusal.staleVersion(current: current).description, details: ["version": .int(current)])
        case .failure(let refusal):
            throw Refusal(.conflict, "notApplicable", refusal.description)
        }
    }

    /// The steps a publish's `"rollout"` asks for.
    static func requestedSteps(_ rollout: JSONValue) throws(Refusal) -> [RolloutStep] {
        guard case .object(let object) = rollout else { throw Refusal(.badRequest, "badRollout", "rollout must be an object: {} or {\"steps\": [...]}.") }
        guard let steps = object["steps"] else { return RolloutStep.defaults }
        guard case .array(let items) = steps, items.count <= 20 else { throw Refusal(.badRequest, "badRollout", "rollout.steps must be a list of at most 20 steps.") }
        return try items.map { item throws(Refusal) in
            guard let percent = item["percent"]?.intValue else { throw Refusal(.badRequest, "badRollout", "Each step needs a whole-number percent.") }
            let duration = item["minimumDuration"]?.intValue ?? 600
            let resolutions = item["minimumResolutions"]?.intValue ?? 200
            return RolloutStep(percent: percent, minimumDuration: TimeInterval(duration), minimumResolutions: resolutions)
        }
    }

    /// Starts a rollout for a publish (on the work queue).
    /// `parsed`: `routes` as the request's envelope holds them.
    static func start(_ context: APIContext, routes: [UInt8], parsed: JSONValue?, steps: [RolloutStep], base: Int?, author: String,
                      message: String, supersede: Bool) -> HTTPResponse {
        let outcome: RolloutStartOutcome
        do throws(StoreError) {
            outcome = try context.store.startRollout(routes: routes, parsed: parsed, base: base, steps: steps, author: author, message: message,
                                                     supersede: supersede, now: context.now())
        } catch {
            return Refusal.storeFailed(error, "The candidate could not be stored", "Nothing was published.").response
        }
        switch outcome {
        case .started(let rollout, let revision):
            guard case .object(var object) = RevisionEndpoints.summary(revision) else { return APIResponse.json(.null) }
            object["rollout"] = json(rollout)
            return APIResponse.json(.object(object), status: .created,
                                    headers: [("ETag", RevisionEndpoints.etag(revision)), ("Location", "/v1/rollout")])
        case .unchanged(let revision):
            guard case .object(var object) = RevisionEndpoints.summary(revision) else { return APIResponse.json(.null) }
            object["unchanged"] = true
            return APIResponse.json(.object(object), headers: [("ETag", RevisionEndpoints.etag(revision))])
        case .invalid(let report):
            return APIResponse.error(.unprocessableContent, "invalidRoutes",
                                     "The routes fail validation (\(report.errorCount) error(s)); nothing was published.", details: report.json)
        case .staleBase(let current):
            return APIResponse.error(.preconditionFailed, "staleBase", "Revision \(current.map(String.init) ?? "none") was published since your base.",
                                     details: ["current": current.map(JSONValue.int) ?? .null])
        case .rolloutInProgress(let candidate):
            return APIResponse.error(.conflict, "rolloutInProgress",
                                     "Revision \(candidate) is being rolled out; promote or abort it first, or publish with \"supersede\": true to end it.",
                                     details: ["candidate": .int(candidate)])
        case .refused(let reason):
            return APIResponse.error(.badRequest, "badRollout", reason)
        }
    }
}
