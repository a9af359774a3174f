import Foundation
import ManifestStore
import PostgresClient
import Synchronization

/// Telemetry in the database (`docs/postgres.md`, "Telemetry"): batches accepted by this node
/// wait at most `commitDelay` and are committed together in one transaction on a connection
/// of its own — their ids inserted (`ON CONFLICT DO NOTHING` says which are new), the new
/// ones' count cells added by upsert and what they offer the guard appended — and each is
/// answered after that `COMMIT`. A commit that fails fails every batch in it (`503`: the
/// phone keeps its journal and sends again; none of it was counted).
public final class DatabaseTelemetry: SharedTelemetry, @unchecked Sendable {
    /// The longest a batch waits for the commit it goes in to start.
    public static let commitDelay = 0.05
    /// Batches one commit takes at most (the rest go in the next, at once).
    public static let batchesPerCommit = 4_096
    /// Batches waiting at most, and the bytes they hold (their cells' keys and their
    /// evidence, with 64 a cell and 256 a batch over them); more are refused `503` at once
    /// (the database is slower than their arrival, or away). In the memory formula
    /// (`docs/operations.md`, "Memory").
    public static let maximumPending = 16_384
    public static let maximumPendingBytes = 32 << 20
    /// How long guard evidence is kept: a rollout's looks count what its batches offered
    /// since its candidate was published, for at most this long.
    public static let evidenceDays = 30
    /// The transaction-level advisory lock appending guard evidence takes ("WAYM" and 4).
    public static let evidenceLock: Int64 = 0x5741_594D_0000_0004

    let url: String
    let searchPath: String?
    /// How long a batch's id is kept, so that a retry within it is counted once (the file
    /// store's `--telemetry-batch-window`).
    let idWindow: Int

    private struct Item {
        let id: String?
        let cells: [String: Int]
        let evidence: String?
        let completion: @Sendable (Result<Bool, StoreError>) -> Void
    }
    private struct Queue {
        var items: [Item] = []
        var bytes = 0
        var closing = false
    }

    private static func cost(_ cells: [String: Int], _ evidence: String?) -> Int {
        cells.keys.reduce(256 + (evidence?.utf8.count ?? 0)) { $0 + $1.utf8.count + 64 }
    }
    private let queue = Mutex(Queue())
    private let wake = DispatchSemaphore(value: 0)
    private let running = Atomic<Bool>(false)
    private let stopped = DispatchSemaphore(value: 0)
    private let reading = NSLock()
    private var readingConnection: PostgresConnection?
    /// Batches committed as new, as repeats, and commits that failed: for `/metrics`, tests and the benchmark.
    public let committed = Atomic<Int>(0)
    public let repeats = Atomic<Int>(0)
    public let failedCommits = Atomic<Int>(0)

    public init(url: String, searchPath: String? = nil, idWindow: Int) {
        self.url = url
        self.searchPath = searchPath
        self.idWindow = idWindow
    }

    public func start() {
        guard !running.exchange(true, ordering: .acquiringAndReleasing) else { return }
        let thread = Thread { [self] in
            loop()
            stopped.signal()
        }
        thread.name = "waymark-database-telemetry"
        thread.start()
    }

    /// Commits what is waiting, then stops; later batches are refused.
    public func stop() {
        queue.withLock { $0.closing = true }
        guard running.exchange(false, ordering: .acquiringAndReleasing) else { return }
        wake.signal()
        stopped.wait()
    }

    public func submit(id: String?, cells: [String: Int], evidence: String?, completion: @escaping @Sendable (Result<Bool, StoreError>) -> Void) {
        let refusal: StoreError? = queue.withLock { queue in
            if queue.closing { return .database("The node is stopping; send the batch again.") }
            let cost = Self.cost(cells, evidence)
            guard queue.items.count < Self.maximumPending, queue.bytes + cost <= Self.maximumPendingBytes else {
                return .database("\(queue.items.count) batches (\(queue.bytes) bytes) are already waiting for the database.")
            }
            queue.items.append(Item(id: id, cells: cells, evidence: evidence, completion: completion))
            queue.bytes += cost
            return nil
        }
        if let refusal { return completion(.failure(refusal)) }
        wake.signal()
    }

    private func loop() {
        var connection: PostgresConnection?
        var lastPrune = Date.distantPast
        while true {
            _ = wake.wait(timeout: .now() + 0.25)
            // One signal per batch: the loop looks at the queue itself, so the rest are
            // spent here (one arriving from now on wakes the next round at once).
            while wake.wait(timeout: .now()) == .success {}
            let stopping = !running.load(ordering: .acquiring)
            if queue.withLock({ $0.items.isEmpty }) {
                if stopping { break }
                continue
            }
            // The bounded delay: what arrives meanwhile goes in the same commit.
            if !stopping { Thread.sleep(forTimeInterval: Self.commitDelay) }
            while true {
                let items: [Item] = queue.withLock { queue in
                    let taken = Array(queue.items.prefix(Self.batchesPerCommit))
                    queue.items.removeFirst(taken.count)
                    queue.bytes -= taken.reduce(0) { $0 + Self.cost($1.cells, $1.evidence) }
                    return taken
                }
                guard !items.isEmpty else { break }
                let prune = Date().timeIntervalSince(lastPrune) >= 60
                let outcome = commit(items, on: &connection, prune: prune)
                switch outcome {
                case .success(let fresh):
                    if prune { lastPrune = Date() }
                    committed.add(fresh.filter { $0 }.count, ordering: .relaxed)
                    repeats.add(fresh.filter { !$0 }.count, ordering: .relaxed)
                    for (item, new) in zip(items, fresh) { item.completion(.success(new)) }
                case .failure(let error):
                    failedCommits.add(1, ordering: .relaxed)
                    for item in items { item.completion(.failure(error)) }
                }
            }
        }
    }

