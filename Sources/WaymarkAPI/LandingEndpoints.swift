import Foundation
import HTTPCore
import HTTPServer
import LinkLanding
import ManifestStore
import RouteEngine
import Telemetry

/// Link landing (`docs/landing.md`): a request on one of the app's universal-link hosts
/// whose path is not the API's own is a link opened where the app did not take it. It is
/// resolved as the newest build of the visitor's platform would resolve it, logged out,
/// answered by `LandingDecision` (a `302` to an address that passed validation, or a page),
/// and counted as telemetry with entry `web`. A link-preview crawler gets the route's card
/// instead of a live link's redirect, and it, other declared bots and `HEAD` are counted with
/// entry `bot` (`Agent`). Any other host gets the ordinary `404`.
struct LandingEndpoints: EndpointGroup {
    let context: APIContext

    /// How long a shared cache may keep a landing, at most (`s-maxage`); less when a route's
    /// window or a scheduled publish changes the answer sooner.
    static let sharedCacheSeconds = 30

    func register(on registry: inout EndpointRegistry) throws(RouterError) {
        let context = context
        registry.setFallback(label: ("GET", "/{link}")) { request in Self.land(request, context) }
    }

    static func land(_ request: HTTPRequest, _ context: APIContext) -> EndpointRegistry.Answer? {
        let headers = request.head.headers, method = request.head.method, target = request.head.target
        var visitor = headers.withValue("User-Agent") { field in
            let (agent, inApp) = Agent.classify(userAgent: field)
            return LandingVisitor(platform: Visitor(userAgent: field), agent: agent, inApp: inApp)
        } ?? LandingVisitor(platform: .other, agent: .person)
        // A person's browser asks with GET: HEAD is a link checker's, whatever it calls itself.
        if method == "HEAD", visitor.agent == .person { (visitor.agent, visitor.inApp) = (.bot, false) }
        let generation = context.store.generation
        let loop = request.head.loop
        // Found by the Host field's bytes where they lie: an answer kept needs no string of it.
        guard let found = headers.withValue("Host", { host in
            context.landings.lookup(generation: generation, host: host, target: target, visitor: visitor, loop: loop)
        }) else { return nil }
        var table: LandingTable?
        switch found {
        case .answer(let kept) where kept.validUntil == .distantFuture || context.now() < kept.validUntil:
            // A kept answer's host was found a link host when it was made: only its time is checked.
            guard method == "GET" || method == "HEAD" else { return .now(methodNotAllowed(method)) }
            context.landingCounter.record(kept.tally)
            return .now(kept.response)
        case .answer: table = context.landings.table(generation: generation)
        case .table(let found): table = found
        case .nothing:
            // While the generation is prepared, the table it replaces answers (`GenerationPreparer`).
            if context.preparer.answersStale(for: generation) { table = context.landings.newestTable }
        }
        guard let field = headers["Host"] else { return nil }
        let key = LandingCache.AnswerKey(host: field, target: target, visitor: visitor)
        if let table {
            guard let host = linkHost(field), table.hosts.contains(host) else { return nil }
            guard method == "GET" || method == "HEAD" else { return .now(methodNotAllowed(method)) }
            return .now(answer(request, key, host: host, table, context, now: context.now()))
        }
        let now = context.now()
        let snapshot = context.store.snapshot
        guard let host = linkHost(field), LandingTable.hosts(of: snapshot).contains(host) else { return nil }
        guard method == "GET" || method == "HEAD" else { return .now(methodNotAllowed(method)) }
        return .work { () throws(Refusal) in
            if let table = context.landings.table(generation: generation) { return answer(request, key, host: host, table, context, now: now) }
            let made = try makeTable(generation: generation, snapshot: snapshot, documents: context.documents, manifests: context.manifests, now: now)
            context.landings.remember(made)
            return answer(request, key, host: host, made, context, now: now)
        }
    }

    /// `generation`'s landing table, from `snapshot`'s current revision, whose document is in memory.
    static func makeTable(generation: Int, snapshot: StoreSnapshot, documents: RevisionDocuments, manifests: ManifestCache,
                          now: Date) throws(Refusal) -> LandingTable {
        var parsed: [Int: RevisionDocuments.Document] = [:]
        if let current = snapshot.current { parsed[current.number] = try documents.read(current) }
        return LandingTable(generation: generation, snapshot: snapshot, now: now,
                            resolver: { revision, stored in
                                manifests.resolver(revision: revision, stored: stored) {
                                    parsed[revision.number] ?? RevisionDocuments.Document(number: revision.number, routes: [])
                                }
                            },
                            document: { parsed[$0.number]?.document })
    }

