import CivilDate
#if canImport(Glibc)
import Glibc
#endif
import Foundation
import ManifestStore
import PostgresClient
import RouteEngine
import Synchronization
import SystemIO

/// PostgreSQL as a store's medium (`docs/postgres.md`): each record a row of its kind's table
/// (`revisions`, `schemas`, `schedules`, `rollout`) holding the header line and body the store
/// wrote, byte for byte; the audit log the `audit` table; every record written or removed a
/// row of `record_changes`, which is how the other nodes sharing the database catch up.
///
/// A change (`exclusively`) is one transaction (`READ COMMITTED`), serialized with every
/// other node's by a transaction-level advisory lock (the writer key) taken before the store
/// looks at what others changed: every record it writes or removes, with its audit entries,
/// its `record_changes` rows and their `NOTIFY waymark_changes`, is committed together when
/// the change ends, or none of it is (a failed statement, a lost connection, a `COMMIT`
/// refused), and the store then puts its snapshot back as it was before the change.
///
/// Two connections: one for changes, used under the store's writer lock, and one for reads
/// (history's documents, a schedule's routes), which happen outside it. A connection that is
/// lost is opened again on next use, never in the middle of a change; meanwhile every call is
/// `StoreError.database`, which the API answers `503`.
public final class DatabaseMedium: StoreMedium, @unchecked Sendable {
    /// The transaction-level advisory lock every change takes ("WAYM" and 2).
    public static let writerLock: Int64 = 0x5741_594D_0000_0002
    /// The channel nodes hear of changes on; the payload is the change's `record_changes` seq.
    public static let channel = "waymark_changes"

    let url: String
    /// `SET search_path` for every connection (tests keep each store in a schema of its own).
    let searchPath: String?
    private let writing = Guarded()
    private let reading = Guarded()
    /// Held for a whole change (`exclusively`), and by every use of the writing connection:
    /// the store's changes and the tokens' (`TokenStore`), each under a writer lock of its
    /// own, never interleave their statements in one transaction. Recursive: a change's own
    /// writes take it again.
    private let section = NSRecursiveLock()

    /// A session behind a lock (a connection is used by one thread at a time).
    private final class Guarded: @unchecked Sendable {
        private let lock = NSLock()
        private var session = Session()

        func withLock<T>(_ body: (inout Session) throws(StoreError) -> T) throws(StoreError) -> T {
            lock.lock()
            defer { lock.unlock() }
            return try body(&session)
        }
    }

    /// One connection, and for the writing one whether a change's transaction is open on it.
    private struct Session {
        var connection: PostgresConnection?
        var inTransaction = false
        /// Why the open change can no longer commit (a statement failed, the connection was
        /// lost): it is rolled back when it ends, and nothing more is sent in it.
        var broken: StoreError?
        /// The `record_changes` seqs this node committed: not others' changes to catch up with.
        var own: Set<Int64> = []
        /// Those the open change wrote, own once it commits.
        var pending: Set<Int64> = []
        /// The last failed connection attempt, if the one after it has not succeeded yet.
        var failedConnect: (at: Date, error: StoreError)?
    }

    /// Connects (both connections) and brings the tables to this code's migration, under the
    /// migration lock: a database a newer Waymark migrated is refused.
    public init(url: String, searchPath: String? = nil) throws(StoreError) {
        self.url = url
        self.searchPath = searchPath
        try writing.withLock { session throws(StoreError) in
            let connection = try Self.connect(url, searchPath)
            do throws(DatabaseSchemaError) {
                _ = try DatabaseSchema.migrate(connection)
            } catch {
                throw StoreError.database(error.description)
            }
            session.connection = connection
        }
    }

    public var location: String { "the database" }
    public var needsRepairAtOpen: Bool { false }
    public var keepsTokens: Bool { true }

    private static func connect(_ url: String, _ searchPath: String?) throws(StoreError) -> PostgresConnection {
        do {
            let connection = try PostgresConnection(url: url)
            if let searchPath { try connection.execute("SET search_path TO \(searchPath)") }
            return connection
        } catch {
            throw StoreError.database(error.description)
        }
    }

    /// After a failed connection attempt, how long further ones fail at once with its error,
    /// so that requests arriving while the database is away do not each wait for a connect
    /// (up to its timeout) holding the writer lock.
    static let reconnectPause = 1.0

