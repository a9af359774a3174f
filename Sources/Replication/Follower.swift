import Foundation
import RouteEngine
import ManifestStore
import Synchronization
import Telemetry

/// `waymark serve --follow URL`: a read replica of a primary. Every `interval` it compares
/// the primary's replication state with its own store and fetches what differs: schemas,
/// then revisions in order, then the tokens file. Every record is checked (its SHA-256
/// against its header and the primary's list) before it is stored durably and served, so
/// `GET /v1/manifest` answers with the primary's bytes and ETag. When the primary cannot
/// be reached it keeps serving the last good revision and says so (`status`).
///
/// Telemetry posted here is made durable here (`TelemetryStore` with `forwarding`), and a
/// second thread forwards it to the primary as counts: it seals what is pending into a
/// `Forward` (durable in the outbox first), posts it until the primary answers `200`, then
/// records the acknowledgement. The primary counts each `(node, through)` once, so a
/// forward repeated after a crash or a lost answer is never counted twice.
public final class Follower: Sendable {
    public struct Options: Sendable {
        /// Seconds between polls of the primary, and between forwards.
        public var interval: Double = 2
        public init() {}
    }

    /// What `/readyz` and `/metrics` report.
    public struct Status: Sendable {
        public var primary: String
        /// The last time the whole state matched the primary's.
        public var lastSync: Date?
        /// The primary's newest revision when last seen.
        public var primaryRevision: Int?
        /// Why the last poll failed; nil after a good one.
        public var lastError: String?
        /// Polls that failed since start.
        public var syncFailures: UInt64 = 0
        /// The primary's history disagrees with this store's: nothing more is mirrored.
        public var diverged = false
        public var lastForward: Date?
        public var forwardError: String?
        public var forwardFailures: UInt64 = 0
        public var recordsMirrored: UInt64 = 0

        /// Whether the last poll reached the primary.
        public var primaryReachable: Bool { lastError == nil && lastSync != nil }
    }

    public let store: ManifestStore
    public let telemetry: TelemetryStore
    public let client: PrimaryClient
    public let options: Options
    private let state: Mutex<Status>
    private let stopping = Atomic<Bool>(false)
    private let wake = DispatchSemaphore(value: 0)
    private let finished = DispatchSemaphore(value: 0)
    private static let actor = "follower"

    public init(store: ManifestStore, telemetry: TelemetryStore, client: PrimaryClient, options: Options = Options()) {
        self.store = store
        self.telemetry = telemetry
        self.client = client
        self.options = options
        state = Mutex(Status(primary: client.base))
    }

    public var status: Status { state.withLock { $0 } }

    /// Starts polling and forwarding, each on a thread of its own.
    public func start() {
        let loops: [(String, @Sendable () -> Void)] = [("waymark-follow", { [self] in _ = syncOnce() }), ("waymark-forward", { [self] in _ = forwardOnce() })]
        for (name, body) in loops {
            let thread = Thread { [self] in
                while !stopping.load(ordering: .relaxed) {
                    body()
                    _ = wake.wait(timeout: .now() + options.interval)
                }
                finished.signal()
            }
            thread.name = name
            thread.start()
        }
    }

    /// Stops both threads after what they are doing (a forward in flight finishes or fails).
    public func stop() {
        guard !stopping.exchange(true, ordering: .relaxed) else { return }
        wake.signal()
        wake.signal()
        finished.wait()
        finished.wait()
    }

    // MARK: Mirroring

    /// One poll: returns what was mirrored, or why it stopped.
    @discardableResult
    public func syncOnce() -> Result<Int, ReplicationError> {
        let result = mirror()
        state.withLock { status in
            switch result {
            case .success(let mirrored):
                status.lastSync = Date()
                status.lastError = nil
                status.recordsMirrored += UInt64(mirrored)
            case .failure(let error):
                status.lastError = error.message
                status.syncFailures += 1
            }
        }
        return result
    }

