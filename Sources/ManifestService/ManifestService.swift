import Foundation
import HTTPCore
import HTTPServer
import LinkChecks
import ManifestStore
import Replication
import RouteEngine
import Synchronization
import Telemetry

/// The HTTP API of `waymark serve` over a `ManifestStore` (see docs/api.md and docs/openapi.yaml).
public final class ManifestService: Sendable {
    public struct Options: Sendable {
        /// `GET /v1/manifest` and the other reads without a token.
        public var publicManifestReads = false
        /// Largest routes document or schema accepted, in bytes.
        public var maximumDocumentBytes = 16 << 20
        /// Outbound checks of fallbacks and associated-domain files on validate and publish
        /// (nil: off).
        public var linkChecks: LinkCheckOptions?
        /// Set on a follower (`serve --follow`): it mirrors this primary and refuses writes.
        public var follower: Follower?

        public init() {}
    }

    public let store: ManifestStore
    /// Accepted resolution telemetry, kept in the same data directory.
    public let telemetry: TelemetryStore
    public let options: Options
    private let cache = ManifestCache()
    let vocabulary = VocabularyCache()
    /// Events refused one by one inside accepted batches, since start.
    let telemetryRejected = Atomic<UInt64>(0)
    /// Revisions published (rollbacks included) since start.
    let publishes = Atomic<UInt64>(0)
    /// Requests by route and status with latency: give it to the `HTTPServer` serving `router()`.
    public let httpMetrics = HTTPMetrics()
    /// Problems the link checks reported, since start.
    let linkFindings = Atomic<UInt64>(0)
    /// Present when link checks are on; its cache lives as long as the service.
    public let linkChecker: LinkChecker?
    /// Link checks block on the network: they run here, never on an event loop.
    private let linkCheckQueue = DispatchQueue(label: "waymark.link-checks", attributes: .concurrent)

    public init(store: ManifestStore, telemetry: TelemetryStore, options: Options = Options()) {
        self.store = store
        self.telemetry = telemetry
        self.options = options
        self.linkChecker = options.linkChecks.map(LinkChecker.init)
    }

    /// Every endpoint, ready for `HTTPServer`.
    public func router() -> Router {
        var router = Router()
        let documentLimit = options.maximumDocumentBytes
        try! router.add("GET", "/healthz") { _, _ in API.json(["status": "ok"]) }
        try! router.add("GET", "/readyz") { [self] _, _ in readiness() }
        try! router.add("GET", "/v1/manifest") { [self] request, _ in manifest(request) }
        try! router.add("GET", "/v1/revisions") { [self] request, _ in revisions(request) }
        try! router.addDeferred("POST", "/v1/revisions", maximumBody: documentLimit) { [self] request, _, responder in publish(request, responder) }
        try! router.add("GET", "/v1/revisions/:number") { [self] request, parameters in revision(request, parameters["number"]) }
        try! router.add("GET", "/v1/revisions/:a/diff/:b") { [self] request, parameters in diff(request, parameters["a"], parameters["b"]) }
        try! router.add("POST", "/v1/revisions/:number/rollback", maximumBody: 64 << 10) { [self] request, parameters in
            rollback(request, parameters["number"])
        }
        try! router.addDeferred("POST", "/v1/validate", maximumBody: documentLimit) { [self] request, _, responder in validate(request, responder) }
        try! router.add("PUT", "/v1/schemas/:platform/:version", maximumBody: documentLimit) { [self] request, parameters in
            registerSchema(request, platform: parameters["platform"] ?? "", version: parameters["version"] ?? "")
        }
        try! router.add("GET", "/v1/schemas") { [self] request, _ in schemas(request) }
        try! router.add("POST", "/v1/resolve", maximumBody: 64 << 10) { [self] request, _ in resolve(request) }
        try! router.add("GET", "/.well-known/apple-app-site-association") { [self] _, _ in associatedDomainFile(\.apple) }
        try! router.add("GET", "/.well-known/assetlinks.json") { [self] _, _ in associatedDomainFile(\.google) }
        addTelemetryRoutes(to: &router)
        addReplicationRoutes(to: &router)
        addMetricsRoute(to: &router)
        addDashboardRoute(to: &router)
        return router
    }

    // MARK: Who may do what

