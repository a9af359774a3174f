import DatabaseStore
import Foundation
import ManifestStore
import PostgresClient
import Rollout
import RouteEngine
import Synchronization
import SystemIO
import Testing
import TestSupport

/// Where a store under test keeps its records.
enum Medium: String, CustomStringConvertible, Sendable {
    case directory, database
    var description: String { rawValue }

    /// The media there are here: the database only when `make test-postgres` gives one.
    static var available: [Medium] { databaseURL == nil ? [.directory] : [.directory, .database] }
}

/// A store's place for one test: a scratch directory, and with the database a PostgreSQL
/// schema of its own; `open()` opens a store on it as a node starting would (again and
/// again: a restart, or a second node).
final class StorePlace: @unchecked Sendable {
    let medium: Medium
    let path = NSTemporaryDirectory() + "waymark-suite-\(UUID().uuidString)"
    let schema = "s_" + String(UUID().uuidString.replacingOccurrences(of: "-", with: "").lowercased().prefix(20))
    private var nodes = 0

    init(_ medium: Medium) throws {
        self.medium = medium
        if medium == .database {
            let connection = try PostgresConnection(url: databaseURL!)
            try connection.execute("CREATE SCHEMA \(schema)")
        }
    }

    deinit {
        try? FileManager.default.removeItem(atPath: path)
        if medium == .database, let connection = try? PostgresConnection(url: databaseURL!) {
            _ = try? connection.execute("DROP SCHEMA IF EXISTS \(schema) CASCADE")
        }
    }

    var seed: String { Fixtures.repositoryRoot.appendingPathComponent("manifests/storefront").path }

    /// A store on this place: with the database, each call is a node of its own (its own
    /// connections and local directory) on the same tables.
    func open() throws -> ManifestStore {
        switch medium {
        case .directory: return try ManifestStore.open(at: path).store
        case .database:
            nodes += 1
            let local = try DataDirectory(path: path + "-node\(nodes)", subdirectories: [])
            return try ManifestStore.open(directory: local, medium: DatabaseMedium(url: databaseURL!, searchPath: schema))
        }
    }

    /// `body` on a store opened here, closed after it (a data directory is one process's at a time).
    func with<T>(_ body: (ManifestStore) throws -> T) throws -> T {
        let store = try open()
        return try withExtendedLifetime(store) { try body(store) }
    }

    /// A statement on this place's tables, behind every store's back.
    func execute(_ sql: String) throws {
        let connection = try PostgresConnection(url: databaseURL!)
        try connection.execute("SET search_path TO \(schema)")
        try connection.execute(sql)
    }
}

struct Failure: Error, CustomStringConvertible {
    let description: String
    init(_ description: String) { self.description = description }
}

private let start = Fixtures.date("2026-11-21T10:00:00Z")

/// The storefront routes with one more route: a valid next revision.
private func routes(adding id: String) -> [UInt8] {
    guard case .object(var document) = Fixtures.storefrontRoutesJSON, case .array(var list)? = document["routes"] else { return [] }
    list.append(["id": .string(id), "patterns": [.string("/campaign/\(id)")], "destination": "home", "owner": "marketing"])
    document["routes"] = .array(list)
    return JSONValue.object(document).serializedBytes(pretty: true)
}

/// The store's promises, held on both media (`docs/postgres.md`): what the code above the
/// store relies on does not depend on where the records are.
@Suite("The store on either medium")
struct StoreSuiteTests {
    @Test(arguments: Medium.available) func publishingKeepsEveryRevisionWithItsHashAcrossARestart(_ medium: Medium) throws {
        let place = try StorePlace(medium)
        let campaign = routes(adding: "winter")
        let (before, record, second) = try place.with { (store: ManifestStore) throws in
            #expect(try store.seedIfEmpty(from: place.seed, now: start))
            guard case .published(let second) = try store.publish(routes: campaign, base: 1, author: "ci", message: "winter", now: start) else {
                throw Failure("not published")
            }
            #expect(second.number == 2 && second.parent == 1 && second.sha256 == SHA256.hex(campaign))
            // The same routes again make no revision; a stale base is refused and writes nothing.
            guard case .unchanged = try store.publish(routes: campaign, base: 2, author: "ci", message: "again", now: start) else {
                throw Failure("the same routes made a revision")
            }
            guard case .staleBase(current: 2) = try store.publish(routes: routes(adding: "late"), base: 1, author: "ci", message: "late", now: start) else {
                throw Failure("a stale base was taken")
            }
            return (store.snapshot, try store.revisionRecord(2), second)
        }
        try place.with { (reopened: ManifestStore) throws in
            #expect(reopened.snapshot.revisions.map(\.number) == [1, 2])
            #expect(reopened.snapshot.revisions.map(\.sha256) == before.revisions.map(\.sha256))
            #expect(reopened.snapshot.schemas.keys.sorted() == before.schemas.keys.sorted())
            #expect(try reopened.routes(of: reopened.snapshot.revisions[1]) == campaign, "the document byte for byte")
            #expect(try reopened.revisionRecord(2) == record, "the record a follower mirrors, the same bytes")
            let audit = try reopened.auditEntries().filter { $0["outcome"] == "ok" && $0["revision"] != nil }
            #expect(audit.compactMap { $0["revision"]?.intValue } == [1, 2])
            #expect(audit.last?["sha256"]?.stringValue == second.sha256)
        }
    }

