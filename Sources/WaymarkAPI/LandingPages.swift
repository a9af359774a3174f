import HTTPCore
import LinkLanding
import RouteEngine

/// Waymark's own landing pages: for a link with nowhere declared to go, small and the same for
/// every link (nothing from the link is written into them, so nothing it carries can be
/// reflected); a preview crawler's card and an iPhone's hand-off page, which write the route's
/// preview and the link as opened, escaped. No external resources, and a policy that allows
/// only their own style (and the hand-off's one script) by hash.
enum LandingPages {
    static func body(_ page: LandingDecision.Page) -> [UInt8] {
        switch page {
        case .notFound: html(title: "Link not found",
                             text: "This link is unknown or has expired. It may have been mistyped, or the campaign it belongs to has ended.")
        case .openInApp: html(title: "Open in the app",
                              text: "This link opens in the app. Open it on a phone where the app is installed.")
        }
    }

    static func status(_ page: LandingDecision.Page) -> HTTPStatus { page == .notFound ? .notFound : .ok }

    private static func html(title: String, text: String) -> [UInt8] {
        document(title: title, main: "<h1>\(title)</h1><p>\(text)</p>")
    }

    /// A page's bytes: the head every page has (`title`, escaped by the caller; `head`'s extra
    /// tags on a line of their own; the pages' style and `style`), then `main`, then `after`
    /// (a script) — one skeleton, so every page keeps the same policy-relevant shape.
    private static func document(title: String, head: String? = nil, style extra: String = "", main: String, after: String = "") -> [UInt8] {
        Array("""
        <!doctype html>
        <html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1">
        <meta name="robots" content="noindex"><title>\(title)</title>
        \(head.map { $0 + "\n" } ?? "")<style>\(style)\(extra)</style>
        </head><body><main>\(main)</main>\(after)</body></html>

        """.utf8)
    }

    /// `bytes` as a `200`, with the policy of its own inline style and script.
    private static func served(_ bytes: [UInt8]) -> HTTPResponse {
        HTTPResponse(status: .ok, headers: HTTPHeaders(InlinePage.headers(policy: InlinePage.policy(for: bytes))), body: bytes)
    }

    /// The page's answer without caching headers (the landing adds them). Made once per
    /// page: an unknown link's answer is never kept, so each one would otherwise render
    /// the page and hash its style again.
    static func response(_ page: LandingDecision.Page) -> HTTPResponse {
        page == .notFound ? notFound : openInApp
    }

    private static let notFound = make(.notFound)
    private static let openInApp = make(.openInApp)

    private static func make(_ page: LandingDecision.Page) -> HTTPResponse {
        let bytes = body(page)
        return HTTPResponse(status: status(page), headers: HTTPHeaders(InlinePage.headers(policy: InlinePage.policy(for: bytes))), body: bytes)
    }

    /// The card a link-preview crawler gets for a live link (`docs/landing.md`, "Previews"):
    /// `og:title`, `og:description`, `og:image`, `og:url` and `twitter:card` from the route's
    /// `preview`, its title the app's name when it has none; every value escaped for an
    /// attribute and for text (they passed validation too), no script, no external resource.
    static func card(_ preview: LinkPreview?, appName: String, url: String) -> HTTPResponse {
        let title = escaped(preview?.title ?? appName)
        var meta = [("og:title", title), ("og:type", "website"), ("og:url", escaped(url)), ("og:site_name", escaped(appName))]
        if let description = preview?.description { meta.append(("og:description", escaped(description))) }
        if let image = preview?.image { meta.append(("og:image", escaped(image))) }
        meta.append(("twitter:card", preview?.image == nil ? "summary" : "summary_large_image"))
        let tags = meta.map { name, content in
            name.hasPrefix("twitter:") ? "<meta name=\"\(name)\" content=\"\(content)\">" : "<meta property=\"\(name)\" content=\"\(content)\">"
        }.joined(separator: "\n")
        return served(document(title: title, head: tags, main: "<h1>\(title)</h1>" + described(preview)))
    }

