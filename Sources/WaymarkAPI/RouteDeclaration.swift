import HTTPCore
import HTTPServer
import ManifestStore

/// What a route needs before its body is read, declared where it is registered: who may
/// call it, how large a body it takes, and whether it answers on the event loop or later.
/// The declarations are data (`API.routes`), so the server and the tests can read them.
public struct RouteDeclaration: Sendable, Hashable {
    /// Who may call a route.
    public enum Access: Sendable, Hashable {
        /// Anyone, without a token: health, the associated-domain files, the dashboard page.
        case open
        /// A bearer token with `scope` (`manifest:read` routes, the manifest alone, are open with `--public-reads`);
        /// `action` names the request in the audit log when it is refused.
        case scope(Scope, action: String)
        /// A bearer token with `scope` or with `alternative`, rated as `scope`'s: the one
        /// telemetry read the console's performance view makes (`GET /v1/telemetry/counts`)
        /// also takes a `routes:publish` token, so marketing needs one token.
        case eitherScope(Scope, or: Scope, action: String)
    }

    /// How a route answers.
    public enum Mode: Sendable, Hashable {
        /// On the connection's event loop, before the next request is read.
        case onLoop
        /// Later, from another thread, through a `Responder` (a durable write, a link check).
        case deferred
        /// On the work queue (`WorkQueue`): validation and other work that grows with a
        /// document, never on a loop.
        case offLoop
        /// On the loop when what it serves is cached (a manifest fetch), else on the work queue.
        case cachedOrOffLoop
    }

    /// A larger body limit for callers whose token also has `scope` (decided at the end
    /// of the head, before any of the body is read).
    public struct LargerBody: Sendable, Hashable {
        public let scope: Scope
        public let maximumBody: Int
    }

    public let method: String
    public let path: String
    public let access: Access
    /// The largest body taken, in bytes; nil: the server's default.
    public let maximumBody: Int?
    public let mode: Mode
    /// The limit for callers trusted with more, when there is one.
    public var largerBody: LargerBody? = nil

    /// The scope a request needs, nil for an open route.
    public var scope: Scope? {
        switch access {
        case .open: nil
        case .scope(let scope, _), .eitherScope(let scope, _, _): scope
        }
    }

    /// The other scope a token may have instead of `scope`, if the route takes one.
    public var alternativeScope: Scope? {
        if case .eitherScope(_, let alternative, _) = access { return alternative }
        return nil
    }
}

/// What a handler gets besides the request: its path parameters and who sent it (the
/// token's name; "public" or "anonymous" on open routes). The request itself is passed as
/// it is, not copied into this: copying its fields into a struct and releasing them cost
/// a manifest fetch about 275 instructions (1%), measured with `make count-instructions`.
struct RouteCall {
    let parameters: RouteParameters
    let actor: String

    subscript(_ parameter: String) -> String { parameters[parameter] ?? "" }
}

/// Where endpoint groups register their routes: each route with its declaration, its
/// access checked before its body is read (at the end of the head, for a request with a
/// body) or before its handler runs (one without), and a thrown `Refusal` turned into its
/// response.
struct EndpointRegistry {
    typealias Handler = @Sendable (HTTPRequest, RouteCall) throws(Refusal) -> HTTPResponse
    typealias DeferredHandler = @Sendable (HTTPRequest, RouteCall, Responder) throws(Refusal) -> Void
    /// Work for the work queue, returning the answer.
    typealias Job = @Sendable () throws(Refusal) -> HTTPResponse

    /// What a `cachedOrOffLoop` handler decides on the loop.
    enum Answer {
        /// Cached: answered on the loop.
        case now(HTTPResponse)
        /// Not cached: `Job` runs on the work queue and answers.
        case work(Job)
    }
    typealias AnsweringHandler = @Sendable (HTTPRequest, RouteCall) throws(Refusal) -> Answer

    let context: APIContext
    fileprivate(set) var router = Router()
    private(set) var declarations: [RouteDeclaration] = []

    init(context: APIContext) {
        self.context = context
    }

    /// A route answered on the loop.
    mutating func add(_ method: String, _ path: String, _ access: RouteDeclaration.Access, maximumBody: Int? = nil,
                      _ handler: @escaping Handler) throws(RouterError) {
        let context = context
        try router.add(method, path, maximumBody: maximumBody, admission: context.admission(access)) { request, parameters in
            do throws(Refusal) {
                let actor = try context.actor(of: request, parameters, access)
                return try handler(request, RouteCall(parameters: parameters, actor: actor))
            } catch {
                return error.response
            }
        }
        declarations.append(RouteDeclaration(method: method, path: path, access: access, maximumBody: maximumBody, mode: .onLoop))
    }

    /// A route answered later through its `Responder`; a refusal thrown before the handler
    /// answered is the answer.
    mutating func addDeferred(_ method: String, _ path: String, _ access: RouteDeclaration.Access, maximumBody: Int? = nil,
                              busy: (@Sendable (HTTPRequestHead, String) -> Refusal?)? = nil,
                              _ handler: @escaping DeferredHandler) throws(RouterError) {
        try addDeferred(method, path, access, maximumBody: maximumBody, busy: busy, mode: .deferred, handler)
    }