    @Test(arguments: Medium.available) func aRollbackRestoresAnOlderDocumentAsANewRevision(_ medium: Medium) throws {
        let place = try StorePlace(medium)
        try place.with { (store: ManifestStore) throws in
            try store.seedIfEmpty(from: place.seed, now: start)
            _ = try store.publish(routes: routes(adding: "a"), base: 1, author: "ci", message: "a", now: start)
            _ = try store.publish(routes: routes(adding: "b"), base: 2, author: "ci", message: "b", now: start)
            guard case .published(let restored) = try store.rollback(to: 1, base: 3, author: "lead", message: "back", now: start) else {
                throw Failure("not rolled back")
            }
            #expect(restored.number == 4 && restored.restores == 1)
        }
        try place.with { (reopened: ManifestStore) throws in
            #expect(try reopened.routes(of: reopened.snapshot.revision(4)!) == reopened.routes(of: reopened.snapshot.revision(1)!))
            #expect(reopened.snapshot.revision(4)?.restores == 1)
        }
    }

    @Test(arguments: Medium.available) func aScheduleFiresOnceAndStaysFiredAcrossARestart(_ medium: Medium) throws {
        let place = try StorePlace(medium)
        try place.with { (store: ManifestStore) throws in
            try store.seedIfEmpty(from: place.seed, now: start)
            guard case .scheduled(let item) = try store.schedule(routes: routes(adding: "spring"), at: start.addingTimeInterval(60), base: 1,
                                                                  author: "marketing", message: "spring", now: start) else {
                throw Failure("not scheduled")
            }
            #expect(try store.fireDueSchedules(now: start.addingTimeInterval(30)).isEmpty, "not due yet")
            let fired = try store.fireDueSchedules(now: start.addingTimeInterval(61))
            #expect(fired.map(\.id) == [item.id] && fired.first?.status == .fired(revision: 2))
            #expect(try store.fireDueSchedules(now: start.addingTimeInterval(62)).isEmpty, "once")
        }
        try place.with { (reopened: ManifestStore) throws in
            #expect(reopened.snapshot.schedules.map(\.status) == [.fired(revision: 2)])
            #expect(try reopened.fireDueSchedules(now: start.addingTimeInterval(63)).isEmpty, "once, after a restart too")
            #expect(reopened.snapshot.revisions.map(\.number) == [1, 2])
        }
    }

    @Test(arguments: Medium.available) func aRolloutsStateIsKeptAsItChanges(_ medium: Medium) throws {
        let place = try StorePlace(medium)
        let version = try place.with { (store: ManifestStore) throws in
            try store.seedIfEmpty(from: place.seed, now: start)
            guard case .started(let rollout, let candidate) = try store.startRollout(routes: routes(adding: "beta"), base: 1, author: "lead",
                                                                                      message: "beta", now: start) else {
                throw Failure("not started")
            }
            #expect(candidate.number == 2 && rollout.stable == 1 && store.snapshot.current?.number == 1)
            guard case .success(let paused) = try store.controlRollout("pause", version: rollout.version, actor: "lead", now: start, { r throws(RolloutRefusal) in
                try r.pause(version: rollout.version)
            }) else { throw Failure("not paused") }
            return paused.version
        }
        try place.with { (reopened: ManifestStore) throws in
            #expect(reopened.snapshot.rollout?.status == .paused && reopened.snapshot.rollout?.version == version)
            #expect(reopened.snapshot.activeRollout?.candidate == 2 && reopened.snapshot.current?.number == 1)
            #expect(try reopened.auditEntries().last?["action"] == "rollout.pause")
        }
    }