    /// The `Host` field as a link host: lowercased, without a port (TLS ends in front of
    /// Waymark, so the port a browser used is not the one it listens on).
    static func linkHost(_ field: String) -> String? {
        var host = Substring(field)
        if let colon = host.utf8.lastIndex(of: UInt8(ascii: ":")), host.utf8.last != UInt8(ascii: "]") { host = host[..<colon] }
        return host.isEmpty ? nil : host.lowercased()
    }

    static func methodNotAllowed(_ method: String) -> HTTPResponse {
        var refused = HTTPResponse.error(.methodNotAllowed, message: "A link is opened with GET; \(method) is not allowed here.")
        refused.headers.add("Allow", "GET, HEAD")
        return refused
    }

    /// Resolves, decides, counts, and keeps the answer for the next time while it can be.
    static func answer(_ request: HTTPRequest, _ answerKey: LandingCache.AnswerKey, host: String, _ table: LandingTable, _ context: APIContext,
                       now: Date) -> HTTPResponse {
        let visitor = answerKey.visitor.platform, agent = answerKey.visitor.agent
        guard let side = table.sides[visitor] else { return respond(.page(.notFound), lifetime: lifetime(table, now)) }
        let resolution = side.resolver.resolve(url: "https://" + host + request.head.target, context: ResolutionContext(satisfied: [], now: now))
        let routeID: String? = switch resolution {
        case .proceed(let proceed): proceed.routeID
        case .gated(let gate): gate.routeID
        case .notFound(let notFound): notFound.routeID
        }
        let decision = LandingDecision.decide(resolution, route: routeID.flatMap { table.routes[$0] }, landing: side.landing, visitor: visitor,
                                              link: (host, request.head.path, request.head.query), now: Int(now.timeIntervalSince1970))
        var key = count(resolution, routeID: routeID, visitor: visitor, side: side, revision: table.revision)
        if agent != .person { key.entry = .bot }
        let tally = context.landingCounter.tally(for: key, loop: request.head.loop)
        context.landingCounter.record(tally)
        // An unknown link is harvested as its shape: so its answer is never kept, each one is
        // counted (nor a bot's: random links would push people's answers out). A bot's
        // unknown links are no one's: not harvested.
        let unknown = key.reason == .unknownRoute
        if unknown, agent == .person {
            // A visitor's network may add a few shapes a minute: a scanner cannot push the real ones out.
            let network = EvidenceNetwork.of(request.head, trustForwardedFor: context.options.trustForwardedFor)
            if context.shapeAllowance.allow(source: nil, network: network, now: Int(now.timeIntervalSince1970)) {
                context.landingCounter.recordShape(LinkShape(link: request.head.target).description, platform: key.platform,
                                                   source: ShapeAllowance.sourceHash(source: nil, network: network))
            }
        }
        let seconds = lifetime(table, now)
        var response: HTTPResponse
        var carriesTime = false
        if case .redirect(_, .playStore) = decision { carriesTime = true }
        if agent == .previewCrawler, resolution.isLive {
            // A chat app unfurling the link: the route's card, not the redirect it would follow to another page's.
            response = LandingPages.card(routeID.flatMap { table.routes[$0]?.preview }, appName: side.app,
                                         url: "https://" + host + request.head.path)
            addCaching(&response, lifetime: seconds)
        } else if answerKey.visitor.inApp, resolution.isLive, let route = routeID.flatMap({ table.routes[$0] }),
                  let page = inAppPage(decision, route: route, visitor: visitor, side: side, link: (host, request.head.path, request.head.query),
                                       now: Int(now.timeIntervalSince1970)) {
            // An app's own browser keeps links to itself: offer to open the app, with the landing as the way on.
            response = page
            carriesTime = true
            addCaching(&response, lifetime: seconds)
        } else if agent == .person, case .redirect(let store, .appStore) = decision, let route = routeID.flatMap({ table.routes[$0] }) {
            // An iPhone without the app: the hand-off page, so that the link survives the install.
            carriesTime = true
            let link = (host, request.head.path, request.head.query)
            response = LandingPages.handOff(route.preview, appName: side.app, store: LandingDecision.withCampaignToken(store, query: request.head.query, route: route),
                                            handOff: LandingDecision.handOffText(LandingDecision.opened(link, route: route), now: Int(now.timeIntervalSince1970)))
            addCaching(&response, lifetime: seconds)
        } else {
            response = respond(decision, lifetime: seconds)
        }
        // Kept while its lifetime is the whole of it: nearer a change, each answer is made anew.
        // One that carries the time it was made (an Install Referrer's `t`, a hand-off's) is
        // kept no longer than a shared cache may keep it, or deferred links would go stale.
        if seconds == sharedCacheSeconds, !unknown {
            var validUntil = table.nextChange(after: now).map { $0.addingTimeInterval(-Double(sharedCacheSeconds)) } ?? .distantFuture
            if carriesTime { validUntil = min(validUntil, now.addingTimeInterval(Double(sharedCacheSeconds))) }
            context.landings.remember(LandingCache.Answer(response: response.prepared(), tally: tally, validUntil: validUntil), for: answerKey,
                                      generation: table.generation, loop: request.head.loop)
        }
        return response
    }

