import CivilDate
import Foundation
import HTTPCore
import HTTPServer
import ManifestStore
import Impact
import RouteEngine
import Synchronization
import Telemetry

/// `POST /v1/revisions/N/impact` (scope `routes:publish`): what publishing the draft in the
/// body over revision N would do to last week's traffic (`DraftImpact`), and the unknown-link
/// shapes it would start answering. A costly read: the draft is a whole document (the body
/// limit of a publish), and the answer reads a week of hour cells (of the routes the draft
/// can change), builds a resolver per registered build twice and matches the sketch's
/// shapes; so it runs in the reads lane, one token's and one peer's share at a time, as a
/// replay (`WorkQueue.submitReplay`): one at a time, its draft parsed in a document's turn
/// and replayed after it, held to `maximumPatterns`, `maximumSegments` and
/// `DraftImpact.Work`, so its cost is bounded by what it indexes, not by pairs of patterns.
struct ImpactEndpoints: EndpointGroup {
    let context: APIContext

    /// Shapes of the sketch looked at, best first.
    static let maximumShapes = 200
    /// How far back the replay reads, and how far ahead windows are asked about.
    static let week = 7 * 86_400

    /// Impacts one token may have queued or running at once. The reads lane is first come,
    /// first served, and one token may hold a quarter of it: without this, a token's queued
    /// impacts (each seconds of work on a big draft) would make every other caller wait
    /// behind all of them.
    static let perToken = 2

    func register(on registry: inout EndpointRegistry) throws(RouterError) {
        let held = Held()
        let context = context, trusted = context.options.trustForwardedFor
        // Deferred rather than plain off-loop: a token's place is taken before its job is
        // queued, so past `perToken` it is answered 503 at once, not after the queue.
        // Past either, the draft is refused at the head, unread (and again when it comes).
        let busy: @Sendable (HTTPRequestHead, String) -> Refusal? = { head, actor in
            if held.holdsAll(actor) { return Self.tooMany }
            return context.work.refusalAtHead(.reads, for: WorkCaller(head, actor: actor, trustForwardedFor: trusted), document: true)
        }
        try registry.addDeferred("POST", "/v1/revisions/:a/impact", .scope(.routesPublish, action: "impactDraft"),
                                 maximumBody: context.options.maximumDocumentBytes, busy: busy) { request, call, responder throws(Refusal) in
            guard held.take(call.actor) else { throw Self.tooMany }
            // Always in a document's turn, however small the draft: the base is a stored
            // revision, read and parsed (up to `--max-document-bytes`) before the replay.
            let refusal = context.work.submitReplay(for: WorkCaller(request, actor: call.actor, trustForwardedFor: trusted),
                                                    document: true) { leaveTurn in
                defer { held.give(call.actor) }
                do throws(Refusal) {
                    responder.respond(try impact(request, call, leaveTurn: leaveTurn))
                } catch {
                    responder.respond(error.response)
                }
            }
            if let refusal {
                held.give(call.actor)
                responder.respond(context.work.busy(refusal, in: .reads).response)
            }
        }
    }

    /// A replay that ran out of `DraftImpact.Work`: patterns that share links with very many
    /// others (a `:param` beside thousands of literals, on both sides of many routes).
    static let tooIntricate = Refusal(.unprocessableContent, "impactTooCostly",
                                      "Replaying last week against this draft would look at more pattern pairs than an impact may (\(DraftImpact.Work.perPattern) steps a pattern, at least \(DraftImpact.Work.minimum)): its patterns share links with too many others. Nothing was changed; the draft can still be validated and published.")

    /// Patterns a document replayed (the draft, and the base) may have, and segments of them
    /// all: four times those of the 10,000 routes `make test-memory` serves. What a replay
    /// holds outside the document turn (its draft decoded and three pattern indexes) grows
    /// with them: at most 64 MiB (docs/operations.md, "Memory"), and so does its time.
    static let maximumPatterns = 40_000
    static let maximumSegments = 160_000

