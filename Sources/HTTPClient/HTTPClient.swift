import CCurl
#if canImport(Glibc)
import Glibc
#endif

/// One outbound HTTP request: what the link checks fetch and what a follower asks its
/// primary. Every request is bounded: allowed protocols, no proxy, no redirects followed,
/// timeouts, a body cap, and optionally a judge of every address curl is about to connect to.
public struct HTTPClientRequest: Sendable {
    public var url: String
    /// curl's protocol list for the request and any redirect it reports (`https`, `http,https`).
    public var protocols = "https"
    /// Extra header lines, `Name: value`.
    public var headers: [String] = []
    /// A POST body with its content type; nil is a GET.
    public var post: (body: [UInt8], contentType: String)?
    /// Milliseconds to set up TCP and TLS, and for the whole exchange.
    public var connectTimeout = 3_000
    public var totalTimeout = 8_000
    /// Abort when fewer than `bytesPerSecond` arrive for `seconds`.
    public var lowSpeed: (bytesPerSecond: Int, seconds: Int)?
    public var userAgent = "Waymark/1"
    /// A PEM bundle of CAs to trust instead of the system's.
    public var caFile: String?
    /// `CURLOPT_RESOLVE` (`HOST:PORT:ADDRESS`) and `CURLOPT_CONNECT_TO` entries.
    public var resolve: [String] = []
    public var connectTo: [String] = []
    /// The largest body kept; a longer one is `.tooLarge`.
    public var maximumBody: Int
    /// End the transfer as soon as the head has arrived (the body is not wanted).
    public var stopAtBody = false
    /// Called for every address curl is about to connect to (the first, redirects,
    /// retries, happy eyeballs); false refuses it and the request fails `.refusedAddress`.
    public var admit: (@Sendable (PeerAddress) -> Bool)?

    public init(url: String, maximumBody: Int) {
        self.url = url
        self.maximumBody = maximumBody
    }
}

/// An address curl is about to connect to: IPv4 (4 bytes) or IPv6 (16), and the port;
/// nil bytes for another family.
public struct PeerAddress: Hashable, Sendable {
    public let bytes: [UInt8]?
    public let port: UInt16
}

/// One response, not followed further.
public struct HTTPClientResponse: Hashable, Sendable {
    public var status: Int
    /// The `Content-Type` field as sent, if any.
    public var contentType: String?
    public var body: [UInt8]
    /// For a 3xx with `Location`: the absolute URL it points to.
    public var redirect: String?
    /// The address the response came from.
    public var peer: String?
}

/// Why a request produced no response: the kind a caller branches on, and curl's words.
public struct HTTPClientError: Error, Hashable, Sendable, CustomStringConvertible {
    public enum Kind: Hashable, Sendable {
        case unsupportedProtocol, malformedURL, couldNotResolve, couldNotConnect, timedOut, tls
        /// The body passed `maximumBody`.
        case tooLarge
        /// `admit` refused the address.
        case refusedAddress
        case failed
    }

    public let kind: Kind
    public let detail: String

    public var description: String { detail }
}

/// System libcurl, one blocking request per call on a fresh easy handle; thread-safe.
/// The one libcurl client: `curl_global_init` runs once, here, before any handle.
public enum HTTPClient {
    private static let globalInit: Void = { _ = curl_global_init(Int(CURL_GLOBAL_DEFAULT)) }()

