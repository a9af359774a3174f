import HTTPCore
#if canImport(Glibc)
import Glibc
#endif

/// Path parameters of a matched route (`/v1/revisions/:number` → `number`), percent-decoded.
public struct RouteParameters: Hashable, Sendable {
    public private(set) var values: [String: String] = [:]
    /// Who the route's admission check at the end of the head admitted (e.g. a token's
    /// name): set for a request with a body, which is checked before its body is read;
    /// nil for one without. Set by the server, never from anything the client sent.
    public internal(set) var admittedAs: String?

    public subscript(name: String) -> String? { values[name] }

    mutating func set(_ name: String, _ value: String) { values[name] = value }
}

/// From method and path to a handler. A path that exists with another method is `405`
/// with `Allow`; an unknown path is `404`; a method no server knows is `501` (RFC 9110
/// §15.6.2). `HEAD` is served by the `GET` handler; the serializer drops the content.
public struct Router: Sendable {
    public typealias Handler = @Sendable (HTTPRequest, RouteParameters) -> HTTPResponse
    /// A handler that answers later, from any thread, through the `Responder` (e.g. once a
    /// write is durable). The connection reads nothing more until it has answered.
    public typealias DeferredHandler = @Sendable (HTTPRequest, RouteParameters, Responder) -> Void
    /// A handler that answers at once when it can (a cache hit) and otherwise hands the
    /// work off the loop, answering later through the `Responder` it is then given.
    public typealias AnsweringHandler = @Sendable (HTTPRequest, RouteParameters) -> Answer

    public enum Answer: Sendable {
        case now(HTTPResponse)
        case later(@Sendable (Responder) -> Void)
    }

    /// Checks a request at the end of its head, before its body is read: admitted (with
    /// who sent it, if known) or refused with the response to send. The server then never
    /// reads the body of a refused request, nor invites it with `100 Continue`.
    public typealias Admission = @Sendable (HTTPRequestHead) -> Admitted

    public enum Admitted: Sendable {
        case admit(as: String?)
        /// Admitted with a body limit of its own instead of the route's: a caller trusted
        /// with more (a token with a wider scope) may send more.
        case admitWithBody(as: String?, maximumBody: Int)
        case refuse(HTTPResponse)
    }

    enum Work: Sendable {
        case now(Handler)
        case later(DeferredHandler)
        case nowOrLater(AnsweringHandler)
    }

    enum Segment: Hashable, Sendable {
        case literal(String)
        case parameter(String)
    }

    private struct Entry: Sendable {
        var method: String
        var segments: [Segment]
        /// The whole path when it has no parameters (`/v1/telemetry`): matched as bytes,
        /// without splitting the request's path.
        var literalPath: [UInt8]?
        /// What a path must start with to reach a route with parameters: its literal segments
        /// before the first parameter (`/v1/revisions/` of `/v1/revisions/:number`).
        var literalPrefix: [UInt8]
        var maximumBody: Int?
        var admission: Admission?
        var work: Work
    }

    /// Methods RFC 9110 defines, plus PATCH.
    static let knownMethods: Set<String> = ["GET", "HEAD", "POST", "PUT", "DELETE", "CONNECT", "OPTIONS", "TRACE", "PATCH"]

    /// `knownMethods.contains(method)`, with the common methods first compared as the small
    /// strings they are (hashing a method into the set cost a request ~290 instructions).
    @inline(__always)
    static func isKnownMethod(_ method: String) -> Bool {
        method == "GET" || method == "HEAD" || method == "POST" || knownMethods.contains(method)
    }

    /// Answers a request no route takes, on a path that is not the server's own (its first
    /// segment is no route's first segment): link landing. Nil leaves the request to the 404.
    public typealias Fallback = @Sendable (HTTPRequest) -> Answer?

