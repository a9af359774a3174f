import Foundation
import ManifestStore
import RouteEngine
import Testing
import TestSupport

/// A fresh data directory under /tmp, removed at the end.
final class ScratchDirectory {
    let path: String

    init() {
        path = NSTemporaryDirectory() + "waymark-store-\(UUID().uuidString)"
    }

    deinit { try? FileManager.default.removeItem(atPath: path) }

    var seed: String { Fixtures.repositoryRoot.appendingPathComponent("manifests/storefront").path }

    func file(_ relative: String) -> String { path + "/" + relative }

    func names(_ subdirectory: String) -> [String] {
        ((try? FileManager.default.contentsOfDirectory(atPath: file(subdirectory))) ?? []).sorted()
    }

    func bytes(_ relative: String) -> [UInt8] { [UInt8](FileManager.default.contents(atPath: file(relative)) ?? Data()) }

    /// Flips bits of the byte `fromEnd` bytes before the end of a file: silent corruption.
    func flip(_ relative: String, fromEnd: Int, mask: UInt8) {
        var contents = bytes(relative)
        contents[contents.count - fromEnd] ^= mask
        write(relative, contents)
    }

    func write(_ relative: String, _ bytes: [UInt8]) { _ = FileManager.default.createFile(atPath: file(relative), contents: Data(bytes)) }
}

let now = Fixtures.date("2026-11-21T10:00:00Z")

func seeded(_ scratch: ScratchDirectory) throws -> ManifestStore {
    let store = try ManifestStore.open(at: scratch.path).store
    #expect(try store.seedIfEmpty(from: scratch.seed, now: now))
    return store
}

/// The storefront routes with one more campaign route: a valid next revision.
func routesWithCampaign(_ id: String = "winter-sale") -> [UInt8] {
    guard case .object(var document) = Fixtures.storefrontRoutesJSON, case .array(var routes)? = document["routes"] else { return [] }
    routes.append(["id": .string(id), "patterns": [.string("/campaign/\(id)")], "destination": "home", "owner": "marketing"])
    document["routes"] = .array(routes)
    return JSONValue.object(document).serializedBytes(pretty: true)
}

@Suite("Manifest store on disk", .serialized)
struct ManifestStoreTests {
    @Test func seedingRegistersTheSchemasAndPublishesRevisionOne() throws {
        let scratch = ScratchDirectory()
        let store = try seeded(scratch)
        let snapshot = store.snapshot
        #expect(snapshot.schemas.keys.sorted().map(\.description) == ["ios 5.2.0", "ios 5.3.0"])
        #expect(snapshot.revisions.map(\.number) == [1])
        #expect(snapshot.current?.author == "seed")
        #expect(snapshot.current?.parent == nil)
        #expect(scratch.names("revisions") == ["00000001"])
        #expect(try !store.seedIfEmpty(from: scratch.seed, now: now), "a second seed changes nothing")
    }

    @Test func reopeningGivesBackEverythingStored() throws {
        let scratch = ScratchDirectory()
        var before: StoreSnapshot
        do {
            let store = try seeded(scratch)
            guard case .published = try store.publish(routes: routesWithCampaign(), base: 1, author: "marketing", message: "Winter", now: now) else {
                Issue.record("publish refused")
                return
            }
            before = store.snapshot
        }
        let (reopened, report) = try ManifestStore.open(at: scratch.path)
        #expect(reopened.snapshot.revisions == before.revisions)
        #expect(reopened.snapshot.schemas == before.schemas)
        #expect(report.recoveredAuditEntries == 0 && report.removedTemporaries.isEmpty && report.truncatedAuditBytes == 0)
        #expect(reopened.snapshot.revision(2)?.message == "Winter")
        #expect(reopened.snapshot.revision(2)?.parent == 1)
    }

    @Test func aStaleBaseIsRefusedAndChangesNothing() throws {
        let scratch = ScratchDirectory()
        let store = try seeded(scratch)
        guard case .published = try store.publish(routes: routesWithCampaign("a"), base: 1, author: "alice", message: "", now: now) else {
            Issue.record("first publish refused")
            return
        }
        // Bob started from revision 1 too.
        guard case .staleBase(let current) = try store.publish(routes: routesWithCampaign("b"), base: 1, author: "bob", message: "", now: now) else {
            Issue.record("a stale base was accepted")
            return
        }
        #expect(current == 2)
        #expect(store.snapshot.revisions.count == 2)
        #expect(scratch.names("revisions") == ["00000001", "00000002"])
        let last = try store.auditEntries().last
        #expect(last?["actor"]?.stringValue == "bob" && last?["reason"]?.stringValue == "staleBase")
        guard case .staleBase = try store.publish(routes: routesWithCampaign("c"), base: nil, author: "carol", message: "", now: now) else {
            Issue.record("no base on a store with revisions was accepted")
            return
        }
    }

