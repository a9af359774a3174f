import CCurl
import Glibc

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
    case refusedAddress(String, range: String, kind: String)
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
        case .refusedAddress(let address, let range, let kind):
            "it leads to \(address), \(kind) (\(range)); only public addresses are contacted"
        case .couldNotResolve(let detail): "its host name does not resolve (\(detail))"
        case .couldNotConnect(let detail): "the server could not be reached (\(detail))"
        case .timedOut(let detail): "the server answered too slowly or not at all (\(detail))"
        case .tls(let detail): "its TLS certificate or handshake failed (\(detail))"
        case .tooLarge(let limit): "the response is larger than \(limit / 1024) KB"
        case .failed(let detail): "the request failed (\(detail))"
        }
    }
}

/// One HTTPS GET through system libcurl, safe to point at addresses chosen by whoever
/// submits routes: https only, no proxy whatever the environment says, no redirects
/// followed (callers follow them, checking each hop), every connection's address judged
/// by `AddressPolicy` in curl's open-socket callback, the body capped in the write
/// callback, and connect, total and low-speed timeouts. Blocking; thread-safe.
public struct HTTPSFetcher: Sendable {
    public let options: FetchOptions

    public init(options: FetchOptions = FetchOptions()) {
        _ = Self.globalInit
        self.options = options
    }

    /// curl_global_init is not thread-safe: once, before any handle.
    private static let globalInit: Void = { _ = curl_global_init(Int(CURL_GLOBAL_DEFAULT)) }()