    @Test(arguments: Medium.available) func aSchemaReplacedInPlaceIsReadBack(_ medium: Medium) throws {
        let place = try StorePlace(medium)
        let (key, bytes, record) = try place.with { (store: ManifestStore) throws in
            try store.seedIfEmpty(from: place.seed, now: start)
            let key = try #require(store.snapshot.orderedSchemas.last?.key)
            let bytes = try #require(store.snapshot.schemas[key]?.bytes)
            // Registered again (the same bytes, a new author): replaced, and read back so.
            _ = try store.registerSchema(bytes, expected: key, author: "ci", now: start.addingTimeInterval(5))
            return (key, bytes, try store.schemaRecord(key))
        }
        try place.with { (reopened: ManifestStore) throws in
            #expect(reopened.snapshot.schemas[key]?.bytes == bytes)
            #expect(try reopened.schemaRecord(key) == record)
        }
    }

    @Test func aMoveTakesTheAuditLogsMovedAsideInTheirOrder() throws {
        let source = try StorePlace(.directory), target = try StorePlace(.directory)
        do {
            // A log moved aside past 100 bytes: every change starts a new file, most in the same second (audit-<time>-N.log).
            let store = try ManifestStore.open(at: source.path, auditRotationBytes: 100).store
            try store.seedIfEmpty(from: source.seed, now: start)
            for index in 2...12 {
                _ = try store.publish(routes: routes(adding: "r\(index)"), base: index - 1, author: "ci", message: "r\(index)", now: start)
            }
        }
        let rotated = try FileManager.default.contentsOfDirectory(atPath: source.path).filter { $0.hasPrefix("audit-") }
        #expect(rotated.count >= 5, "logs were moved aside")
        try source.with { (original: ManifestStore) throws in
            try target.with { (copy: ManifestStore) throws in
                // (An empty store opened on the target: nothing in it yet.)
                let summary = try StoreCopy.copy(from: original.medium, to: copy.medium)
                #expect(summary.revisions == 12)
            }
        }
        try source.with { (original: ManifestStore) throws in
            try target.with { (copy: ManifestStore) throws in
                #expect(try StoreCopy.differences(original, copy) == [])
                let numbers = try copy.auditEntries().compactMap { $0["revision"]?.intValue }
                #expect(numbers == Array(1...12), "every revision's entry, oldest first, in the copy's one log")
            }
        }
    }

    @Test func aDatabaseAwayIsAClearErrorAndChangesNothing() throws {
        let store = try ManifestStore.open(directory: DataDirectory(path: NSTemporaryDirectory() + "waymark-away-\(UUID().uuidString)", subdirectories: []),
                                           medium: StandInMedium())
        do {
            _ = try store.publish(routes: routes(adding: "x"), base: nil, author: "ci", message: "x", now: start)
            Issue.record("published with the database away")
        } catch {
            #expect(error.isDatabaseAway && store.snapshot.revisions.isEmpty)
        }
    }
}

