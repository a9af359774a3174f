import Foundation
import PostgresClient
import Synchronization

/// Singleton work by lease (`docs/postgres.md`, "Singleton work: the lease"): the node whose
/// connection holds the session-level advisory lock on `key` runs the scheduler and the
/// rollout guard's looks; every node tries for it once a `tryInterval`. The holder checks its
/// session on every try (`SELECT 1`) and stops counting itself the holder the moment that
/// fails; a node that dies ends its session, and with it the lock, when its socket closes, so
/// another takes the lease within one `tryInterval` of a `SIGKILL`. A holder cut off without
/// its socket closing loses the lock when the server notices (its `tcp_keepalives_*`), and
/// stops acting itself at its next check. Whatever it acts on is decided again under the
/// writer lock on the caught-up snapshot (a rollout's version compared, a schedule still
/// pending), so two holders for a moment never do a thing twice.
public final class DatabaseLease: @unchecked Sendable {
    /// The lease's advisory lock ("WAYM" and 3).
    public static let key: Int64 = 0x5741_594D_0000_0003
    public static let defaultTryInterval = 1.0

    let url: String
    let searchPath: String?
    let tryInterval: Double
    private let running = Atomic<Bool>(false)
    private let held = Atomic<Bool>(false)
    private let stopped = DispatchSemaphore(value: 0)
    /// Times this node took the lease since start (for `/metrics` and tests).
    public let taken = Atomic<Int>(0)

    public init(url: String, searchPath: String? = nil, tryInterval: Double = defaultTryInterval) {
        self.url = url
        self.searchPath = searchPath
        self.tryInterval = tryInterval
    }

    /// Whether this node holds the lease now.
    public var isHeld: Bool { held.load(ordering: .acquiring) }

    /// Starts trying for it on a thread of its own, the first try at once.
    public func start() {
        guard !running.exchange(true, ordering: .acquiringAndReleasing) else { return }
        let thread = Thread { [self] in
            loop()
            stopped.signal()
        }
        thread.name = "waymark-database-lease"
        thread.start()
    }

    /// Stops it, giving the lease up (its session ends), within a quarter of a second or a connection attempt.
    public func stop() {
        guard running.exchange(false, ordering: .acquiringAndReleasing) else { return }
        stopped.wait()
        held.store(false, ordering: .releasing)
    }

    private func loop() {
        var connection: PostgresConnection?
        while running.load(ordering: .acquiring) {
            do throws(PostgresError) {
                if connection == nil || connection?.isOpen == false {
                    held.store(false, ordering: .releasing)
                    let fresh = try PostgresConnection(url: url)
                    if let searchPath { try fresh.execute("SET search_path TO \(searchPath)") }
                    connection = fresh
                }
                if held.load(ordering: .acquiring) {
                    try connection!.execute("SELECT 1")
                } else if try connection!.tryAdvisoryLock(Self.key) {
                    taken.add(1, ordering: .relaxed)
                    held.store(true, ordering: .releasing)
                }
            } catch {
                held.store(false, ordering: .releasing)
                connection = nil
            }
            let deadline = Date().addingTimeInterval(tryInterval)
            while running.load(ordering: .acquiring), Date() < deadline { Thread.sleep(forTimeInterval: min(0.05, tryInterval)) }
        }
        held.store(false, ordering: .releasing)
        // Closing the connection ends the session and the lock with it.
        connection = nil
    }
}