    /// GETs `url`. `maximumBody` bytes are kept; a longer body is a `.tooLarge` failure,
    /// unless `stopAtBody` is set, when the transfer ends as soon as the head has arrived.
    /// `timeout`: milliseconds for this fetch when less than the options' total.
    public func fetch(_ url: String, accept: String? = nil, maximumBody: Int, stopAtBody: Bool = false,
                      timeout: Int? = nil) -> Result<FetchResponse, FetchFailure> {
        let timeout = max(1, min(timeout ?? options.totalTimeout, options.totalTimeout))
        guard url.lowercased().hasPrefix("https://") else { return .failure(.notHTTPS(url)) }
        guard url.utf8.allSatisfy({ $0 > 0x20 && $0 < 0x7F }) else { return .failure(.invalidURL("it contains spaces or non-ASCII bytes")) }
        guard let handle = curl_easy_init() else { return .failure(.failed("curl_easy_init failed")) }
        defer { curl_easy_cleanup(handle) }
        let transfer = Transfer(policy: options.policy, maximumBody: maximumBody, stopAtBody: stopAtBody)
        var errorBuffer = [CChar](repeating: 0, count: Int(CURL_ERROR_SIZE) + 1)
        var lists: [UnsafeMutablePointer<curl_slist>?] = []
        defer { lists.forEach { curl_slist_free_all($0) } }
        func list(_ entries: [String]) -> UnsafeMutablePointer<curl_slist>? {
            var head: UnsafeMutablePointer<curl_slist>? = nil
            for entry in entries { head = curl_slist_append(head, entry) }
            lists.append(head)
            return head
        }

        let code: CURLcode = withExtendedLifetime(transfer) {
            errorBuffer.withUnsafeMutableBufferPointer { errors in
                let context = Unmanaged.passUnretained(transfer).toOpaque()
                var setup = [
                    wm_curl_setopt_string(handle, CURLOPT_URL, url),
                    wm_curl_setopt_string(handle, CURLOPT_PROTOCOLS_STR, "https"),
                    wm_curl_setopt_string(handle, CURLOPT_REDIR_PROTOCOLS_STR, "https"),
                    wm_curl_setopt_long(handle, CURLOPT_FOLLOWLOCATION, 0),
                    // An empty proxy overrides http_proxy / https_proxy / all_proxy, which
                    // would otherwise carry the request past the address check.
                    wm_curl_setopt_string(handle, CURLOPT_PROXY, ""),
                    wm_curl_setopt_long(handle, CURLOPT_NOSIGNAL, 1),
                    wm_curl_setopt_long(handle, CURLOPT_CONNECTTIMEOUT_MS, options.connectTimeout),
                    wm_curl_setopt_long(handle, CURLOPT_TIMEOUT_MS, timeout),
                    wm_curl_setopt_long(handle, CURLOPT_LOW_SPEED_LIMIT, options.lowSpeedBytesPerSecond),
                    wm_curl_setopt_long(handle, CURLOPT_LOW_SPEED_TIME, options.lowSpeedSeconds),
                    wm_curl_setopt_string(handle, CURLOPT_USERAGENT, options.userAgent),
                    wm_curl_setopt_pointer(handle, CURLOPT_ERRORBUFFER, errors.baseAddress),
                    wm_curl_setopt_opensocket(handle, openSocket),
                    wm_curl_setopt_pointer(handle, CURLOPT_OPENSOCKETDATA, context),
                    wm_curl_setopt_write(handle, CURLOPT_WRITEFUNCTION, writeBody),
                    wm_curl_setopt_pointer(handle, CURLOPT_WRITEDATA, context),
                ]
                if !stopAtBody { setup.append(wm_curl_setopt_long(handle, CURLOPT_MAXFILESIZE, maximumBody)) }
                if let caFile = options.caFile { setup.append(wm_curl_setopt_string(handle, CURLOPT_CAINFO, caFile)) }
                if let accept { setup.append(wm_curl_setopt_slist(handle, CURLOPT_HTTPHEADER, list(["Accept: " + accept]))) }
                if !options.resolve.isEmpty { setup.append(wm_curl_setopt_slist(handle, CURLOPT_RESOLVE, list(options.resolve))) }
                if !options.connectTo.isEmpty { setup.append(wm_curl_setopt_slist(handle, CURLOPT_CONNECT_TO, list(options.connectTo))) }
                if let failed = setup.first(where: { $0 != CURLE_OK }) { return failed }
                return curl_easy_perform(handle)
            }
        }
        let written = String(decoding: errorBuffer.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
        let detail = written.isEmpty ? String(cString: curl_easy_strerror(code)) : written
        if code != CURLE_OK, !(code == CURLE_WRITE_ERROR && transfer.stoppedEarly) {
            return .failure(failure(code, detail: detail, transfer: transfer))
        }
        var status = 0
        wm_curl_getinfo_long(handle, CURLINFO_RESPONSE_CODE, &status)
        return .success(FetchResponse(status: status, contentType: info(handle, CURLINFO_CONTENT_TYPE), body: transfer.body,
                                      redirect: (300..<400).contains(status) ? info(handle, CURLINFO_REDIRECT_URL) : nil,
                                      peer: info(handle, CURLINFO_PRIMARY_IP)))
    }

    private func info(_ handle: UnsafeMutableRawPointer, _ what: CURLINFO) -> String? {
        var value: UnsafeMutablePointer<CChar>? = nil
        guard wm_curl_getinfo_string(handle, what, &value) == CURLE_OK, let value else { return nil }
        return String(cString: value)
    }

    private func failure(_ code: CURLcode, detail: String, transfer: Transfer) -> FetchFailure {
        if let refused = transfer.refused { return refused }
        switch code {
        case CURLE_UNSUPPORTED_PROTOCOL: return .notHTTPS(detail)
        case CURLE_URL_MALFORMAT: return .invalidURL(detail)
        case CURLE_COULDNT_RESOLVE_HOST: return .couldNotResolve(detail)
        case CURLE_COULDNT_CONNECT: return .couldNotConnect(detail)
        case CURLE_OPERATION_TIMEDOUT: return .timedOut(detail)
        case CURLE_WRITE_ERROR where transfer.overflowed, CURLE_FILESIZE_EXCEEDED: return .tooLarge(limit: transfer.maximumBody)
        case CURLE_SSL_CONNECT_ERROR, CURLE_PEER_FAILED_VERIFICATION, CURLE_SSL_CERTPROBLEM, CURLE_SSL_CIPHER,
             CURLE_SSL_CACERT_BADFILE, CURLE_SSL_ISSUER_ERROR, CURLE_SSL_PINNEDPUBKEYNOTMATCH, CURLE_SSL_INVALIDCERTSTATUS:
            return .tls(detail)
        default: return .failed(detail)
        }
    }
}

/// What the callbacks of one transfer share: reached through curl's `*DATA` pointers.
private final class Transfer {
    let policy: AddressPolicy
    let maximumBody: Int
    let stopAtBody: Bool
    var body: [UInt8] = []
    var overflowed = false
    var stoppedEarly = false
    var refused: FetchFailure?

