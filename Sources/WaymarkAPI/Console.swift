import HTTPCore
import HTTPServer

/// `GET /console`: the marketing console, one self-contained page (Resources/console.html,
/// embedded in the binary) like the dashboard. It holds no data and needs no token to load:
/// its script asks for one, keeps it in the tab's session storage, and uses it only with
/// this origin's public API (`manifest:read` to look, `routes:publish` to compose, check,
/// preview drafts and publish). Its Content-Security-Policy allows exactly its own inline
/// script and style (by hash), requests to this origin, and images it made itself (a QR
/// code fetched with the token and shown from a `blob:` URL).
enum Console {
    static let page = ServedPage(page: PackageResources.console_html, tag: "c", extra: ["connect-src 'self'", "img-src 'self' blob:"])
}

/// `GET /console`, open: the page asks for a token and works with it.
struct ConsoleEndpoints: EndpointGroup {
    let context: APIContext

    func register(on registry: inout EndpointRegistry) throws(RouterError) {
        try registry.add("GET", "/console", .open) { request, _ in Console.page.answer(request) }
    }
}