    static func checkPatterns(_ document: RoutesDocument, _ name: String) throws(Refusal) {
        let patterns = document.routes.reduce(0) { $0 + $1.patterns.count }
        let segments = document.routes.reduce(0) { sum, route in
            route.patterns.reduce(sum) { $0 + $1.utf8.reduce(0) { $0 + ($1 == UInt8(ascii: "/") ? 1 : 0) } }
        }
        guard patterns <= maximumPatterns, segments <= maximumSegments else {
            throw Refusal(.unprocessableContent, "impactTooLarge",
                          "\(name) has \(patterns) patterns of \(segments) segments; an impact replays documents of at most \(maximumPatterns) patterns and \(maximumSegments) segments. Nothing was changed; the draft can still be validated and published.")
        }
    }

    static let tooMany = Refusal(.serviceUnavailable, "busy", "You have \(perToken) impacts under way, as many as one token may; retry in a moment.",
                                 headers: [("Retry-After", "1")])

    /// Impacts queued or running per token.
    final class Held: Sendable {
        private let counts = Mutex<[String: Int]>([:])

        /// Whether `actor` holds all the impacts one token may.
        func holdsAll(_ actor: String) -> Bool {
            counts.withLock { $0[actor, default: 0] >= ImpactEndpoints.perToken }
        }

        func take(_ token: String) -> Bool {
            counts.withLock { counts in
                guard counts[token, default: 0] < ImpactEndpoints.perToken else { return false }
                counts[token, default: 0] += 1
                return true
            }
        }

        func give(_ token: String) {
            counts.withLock { counts in
                let left = counts[token, default: 1] - 1
                counts[token] = left > 0 ? left : nil
            }
        }
    }

