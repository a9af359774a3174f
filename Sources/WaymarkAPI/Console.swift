import HTTPCore
import HTTPServer
import RouteEngine

/// `GET /console`: the marketing console, one self-contained page (Resources/console.html,
/// embedded in the binary) like the dashboard. It holds no data and needs no token to load:
/// its script asks for one, keeps it in the tab's session storage, and uses it only with
/// this origin's public API (`manifest:read` to look, `routes:publish` to compose, check,
/// preview drafts and publish). Its Content-Security-Policy allows exactly its own inline
/// script and style (by hash), requests to this origin, and images it made itself (a QR
/// code fetched with the token and shown from a `blob:` URL).
struct Console: Sendable {
    let ok: HTTPResponse
    let notModified: HTTPResponse
    let etag: String
    let policy: String

    init(page: [UInt8]) {
        etag = "\"c-\(SHA256.hex(SHA256.hash(page)).prefix(32))\""
        policy = InlinePage.policy(for: page, extra: ["connect-src 'self'", "img-src 'self' blob:"])
        let cacheControl = "no-cache"
        ok = HTTPResponse(status: .ok, headers: HTTPHeaders(InlinePage.headers(policy: policy) + [("ETag", etag), ("Cache-Control", cacheControl)]),
                          body: page).prepared()
        notModified = APIResponse.notModified(etag: etag, cacheControl: cacheControl).prepared()
    }

    static let shared = Console(page: PackageResources.console_html)
}

/// `GET /console`, open: the page asks for a token and works with it.
struct ConsoleEndpoints: EndpointGroup {
    let context: APIContext

    func register(on registry: inout EndpointRegistry) throws(RouterError) {
        try registry.add("GET", "/console", .open) { request, _ in
            let console = Console.shared
            return APIResponse.ifNoneMatch(request, matches: console.etag) ? console.notModified : console.ok
        }
    }
}
