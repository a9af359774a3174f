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
/// and counted as telemetry with entry `web`. Any other host gets the ordinary `404`.
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
        guard let host = linkHost(request.head.headers["Host"]) else { return nil }
        let generation = context.store.generation
        if let table = context.landings.table(generation: generation) {
            guard table.hosts.contains(host) else { return nil }
            return .now(answer(request, host: host, table, context))
        }
        let snapshot = context.store.snapshot
        guard LandingTable.hosts(of: snapshot).contains(host) else { return nil }
        return .work {
            let table = context.landings.table(generation: generation) ?? {
                let (manifests, documents) = (context.manifests, context.documents)
                let made = LandingTable(generation: generation, snapshot: snapshot, now: context.now(),
                                        resolver: { manifests.resolver(revision: $0, stored: $1, documents: documents) },
                                        document: { documents.document($0).document })
                context.landings.remember(made)
                return made
            }()
            return answer(request, host: host, table, context)
        }
    }

    /// The `Host` field as a link host: lowercased, without a port (TLS ends in front of
    /// Waymark, so the port a browser used is not the one it listens on); nil when absent.
    static func linkHost(_ field: String?) -> String? {
        guard var host = field?.utf8.isEmpty == false ? field : nil else { return nil }
        if let colon = host.lastIndex(of: ":"), !host.hasSuffix("]"), host[host.index(after: colon)...].allSatisfy(\.isASCII) {
            host = String(host[..<colon])
        }
        return host.lowercased()
    }

    static func answer(_ request: HTTPRequest, host: String, _ table: LandingTable, _ context: APIContext) -> HTTPResponse {
        let method = request.head.method
        guard method == "GET" || method == "HEAD" else {
            var refused = HTTPResponse.error(.methodNotAllowed, message: "A link is opened with GET; \(method) is not allowed here.")
            refused.headers.add("Allow", "GET, HEAD")
            return refused
        }
        let userAgent = request.head.headers["User-Agent"]
        let visitor = Visitor(userAgent: userAgent)
        let now = context.now()
        guard let side = table.sides[visitor] else { return respond(.page(.notFound), table: table, now: now) }
        let resolution = side.resolver.resolve(url: "https://" + host + request.head.target, context: ResolutionContext(satisfied: [], now: now))
        let routeID: String? = switch resolution {
        case .proceed(let proceed): proceed.routeID
        case .gated(let gate): gate.routeID
        case .notFound(let notFound): notFound.routeID
        }
        let decision = LandingDecision.decide(resolution, route: routeID.flatMap { table.routes[$0] }, landing: side.landing, visitor: visitor,
                                              link: (host, request.head.path, request.head.query))
        context.landingCounter.record(count(resolution, routeID: routeID, visitor: visitor, side: side, revision: table.revision, now: now))
        return respond(decision, table: table, now: now)
    }

    static func respond(_ decision: LandingDecision.Answer, table: LandingTable, now: Date) -> HTTPResponse {
        var response: HTTPResponse
        switch decision {
        case .redirect(let location, _):
            response = HTTPResponse(status: .found, headers: HTTPHeaders([("Location", location)]))
        case .page(let page):
            response = LandingPages.response(page)
        }
        let seconds = min(sharedCacheSeconds, table.nextChange.map { max(0, Int($0.timeIntervalSince(now))) } ?? sharedCacheSeconds)
        response.headers.add("Cache-Control", seconds > 0 ? "public, max-age=0, s-maxage=\(seconds)" : "no-cache")
        response.headers.add("Vary", "User-Agent")
        return response
    }

    static func count(_ resolution: Resolution, routeID: String?, visitor: Visitor, side: LandingTable.Side, revision: Int, now: Date) -> LandingCounter.Key {
        let platform: Platform = switch visitor {
        case .ios: .ios
        case .android: .android
        case .other: .other
        }
        var key = LandingCounter.Key(platform: platform, appVersion: side.key.platform == visitor.rawValue ? side.key.version : nil,
                                     revision: revision, minute: Int32(clamping: Int(now.timeIntervalSince1970.rounded(.down)) / 60),
                                     outcome: .proceed, reason: .none, route: routeID, precondition: nil)
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