    /// The name of the token that allows `scope` ("public" for open reads), or the 401 or
    /// 403 to send. Refused writes are audited.
    func authorize(_ request: HTTPRequest, _ scope: Scope, action: String) -> Result<String, Refusal> {
        if scope == .manifestRead, options.publicManifestReads { return .success("public") }
        let challenge = [("WWW-Authenticate", "Bearer realm=\"waymark\"")]
        guard let field = request.head.headers.single("Authorization"), let token = Self.bearerToken(field) else {
            audit(action, actor: "anonymous", reason: "noToken", scope: scope)
            return .failure(Refusal(response: API.error(.unauthorized, "unauthorized",
                "This endpoint needs a bearer token (Authorization: Bearer wm_…) with the scope \(scope.rawValue).", headers: challenge)))
        }
        guard let record = store.tokens.authenticate(bytes: token) else {
            audit(action, actor: "anonymous", reason: "invalidToken", scope: scope)
            return .failure(Refusal(response: API.error(.unauthorized, "unauthorized", "The bearer token is unknown or revoked.", headers: challenge)))
        }
        guard record.allows(scope) else {
            audit(action, actor: record.name, reason: "wrongScope", scope: scope)
            return .failure(API.refusal(.forbidden, "forbidden", "The token \"\(record.name)\" lacks the scope \(scope.rawValue).",
                details: ["required": .string(scope.rawValue), "granted": .array(record.scopes.sorted().map { JSONValue.string($0.rawValue) })]))
        }
        return .success(record.name)
    }

    /// The credentials of `Authorization: Bearer <token>` (RFC 6750 §2.1; the scheme name is
    /// case-insensitive), as bytes, or nil for another scheme. On the field's bytes where
    /// they lie: this runs on every request.
    static func bearerToken(_ field: String) -> [UInt8]? {
        if let token = field.utf8.withContiguousStorageIfAvailable(bearerToken) { return token }
        return Array(field.utf8).withUnsafeBufferPointer(bearerToken)
    }

    private static func bearerToken(_ bytes: UnsafeBufferPointer<UInt8>) -> [UInt8]? {
        let scheme: StaticString = "bearer "
        guard bytes.count > scheme.utf8CodeUnitCount else { return nil }
        for index in 0..<scheme.utf8CodeUnitCount {
            let expected = scheme.utf8Start[index]
            guard bytes[index] | (expected == 0x20 ? 0 : 0x20) == expected else { return nil }
        }
        // RFC 9110 §5.5: the parser already trimmed the field; OWS after the scheme's space is tolerated.
        var start = scheme.utf8CodeUnitCount
        var end = bytes.count
        while start < end, bytes[start] == 0x20 || bytes[start] == 0x09 { start += 1 }
        while end > start, bytes[end - 1] == 0x20 || bytes[end - 1] == 0x09 { end -= 1 }
        return start < end ? Array(bytes[start..<end]) : nil
    }

    /// nil when the request may go on; otherwise the response refusing it.
    func denial(_ request: HTTPRequest, _ scope: Scope, action: String) -> HTTPResponse? {
        if case .failure(let refusal) = authorize(request, scope, action: action) { return refusal.response }
        return nil
    }

    private func audit(_ action: String, actor: String, reason: String, scope: Scope) {
        // Reads are not audited (every phone polls); refused changes are.
        guard scope != .manifestRead else { return }
        try? store.recordRefusal(action: action, actor: actor, reason: reason)
    }

    // MARK: Health

    private func readiness() -> HTTPResponse {
        let snapshot = store.snapshot
        let follower = followerReadiness()
        guard let current = snapshot.current else {
            return API.error(.serviceUnavailable, "notReady", follower == nil ? "No revision is published yet."
                : "No revision is mirrored from the primary yet.", details: follower)
        }
        // A follower that lost its primary still serves its last good revision, so it stays
        // ready and says so here (and in /metrics).
        var object: [String: JSONValue] = ["status": "ready", "revision": .int(current.number), "schemas": .int(snapshot.schemas.count)]
        if let follower { object["follower"] = follower }
        return API.json(.object(object))
    }

    // MARK: Manifests

