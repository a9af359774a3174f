import Foundation
import ManifestStore
import RouteEngine
import Testing
import TestSupport

/// History on disk: opening reads each revision's header, the documents served are kept
/// in memory, every other one is read from its file when asked and checked then.
extension PublishOutcome {
    /// The number of the revision a publish stored, nil for anything else.
    var publishedNumber: Int? {
        if case .published(let revision) = self { return revision.number }
        return nil
    }
}

@Suite("Revision history on disk", .serialized)
struct HistoryTests {
    /// Revisions 1 (seed), 2 and 3 (campaigns): 3 is current, 1 and 2 are history.
    func history(_ scratch: ScratchDirectory) throws -> ManifestStore {
        let store = try seeded(scratch)
        #expect(try store.publish(routes: routesWithCampaign("a"), base: 1, author: "m", message: "a", now: now).publishedNumber == 2)
        #expect(try store.publish(routes: routesWithCampaign("b"), base: 2, author: "m", message: "b", now: now).publishedNumber == 3)
        return store
    }

    @Test func oldRevisionsAreReadFromDiskExactlyAsPublished() throws {
        let scratch = ScratchDirectory()
        do { _ = try history(scratch) }
        let store = try ManifestStore.open(at: scratch.path).store
        let snapshot = store.snapshot
        #expect(snapshot.pinned == [3])
        #expect(try store.routes(of: snapshot.revision(2)!) == routesWithCampaign("a"))
        #expect(try store.routes(of: snapshot.revision(3)!) == routesWithCampaign("b"))
        #expect(try SHA256.hex(store.routes(of: snapshot.revision(1)!)) == snapshot.revision(1)!.sha256)
        #expect(snapshot.revision(2)!.bytes == routesWithCampaign("a").count)
    }

    /// (what is done to revision 1's file, a word of the reason its read gives)
    static let damages: [(String, @Sendable (ScratchDirectory) -> Void, String)] = [
        ("a flipped byte in its body", { $0.flip("revisions/00000001", fromEnd: 10, mask: 0x20) }, "SHA-256"),
        ("its body replaced by another of the same length", { scratch in
            var bytes = scratch.bytes("revisions/00000001")
            let newline = bytes.firstIndex(of: UInt8(ascii: "\n"))!
            bytes[(newline + 1)...].withUnsafeMutableBufferPointer { body in body.update(repeating: UInt8(ascii: " ")) }
            scratch.write("revisions/00000001", bytes)
        }, "SHA-256"),
    ]

    @Test(arguments: damages)
    func aDamagedOldRevisionIsAClearErrorWhenReadAndNothingElseBreaks(name: String, damage: @Sendable (ScratchDirectory) -> Void, reason: String) throws {
        let scratch = ScratchDirectory()
        do { _ = try history(scratch) }
        damage(scratch)
        // The store opens: history's hashes are checked when it is read, not at start.
        let store = try ManifestStore.open(at: scratch.path).store
        let isDamaged = { (error: any Error) -> Bool in
            guard case .damaged(let directory, let file, let why)? = error as? StoreError else { return false }
            return directory == scratch.path && file == "revisions/00000001" && why.contains(reason)
        }
        #expect(throws: (any Error).self, "reading it") { _ = try store.routes(of: store.snapshot.revision(1)!) }
        #expect { _ = try store.routes(of: store.snapshot.revision(1)!) } throws: { isDamaged($0) }
        // A rollback to it is refused the same way and stores nothing.
        #expect { _ = try store.rollback(to: 1, base: 3, author: "m", message: "", now: now) } throws: { isDamaged($0) }
        #expect(store.snapshot.revisions.count == 3)
        // The other revisions read, and publishing and rolling back to them work.
        #expect(try store.routes(of: store.snapshot.revision(2)!) == routesWithCampaign("a"))
        #expect(try store.rollback(to: 2, base: 3, author: "m", message: "", now: now).publishedNumber == 4)
        #expect(try store.publish(routes: routesWithCampaign("c"), base: 4, author: "m", message: "", now: now).publishedNumber == 5)
    }

