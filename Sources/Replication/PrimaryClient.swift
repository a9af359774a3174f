import HTTPClient

/// A follower's HTTP client for its primary, through `HTTPClient` (system libcurl): one
/// blocking request per call, `http` or `https`, the bearer token of `--follow-token`,
/// no proxy whatever the environment says (the primary is an address the operator gave),
/// no redirects, connect and total timeouts, and the body capped.
public struct PrimaryClient: Sendable {
    public struct Response: Sendable {
        public var status: Int
        public var body: [UInt8]
    }

    /// The primary's base URL, without a trailing slash.
    public let base: String
    let token: String
    /// Milliseconds.
    public var connectTimeout = 2_000
    public var totalTimeout = 30_000
    /// The largest body taken: a routes document or schema is at most 16 MB by default.
    public var maximumBody = 256 << 20

    public init(base: String, token: String) {
        self.base = base.hasSuffix("/") ? String(base.dropLast()) : base
        self.token = token
    }

    public func get(_ path: String) -> Result<Response, ReplicationError> {
        perform(path, body: nil)
    }

    public func post(_ path: String, body: [UInt8], contentType: String) -> Result<Response, ReplicationError> {
        perform(path, body: (body, contentType))
    }

    private func perform(_ path: String, body: (bytes: [UInt8], type: String)?) -> Result<Response, ReplicationError> {
        let url = base + path
        var request = HTTPClientRequest(url: url, maximumBody: maximumBody)
        request.protocols = "http,https"
        request.headers = token.isEmpty ? [] : ["Authorization: Bearer " + token]
        request.post = body.map { ($0.bytes, $0.type) }
        request.connectTimeout = connectTimeout
        request.totalTimeout = totalTimeout
        request.userAgent = "Waymark-Follower/1"
        switch HTTPClient.perform(request) {
        case .success(let response): return .success(Response(status: response.status, body: response.body))
        case .failure(let error) where error.kind == .tooLarge:
            return .failure(ReplicationError("\(url): the answer is larger than \(maximumBody >> 20) MB"))
        case .failure(let error): return .failure(ReplicationError("\(url): \(error.detail)"))
        }
    }
}

/// Why the follower could not do what it tried, in words for `/readyz` and the log.
public struct ReplicationError: Error, Equatable, Sendable, CustomStringConvertible {
    public let message: String

    public init(_ message: String) { self.message = message }

    public var description: String { message }
}