    private func mirror() -> Result<Int, ReplicationError> {
        if state.withLock({ $0.diverged }) {
            return .failure(ReplicationError(state.withLock { $0.lastError } ?? "The primary's history differs from this store's."))
        }
        let primary: ReplicationState
        switch fetch("/v1/replication/state").flatMap(ReplicationState.decode) {
        case .success(let value): primary = value
        case .failure(let error): return .failure(error)
        }
        state.withLock { $0.primaryRevision = primary.revisions.count }
        let local = store.snapshot
        // The same history or nothing: a follower never serves a revision the primary has not.
        let common = min(local.revisions.count, primary.revisions.count)
        if primary.revisions.count < local.revisions.count
            || !zip(local.revisions.prefix(common).map(\.sha256), primary.revisions.prefix(common)).allSatisfy(==) {
            let error = ReplicationError("The primary \(client.base) has a different history (\(primary.revisions.count) revisions) "
                + "from this store's (\(local.revisions.count)); stopped mirroring, still serving revision \(local.current?.number ?? 0). "
                + "Start this follower on an empty data directory to mirror that primary.")
            state.withLock { $0.diverged = true }
            return .failure(error)
        }
        if let app = primary.app, let mine = local.app, app != mine {
            state.withLock { $0.diverged = true }
            return .failure(ReplicationError("The primary serves the app \(app); this store serves \(mine)."))
        }
        var mirrored = 0
        do throws(ReplicationError) {
            for entry in primary.schemas where local.schemas[entry.key]?.sha256 != entry.sha256 {
                let path = "/v1/replication/schemas/\(Self.segment(entry.key.platform))/\(Self.segment(entry.key.version))"
                let record = try fetch(path).get()
                do { try store.mirrorSchema(record, key: entry.key, sha256: entry.sha256, actor: Self.actor) } catch { throw ReplicationError(error.message) }
                mirrored += 1
            }
            for number in stride(from: local.revisions.count + 1, through: primary.revisions.count, by: 1) {
                let record = try fetch("/v1/replication/revisions/\(number)").get()
                do {
                    try store.mirrorRevision(record, number: number, sha256: primary.revisions[number - 1], actor: Self.actor)
                } catch { throw ReplicationError(error.message) }
                mirrored += 1
            }
            // The rollout's split as the primary decided it (never by this follower's own counts).
            if let rollout = primary.rollout {
                do {
                    if try store.mirrorRollout(rollout, actor: Self.actor) { mirrored += 1 }
                } catch { throw ReplicationError(error.message) }
            }
            let tokens = (try? store.tokens.fileBytes()).map(SHA256.hex)
            if tokens != primary.tokens {
                let bytes = try fetch("/v1/replication/tokens").get()
                // The file may have changed since the state was read: take it only as listed.
                if SHA256.hex(bytes) == primary.tokens {
                    do { try store.tokens.mirror(bytes, actor: Self.actor) } catch { throw ReplicationError(error.message) }
                    mirrored += 1
                }
            }
        } catch {
            return .failure(error)
        }
        return .success(mirrored)
    }

    private func fetch(_ path: String) -> Result<[UInt8], ReplicationError> {
        client.get(path).flatMap { response in
            guard response.status == 200 else {
                let detail = String(decoding: response.body.prefix(300), as: UTF8.self)
                return .failure(ReplicationError("GET \(client.base)\(path) answered \(response.status): \(detail)"))
            }
            return .success(response.body)
        }
    }

    /// One path segment, percent-encoded: everything but ASCII letters, digits and `- . _ ~`
    /// (RFC 3986's unreserved), and a segment of dots alone encoded whole, so no client or
    /// library can read it as a dot segment and drop it (RFC 3986 §5.2.4). The store's
    /// grammar refuses such names already; this holds whatever it lets through.
    static func segment(_ text: String) -> String {
        if !text.isEmpty, text.allSatisfy({ $0 == "." }) { return String(repeating: "%2E", count: text.count) }
        var encoded = ""
        for byte in text.utf8 {
            switch byte {
            case UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "A")...UInt8(ascii: "Z"), UInt8(ascii: "0")...UInt8(ascii: "9"),
                 UInt8(ascii: "-"), UInt8(ascii: "."), UInt8(ascii: "_"), UInt8(ascii: "~"):
                encoded.unicodeScalars.append(Unicode.Scalar(byte))
            default:
                encoded += "%" + String(byte >> 4, radix: 16, uppercase: true) + String(byte & 15, radix: 16, uppercase: true)
            }
        }
        return encoded
    }

    // MARK: Forwarding

    /// Sends the unacknowledged forward, or seals and sends a new one. Returns the events
    /// the primary acknowledged (0 when nothing was pending).
    @discardableResult
    public func forwardOnce() -> Result<UInt64, ReplicationError> {
        let result = forward()
        state.withLock { status in
            switch result {
            case .success:
                status.lastForward = Date()
                status.forwardError = nil
            case .failure(let error):
                status.forwardError = error.message
                status.forwardFailures += 1
            }
        }
        return result
    }

    private func forward() -> Result<UInt64, ReplicationError> {
        let outgoing: Forward
        do throws(TelemetryError) {
            var next = telemetry.unacknowledgedForward
            if next == nil { next = try telemetry.sealForward() }
            guard let next else { return .success(0) }
            outgoing = next
        } catch {
            return .failure(ReplicationError("Cannot seal the counts to forward: \(error.message)"))
        }
        switch client.post("/v1/replication/telemetry", body: outgoing.encoded, contentType: "application/octet-stream") {
        case .failure(let error): return .failure(error)
        case .success(let response) where response.status != 200:
            let detail = String(decoding: response.body.prefix(300), as: UTF8.self)
            return .failure(ReplicationError("POST \(client.base)/v1/replication/telemetry answered \(response.status): \(detail)"))
        case .success:
            // Test hook for the kill-mid-forward check: the primary has counted this forward,
            // and this process dies before it records that (Tests/Scripts/followers-test.py).
            if ProcessInfo.processInfo.environment["WAYMARK_TEST_KILL_AFTER_FORWARD"] == "1" { kill(getpid(), SIGKILL) }
            do { try telemetry.acknowledgeForward(outgoing) } catch {
                return .failure(ReplicationError("The primary has the counts, but the acknowledgement could not be stored: \(error.message)"))
            }
            return .success(outgoing.events)
        }
    }
}
