import PostgresClient
import RouteEngine

/// A revision as the database keeps it (`revisions`): its metadata and its routes document,
/// the document's SHA-256 checked whenever it is read.
public struct DatabaseRevision: Sendable, Equatable {
    public let number: Int
    public let parent: Int?
    public let author: String
    /// RFC 3339, UTC, as PostgreSQL writes the time it was given.
    public let time: String
    public let message: String
    public let sha256: String
    /// The record's metadata, JSON (as the file store's header).
    public let metadata: String
    public let body: [UInt8]
}

/// What a publish into the database did.
public enum DatabasePublishOutcome: Sendable, Equatable {
    case published(number: Int)
    /// `base` is not the newest revision: someone published first.
    case staleBase(current: Int?)
}

/// Why a revision could not be read.
public enum DatabaseReadError: Error, Equatable, Sendable {
    case database(PostgresError)
    /// The document's SHA-256 is not the one stored beside it.
    case damaged(number: Int, stored: String, found: String)
}

/// Publishing and reading revisions in the database (`docs/postgres.md`, "Writing"): one
/// transaction under the writer lock (`pg_advisory_xact_lock`, held until it ends, so
/// writers on every node are serialized as the file store's writer lock serializes them),
/// the base checked against the newest revision there, the revision and its audit entry
/// inserted, `NOTIFY waymark_changes`, then `COMMIT` — and only then the answer.
public enum DatabaseRevisions {
    /// The transaction-level advisory lock every write takes ("WAYM" and 2).
    public static let writerLock: Int64 = 0x5741_594D_0000_0002
    /// The channel nodes hear of changes on.
    public static let channel = "waymark_changes"

    /// Stores `body` as the revision after `base` (nil: the first), when `base` is the newest.
    public static func publish(_ connection: PostgresConnection, base: Int?, author: String, message: String,
                               metadata: String = "{}", body: [UInt8]) throws(PostgresError) -> DatabasePublishOutcome {
        try connection.execute("BEGIN")
        do {
            try connection.execute("SELECT pg_advisory_xact_lock($1::bigint)", [String(writerLock)])
            let newest = try connection.execute("SELECT max(number) AS n FROM revisions")[0, "n"].flatMap { Int($0) }
            guard base == newest else {
                try connection.execute("ROLLBACK")
                return .staleBase(current: newest)
            }
            let number = (newest ?? 0) + 1
            let sha256 = SHA256.hex(body)
            try connection.execute("""
                INSERT INTO revisions (number, parent, author, time, message, sha256, metadata, body)
                VALUES ($1, $2, $3, now(), $4, $5, $6::jsonb, decode($7, 'hex'))
                """, [String(number), newest.map(String.init), author, message, sha256, metadata, body.hexString])
            let entry: JSONValue = ["action": "publish", "actor": .string(author), "outcome": "ok", "revision": .int(number), "sha256": .string(sha256)]
            try connection.execute("INSERT INTO audit (time, entry) VALUES (now(), $1::jsonb)", [entry.serialized()])
            try connection.execute("SELECT pg_notify($1, $2)", [channel, "revision \(number)"])
            try connection.execute("COMMIT")
            return .published(number: number)
        } catch {
            _ = try? connection.execute("ROLLBACK")
            throw error
        }
    }

    /// The newest revision's number (nil: none yet).
    public static func newest(_ connection: PostgresConnection) throws(PostgresError) -> Int? {
        try connection.execute("SELECT max(number) AS n FROM revisions")[0, "n"].flatMap { Int($0) }
    }

    /// Revision `number`, its document checked against its SHA-256; nil when there is none.
    public static func revision(_ connection: PostgresConnection, _ number: Int) throws(DatabaseReadError) -> DatabaseRevision? {
        let rows: PostgresRows
        do {
            rows = try connection.execute("""
                SELECT number, parent, author, to_char(time AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS"Z"') AS time, message, sha256,
                       metadata::text AS metadata, encode(body, 'hex') AS body
                FROM revisions WHERE number = $1
                """, [String(number)])
        } catch { throw .database(error) }
        guard !rows.rows.isEmpty, let hex = rows[0, "body"], let body = [UInt8](hex: hex) else { return nil }
        let stored = rows[0, "sha256"] ?? "", found = SHA256.hex(body)
        guard stored == found else { throw .damaged(number: number, stored: stored, found: found) }
        return DatabaseRevision(number: number, parent: rows[0, "parent"].flatMap { Int($0) }, author: rows[0, "author"] ?? "",
                                time: rows[0, "time"] ?? "", message: rows[0, "message"] ?? "", sha256: stored,
                                metadata: rows[0, "metadata"] ?? "{}", body: body)
    }
}
