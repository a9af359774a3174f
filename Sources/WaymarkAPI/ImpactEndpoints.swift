import CivilDate
import Foundation
import HTTPCore
import HTTPServer
import ManifestStore
import RouteEngine
import Telemetry

/// `POST /v1/revisions/N/impact` (scope `routes:publish`): what publishing the draft in the
/// body over revision N would do to last week's traffic (`DraftImpact`), and the unknown-link
/// shapes it would start answering. A costly read: the draft is a whole document (the body
/// limit of a publish), and the answer reads a week of hour cells, builds a resolver per
/// registered build twice and matches the sketch's shapes; so it runs in the reads lane, one
/// token's and one peer's share at a time.
struct ImpactEndpoints: EndpointGroup {
    let context: APIContext

    /// Route × build groups read from the hour cells, largest first; the rest are left out and
    /// counted (`omittedGroups`). Bounds what one answer holds: 2,000 × 168 hours × 16 bytes.
    static let maximumGroups = 2_000
    /// Shapes of the sketch looked at, best first.
    static let maximumShapes = 200
    /// How far back the replay reads, and how far ahead windows are asked about.
    static let week = 7 * 86_400

    func register(on registry: inout EndpointRegistry) throws(RouterError) {
        try registry.addOffLoop("POST", "/v1/revisions/:a/impact", .scope(.routesPublish, action: "impactDraft"),
                                maximumBody: context.options.maximumDocumentBytes) { request, call throws(Refusal) in
            try impact(request, call)
        }
    }

    private func impact(_ request: HTTPRequest, _ call: RouteCall) throws(Refusal) -> HTTPResponse {
        let snapshot = context.store.snapshot
        let base = try RevisionEndpoints.revision(call["a"], in: snapshot)
        guard let json = try? JSONParser().parse(request.body), case .object = json else {
            throw Refusal(.badRequest, "badJSON", "The body must be a routes document: {\"format\", \"app\", \"routes\": [...]}.")
        }
        let (decoded, problems) = RoutesDocument.decode(json)
        guard let draft = decoded else {
            throw Refusal(.unprocessableContent, "invalidRoutes", "The draft is not a routes document the validator can read.",
                          details: ValidationReport(problems).json)
        }
        guard let baseDocument = context.documents.document(base).document else {
            throw Refusal(.internalServerError, "damagedRevision", "Revision \(base.number) cannot be read as a routes document.")
        }
        let nowDate = context.now()
        let now = Int(nowDate.timeIntervalSince1970)
        let from = now - Self.week

        // Opens: proceeded or gated, by route, platform and app version, per hour of the week.
        var opens: [DraftImpact.Opens] = []
        var omitted = 0
        for outcome in ["proceed", "gated"] {
            var query = CountQuery(from: from, to: now, step: .hour)
            query.filters = [.outcome: outcome]
            query.groupBy = [.route, .platform, .appVersion]
            query.limit = Self.maximumGroups
            let result = context.telemetry.read { $0.query(query) }
            omitted += result.omittedGroups
            for group in result.groups {
                let names = Dictionary(uniqueKeysWithValues: group.key.map { ($0.dimension, $0.name) })
                let build = DraftImpact.Build(platform: names[.platform] ?? "?", version: names[.appVersion] ?? "?")
                for (index, count) in group.counts.enumerated() where count > 0 {
                    opens.append(DraftImpact.Opens(route: names[.route] ?? "none", build: build, hour: result.bucketStarts[index], count: count))
                }
            }
        }
        let (shapeEntries, windowStart) = context.telemetry.read { counts in (counts.shapes.ranked(Self.maximumShapes), counts.shapes.windowStart) }
        let shapes = shapeEntries.map { DraftImpact.Shape(shape: $0.key, count: $0.count, lowerBound: $0.count - min($0.error, $0.count)) }

        // Which routes each registered build is served, before and after.
        let baseAnalysis = RouteAnalysis(document: baseDocument, now: nowDate), draftAnalysis = RouteAnalysis(document: draft, now: nowDate)
        var served: [DraftImpact.Build: DraftImpact.Served] = [:]
        for stored in snapshot.orderedSchemas {
            served[DraftImpact.Build(platform: stored.key.platform, version: stored.key.version)] = DraftImpact.Served(
                base: Set(Resolver(schema: stored.schema, analysis: baseAnalysis).routeIDs),
                draft: Set(Resolver(schema: stored.schema, analysis: draftAnalysis).routeIDs))
        }
        let impact = DraftImpact.compute(base: baseDocument, draft: draft, opens: opens, shapes: shapes, served: served, offset: Self.week, now: now)
        var answer = Self.json(impact, base: base.number, from: from, to: now, omitted: omitted,
                               shapesSince: (Int(windowStart) - Int(ShapeSketch.window)) * 60)
        // A route the validator cannot read is not in the draft: it counts as removed, and says so.
        if case .object(var object) = answer {
            object["unreadable"] = .int(problems.count)
            answer = .object(object)
        }
        return APIResponse.json(answer, headers: [("Cache-Control", "no-store")])
    }

    static func json(_ impact: DraftImpact, base: Int, from: Int, to: Int, omitted: Int, shapesSince: Int) -> JSONValue {
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
                "omittedGroups": .int(omitted), "routes": .array(routes), "gained": .array(gained),
                "shapesSince": .string(Timestamp.format(shapesSince)), "estimates": .array(estimates.map(JSONValue.string))]
    }

    /// What the numbers can and cannot say, for the page to show as written.
    static let estimates = [
        "Telemetry counts opens by route, app build, hour and outcome, not by link or pattern.",
        "A change that takes all of a route's links (the route removed, all its patterns gone or taken, a build that no longer gets it, a window that ends sooner) is counted exactly, to the hour.",
        "A change to some of a route's patterns (an alias removed, a pattern narrowed or taken by another route, a new route that shadows part of one) is given as \"up to\" all of the route's opens: how many came through that pattern is not known.",
        "Windows are asked about one week ahead: each hour of last week as the same hour of the coming week, as if it repeats.",
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