    /// `leaveTurn`: called once the draft is parsed, validated and decoded (in a document's
    /// turn, like a validation of it) and the base read; the replay runs after it.
    private func impact(_ request: HTTPRequest, _ call: RouteCall, leaveTurn: () -> Void) throws(Refusal) -> HTTPResponse {
        let snapshot = context.store.snapshot
        let base = try RevisionEndpoints.revision(call["a"], in: snapshot)
        let expected = "The body must be a routes document: {\"format\", \"app\", \"routes\": [...]}."
        let nowDate = context.now()
        // Parsed and decoded in a document's turn, and held to the patterns a replay may
        // index, before anything is replayed. A draft that does not validate is still
        // replayed (a marketer sees its impact while fixing it).
        let (draft, problems) = try { () throws(Refusal) -> (RoutesDocument, ValidationReport) in
            let json = try Refusal.requestJSON(request.body, expected)
            guard case .object = json else { throw Refusal(.badRequest, "badJSON", expected) }
            let (decoded, problems) = RoutesDocument.decodeReporting(json)
            guard let draft = decoded else {
                throw Refusal(.unprocessableContent, "invalidRoutes", "The draft is not a routes document the validator can read.",
                              details: problems.json)
            }
            try Self.checkPatterns(draft, "The draft")
            return (draft, problems)
        }()
        guard let baseDocument = try context.documents.read(base).document else {
            throw Refusal(.internalServerError, "damagedRevision", "Revision \(base.number) cannot be read as a routes document.")
        }
        try Self.checkPatterns(baseDocument, "Revision \(base.number)")
        // The parse is gone: what is left (the decoded draft and its indexes, one replay at a
        // time) lets the next document start, so a publish waits for this draft's parse, not
        // for its replay.
        leaveTurn()
        let now = Int(nowDate.timeIntervalSince1970)
        // The current hour and the 167 before it: a week of hour cells.
        let from = (now - Self.week + 3_600) / 3_600 * 3_600

        // Opens, proceeded or gated, per route, build and hour of the week: only of the routes
        // the draft can change, so what is read is bounded by their cells, not by every route's.
        let work = DraftImpact.Work.bounded(base: baseDocument, draft: draft, shapes: Self.maximumShapes)
        let tables = DraftImpact.Tables(base: baseDocument, draft: draft, work: work)
        let affected = DraftImpact.affected(tables)
        guard !work.exhausted else { throw Self.tooIntricate }
        // The week's hour buckets and the shapes' sketch are taken under the store's lock
        // (shared, not copied); the scans and the ranking run without it.
        let (week, sketch) = context.telemetry.read { counts in (counts.openingWindow(from: from, to: now), counts.shapes) }
        let (shapeEntries, windowStart) = (sketch.ranked(Self.maximumShapes), sketch.windowStart)
        let opens = week.opens(from: from, to: now, routes: affected).map {
            DraftImpact.Opens(route: $0.route, build: DraftImpact.Build(platform: $0.platform, version: $0.appVersion), hour: $0.hour, count: $0.count)
        }
        let (unattributed, allOpens) = week.unattributedOpens(from: from, to: now)
        let shapes = shapeEntries.map { DraftImpact.Shape(shape: $0.key, count: $0.count, lowerBound: $0.count - min($0.error, $0.count)) }

        // Which routes each registered build is served, before and after: only when a route
        // with opens changes its destination or params (nothing else decides what a build gets).
        let drafted = Dictionary(draft.routes.map { ($0.id, $0) }, uniquingKeysWith: { first, _ in first })
        let opened = Set(opens.map(\.route))
        let destinationsMoved = baseDocument.routes.contains { route in
            guard opened.contains(route.id), let other = drafted[route.id] else { return false }
            return other.destination != route.destination || other.params != route.params
        }
        var served: [DraftImpact.Build: DraftImpact.Served] = [:]
        let analyses = destinationsMoved ? (RouteAnalysis(document: baseDocument, now: nowDate), RouteAnalysis(document: draft, now: nowDate)) : nil
        for stored in snapshot.orderedSchemas {
            guard let (baseAnalysis, draftAnalysis) = analyses else { break }
            served[DraftImpact.Build(platform: stored.key.platform, version: stored.key.version)] = DraftImpact.Served(
                base: Set(Resolver(schema: stored.schema, analysis: baseAnalysis).routeIDs),
                draft: Set(Resolver(schema: stored.schema, analysis: draftAnalysis).routeIDs))
        }
        let impact = DraftImpact.compute(tables, opens: opens, shapes: shapes, served: served, offset: Self.week, now: now)
        guard !work.exhausted else { throw Self.tooIntricate }
        // The sketch's counts start with its previous window; an empty sketch has none yet (now).
        let shapesSince = windowStart > 0 ? (Int(windowStart) - Int(ShapeSketch.window)) * 60 : now
        var answer = Self.json(impact, base: base.number, from: from, to: now, shapesSince: shapesSince)
        if case .object(var object) = answer {
            // A route the validator cannot read is not in the draft: it counts as removed, and says so.
            object["unreadable"] = .int(problems.errorCount + problems.warnings.count + problems.omittedWarnings)
            // Opens no route is named for: what the draft does to them cannot be known.
            object["unattributed"] = .int(Int(clamping: unattributed))
            object["allOpens"] = .int(Int(allOpens))
            answer = .object(object)
        }
        return APIResponse.json(answer, headers: [("Cache-Control", "no-store")])
    }