    init(policy: AddressPolicy, maximumBody: Int, stopAtBody: Bool) {
        self.policy = policy
        self.maximumBody = maximumBody
        self.stopAtBody = stopAtBody
    }
}

/// `CURLOPT_WRITEFUNCTION`: keep the body up to its limit; returning less than was given
/// ends the transfer (CURLE_WRITE_ERROR), which is how a chunked body without end stops.
private let writeBody: curl_write_callback = { data, size, count, context in
    let transfer = Unmanaged<Transfer>.fromOpaque(context!).takeUnretainedValue()
    let length = size * count
    if transfer.stopAtBody {
        transfer.stoppedEarly = true
        return 0
    }
    guard transfer.body.count + length <= transfer.maximumBody else {
        transfer.overflowed = true
        return 0
    }
    if let data, length > 0 {
        data.withMemoryRebound(to: UInt8.self, capacity: length) { transfer.body.append(contentsOf: UnsafeBufferPointer(start: $0, count: length)) }
    }
    return length
}

/// `CURLOPT_OPENSOCKETFUNCTION`: curl's last step before `connect`, for the first address
/// and every redirect, retry and happy-eyeballs attempt alike. The address is judged here.
private let openSocket: curl_opensocket_callback = { context, _, address in
    let transfer = Unmanaged<Transfer>.fromOpaque(context!).takeUnretainedValue()
    guard let address, let target = socketAddress(address) else {
        transfer.refused = .refusedAddress("an address of an unknown family", range: "-", kind: "not IPv4 or IPv6")
        return CURL_SOCKET_BAD
    }
    if case .refused(let range, let kind) = transfer.policy.judge(target) {
        transfer.refused = .refusedAddress(target.description, range: range, kind: kind)
        return CURL_SOCKET_BAD
    }
    let descriptor = socket(address.pointee.family, address.pointee.socktype | Int32(SOCK_CLOEXEC.rawValue), address.pointee.protocol)
    return descriptor < 0 ? CURL_SOCKET_BAD : descriptor
}

private func socketAddress(_ address: UnsafeMutablePointer<curl_sockaddr>) -> SocketAddress? {
    let raw = UnsafeMutableRawPointer(address) + MemoryLayout<curl_sockaddr>.offset(of: \curl_sockaddr.addr)!
    let length = Int(address.pointee.addrlen)
    switch address.pointee.family {
    case AF_INET where length >= MemoryLayout<sockaddr_in>.size:
        let v4 = raw.loadUnaligned(as: sockaddr_in.self)
        var bytes = v4.sin_addr
        guard let ip = IPAddress(bytes: withUnsafeBytes(of: &bytes) { Array($0) }) else { return nil }
        return SocketAddress(ip: ip, port: UInt16(bigEndian: v4.sin_port))
    case AF_INET6 where length >= MemoryLayout<sockaddr_in6>.size:
        let v6 = raw.loadUnaligned(as: sockaddr_in6.self)
        var bytes = v6.sin6_addr
        guard let ip = IPAddress(bytes: withUnsafeBytes(of: &bytes) { Array($0) }) else { return nil }
        return SocketAddress(ip: ip, port: UInt16(bigEndian: v6.sin6_port))
    default:
        return nil
    }
}