    private func manifest(_ request: HTTPRequest) -> HTTPResponse {
        if let denied = denial(request, .manifestRead, action: "readManifest") { return denied }
        guard let query = API.query(request) else { return API.error(.badRequest, "badQuery", "The query string has a malformed percent escape.") }
        guard let platform = query["platform"], !platform.isEmpty, let version = query["version"], !version.isEmpty else {
            return API.error(.badRequest, "missingBuild", "Say which app build: ?platform=ios&version=5.3.0.")
        }
        let key = SchemaKey(platform: platform, version: version)
        // The generation is read before the snapshot: a view remembered under it can only be
        // older than the store, never newer, and the next change retires it.
        let generation = store.generation
        if let view = cache.current(generation: generation, key) {
            return view.response(publicReads: options.publicManifestReads, notModified: API.ifNoneMatch(request, matches: view.etag))
        }
        let snapshot = store.snapshot
        guard let stored = snapshot.schemas[key] else {
            return API.error(.notFound, "unknownBuild", "No schema is registered for \(key); this server knows: "
                + snapshot.schemas.keys.sorted().map(\.description).joined(separator: ", ") + ".",
                details: ["known": .array(snapshot.schemas.keys.sorted().map { ["platform": .string($0.platform), "version": .string($0.version)] })])
        }
        guard let current = snapshot.current else {
            return API.error(.notFound, "noRevision", "No routes have been published yet.")
        }
        let view = cache.view(revision: current, stored: stored)
        cache.remember(view, generation: generation)
        return view.response(publicReads: options.publicManifestReads, notModified: API.ifNoneMatch(request, matches: view.etag))
    }

    // MARK: Revisions

    static func etag(_ revision: Revision) -> String { "\"rev-\(revision.number)\"" }

    private static func summary(_ revision: Revision) -> JSONValue {
        var object: [String: JSONValue] = [
            "number": .int(revision.number), "author": .string(revision.author), "time": .string(Timestamp.format(revision.time)),
            "message": .string(revision.message), "sha256": .string(revision.sha256), "etag": .string(etag(revision)),
            "parent": revision.parent.map(JSONValue.int) ?? .null,
        ]
        if let restores = revision.restores { object["restores"] = .int(restores) }
        return .object(object)
    }

    private func revisions(_ request: HTTPRequest) -> HTTPResponse {
        if let denied = denial(request, .manifestRead, action: "readRevisions") { return denied }
        let snapshot = store.snapshot
        var headers: [(String, String)] = [("Cache-Control", "no-cache")]
        if let current = snapshot.current { headers.append(("ETag", Self.etag(current))) }
        return API.json(["current": snapshot.current.map { .int($0.number) } ?? .null,
                         "revisions": .array(snapshot.revisions.reversed().map(Self.summary))], headers: headers)
    }

    /// A path's revision number: digits only, at least 1.
    private static func parseNumber(_ text: String?) -> Result<Int, Refusal> {
        guard let text, text.utf8.allSatisfy({ (48...57).contains($0) }), let number = Int(text), number >= 1 else {
            return .failure(API.refusal(.badRequest, "badRevision", "A revision number is a positive integer, not \"\(text ?? "")\"."))
        }
        return .success(number)
    }

    private func revisionNumber(_ text: String?, in snapshot: StoreSnapshot) -> Result<Revision, Refusal> {
        let number: Int
        switch Self.parseNumber(text) {
        case .failure(let refusal): return .failure(refusal)
        case .success(let value): number = value
        }
        guard let revision = snapshot.revision(number) else {
            return .failure(API.refusal(.notFound, "unknownRevision", "There is no revision \(number); the latest is \(snapshot.current?.number ?? 0)."))
        }
        return .success(revision)
    }

    private func revision(_ request: HTTPRequest, _ text: String?) -> HTTPResponse {
        if let denied = denial(request, .manifestRead, action: "readRevision") { return denied }
        switch revisionNumber(text, in: store.snapshot) {
        case .failure(let refusal): return refusal.response
        case .success(let revision):
            let etag = Self.etag(revision)
            let cacheControl = "private, max-age=31536000, immutable"
            if API.ifNoneMatch(request, matches: etag) { return API.notModified(etag: etag, cacheControl: cacheControl) }
            guard case .object(var object) = Self.summary(revision) else { return API.json(.null) }
            object["routes"] = (try? JSONParser().parse(revision.routes)) ?? .null
            return API.json(.object(object), headers: [("ETag", etag), ("Cache-Control", cacheControl)])
        }
    }

