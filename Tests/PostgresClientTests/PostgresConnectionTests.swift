import Foundation
import PostgresClient
import Testing

/// The libpq client against a real PostgreSQL (`make test-postgres`: a cluster of the
/// tests' own, `Tests/Scripts/postgres.sh`, named by WAYMARK_TEST_DATABASE_URL; without it
/// these are skipped, and `make test-postgres` fails if they were).
/// The test cluster's URL, when there is one.
let databaseURL = ProcessInfo.processInfo.environment["WAYMARK_TEST_DATABASE_URL"]

@Suite("PostgreSQL connections", .enabled(if: databaseURL != nil))
struct PostgresConnectionTests {
    static var url: String? { databaseURL }

    static func connect() throws -> PostgresConnection { try PostgresConnection(url: url!) }

    @Test func parametersAreSentApartFromTheStatement() throws {
        let connection = try Self.connect()
        try connection.execute("CREATE TEMP TABLE notes (id int PRIMARY KEY, body text)")
        let hostile = "'); DROP TABLE notes; -- \u{202E} caf\u{E9} \u{1F375}"
        let inserted = try connection.execute("INSERT INTO notes VALUES ($1, $2), ($3, $4)", ["1", hostile, "2", nil])
        #expect(inserted.affected == 2)
        let rows = try connection.execute("SELECT id, body FROM notes ORDER BY id")
        #expect(rows.columns == ["id", "body"])
        #expect(rows.rows == [["1", hostile], ["2", nil]], "stored as sent, NULL as nil")
        #expect(rows[0, "body"] == hostile && rows[1, "body"] == nil && rows[5, "body"] == nil)
    }

    @Test func aRefusedStatementSaysItsSQLState() throws {
        let connection = try Self.connect()
        try connection.execute("CREATE TEMP TABLE once (id int PRIMARY KEY)")
        try connection.execute("INSERT INTO once VALUES (1)")
        #expect(throws: PostgresError.self) { try connection.execute("INSERT INTO once VALUES (1)") }
        do {
            try connection.execute("INSERT INTO once VALUES ($1)", ["1"])
            Issue.record("a duplicate key was accepted")
        } catch {
            guard case .statement(let state, let message) = error else { Issue.record("not a statement error: \(error)"); return }
            #expect(state == "23505" && message.contains("duplicate key"))
            #expect(!error.isConnectionLost)
        }
        // The connection is still usable after a refusal.
        #expect(try connection.execute("SELECT count(*) AS n FROM once")[0, "n"] == "1")
    }

    @Test func aNotificationReachesTheListener() throws {
        let listener = try Self.connect(), sender = try Self.connect()
        try listener.listen("waymark_changes")
        #expect(try listener.notifications(waiting: 0).isEmpty)
        try sender.execute("SELECT pg_notify('waymark_changes', $1)", ["revision 7"])
        let started = Date()
        var received: [PostgresNotification] = []
        while received.isEmpty, Date().timeIntervalSince(started) < 10 { received += try listener.notifications(waiting: 1) }
        #expect(received == [PostgresNotification(channel: "waymark_changes", payload: "revision 7")])
        #expect(throws: PostgresError.self) { try listener.listen("x; DROP TABLE y") }
    }

    @Test func anAdvisoryLockIsHeldByOneSessionAndEndsWithIt() throws {
        let key: Int64 = 0x5741_594D_4152_4B01
        var holder: PostgresConnection? = try Self.connect()
        let other = try Self.connect()
        #expect(try holder!.tryAdvisoryLock(key))
        #expect(try !other.tryAdvisoryLock(key), "one session holds it")
        holder = nil  // the session ends: its locks go with it
        let started = Date()
        var taken = false
        while !taken, Date().timeIntervalSince(started) < 10 {
            taken = try other.tryAdvisoryLock(key)
            if !taken { usleep(50_000) }
        }
        #expect(taken, "the next session takes the lock once the holder's is gone")
        #expect(try other.advisoryUnlock(key))
    }

    @Test func aLostConnectionIsToldApartFromARefusal() throws {
        let victim = try Self.connect(), killer = try Self.connect()
        try killer.execute("SELECT pg_terminate_backend($1::int)", [String(victim.backendProcessID())])
        do {
            try victim.execute("SELECT 1")
            Issue.record("a terminated session answered")
        } catch {
            #expect(error.isConnectionLost, "\(error)")
        }
        #expect(!victim.isOpen)
    }

    @Test func aServerThatIsNotThereIsAConnectionError() throws {
        #expect(throws: PostgresError.self) { try PostgresConnection(url: "postgresql:///nothing?host=/nonexistent-socket-dir", timeout: 2) }
        do {
            _ = try PostgresConnection(url: "postgresql:///nothing?host=/nonexistent-socket-dir", timeout: 2)
        } catch {
            #expect(error.isConnectionLost && error.description.contains("cannot be reached"))
        }
    }
}