    public static func perform(_ request: HTTPClientRequest) -> Result<HTTPClientResponse, HTTPClientError> {
        _ = globalInit
        guard let handle = curl_easy_init() else { return .failure(HTTPClientError(kind: .failed, detail: "curl_easy_init failed")) }
        defer { curl_easy_cleanup(handle) }
        let transfer = Transfer(request)
        var errorBuffer = [CChar](repeating: 0, count: Int(CURL_ERROR_SIZE) + 1)
        var lists: [UnsafeMutablePointer<curl_slist>?] = []
        defer { lists.forEach { curl_slist_free_all($0) } }
        func list(_ entries: [String]) -> UnsafeMutablePointer<curl_slist>? {
            var head: UnsafeMutablePointer<curl_slist>? = nil
            for entry in entries { head = curl_slist_append(head, entry) }
            lists.append(head)
            return head
        }
        let payload = request.post?.body ?? []
        let headers = request.headers + (request.post.map { ["Content-Type: " + $0.contentType] } ?? [])
        let code: CURLcode = withExtendedLifetime(transfer) {
            errorBuffer.withUnsafeMutableBufferPointer { errors in
                payload.withUnsafeBytes { bytes in
                    let context = Unmanaged.passUnretained(transfer).toOpaque()
                    var setup = [
                        wm_curl_setopt_string(handle, CURLOPT_URL, request.url),
                        wm_curl_setopt_string(handle, CURLOPT_PROTOCOLS_STR, request.protocols),
                        wm_curl_setopt_string(handle, CURLOPT_REDIR_PROTOCOLS_STR, request.protocols),
                        wm_curl_setopt_long(handle, CURLOPT_FOLLOWLOCATION, 0),
                        // An empty proxy overrides http_proxy / https_proxy / all_proxy, which
                        // would otherwise carry the request past the address check.
                        wm_curl_setopt_string(handle, CURLOPT_PROXY, ""),
                        wm_curl_setopt_long(handle, CURLOPT_NOSIGNAL, 1),
                        wm_curl_setopt_long(handle, CURLOPT_CONNECTTIMEOUT_MS, request.connectTimeout),
                        wm_curl_setopt_long(handle, CURLOPT_TIMEOUT_MS, request.totalTimeout),
                        wm_curl_setopt_string(handle, CURLOPT_USERAGENT, request.userAgent),
                        wm_curl_setopt_pointer(handle, CURLOPT_ERRORBUFFER, errors.baseAddress),
                        wm_curl_setopt_write(handle, CURLOPT_WRITEFUNCTION, writeBody),
                        wm_curl_setopt_pointer(handle, CURLOPT_WRITEDATA, context),
                    ]
                    if let lowSpeed = request.lowSpeed {
                        setup.append(wm_curl_setopt_long(handle, CURLOPT_LOW_SPEED_LIMIT, lowSpeed.bytesPerSecond))
                        setup.append(wm_curl_setopt_long(handle, CURLOPT_LOW_SPEED_TIME, lowSpeed.seconds))
                    }
                    if request.admit != nil {
                        setup.append(wm_curl_setopt_opensocket(handle, openSocket))
                        setup.append(wm_curl_setopt_pointer(handle, CURLOPT_OPENSOCKETDATA, context))
                    }
                    if !request.stopAtBody { setup.append(wm_curl_setopt_long(handle, CURLOPT_MAXFILESIZE, request.maximumBody)) }
                    if let caFile = request.caFile { setup.append(wm_curl_setopt_string(handle, CURLOPT_CAINFO, caFile)) }
                    if !headers.isEmpty { setup.append(wm_curl_setopt_slist(handle, CURLOPT_HTTPHEADER, list(headers))) }
                    if !request.resolve.isEmpty { setup.append(wm_curl_setopt_slist(handle, CURLOPT_RESOLVE, list(request.resolve))) }
                    if !request.connectTo.isEmpty { setup.append(wm_curl_setopt_slist(handle, CURLOPT_CONNECT_TO, list(request.connectTo))) }
                    if request.post != nil {
                        setup.append(wm_curl_setopt_long(handle, CURLOPT_POST, 1))
                        setup.append(wm_curl_setopt_long(handle, CURLOPT_POSTFIELDSIZE, payload.count))
                        setup.append(wm_curl_setopt_pointer(handle, CURLOPT_POSTFIELDS, UnsafeMutableRawPointer(mutating: bytes.baseAddress)))
                    }
                    if let failed = setup.first(where: { $0 != CURLE_OK }) { return failed }
                    return curl_easy_perform(handle)
                }
            }
        }
        if code != CURLE_OK, !(code == CURLE_WRITE_ERROR && transfer.stoppedEarly) {
            let written = String(decoding: errorBuffer.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
            let detail = written.isEmpty ? String(cString: curl_easy_strerror(code)) : written
            return .failure(HTTPClientError(kind: kind(code, transfer), detail: detail))
        }
        var status = 0
        wm_curl_getinfo_long(handle, CURLINFO_RESPONSE_CODE, &status)
        return .success(HTTPClientResponse(status: status, contentType: info(handle, CURLINFO_CONTENT_TYPE), body: transfer.body,
                                           redirect: (300..<400).contains(status) ? info(handle, CURLINFO_REDIRECT_URL) : nil,
                                           peer: info(handle, CURLINFO_PRIMARY_IP)))
    }

    private static func info(_ handle: UnsafeMutableRawPointer, _ what: CURLINFO) -> String? {
        var value: UnsafeMutablePointer<CChar>? = nil
        guard wm_curl_getinfo_string(handle, what, &value) == CURLE_OK, let value else { return nil }
        return String(cString: value)
    }

    private static func kind(_ code: CURLcode, _ transfer: Transfer) -> HTTPClientError.Kind {
        if transfer.refused { return .refusedAddress }
        switch code {
        case CURLE_UNSUPPORTED_PROTOCOL: return .unsupportedProtocol
        case CURLE_URL_MALFORMAT: return .malformedURL
        case CURLE_COULDNT_RESOLVE_HOST: return .couldNotResolve
        case CURLE_COULDNT_CONNECT: return .couldNotConnect
        case CURLE_OPERATION_TIMEDOUT: return .timedOut
        case CURLE_WRITE_ERROR where transfer.overflowed, CURLE_FILESIZE_EXCEEDED: return .tooLarge
        case CURLE_SSL_CONNECT_ERROR, CURLE_PEER_FAILED_VERIFICATION, CURLE_SSL_CERTPROBLEM, CURLE_SSL_CIPHER,
             CURLE_SSL_CACERT_BADFILE, CURLE_SSL_ISSUER_ERROR, CURLE_SSL_PINNEDPUBKEYNOTMATCH, CURLE_SSL_INVALIDCERTSTATUS:
            return .tls
        default: return .failed
        }
    }
}

/// What the callbacks of one transfer share: reached through curl's `*DATA` pointers.
private final class Transfer {
    let maximumBody: Int
    let stopAtBody: Bool
    let admit: (@Sendable (PeerAddress) -> Bool)?
    var body: [UInt8] = []
    var overflowed = false
    var stoppedEarly = false
    var refused = false

