import HTTPCore
import RouteEngine

/// A request refused before it reached the store, with the response to send.
struct Refusal: Error {
    let response: HTTPResponse
}

/// JSON bodies and the API's error shape: `{"error": {"code", "message", "details"?}}`.
enum API {
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

    static func refusal(_ status: HTTPStatus, _ code: String, _ message: String, details: JSONValue? = nil) -> Refusal {
        Refusal(response: error(status, code, message, details: details))
    }

    /// The query's `name=value` pairs, percent-decoded, `+` as space; nil if an escape is malformed.
    static func query(_ request: HTTPRequest) -> [String: String]? {
        PercentDecoding.queryItems(request.head.query)
    }

    /// RFC 9110 §13.1.2: does an `If-None-Match` field match `etag` (weak comparison, `*`)?
    static func ifNoneMatch(_ request: HTTPRequest, matches etag: String) -> Bool {
        let values = request.head.headers.values("If-None-Match")
        guard !values.isEmpty else { return false }
        let opaque = etag.hasPrefix("W/") ? String(etag.dropFirst(2)) : etag
        for value in values {
            for candidate in value.split(separator: ",") {
                let tag = candidate.trimmingCharacters(in: " \t")
                if tag == "*" { return true }
                if (tag.hasPrefix("W/") ? String(tag.dropFirst(2)) : tag) == opaque { return true }
            }
        }
        return false
    }

    /// A `304 Not Modified` carrying the fields a 200 would have had that caches need (RFC 9110 §15.4.5).
    static func notModified(etag: String, cacheControl: String) -> HTTPResponse {
        HTTPResponse(status: .notModified, headers: HTTPHeaders([("ETag", etag), ("Cache-Control", cacheControl)]))
    }
}

extension Substring {
    func trimmingCharacters(in set: String) -> String {
        let characters = Set(set)
        var slice = self[...]
        while let first = slice.first, characters.contains(first) { slice = slice.dropFirst() }
        while let last = slice.last, characters.contains(last) { slice = slice.dropLast() }
        return String(slice)
    }
}