/// A directory that acts as a database whose `COMMIT` fails when told to: the store must put
/// its snapshot back (what the medium wrote stays on disk here; a database keeps none of it).
private final class CommitFailingMedium: StoreMedium, @unchecked Sendable {
    let inner: DirectoryMedium
    let failing = Atomic<Bool>(false)
    init(_ directory: DataDirectory) { inner = DirectoryMedium(directory, auditRotationBytes: DataDirectory.defaultAuditRotationBytes) }
    var location: String { "the database" }
    var needsRepairAtOpen: Bool { false }
    var keepsTokens: Bool { false }
    var changeIsOneTransaction: Bool { true }
    func list(_ kind: String) throws(StoreError) -> [String] { try inner.list(kind) }
    func read(_ name: String) throws(StoreError) -> [UInt8] { try inner.read(name) }
    func readHead(_ name: String, maximum: Int) throws(StoreError) -> (head: [UInt8], size: Int) { try inner.readHead(name, maximum: maximum) }
    func exists(_ name: String) throws(StoreError) -> Bool { try inner.exists(name) }
    func write(_ bytes: [UInt8], kind: String, name: String, replacing: Bool, audit entry: [String: JSONValue], time: Date) throws(StoreError) {
        try inner.write(bytes, kind: kind, name: name, replacing: replacing, audit: entry, time: time)
    }
    func appendAudit(_ entries: [[String: JSONValue]], time: Date) throws(StoreError) { try inner.appendAudit(entries, time: time) }
    func remove(_ names: [String], in kind: String) -> [String] { inner.remove(names, in: kind) }
    func auditEntries() throws(StoreError) -> [JSONValue] { try inner.auditEntries() }
    func exclusively<T>(since marker: Int, _ body: (MediumChanges) throws(StoreError) -> T) throws(StoreError) -> T {
        let result = try body(MediumChanges(marker: marker, names: []))
        if failing.load(ordering: .relaxed) { throw StoreError.database("the COMMIT was refused") }
        return result
    }
    func changes(since marker: Int) throws(StoreError) -> MediumChanges { MediumChanges(marker: marker, names: []) }
    func newestMarker() throws(StoreError) -> Int { 0 }
    func copyIn(_ bytes: [UInt8], kind: String, name: String) throws(StoreError) { try inner.copyIn(bytes, kind: kind, name: name) }
    func copyInAudit(_ entries: [JSONValue]) throws(StoreError) { try inner.copyInAudit(entries) }
    func auditHistory(_ visit: ([JSONValue]) throws(StoreError) -> Void) throws(StoreError) { try inner.auditHistory(visit) }
}

extension StoreSuiteTests {
    @Test func aChangeThatFailsToCommitIsPutBackInMemory() throws {
        let directory = try DataDirectory(path: NSTemporaryDirectory() + "waymark-commit-\(UUID().uuidString)", subdirectories: ["revisions", "schemas", "schedules"])
        defer { try? FileManager.default.removeItem(atPath: directory.path) }
        let medium = CommitFailingMedium(directory)
        let store = try ManifestStore.open(directory: directory, medium: medium)
        try store.seedIfEmpty(from: Fixtures.repositoryRoot.appendingPathComponent("manifests/storefront").path, now: start)
        let before = store.snapshot.current
        medium.failing.store(true, ordering: .relaxed)
        #expect(throws: StoreError.database("the COMMIT was refused")) {
            _ = try store.publish(routes: routes(adding: "lost"), base: 1, author: "ci", message: "lost", now: start)
        }
        #expect(store.snapshot.revisions.count == 1 && store.snapshot.current == before, "the revision that was not committed is not served")
        #expect(try store.routes(of: store.snapshot.current!) != routes(adding: "lost"))
    }
}

/// What only a database gives: several nodes on the same records.
@Suite("Nodes sharing one database", .enabled(if: databaseURL != nil))
struct SharedDatabaseTests {
    /// A record as the store writes one: its header line with the SHA-256, then the body.
    static func record(_ sha256: String, _ body: String = "{}") -> [UInt8] { Array("{\"sha256\":\"\(sha256)\"}\n\(body)".utf8) }