    private var entries: [Entry] = []
    private var fallback: Fallback?
    private var fallbackLabel: (method: String, path: String)?
    /// The first segment of every route: a path starting with one is the server's own,
    /// never the fallback's (and a path starting with none reaches no route).
    private var ownFirstSegments: [[UInt8]] = []
    /// Whether a route starts with a parameter, so that any path may be its.
    private var parameterFirst = false
    /// The order in which entries are tried: for any path, one that takes it with a literal
    /// where another has a parameter (segment by segment, left to right) comes first, so the
    /// first entry that binds is the most specific. Entries keep the index they were added
    /// with (metrics label routes by it).
    private var order: [Int] = []

    public init() {}

    /// Adds a route. `path` is literal segments and `:name` parameters, e.g. `/v1/revisions/:number`.
    /// `maximumBody` overrides the server's body limit for this route; `admission` checks a
    /// request that has a body at the end of its head. Throws when the route could never be
    /// reached or takes exactly the paths of one already added for `method`.
    public mutating func add(_ method: String, _ path: String, maximumBody: Int? = nil, admission: Admission? = nil,
                             _ handler: @escaping Handler) throws(RouterError) {
        try add(method, path, maximumBody: maximumBody, admission: admission, work: .now(handler))
    }

    /// Adds a route whose handler answers later through a `Responder`.
    public mutating func addDeferred(_ method: String, _ path: String, maximumBody: Int? = nil, admission: Admission? = nil,
                                     _ handler: @escaping DeferredHandler) throws(RouterError) {
        try add(method, path, maximumBody: maximumBody, admission: admission, work: .later(handler))
    }

    /// Adds a route whose handler answers at once or, when it must work for it, later.
    public mutating func addAnswering(_ method: String, _ path: String, maximumBody: Int? = nil, admission: Admission? = nil,
                                      _ handler: @escaping AnsweringHandler) throws(RouterError) {
        try add(method, path, maximumBody: maximumBody, admission: admission, work: .nowOrLater(handler))
    }

    private mutating func add(_ method: String, _ path: String, maximumBody: Int?, admission: Admission?, work: Work) throws(RouterError) {
        let segments = try Self.parse(method: method, path: path)
        if let existing = entries.first(where: { $0.method == method && Self.sameShape($0.segments, segments) }) {
            throw .duplicate(method: method, path: path, existing: Self.pattern(existing.segments))
        }
        let literals = segments.compactMap { segment -> String? in
            if case .literal(let text) = segment { text } else { nil }
        }
        let literalPath = literals.count == segments.count ? Array(("/" + literals.joined(separator: "/")).utf8) : nil
        let leading = segments.prefix { if case .literal = $0 { true } else { false } }.count
        let literalPrefix = Array(("/" + literals.prefix(leading).map { $0 + "/" }.joined()).utf8)
        entries.append(Entry(method: method, segments: segments, literalPath: literalPath, literalPrefix: literalPrefix,
                             maximumBody: maximumBody, admission: admission, work: work))
        switch segments.first {
        case .literal(let first)?: if !ownFirstSegments.contains(Array(first.utf8)) { ownFirstSegments.append(Array(first.utf8)) }
        case .parameter?: parameterFirst = true
        case nil: ownFirstSegments.append([])
        }
        order = entries.indices.sorted { Self.precedes(entries[$0].segments, entries[$1].segments, $0, $1) }
    }

    /// Sets the handler for requests no route takes (`Fallback`); `label` names it in metrics.
    public mutating func setFallback(label: (method: String, path: String), _ handler: @escaping Fallback) {
        fallback = handler
        fallbackLabel = label
    }

    /// Method and path pattern of each route, in the order added (metrics label them so),
    /// then the fallback's label when there is one.
    public var routeLabels: [(method: String, path: String)] {
        entries.map { ($0.method, Self.pattern($0.segments)) } + (fallbackLabel.map { [$0] } ?? [])
    }

