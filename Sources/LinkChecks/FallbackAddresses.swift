import Glibc
import RouteEngine

/// Fallback addresses no one without the app can be sent to: a route's `fallbackURL` (or
/// its `preview.image`, which crawlers fetch) whose
/// host is a loopback, private, link-local or otherwise non-public address — written as an
/// IP literal in any spelling a browser or curl reads as one (`127.0.0.1`, `127.1`,
/// `0x7f000001`, `2130706433`, `[::1]`) — or `localhost` and its subdomains. Landing would
/// redirect a visitor's browser there (into their own machine or network), so such a route
/// is refused when it is validated, whether or not link checks run; `serve
/// --allow-private-fallbacks` allows them, for tests against servers on loopback only.
/// The ranges are `AddressPolicy`'s, the ones link checks never connect to.
public enum FallbackAddresses {
    /// One `insecureFallback` error per route whose fallback names such a host (the first
    /// `ValidationReport.listLimit` of them listed).
    /// - Complexity: O(routes).
    public static func problems(in routes: JSONValue) -> [ValidationProblem] { report(in: routes).problems }

    /// `problems(in:)` as a report, which also counts those past the list's limit.
    public static func report(in routes: JSONValue) -> ValidationReport {
        guard case .array(let list)? = routes["routes"] else { return ValidationReport() }
        var problems = ValidationReport()
        for (index, route) in list.enumerated() {
            let id = route["id"]?.stringValue.flatMap { $0.utf8.count <= 40 && RouteSpec.isValidID($0) ? "Route \"\($0)\"" : nil } ?? "This route"
            if let url = route["fallbackURL"]?.stringValue, let (range, kind) = refusal(url) {
                problems.append(ValidationProblem(.insecureFallback, at: JSONPath.root + "routes" + index + "fallbackURL",
                    "\(id): its fallback's host is \(kind) (\(range)); people without the app would be sent into their own machine or network, not to a page of yours. Use a public https address."))
            }
            // A preview's image is fetched by chat apps' crawlers: not into the network they run in.
            if let url = route["preview"]?["image"]?.stringValue, let (range, kind) = refusal(url) {
                problems.append(ValidationProblem(.insecureFallback, at: JSONPath.root + "routes" + index + "preview" + "image",
                    "\(id): its preview image's host is \(kind) (\(range)); a chat app's crawler would be sent into its own network. Use a public https address."))
            }
        }
        return problems
    }

    /// The range and kind of address `url`'s host names, when it is not a public one.
    static func refusal(_ url: String) -> (range: String, kind: String)? {
        guard let schemeEnd = url.range(of: "://") else { return nil }
        var authority = url[schemeEnd.upperBound...].prefix { $0 != "/" && $0 != "?" && $0 != "#" }
        if let at = authority.lastIndex(of: "@") { authority = authority[authority.index(after: at)...] }
        let host: String
        if authority.hasPrefix("["), let close = authority.firstIndex(of: "]") {
            host = String(authority[authority.index(after: authority.startIndex)..<close])
            guard let ip = IPAddress(host) else { return ("an IPv6 literal", "not an address") }
            return verdict(ip)
        }
        host = (authority.split(separator: ":", maxSplits: 1, omittingEmptySubsequences: false).first.map(String.init) ?? "").lowercased()
        let name = host.hasSuffix(".") ? String(host.dropLast()) : host
        if name == "localhost" || name.hasSuffix(".localhost") { return ("localhost", "a loopback name") }
        // inet_aton reads every spelling of an IPv4 address curl and browsers accept.
        var address = in_addr()
        guard !name.isEmpty, inet_aton(name, &address) != 0, let ip = IPAddress(bytes: withUnsafeBytes(of: &address) { Array($0) }) else { return nil }
        return verdict(ip)
    }

    private static func verdict(_ ip: IPAddress) -> (range: String, kind: String)? {
        if case .refused(let range, let kind) = AddressPolicy.judge(ip) { return (range, kind) }
        return nil
    }
}