    /// One transaction for `items`; which of them were new. Nothing of it is kept unless
    /// `COMMIT` answered `COMMIT`.
    private func commit(_ items: [Item], on connection: inout PostgresConnection?, prune: Bool) -> Result<[Bool], StoreError> {
        do throws(PostgresError) {
            var reused = true
            if connection == nil || connection?.isOpen == false {
                connection = try connect()
                reused = false
            }
            do throws(PostgresError) {
                try connection!.execute("BEGIN ISOLATION LEVEL READ COMMITTED")
            } catch where error.isConnectionLost && reused {
                // Lost since its last commit (the database restarted): nothing was sent in it yet.
                connection = try connect()
                try connection!.execute("BEGIN ISOLATION LEVEL READ COMMITTED")
            }
            let db = connection!
            do throws(PostgresError) {
                let ids = Array(Set(items.compactMap(\.id)))
                var inserted = Set<String>()
                if !ids.isEmpty {
                    let rows = try db.execute("INSERT INTO telemetry_batches (batch_id) SELECT unnest($1::text[]) ON CONFLICT DO NOTHING RETURNING batch_id",
                                              [Self.arrayLiteral(ids)])
                    inserted = Set(rows.rows.compactMap { $0.first ?? nil })
                }
                // A repeat within this commit is a repeat too: the first of an id is the one counted.
                var fresh: [Bool] = []
                var cells: [String: Int] = [:]
                var evidence: [String] = []
                for item in items {
                    let new = item.id.map { inserted.remove($0) != nil } ?? true
                    fresh.append(new)
                    guard new else { continue }
                    for (cell, count) in item.cells { cells[cell, default: 0] += count }
                    if let offered = item.evidence { evidence.append(offered) }
                }
                if !cells.isEmpty {
                    let keys = Array(cells.keys)
                    try db.execute("""
                        INSERT INTO telemetry_counts (cell, count) SELECT * FROM unnest($1::text[], $2::bigint[])
                        ON CONFLICT (cell) DO UPDATE SET count = telemetry_counts.count + excluded.count
                        """, [Self.arrayLiteral(keys), "{" + keys.map { String(cells[$0]!) }.joined(separator: ",") + "}"])
                }
                if prune {
                    try db.execute("DELETE FROM telemetry_batches WHERE committed_at < now() - make_interval(secs => $1::integer)", [String(idWindow)])
                    try db.execute("DELETE FROM guard_evidence WHERE committed_at < now() - make_interval(days => \(Self.evidenceDays))")
                }
                if !evidence.isEmpty {
                    // Readers take rows after the last seq they saw: rows must become visible in
                    // seq order, so nodes' commits that append evidence go one at a time (the lock
                    // taken before the seqs are drawn, held until COMMIT; last, to hold it briefly).
                    try db.execute("SELECT pg_advisory_xact_lock($1::bigint)", [String(Self.evidenceLock)])
                    try db.execute("INSERT INTO guard_evidence (evidence) SELECT unnest($1::text[])", [Self.arrayLiteral(evidence)])
                }
                let done = try db.execute("COMMIT")
                guard done.command == "COMMIT" else { throw PostgresError.statement(sqlState: "40000", message: "the commit was rolled back") }
                return .success(fresh)
            } catch {
                if db.isOpen, (try? db.execute("ROLLBACK")) != nil {} else { connection = nil }
                throw error
            }
        } catch {
            if error.isConnectionLost { connection = nil }
            return .failure(.database(error.description))
        }
    }

    private func connect() throws(PostgresError) -> PostgresConnection {
        let fresh = try PostgresConnection(url: url)
        if let searchPath { try fresh.execute("SET search_path TO \(searchPath)") }
        return fresh
    }

    public func evidence(after seq: Int64, limit: Int) throws(StoreError) -> [(seq: Int64, evidence: String)] {
        reading.lock()
        defer { reading.unlock() }
        do throws(PostgresError) {
            let select = "SELECT seq, evidence FROM guard_evidence WHERE seq > $1 ORDER BY seq LIMIT \(max(1, limit))"
            let rows: PostgresRows
            if let open = readingConnection, open.isOpen {
                do throws(PostgresError) {
                    rows = try open.execute(select, [String(seq)])
                } catch where error.isConnectionLost {
                    // A read: made again on a new connection.
                    readingConnection = try connect()
                    rows = try readingConnection!.execute(select, [String(seq)])
                }
            } else {
                readingConnection = try connect()
                rows = try readingConnection!.execute(select, [String(seq)])
            }
            return rows.rows.compactMap { row in
                guard let seq = row[0].flatMap({ Int64($0) }), let text = row[1] else { return nil }
                return (seq, text)
            }
        } catch {
            if error.isConnectionLost { readingConnection = nil }
            throw .database(error.description)
        }
    }

    /// A PostgreSQL array literal of `items` (each quoted, `"` and `\` escaped): sent as one
    /// parameter, never spliced into a statement.
    static func arrayLiteral(_ items: [String]) -> String {
        "{" + items.map { item in
            var quoted = "\""
            for character in item.unicodeScalars {
                if character == "\"" || character == "\\" { quoted.unicodeScalars.append("\\") }
                quoted.unicodeScalars.append(character)
            }
            return quoted + "\""
        }.joined(separator: ",") + "}"
    }
}