    /// The "Open in the app" page for a person in an in-app browser whose platform's app can
    /// be opened (`LandingDecision.openInApp`), with the answer the landing would give as the
    /// way on without the app (the iPhone's store link carrying the hand-off); nil when the
    /// platform declares neither a package nor a scheme.
    static func inAppPage(_ decision: LandingDecision.Answer, route: RouteSpec, visitor: Visitor, side: LandingTable.Side,
                          link: (host: String, path: Substring, query: Substring?), now: Int) -> HTTPResponse? {
        var without: String?
        if case .redirect(let location, let rule) = decision {
            without = rule == .appStore ? LandingDecision.withCampaignToken(location, query: link.query, route: route) : location
        }
        // An iPhone opens the app by a scheme of the iOS build's own schema (another platform's may be another app's).
        let schemes = side.key.platform == visitor.rawValue ? side.schemes : []
        guard let open = LandingDecision.openInApp(link, route: route, visitor: visitor, package: side.package, schemes: schemes,
                                                   fallback: without) else { return nil }
        let storeRule: Bool = if case .redirect(_, let rule) = decision { rule == .appStore || rule == .playStore } else { false }
        let handOff = visitor == .ios && storeRule ? LandingDecision.handOffText(LandingDecision.opened(link, route: route), now: now) : nil
        return LandingPages.openInApp(route.preview, appName: side.app, open: open, without: without, isStore: storeRule, handOff: handOff)
    }

    /// Seconds a shared cache may keep an answer made at `now`.
    static func lifetime(_ table: LandingTable, _ now: Date) -> Int {
        min(sharedCacheSeconds, table.nextChange(after: now).map { max(0, Int($0.timeIntervalSince(now).rounded(.down))) } ?? sharedCacheSeconds)
    }

    static func respond(_ decision: LandingDecision.Answer, lifetime seconds: Int) -> HTTPResponse {
        var response: HTTPResponse
        switch decision {
        case .redirect(let location, _):
            response = HTTPResponse(status: .found, headers: HTTPHeaders([("Location", location)]))
        case .page(let page):
            response = LandingPages.response(page)
        }
        addCaching(&response, lifetime: seconds)
        return response
    }

    /// A landing's caching: a shared cache may keep it `seconds`, apart for each `User-Agent`
    /// (the platform and the agent choose the answer).
    static func addCaching(_ response: inout HTTPResponse, lifetime seconds: Int) {
        response.headers.add("Cache-Control", seconds > 0 ? "public, max-age=0, s-maxage=\(seconds)" : "no-cache")
        response.headers.add("Vary", "User-Agent")
    }

    static func count(_ resolution: Resolution, routeID: String?, visitor: Visitor, side: LandingTable.Side, revision: Int) -> LandingCounter.Key {
        let platform: Platform = switch visitor {
        case .ios: .ios
        case .android: .android
        case .other: .other
        }
        var key = LandingCounter.Key(platform: platform, appVersion: side.key.platform == visitor.rawValue ? side.key.version : nil,
                                     revision: revision, outcome: .proceed, reason: .none, route: routeID, precondition: nil)
        switch resolution {
        case .proceed: break
        case .gated(let gate): (key.outcome, key.precondition) = (.gated, gate.precondition)
        case .notFound(let notFound):
            key.outcome = .notFound
            key.reason = switch notFound.reason {
            case .malformed: .malformed
            case .unknownRoute: .unknownRoute
            case .validationFailed: .validationFailed
            case .expired: .expired
            }
        }
        return key
    }
}
