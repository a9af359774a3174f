import Foundation
import ManifestStore
import RouteEngine
import Testing
import TestSupport

/// The audit log under load and failure: refusals counted per minute, not written one by
/// one; a change whose audit entry cannot be written undone (nothing half made); the log
/// rotated by size and read backwards at start only as far as it must.
@Suite("Audit log", .serialized)
struct AuditTests {
    /// Makes `audit.log` unwritable (a directory in its place), runs `body`, then puts back
    /// the log it had.
    static func withAuditUnwritable(_ scratch: ScratchDirectory, _ body: () throws -> Void) rethrows {
        let log = scratch.bytes("audit.log")
        try? FileManager.default.removeItem(atPath: scratch.file("audit.log"))
        try? FileManager.default.createDirectory(atPath: scratch.file("audit.log"), withIntermediateDirectories: false)
        defer {
            try? FileManager.default.removeItem(atPath: scratch.file("audit.log"))
            scratch.write("audit.log", log)
        }
        try body()
    }

    @Test func aThousandRefusalsInOneMinuteAreOneLine() throws {
        let scratch = ScratchDirectory()
        let store = try seeded(scratch)
        let before = try store.auditEntries().count
        let bytesBefore = scratch.bytes("audit.log").count
        let minute = Fixtures.date("2026-11-21T10:00:00Z")
        for second in 0..<1_000 {
            store.recordRefusal(action: "publish", actor: "anonymous", reason: "noToken", now: minute + Double(second % 60))
        }
        store.recordRefusal(action: "publish", actor: "phone", reason: "wrongScope", now: minute + 30)
        #expect(scratch.bytes("audit.log").count == bytesBefore, "nothing written while the minute lasts")
        // A refusal in the next minute readies the last one's lines (written off any lock).
        store.recordRefusal(action: "publish", actor: "anonymous", reason: "noToken", now: minute + 61)
        let refused = try store.auditEntries().filter { $0["outcome"]?.stringValue == "refused" }
        #expect(refused.count == 3, "\(refused)")
        #expect(refused.first?["count"]?.intValue == 1_000 && refused.first?["reason"]?.stringValue == "noToken")
        #expect(refused.first?["from"]?.stringValue == "2026-11-21T10:00:00Z" && refused.first?["seconds"]?.intValue == 60)
        #expect(refused[1]["count"]?.intValue == 1 && refused[1]["actor"]?.stringValue == "phone")
        #expect(refused.last?["from"]?.stringValue == "2026-11-21T10:01:00Z" && refused.last?["count"]?.intValue == 1)
        #expect(try store.auditEntries().count == before + 3, "each line written once")
    }

    /// A change refused under the writer lock in a new minute, with the last minute's
    /// refusals pending: it once wrote them there, taking the lock again (a crash).
    @Test func aRefusedPublishInANewMinuteDoesNotWriteUnderTheLock() throws {
        let scratch = ScratchDirectory()
        let store = try seeded(scratch)
        let minute = Fixtures.date("2026-11-21T10:00:00Z")
        store.recordRefusal(action: "publish", actor: "anonymous", reason: "noToken", now: minute)
        let outcome = try store.publish(routes: routesWithCampaign(), base: 7, author: "m", message: "", now: minute + 61)
        guard case .staleBase = outcome else {
            Issue.record("\(outcome)")
            return
        }
        let refused = try store.auditEntries().filter { $0["outcome"]?.stringValue == "refused" }
        #expect(refused.map { $0["reason"]?.stringValue } == ["noToken", "staleBase"], "\(refused)")
    }

    @Test func distinctKindsPastTheCapAreCountedTogether() throws {
        let scratch = ScratchDirectory()
        let store = try seeded(scratch)
        let before = try store.auditEntries().count
        for index in 0..<(ManifestStore.refusalKindsPerMinute + 50) {
            store.recordRefusal(action: "publish", actor: "token-\(index)", reason: "wrongScope", now: now)
        }
        let lines = try store.auditEntries().dropFirst(before)
        #expect(lines.count == ManifestStore.refusalKindsPerMinute + 1)
        #expect(lines.last?["actor"]?.stringValue == "(others)" && lines.last?["count"]?.intValue == 50)
    }

    @Test func aPublishWhoseAuditEntryFailsIsUndone() throws {
        let scratch = ScratchDirectory()
        do {
            let store = try seeded(scratch)
            try Self.withAuditUnwritable(scratch) {
                #expect(throws: StoreError.self) { try store.publish(routes: routesWithCampaign(), base: 1, author: "m", message: "", now: now) }
            }
            #expect(scratch.names("revisions") == ["00000001"], "the revision file was removed again")
            #expect(store.snapshot.revisions.count == 1)
            guard case .published(let revision) = try store.publish(routes: routesWithCampaign(), base: 1, author: "m", message: "", now: now) else {
                Issue.record("the publish after the failure was refused")
                return
            }
            #expect(revision.number == 2, "no 'already exists' after the undone attempt")
        }
        let (reopened, report) = try ManifestStore.open(at: scratch.path)
        #expect(reopened.snapshot.revisions.count == 2 && report.recoveredAuditEntries == 0)
    }

