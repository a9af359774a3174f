import DatabaseStore
import Foundation
import PostgresClient
import Synchronization
import Testing

/// Publishing into the database (`make test-postgres`), each test in a schema of its own
/// (`DatabaseSchemaTests.connection(in:)`): the base checked against the newest revision,
/// one winner among nodes publishing from the same base, the document read back against its
/// SHA-256, the audit entry in the same transaction, and listeners told after the commit.
@Suite("Database revisions", .enabled(if: databaseURL != nil))
struct DatabaseRevisionsTests {
    static func migrated(_ name: String) throws -> PostgresConnection {
        let connection = try DatabaseSchemaTests.connection(in: name)
        _ = try DatabaseSchema.migrate(connection)
        return connection
    }

    @Test func theBaseDecidesAndTheDocumentComesBackAsStored() throws {
        let connection = try Self.migrated("r_base")
        let document = Array(#"{"format": "waymark.routes/1", "app": "storefront", "routes": [], "notes": "caf\u00e9 \u0000"}"#.utf8) + [0, 0xFF]
        #expect(try DatabaseRevisions.publish(connection, base: nil, author: "ci", message: "first", body: document) == .published(number: 1))
        #expect(try DatabaseRevisions.publish(connection, base: nil, author: "ci", message: "again", body: document) == .staleBase(current: 1))
        #expect(try DatabaseRevisions.publish(connection, base: 1, author: "marketer", message: "second", metadata: #"{"restores": 1}"#, body: [1, 2, 3])
                == .published(number: 2))
        let first = try #require(try DatabaseRevisions.revision(connection, 1))
        #expect(first.body == document && first.parent == nil && first.author == "ci" && first.message == "first" && first.time.hasSuffix("Z"))
        #expect(try DatabaseRevisions.revision(connection, 2)?.parent == 1)
        #expect(try DatabaseRevisions.revision(connection, 2)?.metadata.contains("restores") == true)
        #expect(try DatabaseRevisions.revision(connection, 3) == nil)
        // Each publish's audit entry was committed with it; the refused one wrote none.
        #expect(try connection.execute("SELECT count(*) AS n FROM audit")[0, "n"] == "2")
        // A document changed behind the store's back is refused when read, naming both digests.
        try connection.execute("UPDATE revisions SET body = decode('00', 'hex') WHERE number = 2")
        #expect(throws: DatabaseReadError.self) { try DatabaseRevisions.revision(connection, 2) }
    }

    @Test func nodesPublishingFromOneBaseHaveOneWinner() throws {
        _ = try Self.migrated("r_race")
        let outcomes = Mutex<[DatabasePublishOutcome]>([])
        let failures = Mutex<[String]>([])
        DispatchQueue.concurrentPerform(iterations: 8) { index in
            do {
                let node = try DatabaseSchemaTests.connection(in: "r_race", create: false)
                let outcome = try DatabaseRevisions.publish(node, base: nil, author: "node-\(index)", message: "", body: Array("node \(index)".utf8))
                outcomes.withLock { $0.append(outcome) }
            } catch {
                failures.withLock { $0.append("\(error)") }
            }
        }
        #expect(failures.withLock { $0 }.isEmpty)
        let all = outcomes.withLock { $0 }
        #expect(all.filter { $0 == .published(number: 1) }.count == 1 && all.filter { $0 == .staleBase(current: 1) }.count == 7, "\(all)")
    }

    @Test func listenersAreToldAfterTheCommit() throws {
        let writer = try Self.migrated("r_notify")
        let listener = try DatabaseSchemaTests.connection(in: "r_notify", create: false)
        try listener.listen(DatabaseRevisions.channel)
        guard case .published(let number) = try DatabaseRevisions.publish(writer, base: nil, author: "ci", message: "", body: [1]) else {
            Issue.record("not published"); return
        }
        var heard: [PostgresNotification] = []
        let started = Date()
        while !heard.contains(where: { $0.payload == "revision \(number)" }), Date().timeIntervalSince(started) < 10 {
            heard += try listener.notifications(waiting: 1)
        }
        #expect(heard.contains(PostgresNotification(channel: DatabaseRevisions.channel, payload: "revision \(number)")))
        // What the listener reads on hearing it is committed.
        #expect(try DatabaseRevisions.newest(listener) == number)
    }
}