    /// The iOS hand-off page (`docs/landing.md`, "Deferred links"): the route's preview (or the
    /// app's name) and one link, "Get the app", to `store`. Its one script, allowed by its hash,
    /// copies `handOff` to the pasteboard when the link is clicked (a user gesture, as the
    /// Clipboard API requires) and then follows it; without script, or when the copy is
    /// refused, the link is followed as it is. Every value escaped.
    static func handOff(_ preview: LinkPreview?, appName: String, store: String, handOff: String) -> HTTPResponse {
        let title = escaped(preview?.title ?? appName)
        return served(document(title: title, style: buttonStyle, main: """
            <h1>\(title)</h1>\(described(preview))
            <p><a id="get" class="get" href="\(escaped(store))" data-handoff="\(escaped(handOff))">Get the app</a></p>
            <p class="small">Getting the app copies this link, so that the app opens it once it is installed: tap Paste when the app asks.</p>

            """, after: "<script>\(handOffScript)</script>"))
    }

    /// The in-app browser's page (`docs/landing.md`, "In-app browsers"): the route's preview
    /// (or the app's name), **Open in the app** to `open` (an `intent://` or custom-scheme
    /// address), and the way on without the app, `without` ("Get the app" when it is a store,
    /// carrying `handOff` and the hand-off script on an iPhone; else "Continue on the web").
    /// Every value escaped.
    static func openInApp(_ preview: LinkPreview?, appName: String, open: String, without: String?, isStore: Bool, handOff: String?) -> HTTPResponse {
        let title = escaped(preview?.title ?? appName)
        var other = ""
        if let without {
            other = handOff.map { #"<p><a id="get" class="get" href="\#(escaped(without))" data-handoff="\#(escaped($0))">Get the app</a></p>"# }
                ?? "<p><a id=\"without\" href=\"\(escaped(without))\">\(isStore ? "Get the app" : "Continue on the web")</a></p>"
        }
        return served(document(title: title, style: buttonStyle, main: """
            <h1>\(title)</h1>\(described(preview))
            <p><a id="open" class="get" href="\(escaped(open))">Open in the app</a></p>
            <p class="small">This page is open inside another app, which keeps links to itself. If \(escaped(appName)) is installed, Open in the app takes you there.</p>
            \(other)

            """, after: handOff == nil ? "" : "<script>\(handOffScript)</script>"))
    }

    /// The preview's description as the pages' paragraph, escaped; nothing without one.
    private static func described(_ preview: LinkPreview?) -> String {
        preview?.description.map { "<p>\(escaped($0))</p>" } ?? ""
    }

    static let handOffScript = "document.getElementById(\"get\").addEventListener(\"click\",function(event){var link=event.currentTarget,go=function(){location.href=link.href};if(!navigator.clipboard||!navigator.clipboard.writeText)return;event.preventDefault();navigator.clipboard.writeText(link.getAttribute(\"data-handoff\")).then(go,go)});"

    private static let buttonStyle = ".get{display:inline-block;background:#1d2330;color:#fff;text-decoration:none;padding:.7rem 1.4rem;border-radius:.6rem;font-weight:600}.small{font-size:.85rem;color:#5b6475}"

    private static let style = "body{font:17px/1.5 system-ui,-apple-system,sans-serif;margin:0;display:flex;min-height:100vh;align-items:center;justify-content:center;background:#f6f7f9;color:#1d2330}main{max-width:28rem;padding:2rem}h1{font-size:1.4rem;margin:0 0 .5rem}"

    /// `text` safe in HTML text and in a double- or single-quoted attribute.
    static func escaped(_ text: String) -> String {
        var out = ""
        out.reserveCapacity(text.utf8.count)
        for character in text.unicodeScalars {
            switch character {
            case "&": out += "&amp;"
            case "<": out += "&lt;"
            case ">": out += "&gt;"
            case "\"": out += "&quot;"
            case "'": out += "&#39;"
            default: out.unicodeScalars.append(character)
            }
        }
        return out
    }
}
