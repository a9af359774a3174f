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
        let policy = InlinePage.policy(for: page, extra: ["connect-src 'self'", "img-src 'self'"])
        let cacheControl = "no-cache"
        ok = HTTPResponse(status: .ok, headers: HTTPHeaders(InlinePage.headers(policy: policy) + [("ETag", etag), ("Cache-Control", cacheControl)]),
                          body: page).prepared()
        notModified = APIResponse.notModified(etag: etag, cacheControl: cacheControl).prepared()
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