    /// Whether `path`'s first segment is one of the routes' (so it is the server's own path):
    /// lengths first, then the bytes, where they lie; no allocation.
    private func isOwn(_ path: Substring) -> Bool {
        if parameterFirst { return true }
        let ownFirstSegments = ownFirstSegments  // the closure captures this, not a copy of the router
        var path = path
        // `withUTF8` on the substring, not the generic `withContiguousStorageIfAvailable` of
        // its view (which went through an unspecialized call into the standard library).
        return path.withUTF8 { bytes -> Bool in
            var end = 1
            while end < bytes.count, bytes[end] != UInt8(ascii: "/") { end += 1 }
            let length = max(0, end - 1)
            for segment in ownFirstSegments where segment.count == length {
                if length == 0 || segment.withUnsafeBufferPointer({ memcmp($0.baseAddress!, bytes.baseAddress! + 1, length) == 0 }) { return true }
            }
            return false
        }
    }

    enum Match: Sendable {
        case found(Work, RouteParameters, route: Int)
        case methodNotAllowed(allow: [String])
        case notFound
        /// No route takes it, and its first segment is none of theirs: the fallback's to answer.
        case outside
        case notImplemented
    }

    /// The most specific route for `method` that takes `path` (literal beats `:param`, segment
    /// by segment from the left); 405 when only other methods' routes take it.
    /// - Complexity: O(routes × segments); a service has a few dozen routes.
    func match(method: String, path: Substring) -> Match {
        // A path whose first segment no route has reaches none: with a fallback (link
        // landing), those are most of what it sees, so they skip the walk over the routes.
        if fallback != nil, !isOwn(path) { return Self.isKnownMethod(method) ? .outside : .notImplemented }
        var segments: [Substring]?
        var allowed: [String] = []
        // By index: an entry is not copied unless its path binds.
        for index in order {
            guard let parameters = binding(index, path: path, segments: &segments) else { continue }
            let entryMethod = entries[index].method
            if entryMethod == method || (method == "HEAD" && entryMethod == "GET") {
                return .found(entries[index].work, parameters, route: index)
            }
            allowed.append(entryMethod)
        }
        // A path that exists answers 405 with what it allows, whatever the method (so a
        // client learns the resource's methods); 501 is kept for a method no route knows.
        guard !allowed.isEmpty else { return Self.isKnownMethod(method) ? .notFound : .notImplemented }
        if allowed.contains("GET") { allowed.append("HEAD") }
        return .methodNotAllowed(allow: Array(Set(allowed)).sorted())
    }

    /// The body limit of the route a head would reach, if it sets one.
    public func maximumBody(for head: HTTPRequestHead) -> Int? {
        // Without Content-Length or Transfer-Encoding there is no body to limit.
        guard head.headers["Content-Length"] != nil || head.headers["Transfer-Encoding"] != nil else { return nil }
        return entry(reachedBy: head).flatMap { entries[$0].maximumBody }
    }

    /// What the server does with the head of a request that has a body, before reading it:
    /// the route's admission check, and its body limit. A head no route takes is answered
    /// now, its body unread and nothing reserved for it (`refusal(of:)`).
    public func decide(_ head: HTTPRequestHead) -> HeadDecision {
        guard let index = entry(reachedBy: head) else { return refusal(of: head) }
        guard let admission = entries[index].admission else { return .read(maximumBody: entries[index].maximumBody, admittedAs: nil) }
        switch admission(head) {
        case .admit(let name): return .read(maximumBody: entries[index].maximumBody, admittedAs: name)
        case .admitWithBody(let name, let maximumBody): return .read(maximumBody: maximumBody, admittedAs: name)
        case .refuse(let response): return .refuse(response)
        }
    }