    static let invalidDocuments: [(String, String)] = [
        ("not JSON", "{\"format\": "),
        ("not the routes format", "{\"format\": \"something/1\", \"app\": \"storefront\", \"routes\": []}"),
        ("another app", "{\"format\": \"waymark.routes/1\", \"app\": \"other\", \"routes\": []}"),
        ("unknown destination", "{\"format\": \"waymark.routes/1\", \"app\": \"storefront\", \"routes\": [{\"id\": \"x\", \"patterns\": [\"/x\"], \"destination\": \"nowhere\", \"owner\": \"m\"}]}"),
    ]

    @Test(arguments: invalidDocuments)
    func invalidDocumentsAreRefusedWithTheReport(name: String, document: String) throws {
        let scratch = ScratchDirectory()
        let store = try seeded(scratch)
        let auditBefore = try store.auditEntries().count
        guard case .invalid(let report) = try store.publish(routes: Array(document.utf8), base: 1, author: "m", message: "", now: now) else {
            Issue.record("\(name) was published")
            return
        }
        #expect(!report.errors.isEmpty)
        #expect(store.snapshot.revisions.count == 1)
        #expect(scratch.names("revisions") == ["00000001"], "no file was written")
        #expect(try store.auditEntries().count == auditBefore + 1, "the refusal is audited")
        #expect(try store.auditEntries().last?["reason"]?.stringValue == "invalid")
    }

    @Test("A publish that changes nothing creates nothing: the same content, compared canonically")
    func unchangedPublish() throws {
        let scratch = ScratchDirectory()
        let store = try seeded(scratch)
        let seededRoutes = try store.routes(of: store.snapshot.current!)
        let auditBefore = try store.auditEntries().count
        // Key order and whitespace do not make new content; a changed value does.
        let reordered = Array(try JSONParser().parse(seededRoutes).serialized().utf8)
        for routes in [seededRoutes, reordered, try JSONParser().parse(seededRoutes).serializedBytes(pretty: true)] {
            guard case .unchanged(let revision) = try store.publish(routes: routes, base: 1, author: "ci", message: "again", now: now) else {
                Issue.record("published the same routes again")
                return
            }
            #expect(revision.number == 1)
        }
        #expect(store.snapshot.revisions.count == 1)
        #expect(try store.auditEntries().count == auditBefore, "nothing changed, nothing audited")
        #expect(scratch.names("revisions") == ["00000001"])
        // A stale base is still stale, whatever the content.
        guard case .published = try store.publish(routes: routesWithCampaign(), base: 1, author: "m", message: "", now: now) else {
            Issue.record("refused")
            return
        }
        guard case .staleBase = try store.publish(routes: routesWithCampaign(), base: 1, author: "m", message: "", now: now) else {
            Issue.record("a stale base was accepted")
            return
        }
        // A rollback to what is current changes nothing either.
        guard case .unchanged(let current) = try store.rollback(to: 2, base: 2, author: "ops", message: "", now: now) else {
            Issue.record("rolled back to the current content")
            return
        }
        #expect(current.number == 2)
    }

    @Test func rollbackRepublishesAnOldRevision() throws {
        let scratch = ScratchDirectory()
        do {
            let store = try seeded(scratch)
            _ = try store.publish(routes: routesWithCampaign(), base: 1, author: "m", message: "", now: now)
            guard case .published(let revision) = try store.rollback(to: 1, base: 2, author: "ops", message: "Undo", now: now) else {
                Issue.record("rollback refused")
                return
            }
            #expect(revision.number == 3 && revision.restores == 1 && revision.parent == 2)
            #expect(revision.sha256 == store.snapshot.revision(1)?.sha256)
            guard case .unknownRevision(9) = try store.rollback(to: 9, base: 3, author: "ops", message: "", now: now) else {
                Issue.record("rollback to a missing revision accepted")
                return
            }
        }
        let reopened = try ManifestStore.open(at: scratch.path).store
        #expect(reopened.snapshot.revision(3)?.restores == 1)
    }

    @Test func schemaRegistrationChecksWhatItIsGiven() throws {
        let scratch = ScratchDirectory()
        let store = try seeded(scratch)
        let schema53 = scratch.bytes("schemas/ios@5.3.0")  // a record: header line + body
        let body = Array(schema53[(schema53.firstIndex(of: UInt8(ascii: "\n"))! + 1)...])
        guard case .keyMismatch(let key) = try store.registerSchema(body, expected: SchemaKey(platform: "ios", version: "9.9.9"), author: "ci", now: now) else {
            Issue.record("a schema registered under another build's key")
            return
        }
        #expect(key.version == "5.3.0")
        guard case .registered(_, replaced: true) = try store.registerSchema(body, expected: SchemaKey(platform: "ios", version: "5.3.0"), author: "ci", now: now) else {
            Issue.record("re-registration refused")
            return
        }
        let otherApp = String(decoding: body, as: UTF8.self).replacingOccurrences(of: "\"app\": \"storefront\"", with: "\"app\": \"other\"")
        guard case .wrongApp(let app) = try store.registerSchema(Array(otherApp.utf8), expected: nil, author: "ci", now: now) else {
            Issue.record("a schema for another app was registered")
            return
        }
        #expect(app == "storefront")
        guard case .invalid(let problems) = try store.registerSchema(Array("{\"format\": 1}".utf8), expected: nil, author: "ci", now: now) else {
            Issue.record("an invalid schema was registered")
            return
        }
        #expect(!problems.isEmpty)
        #expect(store.snapshot.schemas.count == 2)
    }

