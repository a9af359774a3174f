import PostgresClient

/// One numbered change to the database's tables (`docs/postgres.md`, "Tables").
public struct DatabaseMigration: Sendable {
    public let number: Int
    public let name: String
    public let statements: [String]
}

/// Why the database's tables could not be brought to this code's version.
public enum DatabaseSchemaError: Error, Equatable, Sendable, CustomStringConvertible {
    /// The database has migrations this code does not know: a newer Waymark migrated it.
    case newerDatabase(has: Int, knows: Int)
    case database(PostgresError)

    public var description: String {
        switch self {
        case .newerDatabase(let has, let knows):
            "The database's tables are at migration \(has); this Waymark knows \(knows). Run the newer Waymark (or restore the database it came from)."
        case .database(let error): error.description
        }
    }
}

/// The database store's tables, versioned: `waymark_migrations` records each migration
/// applied, and `migrate` applies those a database lacks, in order, each in a transaction of
/// its own, under a session advisory lock, so that nodes starting together apply each once.
public enum DatabaseSchema {
    /// The advisory lock migrations run under ("WAYM" and 1).
    public static let migrationLock: Int64 = 0x5741_594D_0000_0001

    public static let migrations: [DatabaseMigration] = [
        DatabaseMigration(number: 1, name: "the store's tables", statements: [
            // A record (docs/postgres.md, "Tables"): its header line and body exactly as the
            // store wrote them, with what an operator queries beside them.
            """
            CREATE TABLE revisions (
                number integer PRIMARY KEY CHECK (number >= 1),
                sha256 text NOT NULL CHECK (sha256 ~ '^[0-9a-f]{64}$'),
                created timestamptz NOT NULL DEFAULT now(), header bytea NOT NULL, body bytea NOT NULL)
            """,
            """
            CREATE TABLE schemas (
                name text PRIMARY KEY, sha256 text NOT NULL CHECK (sha256 ~ '^[0-9a-f]{64}$'),
                changed timestamptz NOT NULL DEFAULT now(), header bytea NOT NULL, body bytea NOT NULL)
            """,
            """
            CREATE TABLE schedules (
                id integer PRIMARY KEY CHECK (id >= 1), sha256 text NOT NULL,
                changed timestamptz NOT NULL DEFAULT now(), header bytea NOT NULL, body bytea NOT NULL)
            """,
            """
            CREATE TABLE rollout (
                singleton boolean PRIMARY KEY DEFAULT true CHECK (singleton),
                changed timestamptz NOT NULL DEFAULT now(), header bytea NOT NULL, body bytea NOT NULL)
            """,
            // Every record written or removed, in order: what other nodes catch up with.
            "CREATE TABLE record_changes (seq bigserial PRIMARY KEY, name text NOT NULL, at timestamptz NOT NULL DEFAULT now())",
            // The tokens as the file store's tokens.json (names, scopes, the SHA-256 of each
            // token; never a token), in the body.
            """
            CREATE TABLE tokens (
                singleton boolean PRIMARY KEY DEFAULT true CHECK (singleton),
                changed timestamptz NOT NULL DEFAULT now(), header bytea NOT NULL, body bytea NOT NULL)
            """,
            // Each entry the JSON line audit.log would have, as text (a jsonb column would refuse a
            // string holding U+0000, and reorder the fields).
            "CREATE TABLE audit (seq bigserial PRIMARY KEY, time timestamptz NOT NULL, entry text NOT NULL)",
            "CREATE TABLE telemetry_batches (batch_id text PRIMARY KEY, committed_at timestamptz NOT NULL DEFAULT now())",
            "CREATE TABLE telemetry_counts (cell text PRIMARY KEY, count bigint NOT NULL CHECK (count >= 0))",
        ]),
        DatabaseMigration(number: 2, name: "telemetry shared by the nodes", statements: [
            // Batch ids are forgotten after the batch window, oldest first.
            "CREATE INDEX telemetry_batches_committed ON telemetry_batches (committed_at)",
            // What each accepted batch offered the rollout guard, read by every node in order.
            "CREATE TABLE guard_evidence (seq bigserial PRIMARY KEY, committed_at timestamptz NOT NULL DEFAULT now(), evidence text NOT NULL)",
        ]),
    ]

    /// Brings `connection`'s database (its `search_path`'s schema) to the newest migration:
    /// waits up to `lockTimeout` seconds for the migration lock, applies each missing one in
    /// its own transaction, and answers their numbers (none when it was current). A database
    /// with a migration this code does not know is refused, and nothing is changed.
    public static func migrate(_ connection: PostgresConnection, lockTimeout: Int = 30) throws(DatabaseSchemaError) -> [Int] {
        do {
            try connection.execute("SET lock_timeout = '\(max(1, lockTimeout))s'")
            try connection.execute("SELECT pg_advisory_lock($1::bigint)", [String(migrationLock)])
        } catch { throw .database(error) }
        defer { _ = try? connection.advisoryUnlock(migrationLock) }
        let has: Int
        do {
            try connection.execute("""
                CREATE TABLE IF NOT EXISTS waymark_migrations (
                    number integer PRIMARY KEY, name text NOT NULL, applied_at timestamptz NOT NULL DEFAULT now())
                """)
            has = Int(try connection.execute("SELECT coalesce(max(number), 0) AS n FROM waymark_migrations")[0, "n"] ?? "0") ?? 0
        } catch { throw .database(error) }
        let knows = migrations.last?.number ?? 0
        guard has <= knows else { throw .newerDatabase(has: has, knows: knows) }
        var applied: [Int] = []
        for migration in migrations where migration.number > has {
            do {
                try connection.execute("BEGIN")
                for statement in migration.statements { try connection.execute(statement) }
                try connection.execute("INSERT INTO waymark_migrations (number, name) VALUES ($1, $2)", [String(migration.number), migration.name])
                try connection.execute("COMMIT")
            } catch {
                _ = try? connection.execute("ROLLBACK")
                throw .database(error)
            }
            applied.append(migration.number)
        }
        return applied
    }
}