    /// Runs `body` on `session`'s connection (opened if need be); a lost connection is dropped
    /// for the next call to open again, with the transaction it held. `idempotent`: `body`
    /// may run twice (a read, a `BEGIN`), so a connection found lost when it is used — the
    /// database restarted since its last statement — is opened again and `body` run once more.
    private func run<T>(_ session: inout Session, idempotent: Bool = false, _ body: (PostgresConnection) throws(PostgresError) -> T) throws(StoreError) -> T {
        // In a change, a statement after one that failed would only be refused (25P02), and
        // one on a new connection would be outside the change's transaction and lock.
        if session.inTransaction, let broken = session.broken { throw broken }
        var reused = true
        if session.connection == nil || session.connection?.isOpen == false {
            session.connection = nil
            if session.inTransaction {
                session.broken = StoreError.database("The connection to the database was lost during the change; none of it was kept.")
                throw session.broken!
            }
            if let failed = session.failedConnect, Date().timeIntervalSince(failed.at) < Self.reconnectPause { throw failed.error }
            do throws(StoreError) {
                session.connection = try Self.connect(url, searchPath)
                session.failedConnect = nil
            } catch {
                session.failedConnect = (Date(), error)
                throw error
            }
            reused = false
        }
        do {
            return try body(session.connection!)
        } catch {
            let lost = error.isConnectionLost || session.connection?.isOpen == false
            if lost { session.connection = nil }
            if session.inTransaction {
                session.broken = StoreError.database(error.description)
            } else if lost && idempotent && reused {
                return try run(&session, body)
            }
            throw StoreError.database(error.description)
        }
    }

    private func reads<T>(_ body: (PostgresConnection) throws(PostgresError) -> T) throws(StoreError) -> T {
        try reading.withLock { session throws(StoreError) in try run(&session, idempotent: true, body) }
    }

    // MARK: Names

    /// A record's table and its key's column and value, from its name.
    private struct Place {
        let table: String
        let key: String
        let value: String
    }

    private static func place(_ name: String) throws(StoreError) -> Place {
        if name == "rollout" { return Place(table: "rollout", key: "singleton", value: "true") }
        if name == TokenStore.fileName { return Place(table: "tokens", key: "singleton", value: "true") }
        let parts = name.split(separator: "/", maxSplits: 1).map(String.init)
        guard parts.count == 2 else { throw unknown(name) }
        switch parts[0] {
        case "revisions":
            guard let number = Int(parts[1]), number >= 1 else { throw unknown(name) }
            return Place(table: "revisions", key: "number", value: String(number))
        case "schedules":
            guard let id = Int(parts[1]), id >= 1 else { throw unknown(name) }
            return Place(table: "schedules", key: "id", value: String(id))
        case "schemas": return Place(table: "schemas", key: "name", value: parts[1])
        default: throw unknown(name)
        }
    }

    private static func unknown(_ name: String) -> StoreError { .damaged(directory: "the database", file: name, reason: "it is not a record the store keeps") }

    /// ENOENT, as a directory answers for a missing file (a schedule's routes removed is told apart by it).
    private static func missing(_ name: String) -> StoreError { .io(IOError(call: "SELECT", path: name, errno: ENOENT)) }

    private static func padded(_ number: String) -> String { String(repeating: "0", count: max(0, 8 - number.count)) + number }

    // MARK: Reading

    public func list(_ kind: String) throws(StoreError) -> [String] {
        let (table, key): (String, String)
        switch kind {
        case "revisions": (table, key) = ("revisions", "number")
        case "schedules": (table, key) = ("schedules", "id")
        case "schemas": (table, key) = ("schemas", "name")
        default: throw Self.unknown(kind)
        }
        let rows = try reads { connection throws(PostgresError) in try connection.execute("SELECT \(key) AS k FROM \(table) ORDER BY \(key)") }
        return rows.rows.compactMap { $0.first ?? nil }.map { kind == "schemas" ? $0 : Self.padded($0) }
    }

    public func read(_ name: String) throws(StoreError) -> [UInt8] {
        let place = try Self.place(name)
        let rows = try reads { connection throws(PostgresError) in
            try connection.execute("SELECT encode(header, 'hex') AS h, encode(body, 'hex') AS b FROM \(place.table) WHERE \(place.key) = $1", [place.value])
        }
        guard !rows.rows.isEmpty else { throw Self.missing(name) }
        guard let header = rows[0, "h"].flatMap({ [UInt8](hex: $0) }), let body = rows[0, "b"].flatMap({ [UInt8](hex: $0) }) else {
            throw StoreError.damaged(directory: location, file: name, reason: "its row could not be read")
        }
        return header + body
    }

