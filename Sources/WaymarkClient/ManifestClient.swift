import Foundation
import RouteEngine

public struct ManifestClientConfiguration: Sendable {
    /// The Waymark server, e.g. `https://links.storefront.example`.
    public var server: URL
    /// This app build: the manifest must be for exactly it.
    public var build: AppBuild
    /// A `manifest:read` token, unless the server's reads are public.
    public var token: String?
    /// Where the last good manifest and the install id are kept: Application Support, never
    /// Caches (a purged cache would change the install's id, hence its cohort).
    public var cacheDirectory: URL
    /// A manifest the app ships, used when there is no good cached one.
    public var bundledManifest: URL?
    /// Waits between refreshes and after failures (default: every 15 minutes; 5 s doubling to 1 h).
    public var backoff = Backoff(interval: 15 * 60, minimum: 5, maximum: 60 * 60)
    /// A manifest body larger than this is refused unread, by its `Content-Length` or as it
    /// arrives (default 32 MiB): the client never holds more.
    public var maximumManifestBytes = 32 << 20
    /// The whole refresh's deadline, reading the last byte included (a server that drips a
    /// byte at a time does not hold it longer).
    public var requestTimeout: TimeInterval = 30
    /// The cohort sent with every fetch (`cohort=`, 0…99): by default this install's
    /// (`Cohort.of(installID:)`, the id kept in the cache directory); `.none` sends none
    /// (the stable revision during a rollout); `.fixed(n)` for tests and previews.
    public var cohort = CohortChoice.install
    /// Where the client's log messages go (`ClientLogMessage`); nil: nowhere.
    public var log: ClientLog?

    public enum CohortChoice: Hashable, Sendable {
        case install
        case none
        case fixed(Int)
    }

    public init(server: URL, build: AppBuild, token: String? = nil, cacheDirectory: URL, bundledManifest: URL? = nil) {
        self.server = server
        self.build = build
        self.token = token
        self.cacheDirectory = cacheDirectory
        self.bundledManifest = bundledManifest
    }
}

/// How one refresh ended. Only `updated` changes the table; everything else keeps it.
public enum RefreshOutcome: Hashable, Sendable {
    /// `200` with a good manifest of a newer revision: in use, and cached.
    case updated(revision: Int)
    /// `304`, or `200` with the revision already in use.
    case notModified
    /// `200` with an older revision than the one in use (a stale cache or replica): kept ours.
    case olderIgnored(served: Int, inUse: Int)
    /// `200` whose body is not a good manifest for this build (truncated, tampered, another build).
    case rejected(ManifestError)
    /// `401` or `403`: the token is wrong. Retried only after the long wait, never in a loop.
    case unauthorized(status: Int)
    /// Any other status (`404 unknownBuild`, `429`, `5xx`), with the server's `Retry-After`.
    case failed(status: Int, retryAfter: TimeInterval?)
    /// No answer: no network, a timeout, a refused connection.
    case unreachable(String)

    public var isFailure: Bool {
        switch self {
        case .updated, .notModified, .olderIgnored: false
        case .rejected, .unauthorized, .failed, .unreachable: true
        }
    }
}