    @Test func aBatchSentToTwoNodesIsCountedOnceAndItsEvidenceReadInOrder() throws {
        let place = try StorePlace(.database)
        _ = try DatabaseMedium(url: databaseURL!, searchPath: place.schema)  // the tables
        let first = DatabaseTelemetry(url: databaseURL!, searchPath: place.schema, idWindow: 3_600)
        let second = DatabaseTelemetry(url: databaseURL!, searchPath: place.schema, idWindow: 3_600)
        first.start(); second.start()
        defer { first.stop(); second.stop() }
        let answers = Mutex<[String: [Bool]]>([:])
        let done = DispatchGroup()
        func send(_ node: DatabaseTelemetry, _ id: String?, _ cell: String, _ count: Int, evidence: String? = nil) {
            done.enter()
            node.submit(id: id, cells: [cell: count], evidence: evidence) { result in
                if case .success(let new) = result { answers.withLock { $0[id ?? "none", default: []].append(new) } }
                done.leave()
            }
        }
        // One id sent to both nodes at once, twice to the first (in one commit); two others once each.
        let shared = String(repeating: "ab", count: 16)
        send(first, shared, "[\"cell\",\"a\"]", 5, evidence: "{\"n\":1}")
        send(second, shared, "[\"cell\",\"a\"]", 5, evidence: "{\"n\":1}")
        send(first, shared, "[\"cell\",\"a\"]", 5, evidence: "{\"n\":1}")
        send(second, String(repeating: "cd", count: 16), "[\"cell\",\"a\"]", 2, evidence: "{\"n\":2}")
        send(first, nil, "[\"cell \\\"quoted\\\"\",\"b\"]", 7)
        #expect(done.wait(timeout: .now() + 10) == .success)
        #expect(answers.withLock { $0[shared]?.map { $0 ? 1 : 0 }.sorted() } == [0, 0, 1], "counted once, the repeats answered as repeats")
        let rows = try PostgresConnection(url: databaseURL!)
        try rows.execute("SET search_path TO \(place.schema)")
        let counts = try rows.execute("SELECT cell, count FROM telemetry_counts ORDER BY cell").rows.map { "\($0[0]!)=\($0[1]!)" }
        #expect(counts == ["[\"cell \\\"quoted\\\"\",\"b\"]=7", "[\"cell\",\"a\"]=7"])
        let evidence = try first.evidence(after: 0, limit: 10)
        #expect(evidence.map(\.evidence).sorted() == ["{\"n\":1}", "{\"n\":2}"] && evidence.map(\.seq) == evidence.map(\.seq).sorted())
        #expect(try first.evidence(after: evidence.last!.seq, limit: 10).isEmpty)
        // The database away: a batch is refused, nothing counted.
        first.stop()
        let stopped = Mutex<Result<Bool, StoreError>?>(nil)
        first.submit(id: String(repeating: "ef", count: 16), cells: ["x": 1], evidence: nil) { result in stopped.withLock { $0 = result } }
        #expect(stopped.withLock { $0.map { if case .failure = $0 { true } else { false } } } == true, "a stopped node takes no batch")
    }

    @Test func oneNodeHoldsTheLeaseAndAnotherTakesItWhenItsSessionEnds() throws {
        let place = try StorePlace(.database)
        let leases = (0..<3).map { _ in DatabaseLease(url: databaseURL!, searchPath: place.schema, tryInterval: 0.05) }
        leases.forEach { $0.start() }
        defer { leases.forEach { $0.stop() } }
        #expect(Self.eventually(10) { leases.filter(\.isHeld).count == 1 })
        Thread.sleep(forTimeInterval: 0.3)
        #expect(leases.filter(\.isHeld).count == 1, "never two")
        let holder = leases.first(where: \.isHeld)!
        // Its session ended behind its back (as when the database restarts or cuts it off):
        // it stops counting itself the holder, and one node holds it again.
        let admin = try PostgresConnection(url: databaseURL!)
        try admin.execute("SELECT pg_terminate_backend(pid) FROM pg_locks WHERE locktype = 'advisory' AND objid = $1::bigint::bit(32)::int::oid",
                          [String(DatabaseLease.key & 0xFFFF_FFFF)])
        #expect(Self.eventually(10) { leases.filter(\.isHeld).count == 1 && leases.map { $0.taken.load(ordering: .relaxed) }.reduce(0, +) == 2 })
        // The holder stopping (a node shutting down, or killed) gives it to another.
        let next = leases.first(where: \.isHeld)!
        next.stop()
        #expect(Self.eventually(10) { leases.filter { $0 !== next && $0.isHeld }.count == 1 })
        _ = holder
    }

