import HTTPClient
import Synchronization
#if canImport(Glibc)
import Glibc
#endif

/// How outbound checks may use the network. The defaults are for production; tests narrow
/// the timeouts and add loopback exceptions, CA files and address overrides.
public struct FetchOptions: Hashable, Sendable {
    public var policy = AddressPolicy()
    /// Milliseconds to set up TCP and TLS.
    public var connectTimeout = 3_000
    /// Milliseconds for the whole exchange, body included.
    public var totalTimeout = 8_000
    /// Abort when fewer than this many bytes a second arrive for `lowSpeedSeconds`.
    public var lowSpeedBytesPerSecond = 512
    public var lowSpeedSeconds = 3
    /// A PEM bundle of CAs to trust instead of the system's.
    public var caFile: String?
    /// curl's `CURLOPT_CONNECT_TO` entries, `HOST:PORT:CONNECT-HOST:CONNECT-PORT`: send a
    /// host's connections elsewhere (the address policy still judges where they go).
    public var connectTo: [String] = []
    /// curl's `CURLOPT_RESOLVE` entries, `HOST:PORT:ADDRESS`: answers in place of DNS.
    public var resolve: [String] = []
    public var userAgent = "Waymark-LinkCheck/1"

    public init() {}
}

/// One response, not followed further.
public struct FetchResponse: Hashable, Sendable {
    public var status: Int
    /// The `Content-Type` field as sent, if any.
    public var contentType: String?
    /// As much of the body as was asked for.
    public var body: [UInt8]
    /// For a 3xx with `Location`: the absolute URL it points to.
    public var redirect: String?
    /// The address the response came from.
    public var peer: String?

    /// `application/json` (parameters and case aside).
    public var mediaType: String? {
        guard let contentType else { return nil }
        let type = contentType.prefix { $0 != ";" }
        return String(type.drop { $0 == " " || $0 == "\t" }.reversed().drop { $0 == " " || $0 == "\t" }.reversed()).lowercased()
    }
}

/// Why a fetch produced no response, in words for the validation report.
public enum FetchFailure: Error, Hashable, Sendable {
    case notHTTPS(String)
    case invalidURL(String)
    /// The address and range only when the URL named the address itself: what a host name
    /// resolves to is never told (it would map the server's internal DNS for whoever
    /// submits routes).
    case refusedAddress(String?, range: String?, kind: String)
    case couldNotResolve(String)
    case couldNotConnect(String)
    case timedOut(String)
    case tls(String)
    case tooLarge(limit: Int)
    case failed(String)

    public var message: String {
        switch self {
        case .notHTTPS(let url): "\(url) is not an https:// address; only https is fetched"
        case .invalidURL(let detail): "the address is not a valid URL (\(detail))"
        case .refusedAddress(let address?, let range?, let kind):
            "it leads to \(address), \(kind) (\(range)); only public addresses are contacted"
        case .refusedAddress(_, _, let kind):
            "its host name leads to \(kind), not a public address (which address is not told); only public addresses are contacted"
        case .couldNotResolve(let detail): "its host name does not resolve (\(detail))"
        case .couldNotConnect(let detail): "the server could not be reached (\(detail))"
        case .timedOut(let detail): "the server answered too slowly or not at all (\(detail))"
        case .tls(let detail): "its TLS certificate or handshake failed (\(detail))"
        case .tooLarge(let limit): "the response is larger than \(limit / 1024) KB"
        case .failed(let detail): "the request failed (\(detail))"
        }
    }
}

/// One HTTPS GET through `HTTPClient` (system libcurl), safe to point at addresses chosen
/// by whoever submits routes: https only, no proxy whatever the environment says, no
/// redirects followed (callers follow them, checking each hop), every connection's address
/// judged by `AddressPolicy` before curl connects, the body capped, and connect, total and
/// low-speed timeouts. Blocking; thread-safe.
public struct HTTPSFetcher: Sendable {
    public let options: FetchOptions

    public init(options: FetchOptions = FetchOptions()) {
        self.options = options
    }