    private func diff(_ request: HTTPRequest, _ from: String?, _ to: String?) -> HTTPResponse {
        if let denied = denial(request, .manifestRead, action: "readDiff") { return denied }
        let snapshot = store.snapshot
        let a: Revision, b: Revision
        switch revisionNumber(from, in: snapshot) {
        case .failure(let refusal): return refusal.response
        case .success(let revision): a = revision
        }
        switch revisionNumber(to, in: snapshot) {
        case .failure(let refusal): return refusal.response
        case .success(let revision): b = revision
        }
        func routes(_ revision: Revision) -> [(String, JSONValue)] {
            ((try? JSONParser().parse(revision.routes))?["routes"]?.arrayValue ?? []).compactMap { route in
                route["id"]?.stringValue.map { ($0, route) }
            }
        }
        let before = Dictionary(routes(a), uniquingKeysWith: { first, _ in first })
        let after = routes(b)
        let afterIDs = Set(after.map(\.0))
        let added = after.filter { before[$0.0] == nil }.map { JSONValue.string($0.0) }
        let removed = routes(a).map(\.0).filter { !afterIDs.contains($0) }.map(JSONValue.string)
        let changed = after.filter { id, route in before[id].map { $0 != route } ?? false }.map { JSONValue.string($0.0) }
        return API.json(["from": .int(a.number), "to": .int(b.number), "added": .array(added), "removed": .array(removed),
                         "changed": .array(changed)], headers: [("Cache-Control", "private, max-age=31536000, immutable")])
    }

    // MARK: Publishing

    /// `{"message": "…", "routes": {…routes document…}}`
    private func envelope(_ request: HTTPRequest, requireRoutes: Bool) -> Result<(message: String, routes: JSONValue?), Refusal> {
        if request.body.isEmpty, !requireRoutes { return .success(("", nil)) }
        guard let json = try? JSONParser().parse(request.body), case .object(let object) = json else {
            return .failure(API.refusal(.badRequest, "badJSON", "The body must be a JSON object: {\"message\": \"…\", \"routes\": {…}}."))
        }
        let unknown = Set(object.keys).subtracting(["message", "routes"])
        guard unknown.isEmpty else {
            return .failure(API.refusal(.badRequest, "unknownField", "Unknown field(s): \(unknown.sorted().joined(separator: ", ")).")) }
        if let message = object["message"], message.stringValue == nil {
            return .failure(API.refusal(.badRequest, "badMessage", "message must be a string."))
        }
        let message = object["message"]?.stringValue ?? ""
        guard message.utf8.count <= 2_000 else { return .failure(API.refusal(.badRequest, "badMessage", "message is limited to 2,000 bytes.")) }
        if requireRoutes, object["routes"] == nil {
            return .failure(API.refusal(.badRequest, "missingRoutes", "The body needs the routes document under \"routes\"."))
        }
        return .success((message, object["routes"]))
    }

    /// The revision number `If-Match` names (nil: `If-None-Match: *`, publishing the first revision).
    private func base(_ request: HTTPRequest) -> Result<Int?, Refusal> {
        let ifMatch = request.head.headers.values("If-Match")
        if ifMatch.isEmpty {
            if request.head.headers["If-None-Match"]?.trimmingCharacters(in: .whitespaces) == "*" { return .success(nil) }
            return .failure(API.refusal(.preconditionRequired, "baseRequired",
                "Send If-Match with the ETag of the revision you started from (GET /v1/revisions gives it), or If-None-Match: * for the first revision."))
        }
        let tag = ifMatch.joined(separator: ",").trimmingCharacters(in: .whitespaces)
        guard tag.hasPrefix("\"rev-"), tag.hasSuffix("\""), let number = Int(tag.dropFirst(5).dropLast()), number >= 1 else {
            return .failure(API.refusal(.preconditionFailed, "staleBase", "If-Match must be one revision ETag such as \"rev-3\", not \(tag).",
                                      details: ["current": store.snapshot.current.map { .int($0.number) } ?? .null]))
        }
        return .success(number)
    }

