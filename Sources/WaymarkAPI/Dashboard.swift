import RouteEngine
import HTTPCore
import HTTPServer

/// A self-contained page served as it is (the dashboard, the console): its answer made once,
/// prepared, with the page's policy (`InlinePage`), an ETag from its bytes, and a `304`.
struct ServedPage: Sendable {
    let ok: HTTPResponse
    let notModified: HTTPResponse
    let etag: String

    /// - Parameters:
    ///   - tag: the ETag's prefix, telling the pages apart.
    ///   - extra: the policy's directives beyond the page's own script and style.
    init(page: [UInt8], tag: String, extra: [String]) {
        etag = "\"\(tag)-\(SHA256.hex(SHA256.hash(page)).prefix(32))\""
        let policy = InlinePage.policy(for: page, extra: extra)
        let cacheControl = "no-cache"
        ok = HTTPResponse(status: .ok, headers: HTTPHeaders(InlinePage.headers(policy: policy) + [("ETag", etag), ("Cache-Control", cacheControl)]),
                          body: page).prepared()
        notModified = APIResponse.notModified(etag: etag, cacheControl: cacheControl).prepared()
    }

    func answer(_ request: HTTPRequest) -> HTTPResponse {
        APIResponse.ifNoneMatch(request, matches: etag) ? notModified : ok
    }
}

/// `GET /dashboard`: one self-contained page (Resources/dashboard.html, embedded in the
/// binary) that draws the telemetry counts as SVG and refreshes itself. The page holds no
/// data: its script reads `/v1/telemetry/counts` and `/top` with a `telemetry:read` token
/// the operator gives it, so the page itself needs none. Its Content-Security-Policy
/// allows exactly its own inline script and style (by hash) and requests to this origin.
enum Dashboard {
    static let page = ServedPage(page: PackageResources.dashboard_html, tag: "d", extra: ["connect-src 'self'", "img-src 'self'"])
}

/// `GET /dashboard`, open: the page asks the operator for a token and reads with it.
struct DashboardEndpoints: EndpointGroup {
    let context: APIContext

    func register(on registry: inout EndpointRegistry) throws(RouterError) {
        try registry.add("GET", "/dashboard", .open) { request, _ in Dashboard.page.answer(request) }
    }
}
