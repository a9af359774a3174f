import DatabaseStore
import Foundation
import Synchronization
import PostgresClient
import Testing

/// The database store's migrations against a real PostgreSQL (`make test-postgres`), each
/// test in a PostgreSQL schema of its own (its `search_path`), so they run side by side.
@Suite("Database migrations", .enabled(if: databaseURL != nil))
struct DatabaseSchemaTests {
    /// A connection whose tables go into a fresh schema `name`.
    static func connection(in name: String, create: Bool = true) throws -> PostgresConnection {
        let connection = try PostgresConnection(url: databaseURL!)
        if create {
            try connection.execute("DROP SCHEMA IF EXISTS \(name) CASCADE")
            try connection.execute("CREATE SCHEMA \(name)")
        }
        try connection.execute("SET search_path TO \(name)")
        return connection
    }

    @Test func aFreshDatabaseGetsEveryMigrationOnceAndTheTables() throws {
        let connection = try Self.connection(in: "m_fresh")
        #expect(try DatabaseSchema.migrate(connection) == DatabaseSchema.migrations.map(\.number))
        #expect(try DatabaseSchema.migrate(connection) == [], "current: nothing applied again")
        let tables = try connection.execute("SELECT table_name FROM information_schema.tables WHERE table_schema = 'm_fresh' ORDER BY table_name").rows.map { $0[0]! }
        #expect(tables == ["audit", "guard_evidence", "record_changes", "revisions", "rollout", "schedules", "schemas", "telemetry_batches", "telemetry_counts", "tokens", "waymark_migrations"])
        // The tables hold the store's rules: a revision is numbered from 1 and has a SHA-256; one rollout row.
        #expect(throws: PostgresError.self) {
            try connection.execute("INSERT INTO revisions (number, sha256, header, body) VALUES (0, repeat('0', 64), '', '')")
        }
        #expect(throws: PostgresError.self) {
            try connection.execute("INSERT INTO revisions (number, sha256, header, body) VALUES (1, 'not a hash', '', '')")
        }
        try connection.execute("INSERT INTO rollout (header, body) VALUES ('', '')")
        #expect(throws: PostgresError.self) { try connection.execute("INSERT INTO rollout (singleton, header, body) VALUES (false, '', '')") }
        #expect(throws: PostgresError.self) { try connection.execute("INSERT INTO rollout (header, body) VALUES ('', '')") }
    }

    @Test func nodesStartingTogetherApplyEachMigrationOnce() throws {
        _ = try Self.connection(in: "m_together")
        let results = Mutex<[[Int]]>([])
        let failures = Mutex<[String]>([])
        DispatchQueue.concurrentPerform(iterations: 4) { _ in
            do {
                let applied = try DatabaseSchema.migrate(try Self.connection(in: "m_together", create: false))
                results.withLock { $0.append(applied) }
            } catch {
                failures.withLock { $0.append("\(error)") }
            }
        }
        #expect(failures.withLock { $0 }.isEmpty)
        let all = results.withLock { $0 }
        #expect(all.flatMap { $0 }.sorted() == DatabaseSchema.migrations.map(\.number), "each applied by one node: \(all)")
    }

    @Test func aDatabaseANewerWaymarkMigratedIsRefused() throws {
        let connection = try Self.connection(in: "m_newer")
        _ = try DatabaseSchema.migrate(connection)
        try connection.execute("INSERT INTO waymark_migrations (number, name) VALUES (999, 'from the future')")
        #expect(throws: DatabaseSchemaError.newerDatabase(has: 999, knows: DatabaseSchema.migrations.last!.number)) {
            try DatabaseSchema.migrate(connection)
        }
        // The lock was released: another node can still try (and is refused the same way, not made to wait).
        #expect(throws: DatabaseSchemaError.self) { try DatabaseSchema.migrate(try Self.connection(in: "m_newer", create: false), lockTimeout: 2) }
    }
}