    private func outcome(_ result: Result<PublishOutcome, StoreError>) -> HTTPResponse {
        switch result {
        case .failure(let error):
            return API.error(.internalServerError, "storeFailed", "The revision could not be stored: \(error.message). Nothing was published.")
        case .success(.published(let revision)):
            publishes.add(1, ordering: .relaxed)
            return API.json(Self.summary(revision), status: .created,
                            headers: [("ETag", Self.etag(revision)), ("Location", "/v1/revisions/\(revision.number)")])
        case .success(.invalid(let report)):
            return API.error(.unprocessableContent, "invalidRoutes",
                             "The routes fail validation (\(report.errors.count) error(s)); nothing was published.", details: report.json)
        case .success(.staleBase(let current)):
            return API.error(.preconditionFailed, "staleBase",
                             "Revision \(current.map(String.init) ?? "none") was published since your base; fetch it, merge, and retry.",
                             details: ["current": current.map(JSONValue.int) ?? .null])
        case .success(.unknownRevision(let number)):
            return API.error(.notFound, "unknownRevision", "There is no revision \(number).")
        }
    }

    /// Checked here, then (with link checks on) off the loop while the links are fetched.
    private func publish(_ request: HTTPRequest, _ responder: Responder) {
        let author: String
        switch authorize(request, .routesPublish, action: "publish") {
        case .failure(let refusal): return responder.respond(refusal.response)
        case .success(let name): author = name
        }
        if let refused = followerRefusal() { return responder.respond(refused) }
        let body: (message: String, routes: JSONValue?)
        switch envelope(request, requireRoutes: true) {
        case .failure(let refusal): return responder.respond(refusal.response)
        case .success(let value): body = value
        }
        let base: Int?
        switch self.base(request) {
        case .failure(let refusal): return responder.respond(refusal.response)
        case .success(let value): base = value
        }
        let routes = body.routes?.serializedBytes(pretty: true) ?? []
        withLinkFindings(body.routes, against: store.snapshot) { [self] findings in
            responder.respond(outcome(Result { () throws(StoreError) in
                try store.publish(routes: routes, base: base, author: author, message: body.message, findings: findings)
            }))
        }
    }

    /// Calls `body` with the link checks' findings for `routes` against `snapshot`'s
    /// schemas: at once with none when checks are off (then `routes` is never evaluated) or
    /// nothing is registered to check against, else from the link-check queue once every
    /// fetch has ended.
    private func withLinkFindings(_ routes: @autoclosure () -> JSONValue?, against snapshot: StoreSnapshot,
                                  _ body: @escaping @Sendable ([ValidationProblem]) -> Void) {
        let schemas = snapshot.orderedSchemas.map(\.schema)
        guard let linkChecker, !schemas.isEmpty, let routes = routes() else { return body([]) }
        linkCheckQueue.async { [self] in
            let findings = linkChecker.check(routes, against: schemas)
            linkFindings.add(UInt64(findings.count), ordering: .relaxed)
            body(findings)
        }
    }

    private func rollback(_ request: HTTPRequest, _ text: String?) -> HTTPResponse {
        let author: String
        switch authorize(request, .routesPublish, action: "rollback") {
        case .failure(let refusal): return refusal.response
        case .success(let name): author = name
        }
        if let refused = followerRefusal() { return refused }
        let number: Int
        switch Self.parseNumber(text) {
        case .failure(let refusal): return refusal.response
        case .success(let value): number = value
        }
        let message: String
        switch envelope(request, requireRoutes: false) {
        case .failure(let refusal): return refusal.response
        case .success(let value):
            guard value.routes == nil else { return API.error(.badRequest, "unknownField", "A rollback takes only a message.") }
            message = value.message.isEmpty ? "Rollback to revision \(number)" : value.message
        }
        let base: Int?
        switch self.base(request) {
        case .failure(let refusal): return refusal.response
        case .success(let value): base = value
        }
        return outcome(Result { () throws(StoreError) in
            try store.rollback(to: number, base: base, author: author, message: message)
        })
    }

