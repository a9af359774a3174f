import Foundation
import HTTPServer
import LinkChecks
import WaymarkAPI
import ManifestStore
import Replication
import Telemetry
import RouteEngine

/// One answer as a client on the wire sees it.
public struct Reply: Sendable {
    public let status: Int
    public let head: String
    public let body: [UInt8]

    /// The first field named `name` (case-insensitive), as sent.
    public subscript(_ name: String) -> String? {
        for line in head.split(separator: "\r\n").dropFirst() {
            guard let colon = line.firstIndex(of: ":") else { continue }
            if line[..<colon].lowercased() == name.lowercased() {
                return line[line.index(after: colon)...].trimmingCharacters(in: .whitespaces)
            }
        }
        return nil
    }

    /// A response as read off the wire: status line and fields, a blank line, the body.
    init(wire raw: [UInt8]) {
        guard let end = raw.firstRange(of: Array("\r\n\r\n".utf8)) else {
            self.init(status: 0, head: String(decoding: raw, as: UTF8.self), body: [])
            return
        }
        let headText = String(decoding: raw[..<end.lowerBound], as: UTF8.self)
        let status = headText.split(separator: " ").dropFirst().first.flatMap { Int($0) } ?? 0
        self.init(status: status, head: headText, body: Array(raw[end.upperBound...]))
    }

    init(status: Int, head: String, body: [UInt8]) {
        self.status = status
        self.head = head
        self.body = body
    }

    public var json: JSONValue { (try? JSONParser().parse(body)) ?? .null }
    public var errorCode: String? { json["error"]?["code"]?.stringValue }
    public var text: String { String(decoding: body, as: UTF8.self) }
}

/// `waymark serve` in-process: a scratch data directory (seeded from the storefront
/// example unless told not to), the API's router, and a token per scope. Over `.socket`
/// the router runs on a real HTTP server on loopback, port 0; over `.inProcess` requests
/// reach it without one (`InProcessClient`), for tables that need no socket. Stopped and
/// removed on deinit.
public final class LiveService {
    /// How requests reach the router.
    public enum Transport: Sendable {
        /// A real `HTTPServer` on a loopback port: timeouts, metrics and every wire detail.
        case socket
        /// The same bytes decoded and answered in-process: faster, for tables.
        case inProcess
    }

    public let path = NSTemporaryDirectory() + "waymark-live-\(UUID().uuidString)"
    public let store: ManifestStore
    public let telemetry: TelemetryStore
    /// The API whose router serves the requests.
    public let api: API
    /// Nil in-process.
    public let server: HTTPServer?
    private let client: InProcessClient?
    /// A token holding only that scope, named after it, with no rate limit.
    public private(set) var tokens: [Scope: String] = [:]
    /// A token with `manifest:read` and `routes:read`: what a tool reading builds and
    /// revisions both holds (the app's token has the first only).
    public private(set) var reader: String?
    /// On a follower: its replication, driven by the test (`syncOnce`, `forwardOnce`).
    public let follower: Follower?

    /// A follower of `primary` (`serve --follow`) when `following` is given: not seeded, its
    /// tokens are the primary's, and nothing runs until the test calls the follower.
    public init(publicReads: Bool = false, seed: Bool = true, maximumDocumentBytes: Int? = nil,
                telemetryOptions: TelemetryStore.Options = TelemetryStore.Options(), linkChecks: LinkCheckOptions? = nil,
                following primary: LiveService? = nil, maximumQueuedWork: Int? = nil,
                monotonicClock: (@Sendable () -> UInt64)? = nil, transport: Transport = .socket,
                configure: (inout API.Options) -> Void = { _ in }) throws {
        store = try ManifestStore.open(at: path).store
        var telemetryOptions = telemetryOptions
        telemetryOptions.forwarding = primary != nil
        telemetry = try TelemetryStore(directory: store.directory, options: telemetryOptions)
        if seed, primary == nil { try store.seedIfEmpty(from: Fixtures.path("manifests/storefront")) }
        let (store, telemetry) = (store, telemetry)
        let follower = primary.map { Follower(store: store, telemetry: telemetry, client: PrimaryClient(base: $0.url, token: $0.tokens[.replication]!)) }
        self.follower = follower
        var options = API.Options()
        options.follower = follower
        options.publicManifestReads = publicReads
        if let maximumDocumentBytes { options.maximumDocumentBytes = maximumDocumentBytes }
        options.linkChecks = linkChecks
        if let maximumQueuedWork { options.maximumQueuedWork = maximumQueuedWork }
        if let monotonicClock { options.monotonicClock = monotonicClock }
        configure(&options)
        var configuration = ServerConfiguration()
        configuration.hosts = ["127.0.0.1"]
        configuration.port = 0
        configuration.threads = 1
        configuration.accessLog = false
        let service = API(store: store, telemetry: telemetry, options: options)
        api = service
        let router = try service.router()
        switch transport {
        case .socket:
            let server = HTTPServer(configuration: configuration, router: router, metrics: service.httpMetrics)
            try server.start()
            (self.server, client) = (server, nil)
        case .inProcess:
            (server, client) = (nil, InProcessClient(router: router, limits: configuration.limits))
        }
        if let primary {
            (tokens, reader) = (primary.tokens, primary.reader)
        } else {
            reader = try store.tokens.create(name: "reader", scopes: [.manifestRead, .routesRead], rate: .unlimited, actor: "test").token
            // Unlimited: a test's burst of calls never meets a rate it is not about.
            for scope in Scope.allCases {
                tokens[scope] = try store.tokens.create(name: scope.rawValue, scopes: [scope], rate: .unlimited, actor: "test").token
            }
        }
    }

    deinit {
        api.stopScheduling()
        server?.shutdown()
        server?.wait()
        telemetry.close()
        try? FileManager.default.removeItem(atPath: path)
    }

    /// 0 in-process.
    public var port: UInt16 { server?.port ?? 0 }
    public var url: String { "http://127.0.0.1:\(port)" }

    /// One request on its own connection.
    /// `host`: the `Host` field (a link host to open a link, nil for none).
    public func call(_ method: String, _ target: String, token: String? = nil, host: String? = "waymark.test", headers: [(String, String)] = [],
                     body: String = "") -> Reply {
        call(method, target, token: token, host: host, headers: headers, bytes: Array(body.utf8))
    }

    public func call(_ method: String, _ target: String, token: String? = nil, host: String? = "waymark.test", headers: [(String, String)] = [],
                     bytes: [UInt8]) -> Reply {
        var head = "\(method) \(target) HTTP/1.1\r\n" + (host.map { "Host: \($0)\r\n" } ?? "") + "Connection: close\r\n"
        if let token { head += "Authorization: Bearer \(token)\r\n" }
        for (name, value) in headers { head += "\(name): \(value)\r\n" }
        // Bodies here are JSON unless a test says otherwise (telemetry takes nothing else).
        if !bytes.isEmpty, !headers.contains(where: { $0.0.lowercased() == "content-type" }) { head += "Content-Type: application/json\r\n" }
        if !bytes.isEmpty || method == "POST" || method == "PUT" { head += "Content-Length: \(bytes.count)\r\n" }
        let request = Array((head + "\r\n").utf8) + bytes
        if let client { return client.call(request) }
        guard let connection = try? LoopbackClient(port: port) else { return Reply(status: 0, head: "", body: []) }
        connection.send(bytes: request)
        return Reply(wire: connection.readAllBytes())
    }
}