    /// The answer to a head with a body that no route of its method takes, before the body:
    /// 404, 405 with `Allow` or 501, as `route` would answer once the body was read — so an
    /// anonymous client cannot make the server read (and hold) a body only to say 404. A
    /// path outside the server's own is the fallback's: a link is opened without a body, so
    /// there a `GET` or `HEAD` may declare none (any length is 413 before a byte is read)
    /// and another method gets the fallback's answer to its bodiless head.
    private func refusal(of head: HTTPRequestHead) -> HeadDecision {
        let request = HTTPRequest(head: head)
        switch match(method: head.method, path: head.path) {
        case .found:
            // HEAD served by a GET route: that route's limit, as for GET.
            var get = head
            get.method = "GET"
            return .read(maximumBody: entry(reachedBy: get).flatMap { entries[$0].maximumBody }, admittedAs: nil)
        case .outside where head.method == "GET" || head.method == "HEAD":
            return .read(maximumBody: 0, admittedAs: nil)
        case .outside:
            if let fallback, case .now(let response)? = fallback(request) { return .refuse(response) }
            return .refuse(.error(.notFound, message: "There is nothing at \(head.path)."))
        case .methodNotAllowed(let allow):
            return .refuse(Self.methodNotAllowed(request, allow: allow))
        case .notFound:
            return .refuse(.error(.notFound, message: "There is nothing at \(head.path)."))
        case .notImplemented:
            return .refuse(.error(.notImplemented, message: "The method \(head.method) is not implemented."))
        }
    }

    /// The most specific route of the head's method that takes its path.
    private func entry(reachedBy head: HTTPRequestHead) -> Int? {
        let path = head.path
        var segments: [Substring]?
        for index in order where entries[index].method == head.method {
            if binding(index, path: path, segments: &segments) != nil { return index }
        }
        return nil
    }

    /// The parameters with which entry `index` takes `path`, or nil when it does not. A
    /// path without parameters is compared whole (a trailing slash ignored); the request's
    /// `segments` are split on the first entry that has parameters, and kept.
    private func binding(_ index: Int, path: Substring, segments: inout [Substring]?) -> RouteParameters? {
        if let literal = entries[index].literalPath {
            return Self.isPath(path, literal) ? RouteParameters() : nil
        }
        guard Self.hasPrefix(path, entries[index].literalPrefix) else { return nil }
        if segments == nil { segments = Self.segments(of: path) }
        guard entries[index].segments.count == segments!.count else { return nil }
        return Self.bind(entries[index].segments, to: segments!)
    }

    private static func hasPrefix(_ path: Substring, _ prefix: [UInt8]) -> Bool {
        let starts = path.utf8.withContiguousStorageIfAvailable { bytes in
            bytes.count >= prefix.count && prefix.withUnsafeBufferPointer { memcmp(bytes.baseAddress!, $0.baseAddress!, prefix.count) == 0 }
        }
        return starts ?? path.utf8.starts(with: prefix)
    }

    /// Whether `path` is `literal` (a path without parameters), or it with a trailing slash:
    /// as `segments(of:)` splits them, the two give the same segments.
    private static func isPath(_ path: Substring, _ literal: [UInt8]) -> Bool {
        let equal = path.utf8.withContiguousStorageIfAvailable { bytes in
            guard bytes.count == literal.count || (bytes.count == literal.count + 1 && bytes.last == 0x2F && literal.count > 1) else { return false }
            return literal.withUnsafeBufferPointer { memcmp(bytes.baseAddress!, $0.baseAddress!, literal.count) == 0 }
        }
        if let equal { return equal }
        let bytes = Array(path.utf8)
        return bytes == literal || (bytes.count > 1 && bytes.dropLast() == literal[...] && bytes.last == 0x2F && literal.count > 1)
    }

    /// `route` is the index of the route taken, -1 when none was.
    enum Routed {
        case response(HTTPResponse, route: Int)
        case deferred(DeferredHandler, RouteParameters, route: Int)
    }