    private func validate(_ request: HTTPRequest, _ responder: Responder) {
        if let denied = denial(request, .routesPublish, action: "validate") { return responder.respond(denied) }
        guard !request.body.isEmpty else {
            return responder.respond(API.error(.badRequest, "missingBody", "Send the routes document to validate as the body."))
        }
        let snapshot = store.snapshot
        let validated = ManifestStore.validate(request.body, against: snapshot)
        // The body is parsed a second time only when the links are checked.
        withLinkFindings(try? JSONParser().parse(request.body), against: snapshot) { findings in
            var report = validated
            report.append(contentsOf: findings)
            guard case .object(var object) = report.json else { return responder.respond(API.json(report.json)) }
            object["valid"] = .bool(report.isValid)
            object["schemas"] = .array(snapshot.schemas.keys.sorted().map { .string($0.description) })
            responder.respond(API.json(.object(object)))
        }
    }

    // MARK: Schemas

    private func schemas(_ request: HTTPRequest) -> HTTPResponse {
        if let denied = denial(request, .manifestRead, action: "readSchemas") { return denied }
        return API.json(["schemas": .array(store.snapshot.orderedSchemas.map { stored in
            ["platform": .string(stored.key.platform), "version": .string(stored.key.version), "sha256": .string(stored.sha256),
             "author": .string(stored.author), "time": .string(Timestamp.format(stored.time))]
        })])
    }

    private func registerSchema(_ request: HTTPRequest, platform: String, version: String) -> HTTPResponse {
        let author: String
        switch authorize(request, .schemasWrite, action: "registerSchema") {
        case .failure(let refusal): return refusal.response
        case .success(let name): author = name
        }
        if let refused = followerRefusal() { return refused }
        let key = SchemaKey(platform: platform, version: version)
        let result = Result { () throws(StoreError) in try store.registerSchema(request.body, expected: key, author: author) }
        switch result {
        case .failure(let error):
            return API.error(.internalServerError, "storeFailed", "The schema could not be stored: \(error.message). Nothing changed.")
        case .success(.invalid(let problems)):
            return API.error(.unprocessableContent, "invalidSchema", "The schema is invalid; nothing changed.",
                             details: ValidationReport(problems).json)
        case .success(.wrongApp(let app)):
            return API.error(.unprocessableContent, "wrongApp", "This server serves the app \"\(app)\"; the schema is for another.")
        case .success(.keyMismatch(let found)):
            return API.error(.unprocessableContent, "buildMismatch", "The URL names \(key) but the schema describes \(found).")
        case .success(.registered(let stored, let replaced)):
            // Schema drift: the live routes this build cannot resolve.
            var drift: [JSONValue] = []
            var current: JSONValue = .null
            if let revision = store.snapshot.current {
                current = .int(revision.number)
                drift = cache.view(revision: revision, stored: stored).unresolvable.map(JSONValue.string)
            }
            return API.json(["platform": .string(stored.key.platform), "version": .string(stored.key.version), "sha256": .string(stored.sha256),
                             "replaced": .bool(replaced), "revision": current, "unresolvableRoutes": .array(drift)],
                            status: replaced ? .ok : .created, headers: [("Location", "/v1/schemas/\(platform)/\(version)")])
        }
    }

    // MARK: Preview

    private func resolve(_ request: HTTPRequest) -> HTTPResponse {
        if let denied = denial(request, .manifestRead, action: "resolve") { return denied }
        guard let json = try? JSONParser().parse(request.body), case .object(let object) = json else {
            return API.error(.badRequest, "badJSON", "The body must be a JSON object: {\"url\", \"platform\", \"version\", \"satisfied\"?, \"now\"?}.")
        }
        let unknown = Set(object.keys).subtracting(["url", "platform", "version", "satisfied", "now"])
        guard unknown.isEmpty else { return API.error(.badRequest, "unknownField", "Unknown field(s): \(unknown.sorted().joined(separator: ", ")).") }
        guard let url = object["url"]?.stringValue, let platform = object["platform"]?.stringValue, let version = object["version"]?.stringValue else {
            return API.error(.badRequest, "missingField", "url, platform and version are required strings.")
        }
        var context = ResolutionContext()
        if let satisfied = object["satisfied"] {
            guard let list = satisfied.arrayValue?.compactMap(\.stringValue), list.count == satisfied.arrayValue?.count else {
                return API.error(.badRequest, "badSatisfied", "satisfied must be a list of precondition names.")
            }
            context.satisfied = Set(list)
        }
        if let now = object["now"] {
            guard let date = now.stringValue.flatMap(Timestamp.parse) else {
                return API.error(.badRequest, "badNow", "now must be an RFC 3339 timestamp such as 2026-12-01T09:00:00Z.")
            }
            context.now = date
        }
        let snapshot = store.snapshot
        guard let stored = snapshot.schemas[SchemaKey(platform: platform, version: version)] else {
            return API.error(.notFound, "unknownBuild", "No schema is registered for \(platform) \(version).")
        }
        guard let current = snapshot.current else { return API.error(.notFound, "noRevision", "No routes have been published yet.") }
        let view = cache.view(revision: current, stored: stored)
        let resolution = view.resolver.resolve(url: url, context: context)
        return API.json(["revision": .int(current.number), "resolution": resolution.json])
    }

