import Foundation
import ManifestStore
import PostgresClient
import Synchronization

/// How a node hears of changes other nodes commit (`docs/postgres.md`, "Reading"): a
/// connection of its own that has run `LISTEN waymark_changes`, waiting for a notification at
/// most `pollInterval` seconds, after which the store catches up (`ManifestStore.catchUp`)
/// whether one came or not — the poll is the fallback for a notification missed while the
/// connection was down. A lost connection is opened again after `pollInterval`; meanwhile the
/// node serves what it has.
public final class DatabaseWatcher: @unchecked Sendable {
    /// The longest a change committed elsewhere takes to be applied here when notifications
    /// are lost: one poll.
    public static let defaultPollInterval = 2.0

    let url: String
    let searchPath: String?
    let store: ManifestStore
    let pollInterval: Double
    private let running = Atomic<Bool>(false)
    private let stopped = DispatchSemaphore(value: 0)
    /// Catch-ups that applied something, and ones that failed (the database away): for tests and `/metrics`.
    public let applied = Atomic<Int>(0)
    public let failures = Atomic<Int>(0)
    /// Whether its connection is up and listening now.
    public var isListening: Bool { listening.load(ordering: .acquiring) }
    private let listening = Atomic<Bool>(false)

    public init(url: String, searchPath: String? = nil, store: ManifestStore, pollInterval: Double = defaultPollInterval) {
        self.url = url
        self.searchPath = searchPath
        self.store = store
        self.pollInterval = pollInterval
    }

    /// Starts listening on a thread of its own.
    public func start() {
        guard !running.exchange(true, ordering: .acquiringAndReleasing) else { return }
        let thread = Thread { [self] in
            loop()
            stopped.signal()
        }
        thread.name = "waymark-database-watcher"
        thread.start()
    }

    /// Stops it and waits for its thread (a quarter of a second at most, or a connection attempt).
    public func stop() {
        guard running.exchange(false, ordering: .acquiringAndReleasing) else { return }
        stopped.wait()
    }

    private func loop() {
        var connection: PostgresConnection?
        while running.load(ordering: .acquiring) {
            do throws(PostgresError) {
                if connection == nil || connection?.isOpen == false {
                    let fresh = try PostgresConnection(url: url)
                    if let searchPath { try fresh.execute("SET search_path TO \(searchPath)") }
                    try fresh.listen(DatabaseMedium.channel)
                    connection = fresh
                    listening.store(true, ordering: .releasing)
                    // What was committed before the LISTEN took effect is caught up with below.
                    if (try? store.catchUp()) == true { applied.add(1, ordering: .relaxed) }
                }
                guard let connection else { continue }
                // In slices, so that `stop` is answered within one.
                let deadline = Date().addingTimeInterval(pollInterval)
                while running.load(ordering: .acquiring), Date() < deadline {
                    if !(try connection.notifications(waiting: min(0.25, max(0.001, deadline.timeIntervalSinceNow)))).isEmpty { break }
                }
            } catch {
                connection = nil
                listening.store(false, ordering: .releasing)
                failures.add(1, ordering: .relaxed)
                let deadline = Date().addingTimeInterval(pollInterval)
                while running.load(ordering: .acquiring), Date() < deadline { Thread.sleep(forTimeInterval: 0.05) }
            }
            guard running.load(ordering: .acquiring) else { break }
            do {
                if try store.catchUp() { applied.add(1, ordering: .relaxed) }
            } catch {
                failures.add(1, ordering: .relaxed)
            }
        }
    }
}
