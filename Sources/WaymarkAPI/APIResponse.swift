import Glibc
import HTTPCore
import ManifestStore
import RouteEngine

/// A decoded query string; the first value of a repeated name wins.
struct Query {
    /// The query as received, checked well-formed (`PercentDecoding.isWellFormedQuery`).
    private let raw: Substring?

    init(checked raw: Substring?) {
        self.raw = raw
    }

    /// The first value of `name`, decoded; only that value becomes a string.
    subscript(_ name: String) -> String? { PercentDecoding.queryValue(named: name, in: raw) }

    /// Every item, decoded, in order.
    var pairs: [(name: String, value: String)] { PercentDecoding.queryPairs(raw) ?? [] }
}

/// A request the API refuses, with the response to send: thrown by handlers
/// (`throws(Refusal)`) and turned into its response where routes are registered.
struct Refusal: Error {
    let response: HTTPResponse

    init(response: HTTPResponse) {
        self.response = response
    }

    /// `{"error": {"code", "message", "details"?}}` with `status`.
    init(_ status: HTTPStatus, _ code: String, _ message: String, details: JSONValue? = nil, headers: [(String, String)] = []) {
        response = APIResponse.error(status, code, message, details: details, headers: headers)
    }
}

extension Refusal {
    /// A client's JSON document (`JSONParser.requests`: at most 250,000 objects and arrays, 1,000,000 values),
    /// or `400 badJSON` saying what it must be (`expected`) and, when it is not JSON a
    /// server takes, why.
    static func requestJSON(_ body: [UInt8], _ expected: String) throws(Refusal) -> JSONValue {
        do {
            return try JSONParser.requests.parse(body)
        } catch {
            throw Refusal(.badRequest, "badJSON", "\(expected) \(error.message)")
        }
    }
}

extension Refusal {
    /// A change the store could not make: `507` with `Retry-After` when the disk is full
    /// (it may succeed once space is freed), `503` with `Retry-After` when the database is
    /// away, else `500`; the message names no path of the server's, no database address.
    static func storeFailed(_ error: StoreError, _ what: String, _ outcome: String) -> Refusal {
        if error.isDatabaseAway {
            return Refusal(.serviceUnavailable, "databaseUnavailable", "\(what): the database is unavailable. \(outcome) Retry shortly.",
                           headers: [("Retry-After", "5")])
        }
        if error.isNoSpace {
            return Refusal(.insufficientStorage, "insufficientStorage", "\(what): the server's disk is full. \(outcome) Retry once space is freed.",
                           headers: [("Retry-After", "60")])
        }
        return Refusal(.internalServerError, "storeFailed", "\(what): \(error.clientMessage). \(outcome)")
    }
}

/// JSON bodies and the API's error shape: `{"error": {"code", "message", "details"?}}`.
enum APIResponse {
    static func json(_ value: JSONValue, status: HTTPStatus = .ok, headers: [(String, String)] = []) -> HTTPResponse {
        var response = HTTPResponse(status: status, contentType: "application/json", body: value.serializedBytes())
        for (name, field) in headers { response.headers.add(name, field) }
        return response
    }

    static func error(_ status: HTTPStatus, _ code: String, _ message: String, details: JSONValue? = nil,
                      headers: [(String, String)] = []) -> HTTPResponse {
        var error: [String: JSONValue] = ["code": .string(code), "message": .string(message)]
        if let details { error["details"] = details }
        return json(["error": .object(error)], status: status, headers: headers)
    }

    /// Bytes as they are, with their content type and cache policy.
    static func bytes(_ body: [UInt8], contentType: String, cacheControl: String) -> HTTPResponse {
        HTTPResponse(status: .ok, headers: HTTPHeaders([("Content-Type", contentType), ("Cache-Control", cacheControl)]), body: body)
    }

    /// The query's `name=value` pairs, percent-decoded, `+` as space.
    static func query(_ request: HTTPRequest, malformed message: String = "The query string has a malformed percent escape.")
        throws(Refusal) -> Query {
        let raw = request.head.query
        guard PercentDecoding.isWellFormedQuery(raw) else { throw Refusal(.badRequest, "badQuery", message) }
        return Query(checked: raw)
    }

    /// RFC 9110 §13.1.2: does an `If-None-Match` field match `etag` (weak comparison, `*`)?
    /// Compared on bytes, without copies: conditional manifest fetches are the hot path.
    static func ifNoneMatch(_ request: HTTPRequest, matches etag: String) -> Bool {
        let headers = request.head.headers
        // The usual case: the client sends back exactly the ETag it was given, in one field.
        var wanted = etag
        guard let exact = wanted.withUTF8({ wanted in
            headers.withValue("If-None-Match") { $0.count == wanted.count && (wanted.isEmpty || memcmp($0.baseAddress!, wanted.baseAddress!, wanted.count) == 0) }
        }) else { return false }
        if exact { return true }
        let opaque = etag.utf8.starts(with: "W/".utf8) ? Substring(etag.utf8.dropFirst(2)) : Substring(etag)
        for value in headers.values("If-None-Match") {
            for candidate in value.utf8.split(separator: UInt8(ascii: ",")) {
                var tag = Substring(candidate).withoutOWS.utf8
                if tag.elementsEqual("*".utf8) { return true }
                if tag.starts(with: "W/".utf8) { tag = tag.dropFirst(2) }
                if tag.elementsEqual(opaque.utf8) { return true }
            }
        }
        return false
    }

    /// A `304 Not Modified` carrying the fields a 200 would have had that caches need (RFC 9110 §15.4.5).
    static func notModified(etag: String, cacheControl: String) -> HTTPResponse {
        HTTPResponse(status: .notModified, headers: HTTPHeaders([("ETag", etag), ("Cache-Control", cacheControl)]))
    }
}
