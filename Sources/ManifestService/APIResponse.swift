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
        var values: [String: String] = [:]
        guard let query = request.head.query else { return values }
        for item in query.split(separator: "&", omittingEmptySubsequences: true) {
            let parts = item.split(separator: "=", maxSplits: 1, omittingEmptySubsequences: false)
            guard let name = decode(parts[0]), let value = decode(parts.count > 1 ? parts[1] : "") else { return nil }
            if values[name] == nil { values[name] = value }
        }
        return values
    }

    private static func decode(_ text: Substring) -> String? {
        var bytes: [UInt8] = []
        var iterator = text.utf8.makeIterator()
        while let byte = iterator.next() {
            switch byte {
            case UInt8(ascii: "+"): bytes.append(UInt8(ascii: " "))
            case UInt8(ascii: "%"):
                guard let high = iterator.next().flatMap(hexValue), let low = iterator.next().flatMap(hexValue) else { return nil }
                bytes.append(high << 4 | low)
            default: bytes.append(byte)
            }
        }
        return String(validating: bytes, as: UTF8.self)
    }

    private static func hexValue(_ digit: UInt8) -> UInt8? {
        switch digit {
        case UInt8(ascii: "0")...UInt8(ascii: "9"): digit - UInt8(ascii: "0")
        case UInt8(ascii: "a")...UInt8(ascii: "f"): digit - UInt8(ascii: "a") + 10
        case UInt8(ascii: "A")...UInt8(ascii: "F"): digit - UInt8(ascii: "A") + 10
        default: nil
        }
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
