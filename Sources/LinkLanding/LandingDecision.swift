import HTTPCore
import RouteEngine

/// Where a link opened in a browser lands: a pure function of how the engine resolved it
/// (logged out, for the newest build of the visitor's platform), the route that matched,
/// and the schema's `landing` addresses. Every `Location` it gives is an address that
/// passed validation (a route's `fallbackURL`, a schema's `landing` field: https, a host,
/// no user name), plus, for a route's fallback, the link's own query items that the route
/// maps — never anything else the link carries (`docs/landing.md`).
public enum LandingDecision {
    public enum Answer: Hashable, Sendable {
        /// `302` to `location`, chosen by `rule`.
        case redirect(String, Rule)
        /// Waymark's own page: the link is unknown or expired (`404`), or it resolves but
        /// nothing is declared to send this visitor to (`200`, "open it in the app").
        case page(Page)
    }

    /// Waymark's own answers, when no address is declared for the case.
    public enum Page: String, Hashable, Sendable {
        /// `404`: unknown, expired, or not valid.
        case notFound
        /// `200`: the link is real, and opens in the app.
        case openInApp
    }

    /// Which rule chose a redirect.
    public enum Rule: String, Hashable, Sendable {
        case routeFallback, appStore, playStore, web, notFoundURL
    }

    /// The rules, in order:
    /// 1. resolved (`proceed` or `gated`: the route exists and is live) and the route has a
    ///    `fallbackURL` → there, with the link's query items the route maps from the query
    ///    added (others are dropped);
    /// 2. resolved → the schema's address for the visitor: `appStoreURL` for iOS,
    ///    `playStoreURL` for Android (with the link as its Install Referrer), `webURL` for others, and `webURL` when the store's is not
    ///    declared; none declared → the "open in the app" page;
    /// 3. `notFound` (any reason) → the schema's `notFoundURL`, else the not-found page.
    /// A redirect back to the very link (the same host and path) is never given: the rule is
    /// skipped as if its address were not declared, so a fallback cannot loop on itself.
    /// Google Play's address carries the link as an Install Referrer (`installReferrer`), made
    /// at `now` (seconds since 1970), so the app opens it after its install.
    public static func decide(_ resolution: Resolution, route: RouteSpec?, landing: Landing?, visitor: Visitor,
                              link: (host: String, path: Substring, query: Substring?), now: Int) -> Answer {
        func usable(_ location: String?) -> String? {
            guard let location, !pointsAt(location, host: link.host, path: link.path) else { return nil }
            return location
        }
        switch resolution {
        case .proceed, .gated:
            if let route, let fallback = usable(route.fallbackURL) {
                return .redirect(appending(passedOn(link.query, by: route), to: fallback), .routeFallback)
            }
            let store: (String?, Rule) = switch visitor {
            case .ios: (landing?.appStoreURL, .appStore)
            case .android: (landing?.playStoreURL, .playStore)
            case .other: (landing?.webURL, .web)
            }
            if let location = usable(store.0) {
                guard store.1 == .playStore, let route else { return .redirect(location, store.1) }
                guard let referrer = installReferrer(link: link, route: route, now: now) else { return .redirect(location, .playStore) }
                return .redirect(withReferrer(location, referrer), .playStore)
            }
            if let web = usable(landing?.webURL) { return .redirect(web, .web) }
            return .page(.openInApp)
        case .notFound:
            if let location = usable(landing?.notFoundURL) { return .redirect(location, .notFoundURL) }
            return .page(.notFound)
        }
    }

    /// The UTM items an Install Referrer carries on, in this order.
    public static let campaignItems = ["utm_source", "utm_medium", "utm_campaign", "utm_term", "utm_content"]
    /// The longest value of a UTM item carried on; a longer one is dropped.
    public static let maximumCampaignValueBytes = 100