    /// A route answered from the work queue, in `lane`: its access is checked on the loop,
    /// then the handler runs off it. By default a costly read (shared, a caller's share at
    /// a time); changes name their lane. A job parsing a document takes a document's turn
    /// (`WorkQueue`): one whose body is a draft, and any of a route that reads a stored
    /// document (`readsDocument`: old revisions, diffs, a schedule's routes).
    mutating func addOffLoop(_ method: String, _ path: String, _ access: RouteDeclaration.Access, maximumBody: Int? = nil,
                             largerBody: RouteDeclaration.LargerBody? = nil, lane: WorkLane = .reads, readsDocument: Bool = false,
                             _ handler: @escaping Handler) throws(RouterError) {
        let work = context.work, trusted = context.options.trustForwardedFor
        // A job its caller cannot queue now (a costly read or a change past its share) is
        // refused at the head, its body unread.
        var busy: (@Sendable (HTTPRequestHead, String) -> Refusal?)?
        if lane.isShared {
            busy = { @Sendable head, actor in
                work.refusalAtHead(lane, for: WorkCaller(head, actor: actor, trustForwardedFor: trusted), document: WorkQueue.isDocument(head, readsDocument: readsDocument))
            }
        }
        try addDeferred(method, path, access, maximumBody: maximumBody, largerBody: largerBody, busy: busy, mode: .offLoop) { request, call, responder in
            // A draft in the body (a preview's or a diff's routes) is a document in work: it waits for a turn.
            work.answer(responder, in: lane, for: WorkCaller(request, actor: call.actor, trustForwardedFor: trusted),
                        document: readsDocument || request.body.count > WorkQueue.documentBody) {
                () throws(Refusal) in try handler(request, call)
            }
        }
    }

    /// A deferred route as declared with `mode`: access checked, then `handler` answers.
    private mutating func addDeferred(_ method: String, _ path: String, _ access: RouteDeclaration.Access, maximumBody: Int?,
                                      largerBody: RouteDeclaration.LargerBody? = nil, busy: (@Sendable (HTTPRequestHead, String) -> Refusal?)? = nil,
                                      mode: RouteDeclaration.Mode, _ handler: @escaping DeferredHandler) throws(RouterError) {
        let context = context
        try router.addDeferred(method, path, maximumBody: maximumBody, admission: context.admission(access, largerBody: largerBody, busy: busy)) { request, parameters, responder in
            do throws(Refusal) {
                let actor = try context.actor(of: request, parameters, access)
                try handler(request, RouteCall(parameters: parameters, actor: actor), responder)
            } catch {
                responder.respond(error.response)
            }
        }
        declarations.append(RouteDeclaration(method: method, path: path, access: access, maximumBody: maximumBody, mode: mode,
                                             largerBody: largerBody))
    }

    /// A route answered on the loop when its handler finds what it needs cached, else from
    /// the work queue's `lane`: by default the builds lane (never refused).
    mutating func addCachedOrOffLoop(_ method: String, _ path: String, _ access: RouteDeclaration.Access, maximumBody: Int? = nil,
                                     lane: WorkLane = .builds, _ handler: @escaping AnsweringHandler) throws(RouterError) {
        let context = context, trusted = context.options.trustForwardedFor
        try router.addAnswering(method, path, maximumBody: maximumBody, admission: context.admission(access)) { request, parameters in
            let job: Job, caller: WorkCaller
            do throws(Refusal) {
                let actor = try context.actor(of: request, parameters, access)
                switch try handler(request, RouteCall(parameters: parameters, actor: actor)) {
                case .now(let response): return .now(response)
                case .work(let work): job = work
                }
                caller = WorkCaller(request, actor: actor, trustForwardedFor: trusted)
            } catch {
                return .now(error.response)
            }
            return .later { responder in context.work.answer(responder, in: lane, for: caller, job) }
        }
        declarations.append(RouteDeclaration(method: method, path: path, access: access, maximumBody: maximumBody, mode: .cachedOrOffLoop))
    }
}

extension EndpointRegistry {
    /// What no route takes goes to `handler` (link landing) when its path is not one of the
    /// API's own; nil from it is the ordinary 404. Open (a link needs no token); an answer of
    /// `.work` (building the landing table) runs in the builds lane, as a `cachedOrOffLoop`
    /// route's does.
    mutating func setFallback(label: (method: String, path: String),
                              _ handler: @escaping @Sendable (HTTPRequest) -> Answer?) {
        let work = context.work
        router.setFallback(label: label) { request in
            switch handler(request) {
            case nil: nil
            case .now(let response): .now(response)
            case .work(let job): .later { responder in work.answer(responder, in: .builds, job) }
            }
        }
    }
}

/// A group of endpoints over one resource, registering its routes on the shared context.
protocol EndpointGroup: Sendable {
    init(context: APIContext)
    func register(on registry: inout EndpointRegistry) throws(RouterError)
}