    public func readHead(_ name: String, maximum: Int) throws(StoreError) -> (head: [UInt8], size: Int) {
        let place = try Self.place(name)
        let rows = try reads { connection throws(PostgresError) in
            try connection.execute("""
                SELECT encode(substring(header FROM 1 FOR $2::integer), 'hex') AS h, octet_length(header) + octet_length(body) AS size
                FROM \(place.table) WHERE \(place.key) = $1
                """, [place.value, String(maximum)])
        }
        guard !rows.rows.isEmpty else { throw Self.missing(name) }
        guard let head = rows[0, "h"].flatMap({ [UInt8](hex: $0) }), let size = rows[0, "size"].flatMap({ Int($0) }) else {
            throw StoreError.damaged(directory: location, file: name, reason: "its row could not be read")
        }
        return (head, size)
    }

    public func exists(_ name: String) throws(StoreError) -> Bool {
        let place = try Self.place(name)
        return try reads { connection throws(PostgresError) in
            try connection.execute("SELECT 1 FROM \(place.table) WHERE \(place.key) = $1", [place.value]).rows.count == 1
        }
    }

    public func auditEntries() throws(StoreError) -> [JSONValue] {
        let rows = try reads { connection throws(PostgresError) in try connection.execute("SELECT entry AS e FROM audit ORDER BY seq") }
        return rows.rows.compactMap { $0.first ?? nil }.compactMap { try? JSONParser().parse(Array($0.utf8)) }
    }

    // MARK: Changing

    public var changeIsOneTransaction: Bool { true }

    /// Whether this thread's change is open (under `section`, no other thread's can be).
    private var changeOpen: Bool { (try? writing.withLock { session throws(StoreError) in session.inTransaction }) ?? false }

    public func exclusively<T>(since marker: Int, _ body: (MediumChanges) throws(StoreError) -> T) throws(StoreError) -> T {
        section.lock()
        defer { section.unlock() }
        // A change within a change (the section is recursive) is part of it.
        if changeOpen { return try body(MediumChanges(marker: marker, names: [])) }
        let others = try writing.withLock { session throws(StoreError) in
            try run(&session, idempotent: true) { connection throws(PostgresError) in
                try connection.execute("BEGIN ISOLATION LEVEL READ COMMITTED")
                do throws(PostgresError) {
                    try connection.execute("SELECT pg_advisory_xact_lock($1::bigint)", [String(Self.writerLock)])
                } catch {
                    _ = try? connection.execute("ROLLBACK")
                    throw error
                }
            }
            (session.inTransaction, session.broken, session.pending) = (true, nil, [])
            do throws(StoreError) {
                return try self.changes(&session, since: marker)
            } catch {
                rollBack(&session)
                throw error
            }
        }
        let result: T
        do throws(StoreError) {
            result = try body(others)
        } catch {
            try? writing.withLock { session throws(StoreError) in rollBack(&session) }
            throw error
        }
        try writing.withLock { session throws(StoreError) in try commit(&session) }
        return result
    }

    /// Ends the open change by committing it: its seqs become this node's own. A `COMMIT`
    /// that fails, or that the server answers `ROLLBACK`, throws; the connection is then
    /// dropped, since whether it committed is not known (if it did, the node catches up with
    /// it as with another's change, its seqs not being its own).
    private func commit(_ session: inout Session) throws(StoreError) {
        defer { (session.inTransaction, session.broken, session.pending) = (false, nil, []) }
        if let broken = session.broken {
            rollBack(&session)
            throw broken
        }
        guard let connection = session.connection, connection.isOpen else {
            session.connection = nil
            throw StoreError.database("The connection to the database was lost during the change; none of it was kept.")
        }
        do throws(PostgresError) {
            let done = try connection.execute("COMMIT")
            guard done.command == "COMMIT" else { throw PostgresError.statement(sqlState: "40000", message: "the change was rolled back") }
            session.own.formUnion(session.pending)
        } catch {
            session.connection = nil
            throw StoreError.database(error.description)
        }
    }

    /// Ends the open change by rolling it back (a connection that cannot is dropped, which ends it too).
    private func rollBack(_ session: inout Session) {
        defer { (session.inTransaction, session.broken, session.pending) = (false, nil, []) }
        guard let connection = session.connection else { return }
        if !connection.isOpen || (try? connection.execute("ROLLBACK")) == nil { session.connection = nil }
    }

