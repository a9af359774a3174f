/// Whether a route's fallback URL works for someone without the app: an https page that
/// answers 2xx, directly or through at most three redirects that all stay https.
public struct FallbackProbe: Sendable {
    public static let maximumRedirects = 3
    public let fetcher: HTTPSFetcher

    public init(fetcher: HTTPSFetcher) {
        self.fetcher = fetcher
    }

    public enum Verdict: Hashable, Sendable {
        /// The final status, and the URLs redirected to on the way.
        case reachable(status: Int, redirects: [String])
        /// Why not, in words that complete "The fallback … is unreachable: ".
        case unreachable(String)
    }

    /// Each hop is a fetch of its own, so every address on the way is judged, and only the
    /// head is read: the page's body does not matter. All hops together get the fetcher's
    /// total timeout, not one each.
    public func check(_ url: String) -> Verdict {
        var current = url
        var redirects: [String] = []
        let deadline = ContinuousClock.now + .milliseconds(fetcher.options.totalTimeout)
        while true {
            let left = deadline - ContinuousClock.now
            let milliseconds = Int(left.components.seconds * 1_000 + left.components.attoseconds / 1_000_000_000_000_000)
            guard milliseconds > 0 else { return .unreachable("it redirects to \(current), and the time allowed ran out on the way") }
            let response: FetchResponse
            switch fetcher.fetch(current, accept: "text/html,*/*;q=0.8", maximumBody: 0, stopAtBody: true, timeout: milliseconds) {
            case .failure(let failure):
                return .unreachable(redirects.isEmpty ? failure.message : "it redirects to \(current), where \(failure.message)")
            case .success(let value): response = value
            }
            switch response.status {
            case 200..<300:
                return .reachable(status: response.status, redirects: redirects)
            case 300..<400:
                guard let next = response.redirect else { return .unreachable("it answers \(response.status) without saying where to go") }
                guard redirects.count < Self.maximumRedirects else {
                    return .unreachable("it redirects more than \(Self.maximumRedirects) times (\(([url] + redirects).joined(separator: " → ")) → …)")
                }
                guard next.lowercased().hasPrefix("https://") else {
                    return .unreachable("it redirects to \(next), which is not https")
                }
                redirects.append(next)
                current = next
            default:
                let place = redirects.isEmpty ? "it" : "\(current), where it redirects,"
                return .unreachable("\(place) answers \(response.status)\(Self.statusName(response.status).map { " (\($0))" } ?? "")")
            }
        }
    }

    static func statusName(_ status: Int) -> String? {
        [400: "Bad Request", 401: "Unauthorized", 403: "Forbidden", 404: "Not Found", 410: "Gone", 429: "Too Many Requests",
         500: "Internal Server Error", 502: "Bad Gateway", 503: "Service Unavailable", 504: "Gateway Timeout"][status]
    }
}