/// Where the app's route table comes from: at launch the last good manifest from the cache
/// directory, else the bundled one, else the empty table; then `GET /v1/manifest` on a
/// schedule, conditional on the ETag. A manifest is decoded and checked before it replaces
/// anything, and written to the cache atomically; a bad one is reported and the last good
/// table stays. Revisions only move forward.
public actor ManifestClient: RouteTableSource {
    public let configuration: ManifestClientConfiguration
    let transport: any Transport
    private let random: @Sendable () -> Double
    private let report: @Sendable (RefreshOutcome) -> Void

    private var table: RouteTable?
    private var etag: String?
    /// Failures since the last success; the backoff's exponent.
    public private(set) var consecutiveFailures = 0
    public private(set) var lastOutcome: RefreshOutcome?
    private var lastRetryAfter: TimeInterval?

    public init(configuration: ManifestClientConfiguration, transport: any Transport = URLSessionTransport(),
                random: @escaping @Sendable () -> Double = { Double.random(in: 0..<1) },
                report: @escaping @Sendable (RefreshOutcome) -> Void = { _ in }) {
        self.configuration = configuration
        self.transport = transport
        self.random = random
        self.report = report
    }

    /// The cache file: `manifest-<platform>-<version>.cache` in the cache directory.
    public var cacheFile: URL {
        configuration.cacheDirectory.appendingPathComponent("manifest-\(configuration.build.platform)-\(configuration.build.version).cache")
    }

    /// The table in use, loaded at the first call (cache, bundled, empty). A cache that is
    /// there but cannot be read yet (before the device's first unlock) is not taken for none:
    /// the table meanwhile is the bundled or empty one, and the cache is read again, at most
    /// every `unreadableRetry` seconds, until it reads or a refresh brings a table.
    public func currentTable() -> RouteTable {
        if let table { return table }
        // A monotonic clock (a wall clock set back would pin the interim table); not
        // ProcessInfo.systemUptime, a boot-time API the App Store asks a reason for.
        let now = ContinuousClock.now
        if let interim, let since = interimSince, since.duration(to: now) < .milliseconds(Int64(unreadableRetry * 1_000)) { return interim }
        let (loaded, final) = loadAtLaunch()
        if final {
            table = loaded
            interim = nil
        } else {
            interim = loaded
            interimSince = now
        }
        return loaded
    }

    /// Whether the table in use is the stand-in for a cache that could not be read: read it
    /// once more now, and say if it is still shut.
    private func cacheStillShut() -> Bool {
        guard table == nil, interim != nil else { return false }
        interimSince = nil
        _ = currentTable()
        return table == nil
    }

    /// The table used while the cache cannot be read, and since when (a monotonic instant).
    private var interim: RouteTable?
    private var interimSince: ContinuousClock.Instant?
    /// The bundled manifest, decoded once (nil inside: none, or refused).
    private var bundledManifest: Manifest??
    /// Seconds between reads of a cache that could not be read (tests shorten it).
    var unreadableRetry: TimeInterval = 5

    /// Cache, else bundled, else empty; of a good cache and a good bundled manifest, the
    /// newer revision (an app update may ship a newer one than it cached). Not final when the
    /// cache could not be read.
    private func loadAtLaunch() -> (RouteTable, final: Bool) {
        var cached: (manifest: Manifest, etag: String?)?
        let contents = DurableFile.contents(cacheFile)
        if case .data(let data) = contents, let entry = CacheEntry(data),
           case .success(let manifest) = Manifest.decode(entry.manifest, for: configuration.build) {
            cached = (manifest, entry.etag)
        }
        if bundledManifest == nil {
            bundledManifest = .some(configuration.bundledManifest.flatMap(DurableFile.read).flatMap {
                try? Manifest.decode($0, for: configuration.build).get()
            })
        }
        let bundled = bundledManifest ?? nil
        if case .unreadable = contents {
            return (bundled.map { RouteTable(manifest: $0, origin: .bundled) } ?? .empty, false)
        }
        if let cached, cached.manifest.revision >= (bundled?.revision ?? 0) {
            etag = cached.etag
            return (RouteTable(manifest: cached.manifest, origin: .cache), true)
        }
        if let bundled { return (RouteTable(manifest: bundled, origin: .bundled), true) }
        return (.empty, true)
    }

    /// Calls that joined one in flight (tests watch it to know an overlap happened).
    private(set) var joins = 0
    /// The refresh in flight, which a refresh called meanwhile joins.
    private var inFlight: Task<RefreshOutcome, Never>?
    var refreshInFlight: Task<RefreshOutcome, Never>? { inFlight }
    /// Refreshes that have ended in this run, whatever their outcome.
    private(set) var refreshesEnded = 0

    /// Asks the server once. Never throws: every way it can end is an outcome. A refresh
    /// called while one is in flight (a foreground and a silent push at once) joins it and
    /// returns its outcome: one request, one answer, one write of the cache.
    @discardableResult
    public func refresh() async -> RefreshOutcome {
        if let inFlight {
            joins += 1
            return await inFlight.value
        }
        let task = Task { await self.fetch() }
        inFlight = task
        let outcome = await task.value
        inFlight = nil
        refreshesEnded += 1
        return outcome
    }

    /// One request and what its answer does. Everything read before the `await` may be
    /// stale after it (an actor is not a lock across a suspension): the answer is compared
    /// with the table in use once it has arrived, never with the one in use when it was asked.
    func fetch() async -> RefreshOutcome {
        if cacheStillShut() {
            // Not asked: an answer compared with the stand-in could replace a newer cached
            // revision (a cohort's candidate) for the run, and write over the cache.
            let outcome = RefreshOutcome.unreachable("The cached manifest cannot be read yet (before the first unlock); not refreshed.")
            return ended(outcome, retryAfter: nil)
        }
        let asked = currentTable()
        var components = URLComponents(url: configuration.server.appendingPathComponent("v1/manifest"), resolvingAgainstBaseURL: false)!
        components.queryItems = [URLQueryItem(name: "platform", value: configuration.build.platform),
                                 URLQueryItem(name: "version", value: configuration.build.version)]
        if let cohort = cohort() { components.queryItems!.append(URLQueryItem(name: "cohort", value: String(cohort))) }
        var headers = ["Accept": "application/json"]
        if let etag, asked.manifest != nil { headers["If-None-Match"] = etag }
        if let token = configuration.token { headers["Authorization"] = "Bearer \(token)" }
        let outcome: RefreshOutcome
        do {
            let response = try await transport.send(TransportRequest(url: components.url!, headers: headers, timeout: configuration.requestTimeout,
                                                                     maximumBodyBytes: configuration.maximumManifestBytes))
            outcome = accept(response, inUse: currentTable())
            lastRetryAfter = response.retryAfter()
        } catch TransportError.bodyTooLarge(let limit) {
            outcome = .rejected(ManifestError(.wrongFormat, "The manifest is over the \(limit) bytes allowed; it was not read."))
            lastRetryAfter = nil
        } catch {
            outcome = .unreachable(String(describing: error))
            lastRetryAfter = nil
        }
        return ended(outcome, retryAfter: lastRetryAfter)
    }

    /// A refresh's end: the backoff's count, the last outcome, the report and the log.
    private func ended(_ outcome: RefreshOutcome, retryAfter: TimeInterval?) -> RefreshOutcome {
        lastRetryAfter = retryAfter
        consecutiveFailures = outcome.isFailure ? consecutiveFailures + 1 : 0
        lastOutcome = outcome
        report(outcome)
        if let log = configuration.log { log(Self.message(for: outcome)) }
        return outcome
    }

    private func accept(_ response: TransportResponse, inUse: RouteTable) -> RefreshOutcome {
        switch response.status {
        case 304: return .notModified
        case 200: break
        case 401, 403: return .unauthorized(status: response.status)
        default: return .failed(status: response.status, retryAfter: response.retryAfter())
        }
        guard response.body.count <= configuration.maximumManifestBytes else {
            return .rejected(ManifestError(.wrongFormat, "The manifest is \(response.body.count) bytes, over the \(configuration.maximumManifestBytes) allowed."))
        }
        let manifest: Manifest
        switch Manifest.decode(response.body, for: configuration.build) {
        case .success(let decoded): manifest = decoded
        case .failure(let error): return .rejected(error)
        }
        if manifest.revision < inUse.revision { return .olderIgnored(served: manifest.revision, inUse: inUse.revision) }
        let newETag = response.headers["etag"].flatMap { $0.contains(where: \.isNewline) || $0.utf8.count > 256 ? nil : $0 }
        if manifest.revision == inUse.revision, manifest.routesSha256 == inUse.manifest?.routesSha256 {
            if newETag != etag, let newETag {
                etag = newETag
                try? DurableFile.write(CacheEntry(etag: newETag, manifest: response.body).data, to: cacheFile)
            }
            return .notModified
        }
        table = RouteTable(manifest: manifest, origin: .server)
        etag = newETag
        // In use even if the cache cannot be written (a full disk): the next launch reads the older one.
        try? DurableFile.write(CacheEntry(etag: newETag, manifest: response.body).data, to: cacheFile)
        return .updated(revision: manifest.revision)
    }

    private var installCohort: Int??

    /// The cohort to send, the install's worked out once.
    func cohort() -> Int? {
        switch configuration.cohort {
        case .none: return nil
        case .fixed(let value): return (0...99).contains(value) ? value : nil
        case .install:
            if let known = installCohort { return known }
            let value = Cohort.installID(in: configuration.cacheDirectory).map(Cohort.of(installID:))
            if value != nil { installCohort = .some(value) }  // an id that cannot be read yet is asked again
            return value
        }
    }

    /// How long to wait before the next refresh, after the last outcome.
    public func nextDelay() -> TimeInterval {
        switch lastOutcome {
        case .unauthorized?:
            // A wrong token does not heal by asking again soon: at least the interval.
            return max(configuration.backoff.interval, configuration.backoff.delay(failures: consecutiveFailures, random: random()))
        default:
            return configuration.backoff.delay(failures: consecutiveFailures, retryAfter: lastRetryAfter, random: random())
        }
    }

    /// Refreshes now and then on the schedule until the task is cancelled.
    public func run() async {
        while !Task.isCancelled {
            await refresh()
            await Sleep.seconds(nextDelay())
        }
    }
}

/// The cache file: `waymark-client-cache/1`, the ETag line, then the manifest's bytes as served.
struct CacheEntry {
    static let magic = "waymark-client-cache/1"
    var etag: String?
    var manifest: Data

    init(etag: String?, manifest: Data) {
        self.etag = etag
        self.manifest = manifest
    }

    init?(_ data: Data) {
        let bytes = [UInt8](data)
        guard let first = bytes.firstIndex(of: 0x0A), String(decoding: bytes[..<first], as: UTF8.self) == Self.magic,
              let second = bytes[(first + 1)...].firstIndex(of: 0x0A) else { return nil }
        let tag = String(decoding: bytes[(first + 1)..<second], as: UTF8.self)
        etag = tag.isEmpty ? nil : tag
        manifest = Data(bytes[(second + 1)...])
    }

    var data: Data {
        var data = Data((Self.magic + "\n" + (etag ?? "") + "\n").utf8)
        data.append(manifest)
        return data
    }
}