    /// Runs `body` in the open change's transaction, or in one of its own (with the writer
    /// lock) when no change is open: what is written outside a change (refusal lines, a move)
    /// is all or nothing too.
    private func changing<T>(_ body: (inout Session) throws(StoreError) -> T) throws(StoreError) -> T {
        section.lock()
        defer { section.unlock() }
        if changeOpen { return try writing.withLock(body) }
        return try exclusively(since: Int(Int64.max)) { _ throws(StoreError) -> T in try writing.withLock(body) }
    }

    public func newestMarker() throws(StoreError) -> Int {
        let top = try reads { connection throws(PostgresError) in try connection.execute("SELECT coalesce(max(seq), 0) AS n FROM record_changes") }
        return top[0, "n"].flatMap { Int($0) } ?? 0
    }

    public func changes(since marker: Int) throws(StoreError) -> MediumChanges {
        section.lock()
        defer { section.unlock() }
        return try writing.withLock { session throws(StoreError) in try changes(&session, since: marker) }
    }

    /// The names others wrote or removed after `marker` (this node's own left out), each once.
    private func changes(_ session: inout Session, since marker: Int) throws(StoreError) -> MediumChanges {
        // Outside a transaction (the watcher's catch-up) a read, safe to make again on a new connection.
        let rows = try run(&session, idempotent: !session.inTransaction) { connection throws(PostgresError) in
            try connection.execute("SELECT seq, name FROM record_changes WHERE seq > $1 ORDER BY seq", [String(marker)])
        }
        var names: [String] = [], seen: Set<String> = [], newest = marker
        for row in rows.rows {
            guard let seq = row[0].flatMap({ Int64($0) }), let name = row[1] else { continue }
            newest = max(newest, Int(seq))
            if session.own.remove(seq) != nil { continue }
            if seen.insert(name).inserted { names.append(name) }
        }
        // Revisions in number order, so that each is appended after the one before it.
        let revisions = names.filter { $0.hasPrefix("revisions/") }.sorted()
        return MediumChanges(marker: newest, names: revisions + names.filter { !$0.hasPrefix("revisions/") })
    }

    /// A record's bytes as its row keeps them: the header line (with its SHA-256) and the
    /// body; `tokens.json`, not a record, whole as the body.
    private func split(_ bytes: [UInt8], _ full: String) throws(StoreError) -> (head: [UInt8], body: [UInt8], sha256: String) {
        if full == TokenStore.fileName { return ([], bytes, "") }
        guard let newline = bytes.firstIndex(of: UInt8(ascii: "\n")),
              case .object(let header)? = try? JSONParser().parse(bytes[..<newline]), let digest = header["sha256"]?.stringValue else {
            throw StoreError.damaged(directory: location, file: full, reason: "it is not a record (a header line with its SHA-256)")
        }
        return (Array(bytes[...newline]), Array(bytes[(newline + 1)...]), digest)
    }

    /// `INSERT`s the row of `full` (replacing one there with `replacing`), and answers
    /// whether it did: false when one was there and `replacing` is not set.
    private static func insert(_ connection: PostgresConnection, _ place: Place, _ head: [UInt8], _ body: [UInt8], sha256: String,
                               replacing: Bool) throws(PostgresError) -> Bool {
        let statement: String, parameters: [String?]
        if place.key == "singleton" {
            statement = "INSERT INTO \(place.table) (singleton, header, body) VALUES (true, decode($1, 'hex'), decode($2, 'hex'))"
                + (replacing ? " ON CONFLICT (singleton) DO UPDATE SET header = excluded.header, body = excluded.body, changed = now()"
                             : " ON CONFLICT (singleton) DO NOTHING")
            parameters = [head.hexString, body.hexString]
        } else {
            let stamp = place.table == "revisions" ? "created" : "changed"
            statement = "INSERT INTO \(place.table) (\(place.key), sha256, header, body) VALUES ($1, $2, decode($3, 'hex'), decode($4, 'hex'))"
                + (replacing ? " ON CONFLICT (\(place.key)) DO UPDATE SET sha256 = excluded.sha256, header = excluded.header, body = excluded.body, \(stamp) = now()"
                             : " ON CONFLICT (\(place.key)) DO NOTHING")
            parameters = [place.value, sha256, head.hexString, body.hexString]
        }
        return try connection.execute(statement, parameters).affected == 1
    }

    /// A `record_changes` row for `full`, with its notification (sent when the change commits).
    private static func recordChange(_ connection: PostgresConnection, _ full: String) throws(PostgresError) -> Int64? {
        let seq = try connection.execute("INSERT INTO record_changes (name) VALUES ($1) RETURNING seq", [full])[0, "seq"].flatMap { Int64($0) }
        try connection.execute("SELECT pg_notify($1, $2)", [channel, seq.map(String.init) ?? ""])
        return seq
    }