    @Test func aTruncatedOldRevisionIsRefusedAtStartByItsLength() throws {
        let scratch = ScratchDirectory()
        do { _ = try history(scratch) }
        let bytes = scratch.bytes("revisions/00000001")
        scratch.write("revisions/00000001", Array(bytes.dropLast(7)))
        #expect {
            _ = try ManifestStore.open(at: scratch.path)
        } throws: { error in
            guard case .damaged(_, let file, let why)? = error as? StoreError else { return false }
            return file == "revisions/00000001" && why.contains("bytes")
        }
    }

    @Test func theStableAndTheCandidateAreKeptInMemoryDuringARollout() throws {
        let scratch = ScratchDirectory()
        do {
            let store = try history(scratch)
            guard case .started = try store.startRollout(routes: routesWithCampaign("d"), base: 3, author: "m", message: "", now: now) else {
                Issue.record("the rollout did not start")
                return
            }
            #expect(store.snapshot.pinned == [3, 4])
        }
        let store = try ManifestStore.open(at: scratch.path).store
        #expect(store.snapshot.pinned == [3, 4])
        #expect(store.snapshot.current?.number == 3)
        #expect(try store.routes(of: store.snapshot.revision(4)!) == routesWithCampaign("d"))
    }

    @Test func aScheduledPublishsRoutesAreReadFromDiskWhenItFires() throws {
        let scratch = ScratchDirectory()
        let at = now.addingTimeInterval(60)
        do {
            let store = try history(scratch)
            guard case .scheduled(let item) = try store.schedule(routes: routesWithCampaign("e"), at: at, base: 3, author: "m", message: "e", now: now) else {
                Issue.record("not scheduled")
                return
            }
            #expect(item.bytes == routesWithCampaign("e").count && item.sha256 == SHA256.hex(routesWithCampaign("e")))
        }
        do {
            let store = try ManifestStore.open(at: scratch.path).store
            let item = store.snapshot.schedules[0]
            #expect(try store.scheduledRoutes(of: item) == routesWithCampaign("e"))
            let fired = try store.fireDueSchedules(now: at.addingTimeInterval(1))
            #expect(fired.map(\.status) == [.fired(revision: 4)])
            #expect(try store.routes(of: store.snapshot.revision(4)!) == routesWithCampaign("e"))
        }
        // Its record was rewritten with its new status and without its routes: revision 4 holds them.
        let reopened = try ManifestStore.open(at: scratch.path).store
        #expect(reopened.snapshot.schedules[0].status == .fired(revision: 4))
        #expect(reopened.snapshot.schedules[0].bytes == 0)
        #expect(try reopened.scheduledRoutes(of: reopened.snapshot.schedules[0]) == [])
        #expect(try schedulesBytes(scratch) < 1_024)
    }

    /// Only pending schedules are bounded (count and bytes), so an ended one keeps no
    /// document: scheduling and cancelling in a loop cannot fill the disk.
    @Test func aCancelledScheduleKeepsNoDocument() throws {
        let scratch = ScratchDirectory()
        do {
            let store = try history(scratch)
            guard case .scheduled(let item) = try store.schedule(routes: routesWithCampaign("f"), at: now.addingTimeInterval(60), base: 3,
                                                                 author: "m", message: "f", now: now) else {
                Issue.record("not scheduled")
                return
            }
            #expect(try schedulesBytes(scratch) > routesWithCampaign("f").count)
            guard case .cancelled(let cancelled) = try store.cancelSchedule(item.id, actor: "m", now: now) else {
                Issue.record("not cancelled")
                return
            }
            #expect(cancelled.bytes == 0)
            #expect(try schedulesBytes(scratch) < 1_024)
        }
        let reopened = try ManifestStore.open(at: scratch.path).store
        #expect(reopened.snapshot.schedules[0].status == .cancelled(by: "m"))
        #expect(try reopened.scheduledRoutes(of: reopened.snapshot.schedules[0]) == [])
    }

    @Test func aDamagedScheduleIsSkippedNamingItsFileAndTheNextOneStillFires() throws {
        let scratch = ScratchDirectory()
        let at = now.addingTimeInterval(60)
        do {
            let store = try history(scratch)
            _ = try store.schedule(routes: routesWithCampaign("e"), at: at, base: 3, author: "m", message: "e", now: now)
        }
        scratch.flip("schedules/00000001", fromEnd: 10, mask: 0x20)
        let store = try ManifestStore.open(at: scratch.path).store
        #expect { _ = try store.scheduledRoutes(of: store.snapshot.schedules[0]) } throws: { error in
            guard case .damaged(_, let file, _)? = error as? StoreError else { return false }
            return file == "schedules/00000001"
        }
        _ = try store.schedule(routes: routesWithCampaign("f"), at: at.addingTimeInterval(1), base: 3, author: "m", message: "f", now: now)
        let reason = try skippedThenFired(store, at: at)
        #expect(reason.contains("schedules/00000001") && reason.contains("damaged") && !reason.contains(scratch.path))
        #expect(store.snapshot.revisions.count == 4)
    }

    @Test func aScheduleWhoseFileVanishedIsSkippedSayingSoAndTheNextOneStillFires() throws {
        let scratch = ScratchDirectory()
        let at = now.addingTimeInterval(60)
        do {
            let store = try history(scratch)
            _ = try store.schedule(routes: routesWithCampaign("e"), at: at, base: 3, author: "m", message: "e", now: now)
            _ = try store.schedule(routes: routesWithCampaign("f"), at: at.addingTimeInterval(1), base: 3, author: "m", message: "f", now: now)
            try FileManager.default.removeItem(atPath: scratch.path + "/schedules/00000001")
            let reason = try skippedThenFired(store, at: at)
            #expect(reason.contains("schedules/00000001") && reason.contains("missing") && !reason.contains(scratch.path))
        }
        let reopened = try ManifestStore.open(at: scratch.path).store
        #expect(reopened.snapshot.schedules.map(\.status.name) == ["skipped", "fired"])
    }
}

/// Fires the two schedules due at `at` and `at` + 1 s on revision 3: the first must be
/// skipped (its reason is returned, "" if it was not) and the second fire as revision 4.
private func skippedThenFired(_ store: ManifestStore, at: Date) throws -> String {
    let changed = try store.fireDueSchedules(now: at.addingTimeInterval(2))
    guard changed.count == 2, case .skipped(let reason) = changed[0].status else {
        Issue.record("\(changed.map(\.status))")
        return ""
    }
    #expect(changed[1].status == .fired(revision: 4))
    return reason
}

/// The bytes of every file in `DIR/schedules/` (each test here stores one schedule).
private func schedulesBytes(_ scratch: ScratchDirectory) throws -> Int {
    let directory = scratch.path + "/schedules"
    return try FileManager.default.contentsOfDirectory(atPath: directory).reduce(0) { total, name in
        total + (try FileManager.default.attributesOfItem(atPath: directory + "/" + name)[.size] as? Int ?? 0)
    }
}