    /// GETs `url`. `maximumBody` bytes are kept; a longer body is a `.tooLarge` failure,
    /// unless `stopAtBody` is set, when the transfer ends as soon as the head has arrived.
    /// `timeout`: milliseconds for this fetch when less than the options' total.
    public func fetch(_ url: String, accept: String? = nil, maximumBody: Int, stopAtBody: Bool = false,
                      timeout: Int? = nil) -> Result<FetchResponse, FetchFailure> {
        guard url.lowercased().hasPrefix("https://") else { return .failure(.notHTTPS(url)) }
        guard url.utf8.allSatisfy({ $0 > 0x20 && $0 < 0x7F }) else { return .failure(.invalidURL("it contains spaces or non-ASCII bytes")) }
        var request = HTTPClientRequest(url: url, maximumBody: maximumBody)
        request.protocols = "https"
        request.headers = accept.map { ["Accept: " + $0] } ?? []
        request.connectTimeout = options.connectTimeout
        request.totalTimeout = max(1, min(timeout ?? options.totalTimeout, options.totalTimeout))
        request.lowSpeed = (options.lowSpeedBytesPerSecond, options.lowSpeedSeconds)
        request.userAgent = options.userAgent
        request.caFile = options.caFile
        request.resolve = options.resolve
        request.connectTo = options.connectTo
        request.stopAtBody = stopAtBody
        let refusal = Refusal()
        let policy = options.policy
        let literal = Self.namesAnAddress(url)
        request.admit = { peer in
            guard let bytes = peer.bytes, let ip = IPAddress(bytes: bytes) else {
                refusal.reason.withLock { $0 = .refusedAddress("an address of an unknown family", range: "-", kind: "not IPv4 or IPv6") }
                return false
            }
            let target = SocketAddress(ip: ip, port: peer.port)
            guard case .refused(let range, let kind) = policy.judge(target) else { return true }
            refusal.reason.withLock { $0 = literal ? .refusedAddress(target.description, range: range, kind: kind) : .refusedAddress(nil, range: nil, kind: kind) }
            return false
        }
        switch HTTPClient.perform(request) {
        case .success(let response):
            return .success(FetchResponse(status: response.status, contentType: response.contentType, body: response.body,
                                          redirect: response.redirect, peer: response.peer))
        case .failure(let error):
            if let refused = refusal.reason.withLock({ $0 }) { return .failure(refused) }
            switch error.kind {
            case .unsupportedProtocol: return .failure(.notHTTPS(error.detail))
            case .malformedURL: return .failure(.invalidURL(error.detail))
            case .couldNotResolve: return .failure(.couldNotResolve(error.detail))
            case .couldNotConnect: return .failure(.couldNotConnect(error.detail))
            case .timedOut: return .failure(.timedOut(error.detail))
            case .tls: return .failure(.tls(error.detail))
            case .tooLarge: return .failure(.tooLarge(limit: maximumBody))
            case .refusedAddress, .failed: return .failure(.failed(error.detail))
            }
        }
    }
}

extension HTTPSFetcher {
    /// Whether `url`'s host is an address rather than a name: an IPv6 literal in brackets,
    /// or any form `inet_aton` (and so curl) reads as IPv4 — `127.1`, `2130706433`,
    /// `0x7f000001`, `0177.0.0.1`.
    static func namesAnAddress(_ url: String) -> Bool {
        guard let schemeEnd = url.range(of: "://") else { return false }
        var authority = url[schemeEnd.upperBound...].prefix { $0 != "/" && $0 != "?" && $0 != "#" }
        if let at = authority.lastIndex(of: "@") { authority = authority[authority.index(after: at)...] }
        if authority.hasPrefix("[") { return true }
        let host = authority.split(separator: ":", maxSplits: 1, omittingEmptySubsequences: false).first.map(String.init) ?? ""
        var address = in_addr()
        return !host.isEmpty && inet_aton(host, &address) != 0
    }
}

/// Why the address policy refused a connection of one fetch, set from curl's callback.
private final class Refusal: Sendable {
    let reason = Mutex<FetchFailure?>(nil)
}
