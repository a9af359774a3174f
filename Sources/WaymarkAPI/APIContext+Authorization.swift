import HTTPCore
import HTTPServer
import ManifestStore
import RouteEngine

extension APIContext {
    /// Who sent `request`, if `access` lets them: the token's name, "public" for an open
    /// read (the manifest, with `--public-reads`), "anonymous" on an open route; else the 401
    /// or 403 to send. Refused writes (every scope but `manifest:read` and `routes:read`) are
    /// audited.
    func authorize(_ head: HTTPRequestHead, _ access: RouteDeclaration.Access) throws(Refusal) -> String {
        let scope: Scope, alternative: Scope?
        switch access {
        case .open: return "anonymous"
        case .scope(let only, _): (scope, alternative) = (only, nil)
        case .eitherScope(let first, let other, _): (scope, alternative) = (first, other)
        }
        if scope == .manifestRead, options.publicManifestReads { return "public" }
        // The action is read only for the audit of a refusal: not on every request.
        var action: String {
            switch access {
            case .open: ""
            case .scope(_, let action), .eitherScope(_, _, let action): action
            }
        }
        // Also read only for a refusal's sentence.
        var named: String { alternative.map { "\(scope.rawValue) or \($0.rawValue)" } ?? scope.rawValue }
        let challenge = [("WWW-Authenticate", "Bearer realm=\"waymark\"")]
        let presented = presentedToken(head)
        guard case .some(let found) = presented else {
            audit(action, actor: "anonymous", reason: "noToken", scope: scope, head)
            throw Refusal(.unauthorized, "unauthorized",
                          "This endpoint needs a bearer token (Authorization: Bearer wm_…) with the scope \(named).", headers: challenge)
        }
        guard let record = found else {
            audit(action, actor: "anonymous", reason: "invalidToken", scope: scope, head)
            throw Refusal(.unauthorized, "unauthorized", "The bearer token is unknown or revoked.", headers: challenge)
        }
        guard record.allows(scope) || alternative.map(record.allows) == true else {
            audit(action, actor: record.name, reason: "wrongScope", scope: scope, head)
            var details: [String: JSONValue] = ["required": .string(scope.rawValue), "granted": .array(record.scopes.sorted().map { JSONValue.string($0.rawValue) })]
            if let alternative { details["alternative"] = .string(alternative.rawValue) }
            throw Refusal(.forbidden, "forbidden", "The token \"\(record.name)\" lacks the scope \(named).", details: .object(details))
        }
        // Rated as the route's own scope whichever of the two the token has: the work asked
        // for is the same.
        if let refused = rates.take(record, scope: scope, peer: head.client(trustingForwardedFor: options.trustForwardedFor)) {
            let rate = record.rate(for: scope), wait = refused.wait
            if let share = refused.peerRate {
                audit(action, actor: record.name, reason: "overPeerRateShare", scope: scope, head)
                throw Refusal(.tooManyRequests, "rateLimited",
                              "This address (or its network) is over its share of the token \"\(record.name)\"'s rate for \(scope.rawValue) (\(share)/s of \(rate), "
                                + "and only quiet addresses while the token is near its rate: every install shares it, and one address or network may "
                                + "not spend it for the others); retry in \(wait) s.",
                              details: ["rate": .string(rate.description), "peerRate": .int(share), "retryAfter": .int(wait)],
                              headers: [("Retry-After", String(wait))])
            }
            audit(action, actor: record.name, reason: "rateLimited", scope: scope, head)
            throw Refusal(.tooManyRequests, "rateLimited",
                          "The token \"\(record.name)\" is over its rate for \(scope.rawValue) (\(rate), bursts of \(rate.burst)); retry in \(wait) s.",
                          details: ["rate": .string(rate.description), "retryAfter": .int(wait)], headers: [("Retry-After", String(wait))])
        }
        return record.name
    }

    /// Who sent `request`: as the admission check at the end of its head found (a request
    /// with a body), else checked now (one without).
    func actor(of request: HTTPRequest, _ parameters: RouteParameters, _ access: RouteDeclaration.Access) throws(Refusal) -> String {
        if let admitted = parameters.admittedAs { return admitted }
        return try authorize(request.head, access)
    }

    /// `authorize` as the server's admission check at the end of a head: a request with a
    /// body is refused before the body is read.
    /// `busy`, when given, is asked once the caller is known whether the work the request
    /// would queue is refused now (its lane full, or the caller holding its share): then it
    /// is answered `503` at the head, before a byte of its body is read.
    func admission(_ access: RouteDeclaration.Access, largerBody: RouteDeclaration.LargerBody? = nil,
                   busy: (@Sendable (HTTPRequestHead, String) -> Refusal?)? = nil) -> Router.Admission {
        { [self] head in
            do throws(Refusal) {
                let actor = try authorize(head, access)
                if let busy, let refusal = busy(head, actor) { throw refusal }
                if let largerBody, tokenAllows(head, largerBody.scope) { return .admitWithBody(as: actor, maximumBody: largerBody.maximumBody) }
                return .admit(as: actor)
            } catch {
                return .refuse(error.response)
            }
        }
    }

    /// Whether the head's bearer token is a live one with `scope` (nothing audited or rated:
    /// the route's own check did that).
    func tokenAllows(_ head: HTTPRequestHead, _ scope: Scope) -> Bool {
        guard case .some(.some(let record)) = presentedToken(head) else { return false }
        return record.allows(scope)
    }

    /// The bearer token of the head's one `Authorization` field: nil when there is none (no
    /// field, several, another scheme), else its live record or nil when it is unknown or
    /// revoked. Read on the field's bytes where they lie: this runs on every request.
    func presentedToken(_ head: HTTPRequestHead) -> TokenRecord?? {
        head.headers.withSingleValue("Authorization") { field -> TokenRecord?? in
            guard let token = Self.bearerRange(field) else { return nil }
            return .some(store.tokens.authenticate(bytes: UnsafeBufferPointer(rebasing: field[token])))
        } ?? nil
    }

    /// Where the credentials of `Authorization: Bearer <token>` lie in the field's bytes
    /// (RFC 6750 §2.1; the scheme name is case-insensitive), or nil for another scheme.
    private static func bearerRange(_ bytes: UnsafeBufferPointer<UInt8>) -> Range<Int>? {
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
        return start < end ? start..<end : nil
    }

    private func audit(_ action: String, actor: String, reason: String, scope: Scope, _ head: HTTPRequestHead) {
        // Reads are not audited (every phone polls); refused changes are, counted per
        // minute by action, actor, reason and the client's network (an IPv4 /24, an IPv6
        // /48): refusals from many addresses of one network are one line, not one each.
        guard scope != .manifestRead, scope != .routesRead else { return }
        // Behind a trusted proxy, the client's network, not the proxy's.
        store.recordRefusal(action: action, actor: actor, reason: reason,
                            peer: head.client(trustingForwardedFor: options.trustForwardedFor)?.network)
    }
}