    @Test func aChangeIsCommittedWholeOrNotAtAll() throws {
        let place = try StorePlace(.database)
        let medium = try DatabaseMedium(url: databaseURL!, searchPath: place.schema)
        let good = String(repeating: "a", count: 64)
        // A body that fails after writing: nothing of it is kept.
        #expect(throws: StoreError.alreadyExists("the body's own")) {
            try medium.exclusively(since: 0) { _ throws(StoreError) in
                try medium.write(Self.record(good), kind: "revisions", name: "00000001", replacing: false, audit: ["action": "publish"], time: start)
                throw StoreError.alreadyExists("the body's own")
            } as Void
        }
        #expect(try medium.list("revisions").isEmpty && medium.auditEntries().isEmpty)
        try medium.exclusively(since: 0) { _ throws(StoreError) in
            try medium.write(Self.record(good), kind: "revisions", name: "00000001", replacing: false, audit: ["action": "publish"], time: start)
            try medium.write(Self.record(good), kind: "revisions", name: "00000002", replacing: false, audit: ["action": "publish"], time: start)
        } as Void
        #expect(try medium.list("revisions") == ["00000001", "00000002"], "a change that returns is committed")
        // A statement the database refuses (a SHA-256 its CHECK does not take), its error
        // swallowed by the body: the change still ends in nothing, the write before it too.
        do {
            try medium.exclusively(since: 0) { _ throws(StoreError) in
                try medium.write(Self.record(good), kind: "revisions", name: "00000003", replacing: false, audit: ["action": "publish"], time: start)
                _ = try? medium.write(Self.record("not-a-digest"), kind: "revisions", name: "00000004", replacing: false, audit: ["action": "publish"], time: start)
                _ = try? medium.write(Self.record(good), kind: "revisions", name: "00000005", replacing: false, audit: ["action": "publish"], time: start)
            } as Void
            Issue.record("a change with a refused statement committed")
        } catch {
            #expect(error.isDatabaseAway == true || error.clientMessage.contains("SQLSTATE 23514"), "\(error)")
        }
        #expect(try medium.list("revisions") == ["00000001", "00000002"])
        // A record already there, not replaced, is told and the change goes on.
        try medium.exclusively(since: 0) { _ throws(StoreError) in
            #expect(throws: StoreError.alreadyExists("revisions/00000002")) {
                try medium.write(Self.record(good), kind: "revisions", name: "00000002", replacing: false, audit: [:], time: start)
            }
            try medium.write(Self.record(good), kind: "revisions", name: "00000003", replacing: false, audit: ["action": "publish"], time: start)
        } as Void
        #expect(try medium.list("revisions") == ["00000001", "00000002", "00000003"])
        #expect(try medium.auditEntries().count == 3)
        // An audit entry with U+0000 in a field is kept as written.
        try medium.appendAudit([["action": "refused", "actor": .string("a\u{0}b")]], time: start)
        #expect(try medium.auditEntries().last?["actor"]?.stringValue == "a\u{0}b")
    }

    @Test func aNodeDecidesOnWhatAnotherPublishedAndCatchesUpWithIt() throws {
        let place = try StorePlace(.database)
        let first = try place.open(), second = try place.open()
        try first.seedIfEmpty(from: place.seed, now: start)
        #expect(second.snapshot.revisions.isEmpty, "the second has not looked yet")
        // A change on the second node is decided on the database's newest revision, not on
        // what the second saw: its base 1 is current there, and it makes revision 2.
        guard case .published(let two) = try second.publish(routes: routes(adding: "two"), base: 1, author: "ci", message: "two", now: start) else {
            Issue.record("the second node's publish on the current base was refused"); return
        }
        #expect(two.number == 2)
        // The first, told nothing yet, still refuses a stale base once it looks under the lock.
        guard case .staleBase(current: 2) = try first.publish(routes: routes(adding: "old"), base: 1, author: "ci", message: "old", now: start) else {
            Issue.record("a stale base was taken on the first node"); return
        }
        #expect(first.snapshot.revisions.map(\.number) == [1, 2], "caught up under the lock")
        let generation = first.generation
        #expect(try first.catchUp() == false, "nothing new")
        _ = try second.rollback(to: 1, base: 2, author: "lead", message: "back", now: start)
        #expect(try first.catchUp() == true && first.generation == generation + 1)
        #expect(first.snapshot.current?.number == 3 && first.snapshot.current?.sha256 == second.snapshot.current?.sha256)
        #expect(try first.routes(of: first.snapshot.current!) == second.routes(of: second.snapshot.current!))
    }

    /// Waits (at most `seconds`) for `condition`: a node applying a change it was told of.
    static func eventually(_ seconds: Double, _ condition: () -> Bool) -> Bool {
        let deadline = Date().addingTimeInterval(seconds)
        while Date() < deadline {
            if condition() { return true }
            Thread.sleep(forTimeInterval: 0.01)
        }
        return condition()
    }

    @Test func aListeningNodeAppliesAnothersChangeWhenNotifiedAndByPollingAfterBeingAway() throws {
        let place = try StorePlace(.database)
        let writer = try place.open(), reader = try place.open()
        try writer.seedIfEmpty(from: place.seed, now: start)
        // A poll too slow to be what applies the change: the notification does.
        let watcher = DatabaseWatcher(url: databaseURL!, searchPath: place.schema, store: reader, pollInterval: 60)
        watcher.start()
        defer { watcher.stop() }
        #expect(Self.eventually(10) { watcher.isListening && reader.snapshot.revisions.count == 1 }, "caught up on starting")
        _ = try writer.publish(routes: routes(adding: "heard"), base: 1, author: "ci", message: "heard", now: start)
        #expect(Self.eventually(10) { reader.snapshot.current?.number == 2 }, "applied on the notification")
        #expect(try reader.routes(of: reader.snapshot.current!) == routes(adding: "heard"))
        watcher.stop()
        // Changes committed while no one listened are caught up with once it listens again.
        let polling = DatabaseWatcher(url: databaseURL!, searchPath: place.schema, store: reader, pollInterval: 0.2)
        _ = try writer.rollback(to: 1, base: 2, author: "lead", message: "back", now: start)
        #expect(reader.snapshot.current?.number == 2, "not listening: not applied")
        polling.start()
        defer { polling.stop() }
        #expect(Self.eventually(10) { reader.snapshot.current?.number == 3 })
    }

    @Test func aTokenMadeOrRevokedOnOneNodeHoldsOnEveryNodeOnceItCatchesUp() throws {
        let place = try StorePlace(.database)
        let first = try place.open(), second = try place.open()
        let (_, token) = try first.tokens.create(name: "ci", scopes: [.routesPublish], actor: "test")
        #expect(first.tokens.authenticate(token)?.name == "ci")
        #expect(second.tokens.authenticate(token) == nil, "an unknown token costs the second node no query: not seen yet")
        #expect(try second.catchUp())
        #expect(second.tokens.authenticate(token)?.name == "ci")
        // `waymark token --database` edits the same tokens beside the nodes.
        let cli = try TokenStore.open(medium: DatabaseMedium(url: databaseURL!, searchPath: place.schema))
        #expect(try cli.revoke("ci", actor: "cli") == 1)
        #expect(try first.catchUp() && second.catchUp())
        #expect(first.tokens.authenticate(token) == nil && second.tokens.authenticate(token) == nil)
        // A live name is refused across nodes, as in one directory.
        _ = try first.tokens.create(name: "admin", scopes: [.admin], actor: "test")
        #expect(throws: StoreError.self) { try second.tokens.create(name: "admin", scopes: [.admin], actor: "test") }
        let audit = try first.auditEntries().compactMap { $0["action"]?.stringValue }
        #expect(audit.filter { $0.hasSuffix("Token") } == ["createToken", "revokeToken", "createToken"], "the refused one writes nothing")
    }

    @Test func aDataDirectoryMovesIntoTheDatabaseAndBackWhole() throws {
        let files = try StorePlace(.directory), database = try StorePlace(.database), back = try StorePlace(.directory)
        try files.with { (store: ManifestStore) throws in
            try store.seedIfEmpty(from: files.seed, now: start)
            _ = try store.publish(routes: routes(adding: "a"), base: 1, author: "ci", message: "a", now: start)
            _ = try store.schedule(routes: routes(adding: "later"), at: start.addingTimeInterval(3_600), base: 2, author: "m", message: "later", now: start)
            _ = try store.startRollout(routes: routes(adding: "beta"), base: 2, author: "lead", message: "beta", now: start)
            _ = try store.controlRollout("pause", version: 1, actor: "lead", now: start) { r throws(RolloutRefusal) in try r.pause(version: 1) }
            _ = try store.tokens.create(name: "ci", scopes: [.routesPublish], actor: "test")
            store.recordRefusal(action: "publish", actor: "x", reason: "badToken", now: start)
        }
        try files.with { (source: ManifestStore) throws in
            try database.with { (target: ManifestStore) throws in
                #expect(try StoreCopy.isEmpty(target.medium))
                let summary = try StoreCopy.copy(from: source.medium, to: target.medium)
                #expect(summary.revisions == 3 && summary.schemas == 2 && summary.schedules == 1 && summary.rollout)
                #expect(throws: StoreError.self, "a second copy into what is no longer empty") {
                    try StoreCopy.copy(from: source.medium, to: target.medium)
                }
            }
            // Opened afresh, as a node would start on it.
            try database.with { (copy: ManifestStore) throws in
                #expect(try StoreCopy.differences(source, copy) == [])
                #expect(copy.snapshot.activeRollout?.candidate == 3 && copy.tokens.all.map(\.name) == ["ci"])
            }
        }
        try database.with { (source: ManifestStore) throws in
            try back.with { (target: ManifestStore) throws in _ = try StoreCopy.copy(from: source.medium, to: target.medium) }
            try back.with { (copy: ManifestStore) throws in #expect(try StoreCopy.differences(source, copy) == []) }
        }
        // A document changed in the copy is found: the one served, when the copy is opened;
        // one of history's, when the copy is checked.
        try database.execute("UPDATE revisions SET body = overlay(body PLACING '\\x7e'::bytea FROM 5 FOR 1) WHERE number = 1")
        try files.with { (source: ManifestStore) throws in
            try database.with { (copy: ManifestStore) throws in #expect(throws: StoreError.self) { try StoreCopy.differences(source, copy) } }
        }
        try database.execute("UPDATE revisions SET body = body || '\\x20'::bytea WHERE number = 2")
        #expect(throws: StoreError.self) { try database.open() }
    }

    @Test func eightNodesPublishingFromOneBaseHaveOneWinner() throws {
        let place = try StorePlace(.database)
        try place.open().seedIfEmpty(from: place.seed, now: start)
        let nodes = try (0..<8).map { _ in try place.open() }
        let won = Atomic<Int>(0), stale = Atomic<Int>(0)
        DispatchQueue.concurrentPerform(iterations: nodes.count) { index in
            switch try? nodes[index].publish(routes: routes(adding: "n\(index)"), base: 1, author: "ci", message: "n\(index)", now: start) {
            case .published?: won.add(1, ordering: .relaxed)
            case .staleBase?: stale.add(1, ordering: .relaxed)
            default: break
            }
        }
        #expect(won.load(ordering: .relaxed) == 1 && stale.load(ordering: .relaxed) == 7)
        let reopened = try place.open()
        #expect(reopened.snapshot.revisions.map(\.number) == [1, 2])
    }

    @Test func aDocumentChangedBehindTheStoresBackIsRefusedWhenRead() throws {
        let place = try StorePlace(.database)
        let store = try place.open()
        try store.seedIfEmpty(from: place.seed, now: start)
        _ = try store.publish(routes: routes(adding: "a"), base: 1, author: "ci", message: "a", now: start)
        _ = try store.publish(routes: routes(adding: "b"), base: 2, author: "ci", message: "b", now: start)
        // Revision 1 is history now: read from the database when asked, and checked.
        try place.execute("UPDATE revisions SET body = body || '\\x20'::bytea WHERE number = 1")
        #expect(throws: StoreError.self) { try store.routes(of: store.snapshot.revision(1)!) }
        #expect(try store.routes(of: store.snapshot.revision(3)!) == routes(adding: "b"), "the rest is unaffected")
    }
}