    // MARK: Associated domains

    private func associatedDomainFile(_ pick: (AssociatedDomainFiles) -> [UInt8]) -> HTTPResponse {
        let files = cache.associatedDomains(store.snapshot) { snapshot in
            AssociatedDomainFiles(apple: Self.appleAppSiteAssociation(snapshot), google: Self.assetLinks(snapshot))
        }
        return HTTPResponse(status: .ok, headers: HTTPHeaders([("Content-Type", "application/json"), ("Cache-Control", "public, max-age=3600")]),
                            body: pick(files))
    }

    /// Apple's file: every iOS build's app IDs with the live routes' path patterns.
    /// Apple reads at most 128 KB; past that, patterns collapse to their first segment, then to `/*`.
    private static func appleAppSiteAssociation(_ snapshot: StoreSnapshot) -> [UInt8] {
        let appIDs = Array(Set(snapshot.schemas.values.filter { $0.schema.platform == "ios" }.flatMap(\.schema.appleAppIDs))).sorted()
        let patterns = livePaths(snapshot)
        func body(_ paths: [String]) -> [UInt8] {
            let components: [JSONValue] = paths.map { ["/": .string($0)] }
            let details: JSONValue = appIDs.isEmpty ? [] : [["appIDs": .array(appIDs.map(JSONValue.string)), "components": .array(components)]]
            return JSONValue.object(["applinks": ["details": details]]).serializedBytes()
        }
        var bytes = body(patterns)
        if bytes.count > 128 * 1024 {
            let firstSegments = Array(Set(patterns.map { path -> String in
                let segment = path.split(separator: "/").first.map(String.init) ?? ""
                return segment.isEmpty || segment == "*" ? "/*" : "/\(segment)/*"
            })).sorted()
            bytes = body(firstSegments)
            if bytes.count > 128 * 1024 { bytes = body(["/*"]) }
        }
        return bytes
    }

    private static func livePaths(_ snapshot: StoreSnapshot) -> [String] {
        guard let current = snapshot.current, let routes = (try? JSONParser().parse(current.routes))?["routes"]?.arrayValue else { return [] }
        var paths: Set<String> = []
        for route in routes {
            for pattern in route["patterns"]?.arrayValue?.compactMap(\.stringValue) ?? [] {
                let path = pattern.split(separator: "?", maxSplits: 1).first.map(String.init) ?? pattern
                let segments = path.split(separator: "/", omittingEmptySubsequences: false).map { $0.hasPrefix(":") || $0.hasPrefix("*") ? "*" : String($0) }
                paths.insert(segments.joined(separator: "/").isEmpty ? "/" : segments.joined(separator: "/"))
            }
        }
        return paths.sorted()
    }

    /// Google's Digital Asset Links file from the Android builds' packages and signing certificates.
    private static func assetLinks(_ snapshot: StoreSnapshot) -> [UInt8] {
        var seen: Set<String> = []
        var statements: [JSONValue] = []
        for stored in snapshot.orderedSchemas {
            guard let android = stored.schema.android else { continue }
            let fingerprints = android.sha256CertFingerprints.sorted()
            guard seen.insert(android.package + fingerprints.joined(separator: ",")).inserted else { continue }
            statements.append(["relation": ["delegate_permission/common.handle_all_urls"],
                               "target": ["namespace": "android_app", "package_name": .string(android.package),
                                          "sha256_cert_fingerprints": .array(fingerprints.map(JSONValue.string))]])
        }
        return JSONValue.array(statements).serializedBytes()
    }
}