    /// Calls the matching handler, or answers 404 / 405 / 501 itself; a deferred route is
    /// returned for the caller to start with a `Responder`.
    func route(_ request: HTTPRequest, admittedAs: String? = nil) -> Routed {
        switch match(method: request.head.method, path: request.head.path) {
        case .found(.now(let handler), var parameters, let route):
            if admittedAs != nil { parameters.admittedAs = admittedAs }
            return .response(handler(request, parameters), route: route)
        case .found(.later(let handler), var parameters, let route):
            if admittedAs != nil { parameters.admittedAs = admittedAs }
            return .deferred(handler, parameters, route: route)
        case .found(.nowOrLater(let handler), var parameters, let route):
            if admittedAs != nil { parameters.admittedAs = admittedAs }
            switch handler(request, parameters) {
            case .now(let response): return .response(response, route: route)
            case .later(let finish): return .deferred({ _, _, responder in finish(responder) }, parameters, route: route)
            }
        case .methodNotAllowed(let allow):
            return .response(Self.methodNotAllowed(request, allow: allow), route: -1)
        case .outside:
            if let fallback, let answer = fallback(request) {
                switch answer {
                case .now(let response): return .response(response, route: entries.count)
                case .later(let finish): return .deferred({ _, _, responder in finish(responder) }, RouteParameters(), route: entries.count)
                }
            }
            return .response(.error(.notFound, message: "There is nothing at \(request.head.path)."), route: -1)
        case .notFound:
            return .response(.error(.notFound, message: "There is nothing at \(request.head.path)."), route: -1)
        case .notImplemented:
            return .response(.error(.notImplemented, message: "The method \(request.head.method) is not implemented."), route: -1)
        }
    }

    /// Answers a decoded `request` without a socket, as a connection would: `answer` is
    /// called once, at once for a route that answers on the loop, or from whichever thread a
    /// deferred route answers on. For tests that call an API in-process.
    public func respond(to request: HTTPRequest, admittedAs: String? = nil, _ answer: @escaping @Sendable (HTTPResponse) -> Void) {
        switch route(request, admittedAs: admittedAs) {
        case .response(let response, _): answer(response)
        case .deferred(let handler, let parameters, _): handler(request, parameters, Responder(deliver: answer))
        }
    }

    private static func methodNotAllowed(_ request: HTTPRequest, allow: [String]) -> HTTPResponse {
        var response = HTTPResponse.error(.methodNotAllowed, message: "\(request.head.method) is not allowed here; use \(allow.joined(separator: ", ")).")
        response.headers.add("Allow", allow.joined(separator: ", "))
        return response
    }

    /// `/a/b/` → `["a", "b"]`: split on UTF-8 bytes (a path is ASCII), a trailing slash ignored.
    private static func segments(of path: Substring) -> [Substring] {
        let utf8 = path.utf8
        var parts: [Substring] = []
        parts.reserveCapacity(8)
        guard var start = utf8.firstIndex(of: 0x2F).map(utf8.index(after:)) else { return parts }
        while let slash = utf8[start...].firstIndex(of: 0x2F) {
            parts.append(Substring(utf8[start..<slash]))
            start = utf8.index(after: slash)
        }
        if start != utf8.endIndex { parts.append(Substring(utf8[start...])) }
        return parts
    }

    private static func bind(_ pattern: [Segment], to segments: [Substring]) -> RouteParameters? {
        guard pattern.count == segments.count else { return nil }
        var parameters = RouteParameters()
        for (segment, value) in zip(pattern, segments) {
            switch segment {
            case .literal(let text):
                // Lengths first: most literals differ in length, and this runs for every route.
                guard value.utf8.count == text.utf8.count, sameBytes(value, text) else { return nil }
            case .parameter(let name):
                guard !value.isEmpty, let decoded = PercentDecoding.decode(value) else { return nil }
                parameters.set(name, decoded)
            }
        }
        return parameters
    }
}

/// Whether a path segment is exactly a route's literal, compared where the bytes lie
/// (generic `elementsEqual` over two UTF-8 views cost about 400 instructions a call).
private func sameBytes(_ value: Substring, _ text: String) -> Bool {
    let equal = value.utf8.withContiguousStorageIfAvailable { a in
        text.utf8.withContiguousStorageIfAvailable { b in
            a.count == b.count && (a.isEmpty || memcmp(a.baseAddress!, b.baseAddress!, a.count) == 0)
        }
    }
    if let equal = equal ?? nil { return equal }
    return value.utf8.elementsEqual(text.utf8)
}
