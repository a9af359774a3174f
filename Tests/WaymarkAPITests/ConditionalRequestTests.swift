import HTTPCore
@testable import WaymarkAPI
import Testing

/// `If-None-Match` against a representation's ETag (RFC 9110 §13.1.2: weak comparison, a
/// list, `*`, several fields), as the hot path of every conditional manifest fetch reads it.
@Suite("If-None-Match")
struct ConditionalRequestTests {
    static let etag = "\"m7-3fe9bd1e60f5496673b91a03bfb4833d\""

    static let table: [(fields: [String], matches: Bool)] = [
        ([], false),
        ([etag], true),
        (["W/" + etag], true),
        (["\"m7-3fe9bd1e60f5496673b91a03bfb4833e\""], false),
        (["\"m7-3fe9bd1e60f5496673b91a03bfb4833\""], false),  // one byte short
        ([etag + "x"], false),
        (["\"other\", " + etag], true),
        (["\"other\",W/" + etag + " , \"more\""], true),
        (["\"other\"", etag], true),  // a second field
        (["*"], true),
        (["\"other\", *"], true),
        ([""], false),
        (["\"m7-3FE9BD1E60F5496673B91A03BFB4833D\""], false),  // ETags compare case-sensitively
    ]

    @Test(arguments: table)
    func matches(_ row: (fields: [String], matches: Bool)) {
        let request = HTTPRequest(head: HTTPRequestHead(method: "GET", target: "/v1/manifest",
                                                        headers: HTTPHeaders(row.fields.map { ("If-None-Match", $0) })))
        #expect(APIResponse.ifNoneMatch(request, matches: Self.etag) == row.matches, "\(row.fields)")
        #expect(APIResponse.ifNoneMatch(request, matches: "W/" + Self.etag) == row.matches, "weak: \(row.fields)")
    }
}

/// The telemetry endpoint's `Content-Type` check, on the field's bytes.
@Suite("Telemetry Content-Type")
struct TelemetryContentTypeTests {
    static let table: [(String, Bool)] = [
        ("application/json", true), ("Application/JSON", true), ("application/json; charset=utf-8", true),
        ("application/json ;charset=utf-8", true), (" application/json", true), ("application/json;", true),
        ("application/jsonx", false), ("application/jso", false), ("text/plain", false), ("application/json-patch+json", false),
        ("", false), (";application/json", false), ("application/ json", true), ("applicationjson", false),
    ]

    @Test(arguments: table)
    func contentType(_ row: (String, Bool)) {
        #expect(Array(row.0.utf8).withUnsafeBufferPointer(TelemetryEndpoints.isJSON) == row.1, "\(row.0)")
    }
}