/// A medium whose database has gone away after the store opened.
private final class StandInMedium: StoreMedium, @unchecked Sendable {
    let away = StoreError.database("connection refused")
    var location: String { "the database" }
    var needsRepairAtOpen: Bool { false }
    var keepsTokens: Bool { false }
    var changeIsOneTransaction: Bool { false }
    func list(_ kind: String) throws(StoreError) -> [String] { [] }
    func read(_ name: String) throws(StoreError) -> [UInt8] { throw away }
    func readHead(_ name: String, maximum: Int) throws(StoreError) -> (head: [UInt8], size: Int) { throw away }
    func exists(_ name: String) throws(StoreError) -> Bool { false }
    func write(_ bytes: [UInt8], kind: String, name: String, replacing: Bool, audit entry: [String: JSONValue], time: Date) throws(StoreError) { throw away }
    func appendAudit(_ entries: [[String: JSONValue]], time: Date) throws(StoreError) { throw away }
    func remove(_ names: [String], in kind: String) -> [String] { [] }
    func auditEntries() throws(StoreError) -> [JSONValue] { throw away }
    func exclusively<T>(since marker: Int, _ body: (MediumChanges) throws(StoreError) -> T) throws(StoreError) -> T { throw away }
    func changes(since marker: Int) throws(StoreError) -> MediumChanges { MediumChanges(marker: 0, names: []) }
    func newestMarker() throws(StoreError) -> Int { 0 }
    func copyIn(_ bytes: [UInt8], kind: String, name: String) throws(StoreError) { throw away }
    func copyInAudit(_ entries: [JSONValue]) throws(StoreError) { throw away }
    func auditHistory(_ visit: ([JSONValue]) throws(StoreError) -> Void) throws(StoreError) { throw away }
}