    /// The Install Referrer for a link resolved to `route` (`docs/landing.md`, "Deferred
    /// links"), `application/x-www-form-urlencoded`: `deeplink` = the link as opened (https,
    /// its host, its path, and the query items the route maps, as `passedOn` keeps them),
    /// `t` = `now`, then each of `campaignItems` the link's query has (the first of each),
    /// when its value as written is 1 to `maximumCampaignValueBytes` bytes of `A–Z a–z 0–9
    /// - . _ ~` (no escapes): anything else is dropped, never rewritten; for an item the link
    /// has none of (or one dropped), the route's `utm` value, which the same rule held.
    /// Past `maximumReferrerBytes` the UTM items are left out; nil when even the link and
    /// its time are longer (the store address then carries no referrer).
    public static func installReferrer(link: (host: String, path: Substring, query: Substring?), route: RouteSpec, now: Int) -> String? {
        let campaign = campaignItems.compactMap { name in
            (campaignValue(name, in: link.query, maximumBytes: maximumCampaignValueBytes) ?? route.utm?[String(name.dropFirst(4))].map { $0[...] })
                .map { name + "=" + $0 }
        }
        let bare = "deeplink=" + formEncoded(opened(link, route: route)) + "&t=\(now)"
        let whole = ([bare] + campaign).joined(separator: "&")
        return whole.utf8.count <= maximumReferrerBytes ? whole : bare.utf8.count <= maximumReferrerBytes ? bare : nil
    }

    /// The longest Install Referrer made: what the Android library takes (`DeferredLinks`).
    public static let maximumReferrerBytes = 4_096

    /// The link as opened, as a deferred link hands it on: `https://`, the host, the path, and
    /// the query items `route` maps (as `passedOn` keeps them).
    public static func opened(_ link: (host: String, path: Substring, query: Substring?), route: RouteSpec) -> String {
        let kept = passedOn(link.query, by: route)
        return "https://" + link.host + link.path + (kept.isEmpty ? "" : "?" + kept.joined(separator: "&"))
    }

    /// The value as written of the first item named `name` in `query`, when it is 1 to
    /// `maximumBytes` bytes of `A–Z a–z 0–9 - . _ ~`; nil otherwise (the first of each name counts, even when it fails).
    static func campaignValue(_ name: String, in query: Substring?, maximumBytes: Int) -> Substring? {
        for item in (query ?? "").split(separator: "&") {
            let parts = item.split(separator: "=", maxSplits: 1, omittingEmptySubsequences: false)
            guard parts[0] == name else { continue }
            guard parts.count == 2, (1...maximumBytes).contains(parts[1].utf8.count), parts[1].utf8.allSatisfy(isUnreserved) else { return nil }
            return parts[1]
        }
        return nil
    }

    /// The text the iOS hand-off page copies (`docs/landing.md`, "Deferred links"): the link as
    /// `opened`, `#waymark=`, and `now` in seconds since 1970. `WaymarkClient.DeferredLink` reads it.
    public static func handOffText(_ opened: String, now: Int) -> String { opened + "#waymark=" + String(now) }

    /// Where "Open in the app" points in an in-app browser (`docs/landing.md`, "In-app
    /// browsers"): on Android an `intent://` address for the app's `package` with the link as
    /// opened (`scheme=https`) and `fallback` as `S.browser_fallback_url`; on iOS the link as
    /// opened by the first of `schemes` the route answers (`scheme://` + the path without its
    /// first `/`, the mapped query items), as the engine resolves it; nil when there is neither.
    public static func openInApp(_ link: (host: String, path: Substring, query: Substring?), route: RouteSpec, visitor: Visitor,
                                 package: String?, schemes: [String], fallback: String?) -> String? {
        let kept = passedOn(link.query, by: route)
        let query = kept.isEmpty ? "" : "?" + kept.joined(separator: "&")
        switch visitor {
        case .android:
            guard let package, !package.isEmpty, package.utf8.allSatisfy(isUnreserved) else { return nil }
            let back = fallback.map { ";S.browser_fallback_url=" + formEncoded($0) } ?? ""
            return "intent://" + link.host + link.path + query + "#Intent;scheme=https;package=" + package + back + ";end"
        case .ios:
            // The first scheme the route answers: a route limited to its hosts answers none.
            guard let scheme = schemes.first(where: { route.scope.admits(.custom(scheme: $0.lowercased())) }) else { return nil }
            return scheme + "://" + link.path.dropFirst() + query
        case .other:
            return nil
        }
    }

    /// The longest campaign token (`ct`) App Store Connect keeps.
    public static let maximumCampaignTokenBytes = 40