    public func write(_ bytes: [UInt8], kind: String, name: String, replacing: Bool, audit entry: [String: JSONValue], time: Date) throws(StoreError) {
        let full = kind == "." ? name : kind + "/" + name
        let place = try Self.place(full)
        let (head, body, sha256) = try split(bytes, full)
        try changing { session throws(StoreError) in
            let seq = try run(&session) { connection throws(PostgresError) -> Int64?? in
                guard try Self.insert(connection, place, head, body, sha256: sha256, replacing: replacing) else { return .none }
                try Self.insertAudit(connection, entry, time: time)
                return .some(try Self.recordChange(connection, full))
            }
            guard let seq else { throw StoreError.alreadyExists(full) }
            if let seq { session.pending.insert(seq) }
        }
    }

    public func copyIn(_ bytes: [UInt8], kind: String, name: String) throws(StoreError) {
        let full = kind == "." ? name : kind + "/" + name
        let place = try Self.place(full)
        let (head, body, sha256) = try split(bytes, full)
        try changing { session throws(StoreError) in
            let inserted = try run(&session) { connection throws(PostgresError) -> Bool in
                guard try Self.insert(connection, place, head, body, sha256: sha256, replacing: false) else { return false }
                _ = try Self.recordChange(connection, full)
                return true
            }
            guard inserted else { throw StoreError.alreadyExists(full) }
        }
    }

    /// In pages of `auditPage` rows, by sequence number.
    public func auditHistory(_ visit: ([JSONValue]) throws(StoreError) -> Void) throws(StoreError) {
        var after: Int64 = 0
        while true {
            let rows = try reads { connection throws(PostgresError) in
                try connection.execute("SELECT seq, entry AS e FROM audit WHERE seq > $1 ORDER BY seq LIMIT \(Self.auditPage)", [String(after)])
            }
            guard let first = rows.rows.last?.first, let last = first.flatMap({ Int64($0) }) else { return }
            after = last
            try visit(rows.rows.compactMap { $0.count > 1 ? $0[1] : nil }.compactMap { try? JSONParser().parse(Array($0.utf8)) })
            if rows.rows.count < Self.auditPage { return }
        }
    }

    static let auditPage = 10_000

    public func copyInAudit(_ entries: [JSONValue]) throws(StoreError) {
        guard !entries.isEmpty else { return }
        try changing { session throws(StoreError) in
            try run(&session) { connection throws(PostgresError) in
                for entry in entries {
                    // An entry without a readable time (a damaged line) keeps its place with the time of the move.
                    try connection.execute("INSERT INTO audit (time, entry) VALUES (coalesce($1::timestamptz, now()), $2)",
                                           [entry["time"]?.stringValue.flatMap { Timestamp.parse($0) }.map { Timestamp.format($0) }, entry.serialized()])
                }
            }
        }
    }

    /// An audit entry as `audit.log` has it (its fields with the time, one JSON line), as text.
    private static func insertAudit(_ connection: PostgresConnection, _ entry: [String: JSONValue], time: Date) throws(PostgresError) {
        var line = entry
        line["time"] = .string(Timestamp.format(time))
        try connection.execute("INSERT INTO audit (time, entry) VALUES ($1::timestamptz, $2)", [Timestamp.format(time), JSONValue.object(line).serialized()])
    }

    public func appendAudit(_ entries: [[String: JSONValue]], time: Date) throws(StoreError) {
        guard !entries.isEmpty else { return }
        try changing { session throws(StoreError) in
            try run(&session) { connection throws(PostgresError) in
                for entry in entries { try Self.insertAudit(connection, entry, time: time) }
            }
        }
    }

    /// In the change's transaction: a removal that fails fails the change (a directory's
    /// leaves the file for a later one; a database that refuses a `DELETE` refuses the rest).
    public func remove(_ names: [String], in kind: String) -> [String] {
        guard !names.isEmpty else { return [] }
        return (try? changing { session throws(StoreError) -> [String] in
            var gone: [String] = []
            for name in names {
                let full = kind + "/" + name
                let place = try Self.place(full)
                let seq = try run(&session) { connection throws(PostgresError) -> Int64? in
                    let deleted = try connection.execute("DELETE FROM \(place.table) WHERE \(place.key) = $1", [place.value])
                    guard deleted.affected == 1 else { return nil }
                    return try Self.recordChange(connection, full)
                }
                if let seq { session.pending.insert(seq) }
                gone.append(name)
            }
            return gone
        }) ?? []
    }
}