    // MARK: Damage and crashes

    /// (what is done to the store, the damaged file the refusal names, a word of its reason)
    static let damages: [(String, @Sendable (ScratchDirectory) -> Void, String, String)] = [
        ("a flipped byte in a body", { $0.flip("revisions/00000002", fromEnd: 10, mask: 0x20) }, "revisions/00000002", "SHA-256"),
        ("a truncated revision", { scratch in
            let bytes = scratch.bytes("revisions/00000002")
            scratch.write("revisions/00000002", Array(bytes.prefix(bytes.count / 2)))
        }, "revisions/00000002", "bytes"),
        ("an empty revision", { $0.write("revisions/00000002", []) }, "revisions/00000002", "no header"),
        ("a gap in the numbering", { scratch in
            try? FileManager.default.moveItem(atPath: scratch.file("revisions/00000002"), toPath: scratch.file("revisions/00000003"))
        }, "revisions/00000003", "without gaps"),
        ("a damaged schema", { $0.flip("schemas/ios@5.2.0", fromEnd: 3, mask: 0x01) }, "schemas/ios@5.2.0", "SHA-256"),
        ("a schema under another build's name", { scratch in
            try? FileManager.default.copyItem(atPath: scratch.file("schemas/ios@5.2.0"), toPath: scratch.file("schemas/ios@7.0.0"))
        }, "schemas/ios@7.0.0", "ios 5.2.0"),
    ]

    @Test(arguments: damages)
    func aDamagedStoreIsRefusedNamingTheFile(name: String, damage: @Sendable (ScratchDirectory) -> Void, file: String, reason: String) throws {
        let scratch = ScratchDirectory()
        do {
            let store = try seeded(scratch)
            _ = try store.publish(routes: routesWithCampaign(), base: 1, author: "m", message: "", now: now)
        }
        damage(scratch)
        #expect {
            _ = try ManifestStore.open(at: scratch.path)
        } throws: { error in
            guard case .damaged(let directory, let named, let why)? = error as? StoreError else { return false }
            return directory == scratch.path && named == file && why.contains(reason)
        }
    }

    @Test func staleTemporariesAreRemovedOnOpen() throws {
        let scratch = ScratchDirectory()
        _ = try seeded(scratch)
        scratch.write("revisions/.tmp-00000002-123-1", Array("half a revi".utf8))
        scratch.write("schemas/.tmp-ios@6.0.0-123-1", [])
        scratch.write(".tmp-tokens.json-123-1", [])
        let (store, report) = try ManifestStore.open(at: scratch.path)
        #expect(report.removedTemporaries.sorted() == ["./.tmp-tokens.json-123-1", "revisions/.tmp-00000002-123-1", "schemas/.tmp-ios@6.0.0-123-1"])
        #expect(scratch.names("revisions") == ["00000001"])
        #expect(store.snapshot.revisions.count == 1)
    }

    @Test func aTornAuditTailIsCutAndMissingEntriesRecovered() throws {
        let scratch = ScratchDirectory()
        do {
            let store = try seeded(scratch)
            _ = try store.publish(routes: routesWithCampaign(), base: 1, author: "m", message: "", now: now)
        }
        // Crash after revision 2 was renamed into place but before its audit line was whole.
        var log = scratch.bytes("audit.log")
        let lines = log.split(separator: UInt8(ascii: "\n"))
        log = Array(log.dropLast(lines.last!.count + 1)) + Array(lines.last!.prefix(20))
        scratch.write("audit.log", log)
        let (store, report) = try ManifestStore.open(at: scratch.path)
        #expect(report.truncatedAuditBytes == 20)
        #expect(report.recoveredAuditEntries == 1)
        let last = try store.auditEntries().last
        #expect(last?["revision"]?.intValue == 2 && last?["recovered"]?.boolValue == true)
        #expect(scratch.bytes("audit.log").last == UInt8(ascii: "\n"))
    }

    @Test func aSecondProcessCannotOpenTheSameDirectory() throws {
        let scratch = ScratchDirectory()
        let store = try seeded(scratch)
        // flock locks belong to the open file description, so a second open in this process conflicts too.
        #expect {
            _ = try ManifestStore.open(at: scratch.path)
        } throws: { error in "\(error)".contains("in use by another waymark process") }
        _ = store
    }
}