    @Test func aSchemaReplacementWhoseAuditEntryFailsPutsTheOldOneBack() throws {
        let scratch = ScratchDirectory()
        var store: ManifestStore? = try seeded(scratch)
        let old = scratch.bytes("schemas/ios@5.3.0")
        let schema = try Data(contentsOf: URL(fileURLWithPath: scratch.seed + "/schema-ios-5.3.0.json"))
        let changed = Array(String(decoding: schema, as: UTF8.self).replacingOccurrences(of: "\"format\"", with: "\"note\": \"changed\", \"format\"").utf8)
        try Self.withAuditUnwritable(scratch) {
            #expect(throws: StoreError.self) {
                try store!.registerSchema(changed, expected: SchemaKey(platform: "ios", version: "5.3.0"), author: "ci", now: now)
            }
        }
        #expect(scratch.bytes("schemas/ios@5.3.0") == old, "the replaced schema is back, byte for byte")
        #expect(scratch.names("schemas") == ["ios@5.2.0", "ios@5.3.0"], "no temporary or backup file left")
        store = nil
        #expect(try ManifestStore.open(at: scratch.path).report.recoveredAuditEntries == 0)
    }

    @Test func aTokenChangeWhoseAuditEntryFailsIsUndone() throws {
        let scratch = ScratchDirectory()
        let store = try seeded(scratch)
        _ = try store.tokens.create(name: "first", scopes: [.manifestRead], actor: "test")
        let before = scratch.bytes("tokens.json")
        try Self.withAuditUnwritable(scratch) {
            #expect(throws: StoreError.self) { _ = try store.tokens.create(name: "second", scopes: [.admin], actor: "test") }
        }
        #expect(scratch.bytes("tokens.json") == before)
        #expect(store.tokens.all.map(\.name) == ["first"])
    }

    @Test("Token changes rotate the log too: every appender goes through the same rotation")
    func tokenChangesRotateTheLog() throws {
        let scratch = ScratchDirectory()
        let store = try ManifestStore.open(at: scratch.path, auditRotationBytes: 512).store
        for index in 0..<12 {
            _ = try store.tokens.create(name: "token-\(index)", scopes: [.manifestRead], rate: .unlimited, actor: "admin")
        }
        #expect(scratch.names(".").contains { $0.hasPrefix("audit-") }, "\(scratch.names("."))")
        #expect(scratch.bytes("audit.log").count < 1_024)
    }

    @Test func theLogIsRotatedBySizeAndStartReadsOnlyItsTail() throws {
        let scratch = ScratchDirectory()
        do {
            let store = try ManifestStore.open(at: scratch.path, auditRotationBytes: 1_024).store
            #expect(try store.seedIfEmpty(from: scratch.seed, now: now))
            for index in 0..<6 {
                _ = try store.publish(routes: routesWithCampaign("c\(index)"), base: index + 1, author: "m", message: "", now: now)
            }
        }
        let rotated = scratch.names(".").filter { $0.hasPrefix("audit-") }
        #expect(!rotated.isEmpty, "\(scratch.names("."))")
        #expect(scratch.bytes("audit.log").count < 2_048)
        // A damaged line early in the log is never read; start-up recovers nothing.
        var log = Array("not json at all\n".utf8) + scratch.bytes("audit.log")
        scratch.write("audit.log", log)
        do {
            let (store, report) = try ManifestStore.open(at: scratch.path)
            #expect(report.recoveredAuditEntries == 0 && report.damagedAuditLines == 0, "\(report)")
            #expect(store.snapshot.revisions.count == 7)
        }
        // Cut the newest entry: only it is recovered.
        log = scratch.bytes("audit.log")
        let lines = log.split(separator: UInt8(ascii: "\n"))
        scratch.write("audit.log", Array(log.dropLast(lines.last!.count + 1)))
        let (store, report) = try ManifestStore.open(at: scratch.path)
        #expect(report.recoveredAuditEntries == 1)
        #expect(try store.auditEntries().last?["revision"]?.intValue == 7)
    }

    @Test func aDamagedLineInTheTailIsSkippedNotFatal() throws {
        let scratch = ScratchDirectory()
        do {
            let store = try seeded(scratch)
            _ = try store.publish(routes: routesWithCampaign(), base: 1, author: "m", message: "", now: now)
        }
        scratch.write("audit.log", scratch.bytes("audit.log") + Array("\u{0}\u{0}garbage from a bad sector\n".utf8))
        let (store, report) = try ManifestStore.open(at: scratch.path)
        #expect(report.damagedAuditLines == 1, "\(report)")
        #expect(report.recoveredAuditEntries == 0, "the publish before the damaged line is still found")
        #expect(store.snapshot.revisions.count == 2)
    }
}
