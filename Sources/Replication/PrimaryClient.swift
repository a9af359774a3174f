import CCurl
import Glibc

/// A follower's HTTP client for its primary, through system libcurl: one blocking request
/// per call on a fresh easy handle, `http` or `https`, the bearer token of `--follow-token`,
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
        _ = Self.globalInit
        self.base = base.hasSuffix("/") ? String(base.dropLast()) : base
        self.token = token
    }

    private static let globalInit: Void = { _ = curl_global_init(Int(CURL_GLOBAL_DEFAULT)) }()

    public func get(_ path: String) -> Result<Response, ReplicationError> {
        perform(path, body: nil)
    }

    public func post(_ path: String, body: [UInt8], contentType: String) -> Result<Response, ReplicationError> {
        perform(path, body: (body, contentType))
    }

    private func perform(_ path: String, body: (bytes: [UInt8], type: String)?) -> Result<Response, ReplicationError> {
        let url = base + path
        guard let handle = curl_easy_init() else { return .failure(ReplicationError("curl_easy_init failed")) }
        defer { curl_easy_cleanup(handle) }
        let sink = Sink(limit: maximumBody)
        var headers: UnsafeMutablePointer<curl_slist>? = token.isEmpty ? nil : curl_slist_append(nil, "Authorization: Bearer " + token)
        if let body { headers = curl_slist_append(headers, "Content-Type: " + body.type) }
        defer { curl_slist_free_all(headers) }
        var errorBuffer = [CChar](repeating: 0, count: Int(CURL_ERROR_SIZE) + 1)
        let payload = body?.bytes ?? []
        let code: CURLcode = withExtendedLifetime(sink) {
            errorBuffer.withUnsafeMutableBufferPointer { errors in
                payload.withUnsafeBytes { bytes in
                    let context = Unmanaged.passUnretained(sink).toOpaque()
                    var setup = [
                        wm_curl_setopt_string(handle, CURLOPT_URL, url),
                        wm_curl_setopt_string(handle, CURLOPT_PROTOCOLS_STR, "http,https"),
                        wm_curl_setopt_long(handle, CURLOPT_FOLLOWLOCATION, 0),
                        wm_curl_setopt_string(handle, CURLOPT_PROXY, ""),
                        wm_curl_setopt_long(handle, CURLOPT_NOSIGNAL, 1),
                        wm_curl_setopt_long(handle, CURLOPT_CONNECTTIMEOUT_MS, connectTimeout),
                        wm_curl_setopt_long(handle, CURLOPT_TIMEOUT_MS, totalTimeout),
                        wm_curl_setopt_string(handle, CURLOPT_USERAGENT, "Waymark-Follower/1"),
                        wm_curl_setopt_slist(handle, CURLOPT_HTTPHEADER, headers),
                        wm_curl_setopt_pointer(handle, CURLOPT_ERRORBUFFER, errors.baseAddress),
                        wm_curl_setopt_write(handle, CURLOPT_WRITEFUNCTION, collect),
                        wm_curl_setopt_pointer(handle, CURLOPT_WRITEDATA, context),
                    ]
                    if body != nil {
                        setup.append(wm_curl_setopt_long(handle, CURLOPT_POST, 1))
                        setup.append(wm_curl_setopt_long(handle, CURLOPT_POSTFIELDSIZE, payload.count))
                        setup.append(wm_curl_setopt_pointer(handle, CURLOPT_POSTFIELDS, UnsafeMutableRawPointer(mutating: bytes.baseAddress)))
                    }
                    if let failed = setup.first(where: { $0 != CURLE_OK }) { return failed }
                    return curl_easy_perform(handle)
                }
            }
        }
        guard code == CURLE_OK else {
            let written = String(decoding: errorBuffer.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
            let detail = sink.overflowed ? "the answer is larger than \(maximumBody >> 20) MB"
                : written.isEmpty ? String(cString: curl_easy_strerror(code)) : written
            return .failure(ReplicationError("\(url): \(detail)"))
        }
        var status = 0
        wm_curl_getinfo_long(handle, CURLINFO_RESPONSE_CODE, &status)
        return .success(Response(status: status, body: sink.body))
    }
}

/// Why the follower could not do what it tried, in words for `/readyz` and the log.
public struct ReplicationError: Error, Equatable, Sendable, CustomStringConvertible {
    public let message: String

    public init(_ message: String) { self.message = message }

    public var description: String { message }
}

private final class Sink {
    let limit: Int
    var body: [UInt8] = []
    var overflowed = false

    init(limit: Int) { self.limit = limit }
}

private let collect: curl_write_callback = { data, size, count, context in
    let sink = Unmanaged<Sink>.fromOpaque(context!).takeUnretainedValue()
    let length = size * count
    guard sink.body.count + length <= sink.limit else {
        sink.overflowed = true
        return 0
    }
    if let data, length > 0 {
        data.withMemoryRebound(to: UInt8.self, capacity: length) { sink.body.append(contentsOf: UnsafeBufferPointer(start: $0, count: length)) }
    }
    return length
}