    static func json(_ impact: DraftImpact, base: Int, from: Int, to: Int, shapesSince: Int) -> JSONValue {
        let routes: [JSONValue] = impact.routes.map { route in
            ["id": .string(route.id), "opens": .int(Int(route.opens)),
             "changes": .array(route.changes.map { change in
                 let share = DraftImpact.share(change, of: route)
                 var item: [String: JSONValue] = [
                     "kind": .string(change.kind.rawValue), "count": .int(Int(change.count)), "basis": .string(change.basis.rawValue),
                     "share": .double(share), "warning": .bool(share > DraftImpact.warningShare),
                     "outcome": .string(change.toRoute == nil ? "notFound" : "otherRoute"),
                     "builds": .array(change.builds.sorted { $0.key < $1.key }.map {
                         ["platform": .string($0.key.platform), "version": .string($0.key.version), "count": .int(Int($0.value))]
                     }),
                     "message": .string(message(change, route: route.id)),
                 ]
                 if let pattern = change.pattern { item["pattern"] = .string(pattern) }
                 if let reason = change.reason { item["reason"] = .string(reason) }
                 if let other = change.toRoute { item["toRoute"] = .string(other) }
                 if let other = change.toPattern { item["toPattern"] = .string(other) }
                 return .object(item)
             })]
        }
        let gained: [JSONValue] = impact.gained.map {
            ["shape": .string($0.shape.shape), "count": .int(Int($0.shape.count)), "lowerBound": .int(Int($0.shape.lowerBound)),
             "route": .string($0.route), "pattern": .string($0.pattern)]
        }
        return ["base": .int(base), "draft": true, "from": .string(Timestamp.format(from)), "to": .string(Timestamp.format(to)),
                "routes": .array(routes), "gained": .array(gained),
                "shapesSince": .string(Timestamp.format(shapesSince)), "estimates": .array(estimates.map(JSONValue.string))]
    }

    /// What the numbers can and cannot say, for the page to show as written.
    static let estimates = [
        "Telemetry counts opens by route, app build, hour and outcome, not by link or pattern.",
        "A change that takes all of a route's links (the route removed, all its patterns gone or taken, a build that no longer gets it, a window that ends sooner) is counted exactly, to the hour.",
        "A change to some of a route's patterns (an alias removed, a pattern narrowed or taken by another route, a new route that shadows part of one) is given as \"up to\" all of the route's opens: how many came through that pattern is not known.",
        "Windows are asked about one week ahead: each hour of last week as the same hour of the coming week, as if it repeats.",
        "Opens counted under no route (route \"other\": telemetry past its cell cap, or a route id no revision has) are given as unattributed: what the draft does to them cannot be known, and publishing asks first when they are 1 % of the week's opens or more.",
        "The numbers are what apps and browsers reported, not verified: a flood of forged reports can make a route's opens look larger, so publishing asks first whenever any opens would end differently, whatever their share.",
        "Gained shapes are counted by the unknown-links sketch, which keeps the current and the previous UTC day, not a week; each count is at most the number shown and at least its lower bound, and a shape keeps no parameter values, so a route's parameter checks may still refuse some of those links.",
    ]

    /// One sentence a marketer reads next to the change.
    static func message(_ change: DraftImpact.Change, route: String) -> String {
        let head = (change.basis == .upTo ? "Up to " : "") + "\(change.count) opens last week would no longer open \(route)"
        let pattern = change.pattern ?? "", other = change.toRoute ?? "", taking = change.toPattern ?? ""
        switch change.kind {
        case .routeRemoved: return head + ": the route is not in the draft, so its links would end notFound (unknownRoute)."
        case .patternRemoved:
            return head + ": links of \(pattern) would match no route (notFound, unknownRoute)."
                + (change.basis == .upTo ? " Estimated: opens are counted per route, not per pattern, so this is all of its opens." : "")
        case .rerouted:
            return head + ": links of \(pattern) would open \(other) instead (its \(taking))."
                + (change.basis == .upTo ? " Estimated: opens are counted per route, not per pattern, so this is all of its opens." : "")
        case .shadowed:
            return head + ": \(other)'s \(taking) would take some links of \(pattern). Estimated: which links, and how many, is not known, so this is all of its opens."
        case .windowShrunk:
            return head + ": at the same hours of the coming week the draft's window is closed (notFound, expired)."
        case .buildDropped:
            let builds = change.builds.keys.sorted().map { "\($0.platform) \($0.version)" }.joined(separator: ", ")
            return head + ": \(builds) could no longer resolve it in the draft (notFound, unknownRoute)."
        }
    }
}