    init(_ request: HTTPClientRequest) {
        maximumBody = request.maximumBody
        stopAtBody = request.stopAtBody
        admit = request.admit
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
    guard let address else {
        transfer.refused = true
        return CURL_SOCKET_BAD
    }
    if let admit = transfer.admit, !admit(peerAddress(address)) {
        transfer.refused = true
        return CURL_SOCKET_BAD
    }
    let descriptor = socket(address.pointee.family, address.pointee.socktype | Int32(SOCK_CLOEXEC.rawValue), address.pointee.protocol)
    return descriptor < 0 ? CURL_SOCKET_BAD : descriptor
}

private func peerAddress(_ address: UnsafeMutablePointer<curl_sockaddr>) -> PeerAddress {
    let raw = UnsafeMutableRawPointer(address) + MemoryLayout<curl_sockaddr>.offset(of: \curl_sockaddr.addr)!
    let length = Int(address.pointee.addrlen)
    switch address.pointee.family {
    case AF_INET where length >= MemoryLayout<sockaddr_in>.size:
        let v4 = raw.loadUnaligned(as: sockaddr_in.self)
        var bytes = v4.sin_addr
        return PeerAddress(bytes: withUnsafeBytes(of: &bytes) { Array($0) }, port: UInt16(bigEndian: v4.sin_port))
    case AF_INET6 where length >= MemoryLayout<sockaddr_in6>.size:
        let v6 = raw.loadUnaligned(as: sockaddr_in6.self)
        var bytes = v6.sin6_addr
        return PeerAddress(bytes: withUnsafeBytes(of: &bytes) { Array($0) }, port: UInt16(bigEndian: v6.sin6_port))
    default:
        return PeerAddress(bytes: nil, port: 0)
    }
}