    /// `store` (the App Store) with `ct` = the link's `utm_campaign` when it is plain and at most
    /// `maximumCampaignTokenBytes` (else the route's `utm.campaign`, held to the same length),
    /// so App Store Connect counts the campaign's downloads; an address that already has a
    /// `ct` item is left as declared.
    public static func withCampaignToken(_ store: String, query: Substring?, route: RouteSpec? = nil) -> String {
        let own = campaignValue("utm_campaign", in: query, maximumBytes: maximumCampaignTokenBytes)
        let routes = route?.utm?["campaign"].flatMap { $0.utf8.count <= maximumCampaignTokenBytes ? $0[...] : nil }
        guard let campaign = own ?? routes else { return store }
        return declares(store, item: "ct") ? store : appending(["ct=" + campaign], to: store)
    }

    /// `store` with `referrer` added to its query, percent-encoded once (Play's rule), unless
    /// the address already names a referrer of its own (kept as declared).
    static func withReferrer(_ store: String, _ referrer: String) -> String {
        declares(store, item: "referrer") ? store : appending(["referrer=" + formEncoded(referrer)[...]], to: store)
    }

    /// Whether `address`'s own query has an item named `item`.
    static func declares(_ address: String, item: String) -> Bool {
        let query = address.split(separator: "#", maxSplits: 1).first.flatMap { $0.split(separator: "?", maxSplits: 1).dropFirst().first } ?? ""
        return query.split(separator: "&").contains { $0 == item || $0.hasPrefix(item + "=") }
    }

    /// `text` with every byte but `A–Z a–z 0–9 - . _ ~` percent-encoded (RFC 3986's unreserved).
    static func formEncoded(_ text: String) -> String {
        let hex = Array("0123456789ABCDEF".utf8)
        var out: [UInt8] = []
        out.reserveCapacity(text.utf8.count * 3)
        for byte in text.utf8 {
            if isUnreserved(byte) {
                out.append(byte)
            } else {
                out += [UInt8(ascii: "%"), hex[Int(byte >> 4)], hex[Int(byte & 15)]]
            }
        }
        return String(decoding: out, as: UTF8.self)
    }

    static func isUnreserved(_ byte: UInt8) -> Bool {
        switch byte {
        case UInt8(ascii: "A")...UInt8(ascii: "Z"), UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "0")...UInt8(ascii: "9"),
             UInt8(ascii: "-"), UInt8(ascii: "."), UInt8(ascii: "_"), UInt8(ascii: "~"): true
        default: false
        }
    }

    /// The raw items of `query` whose name, percent-decoded as the engine decodes it, is one
    /// the route fills a param from, in the link's order.
    static func passedOn(_ query: Substring?, by route: RouteSpec) -> [Substring] {
        guard let query, !query.isEmpty else { return [] }
        var names: Set<String> = []
        for source in route.params.values { if case .query(let name) = source { names.insert(name) } }
        guard !names.isEmpty else { return [] }
        return query.split(separator: "&").filter { item in
            let name = item.split(separator: "=", maxSplits: 1, omittingEmptySubsequences: false)[0]
            return PercentDecoding.decode(name).map(names.contains) ?? false
        }
    }

    /// `location` with `items` added to its query (before any fragment).
    static func appending(_ items: [Substring], to location: String) -> String {
        guard !items.isEmpty else { return location }
        let joined = items.joined(separator: "&")
        let fragment = location.firstIndex(of: "#")
        let base = fragment.map { location[..<$0] } ?? location[...]
        let separator = base.contains("?") ? (base.hasSuffix("?") || base.hasSuffix("&") ? "" : "&") : "?"
        return base + separator + joined + (fragment.map { String(location[$0...]) } ?? "")
    }

    /// Whether `location` (an https address) is the link itself: its host (without case, and
    /// `:443`) and its path (a trailing slash aside) are the link's.
    static func pointsAt(_ location: String, host: String, path: Substring) -> Bool {
        guard location.utf8.count > 8, location.prefix(8).lowercased() == "https://" else { return false }
        let rest = location.dropFirst(8)
        let authorityEnd = rest.firstIndex { $0 == "/" || $0 == "?" || $0 == "#" } ?? rest.endIndex
        var authority = rest[..<authorityEnd].lowercased()
        if authority.hasSuffix(":443") { authority.removeLast(4) }
        guard authority == host.lowercased() else { return false }
        let pathPart = rest[authorityEnd...].prefix { $0 != "?" && $0 != "#" }
        func trimmed(_ text: Substring) -> Substring {
            var text = text
            while text.hasSuffix("/") { text = text.dropLast() }
            return text
        }
        return trimmed(pathPart) == trimmed(path)
    }
}
