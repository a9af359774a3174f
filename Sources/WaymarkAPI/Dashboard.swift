import Foundation
import RouteEngine
import HTTPCore
import HTTPServer

/// `GET /dashboard`: one self-contained page (Resources/dashboard.html, embedded in the
/// binary) that draws the telemetry counts as SVG and refreshes itself. The page holds no
/// data: its script reads `/v1/telemetry/counts` and `/top` with a `telemetry:read` token
/// the operator gives it, so the page itself needs none. Its Content-Security-Policy
/// allows exactly its own inline script and style (by hash) and requests to this origin.
struct Dashboard: Sendable {
    let ok: HTTPResponse
    let notModified: HTTPResponse
    let etag: String

    init(page: [UInt8]) {
        etag = "\"d-\(SHA256.hex(SHA256.hash(page)).prefix(32))\""
        let policy = ["default-src 'none'",
                      "script-src " + Self.hashSources(of: "script", in: page),
                      "style-src " + Self.hashSources(of: "style", in: page),
                      "connect-src 'self'", "img-src 'self'", "base-uri 'none'", "form-action 'none'", "frame-ancestors 'none'"]
            .joined(separator: "; ")
        let cacheControl = "no-cache"
        ok = HTTPResponse(status: .ok, headers: HTTPHeaders([
            ("Content-Type", "text/html; charset=utf-8"), ("ETag", etag), ("Cache-Control", cacheControl),
            ("Content-Security-Policy", policy), ("X-Content-Type-Options", "nosniff"), ("Referrer-Policy", "no-referrer"),
        ]), body: page).prepared()
        notModified = APIResponse.notModified(etag: etag, cacheControl: cacheControl).prepared()
    }

    /// `'sha256-…'` for the content of every `<tag>…</tag>` in the page (CSP Level 3 §8.3:
    /// the hash of the element's text exactly as written).
    static func hashSources(of tag: String, in page: [UInt8]) -> String {
        let open = Array("<\(tag)>".utf8), close = Array("</\(tag)>".utf8)
        var sources: [String] = []
        var index = 0
        while let start = find(open, in: page, from: index), let end = find(close, in: page, from: start + open.count) {
            let content = Array(page[(start + open.count)..<end])
            sources.append("'sha256-\(Data(SHA256.hash(content)).base64EncodedString())'")
            index = end + close.count
        }
        return sources.isEmpty ? "'none'" : sources.joined(separator: " ")
    }

    private static func find(_ needle: [UInt8], in haystack: [UInt8], from start: Int) -> Int? {
        guard needle.count <= haystack.count else { return nil }
        var index = start
        while index + needle.count <= haystack.count {
            if haystack[index] == needle[0], haystack[index..<(index + needle.count)].elementsEqual(needle) { return index }
            index += 1
        }
        return nil
    }

    static let shared = Dashboard(page: PackageResources.dashboard_html)
}

/// `GET /dashboard`, open: the page asks the operator for a token and reads with it.
struct DashboardEndpoints: EndpointGroup {
    let context: APIContext

    func register(on registry: inout EndpointRegistry) throws(RouterError) {
        try registry.add("GET", "/dashboard", .open) { request, _ in
            let dashboard = Dashboard.shared
            return APIResponse.ifNoneMatch(request, matches: dashboard.etag) ? dashboard.notModified : dashboard.ok
        }
    }
}
