import Foundation
import ManifestStore
import RouteEngine
import Testing
import TestSupport

/// Scheduled publishing in the store: refused up front like a publish, fired at its time
/// (or at the first look after a stopped daemon missed it), skipped with a reason when the
/// routes no longer validate or the base moved, cancelled, durable across reopening, and
/// audited — a crash between the publish and the schedule's status is recognised.
@Suite("Scheduled publishing", .serialized)
struct ScheduleTests {
    static func minutes(_ count: Double) -> Date { now.addingTimeInterval(count * 60) }

    @Test("Scheduled, persisted, fired at its time as a revision, audited")
    func firesAtItsTime() throws {
        let scratch = ScratchDirectory()
        do {
            let store = try seeded(scratch)
            guard case .scheduled(let item) = try store.schedule(routes: routesWithCampaign("at-nine"), at: Self.minutes(60), base: 1,
                                                                 author: "marketing", message: "Launch at nine", now: now) else {
                Issue.record("not scheduled")
                return
            }
            #expect(item.id == 1 && item.status == .pending)
            #expect(try store.fireDueSchedules(now: Self.minutes(59)).isEmpty, "not yet")
            #expect(store.snapshot.revisions.count == 1)
        }
        // A restart keeps it; the look after its time fires it.
        do {
            let store = try ManifestStore.open(at: scratch.path).store
            #expect(store.snapshot.schedules.map(\.status) == [.pending])
            let fired = try store.fireDueSchedules(now: Self.minutes(61))
            #expect(fired.map(\.status) == [.fired(revision: 2)])
            #expect(store.snapshot.current?.number == 2 && store.snapshot.current?.author == "marketing" && store.snapshot.current?.message == "Launch at nine")
            #expect(try store.fireDueSchedules(now: Self.minutes(120)).isEmpty, "fires once")
            let actions = try store.auditEntries().compactMap { $0["action"]?.stringValue }
            #expect(Array(actions.suffix(3)) == ["schedule", "publish", "fireSchedule"])
        }
        #expect(try ManifestStore.open(at: scratch.path).store.snapshot.schedules.first?.status == .fired(revision: 2))
    }

    @Test("Refused up front, like a publish: bad times, a stale base, invalid routes — nothing stored")
    func refusals() throws {
        let scratch = ScratchDirectory()
        let store = try seeded(scratch)
        let routes = routesWithCampaign()
        guard case .badTime = try store.schedule(routes: routes, at: Self.minutes(-1), base: 1, author: "m", message: "", now: now),
              case .badTime = try store.schedule(routes: routes, at: Self.minutes(60 * 24 * 400), base: 1, author: "m", message: "", now: now),
              case .staleBase(current: 1) = try store.schedule(routes: routes, at: Self.minutes(5), base: 7, author: "m", message: "", now: now),
              case .invalid = try store.schedule(routes: Array(#"{"format": "waymark.routes/1", "app": "storefront", "routes": [{"id": "x"}]}"#.utf8),
                                                 at: Self.minutes(5), base: 1, author: "m", message: "", now: now)
        else {
            Issue.record("a bad schedule was accepted")
            return
        }
        #expect(store.snapshot.schedules.isEmpty && scratch.names("schedules").isEmpty)
    }

    @Test("Pending schedules are bounded: a count, and the bytes of routes they hold together")
    func pendingSchedulesAreBounded() throws {
        let scratch = ScratchDirectory()
        let store = try seeded(scratch)
        let routes = routesWithCampaign()
        for index in 0..<ManifestStore.maximumPendingSchedules {
            guard case .scheduled = try store.schedule(routes: routes, at: Self.minutes(Double(10 + index)), base: 1, author: "m", message: "", now: now) else {
                Issue.record("schedule \(index) was refused")
                return
            }
        }
        guard case .full(let message) = try store.schedule(routes: routes, at: Self.minutes(500), base: 1, author: "m", message: "", now: now) else {
            Issue.record("one past the count was scheduled")
            return
        }
        #expect(message.contains("at most \(ManifestStore.maximumPendingSchedules)"))
        #expect(store.snapshot.schedules.count == ManifestStore.maximumPendingSchedules)
        // One cancelled makes room again.
        _ = try store.cancelSchedule(1, actor: "m", now: now)
        guard case .scheduled = try store.schedule(routes: routes, at: Self.minutes(501), base: 1, author: "m", message: "", now: now) else {
            Issue.record("a cancelled schedule did not make room")
            return
        }
    }

    @Test("Pending schedules' routes together hold at most their bytes (maximumPendingScheduleBytes; 8 MiB here)")
    func pendingScheduleBytesAreBounded() throws {
        let scratch = ScratchDirectory()
        _ = try seeded(scratch)
        // 8 MiB, not the daemon's 64: the same rule, filled with an eighth of the documents to validate.
        let store = try ManifestStore.open(at: scratch.path, pendingScheduleBytes: 8 << 20).store
        // One route with a note near its limit, many times: a document of about 1.2 MiB.
        guard case .object(var document) = Fixtures.storefrontRoutesJSON, case .array(var routes)? = document["routes"] else { return }
        for index in 0..<300 {
            routes.append(["id": .string("c\(index)"), "patterns": [.string("/campaign/c\(index)")], "destination": "home",
                           "notes": .string(String(repeating: "n", count: 4_000))])
        }
        document["routes"] = .array(routes)
        let big = JSONValue.object(document).serializedBytes(pretty: true)
        let fits = (8 << 20) / big.count
        #expect(fits >= 2 && fits < ManifestStore.maximumPendingSchedules)
        for index in 0..<fits {
            guard case .scheduled = try store.schedule(routes: big, at: Self.minutes(Double(10 + index)), base: 1, author: "m", message: "", now: now) else {
                Issue.record("schedule \(index) of \(fits) was refused")
                return
            }
        }
        guard case .full = try store.schedule(routes: big, at: Self.minutes(500), base: 1, author: "m", message: "", now: now) else {
            Issue.record("routes past the bytes were scheduled")
            return
        }
        #expect(store.snapshot.schedules.count == fits)
    }

    @Test("Skipped, with the reason, when the base moved or the routes no longer validate")
    func skipped() throws {
        let scratch = ScratchDirectory()
        let store = try seeded(scratch)
        // One scheduled on revision 1, then someone publishes revision 2 by hand.
        _ = try store.schedule(routes: routesWithCampaign("a"), at: Self.minutes(10), base: 1, author: "m", message: "a", now: now)
        _ = try store.publish(routes: routesWithCampaign("b"), base: 1, author: "ops", message: "by hand", now: Self.minutes(1))
        // One on revision 2 whose route only 5.3.0 can open; 5.3.0's schema then loses that destination.
        var document = try JSONParser().parse(routesWithCampaign("b"))
        if case .object(var object) = document, case .array(var routes)? = object["routes"] {
            routes.append(["id": "arrivals-2", "patterns": ["/arrivals"], "destination": "newArrivals"])
            object["routes"] = .array(routes)
            document = .object(object)
        }
        guard case .scheduled = try store.schedule(routes: document.serializedBytes(), at: Self.minutes(10), base: 2, author: "m", message: "c",
                                                   now: Self.minutes(2)) else {
            Issue.record("not scheduled")
            return
        }
        _ = try store.fireDueSchedules(now: Self.minutes(3))
        // (Scheduled on revision 2, which is still current, so only the schemas change.)
        let schema = String(decoding: try Data(contentsOf: Fixtures.repositoryRoot.appendingPathComponent("manifests/storefront/schema-ios-5.3.0.json")), as: UTF8.self)
        var schemaJSON = try JSONParser().parse(schema)
        if case .object(var object) = schemaJSON, case .object(var destinations)? = object["destinations"] {
            destinations["newArrivals"] = nil
            object["destinations"] = .object(destinations)
            schemaJSON = .object(object)
        }
        guard case .registered = try store.registerSchema(schemaJSON.serializedBytes(), expected: SchemaKey(platform: "ios", version: "5.3.0"),
                                                          author: "ci", now: Self.minutes(4)) else {
            Issue.record("schema not registered")
            return
        }
        let fired = try store.fireDueSchedules(now: Self.minutes(11))
        #expect(fired.map(\.status.name) == ["skipped", "skipped"])
        guard case .skipped(let stale) = fired[0].status, case .skipped(let invalid) = fired[1].status else { return }
        #expect(stale.hasPrefix("Revision 2 was published after revision 1"), "\(stale)")
        #expect(invalid.contains("no longer validate"), "\(invalid)")
        #expect(store.snapshot.revisions.count == 2, "neither was published")
        let skips = try store.auditEntries().filter { $0["outcome"]?.stringValue == "skipped" }
        #expect(skips.count == 2 && skips.allSatisfy { $0["reason"]?.stringValue?.isEmpty == false })
    }

    @Test("Many due at once fire up to a limit at a time, oldest first; the rest, on a base no longer current, are skipped")
    func manyDueFireALimitAtATime() throws {
        let scratch = ScratchDirectory()
        let store = try seeded(scratch)
        for (index, name) in ["first", "second", "third"].enumerated() {
            guard case .scheduled = try store.schedule(routes: routesWithCampaign(name), at: Self.minutes(10 + Double(index)), base: 1,
                                                       author: "m", message: name, now: now) else {
                Issue.record("\(name) not scheduled")
                return
            }
        }
        #expect(try store.fireDueSchedules(now: Self.minutes(20), limit: 1).map(\.status) == [.fired(revision: 2)], "the oldest alone")
        #expect(store.snapshot.schedules.map(\.status.name) == ["fired", "pending", "pending"])
        let next = try store.fireDueSchedules(now: Self.minutes(20), limit: 1)
        #expect(next.map(\.id) == [2] && next.first?.status.name == "skipped")
        #expect(try store.fireDueSchedules(now: Self.minutes(20)).map(\.id) == [3], "no limit: all that are left")
        #expect(store.snapshot.revisions.count == 2 && !store.hasDueSchedules(now: Self.minutes(20)))
    }

    @Test("Cancelled before its time it never fires; cancelling twice or an unknown one is refused")
    func cancel() throws {
        let scratch = ScratchDirectory()
        let store = try seeded(scratch)
        _ = try store.schedule(routes: routesWithCampaign(), at: Self.minutes(10), base: 1, author: "m", message: "", now: now)
        guard case .cancelled(let item) = try store.cancelSchedule(1, actor: "lead", now: Self.minutes(1)) else {
            Issue.record("not cancelled")
            return
        }
        #expect(item.status == .cancelled(by: "lead"))
        guard case .notPending = try store.cancelSchedule(1, actor: "lead", now: Self.minutes(2)),
              case .unknownSchedule(9) = try store.cancelSchedule(9, actor: "lead", now: Self.minutes(2)) else {
            Issue.record("refusals")
            return
        }
        #expect(try store.fireDueSchedules(now: Self.minutes(20)).isEmpty)
        #expect(store.snapshot.revisions.count == 1)
    }

    @Test("Only the last ended schedules are kept: those that ended first go with their files, a pending one never, and ids are never reused")
    func endedSchedulesAreBounded() throws {
        let scratch = ScratchDirectory()
        do { _ = try seeded(scratch) }
        do {
            let store = try ManifestStore.open(at: scratch.path, endedSchedulesKept: 3).store
            // 1 waits throughout; 2…6 are scheduled and cancelled (6 ends after a restart).
            for index in 0..<5 {
                guard case .scheduled(let item) = try store.schedule(routes: routesWithCampaign(), at: Self.minutes(Double(10 + index)), base: 1,
                                                                     author: "m", message: "\(index)", now: now) else {
                    Issue.record("schedule \(index)")
                    return
                }
                if index > 0, index < 4 { _ = try store.cancelSchedule(item.id, actor: "m", now: Self.minutes(1)) }
            }
            _ = try store.cancelSchedule(5, actor: "m", now: Self.minutes(1))
            #expect(store.snapshot.schedules.map(\.id) == [1, 3, 4, 5], "2 went once a fourth ended")
            #expect(try FileManager.default.contentsOfDirectory(atPath: scratch.path + "/schedules").sorted() == ["00000001", "00000003", "00000004", "00000005"])
        }
        let reopened = try ManifestStore.open(at: scratch.path, endedSchedulesKept: 3).store
        #expect(reopened.snapshot.schedules.map(\.id) == [1, 3, 4, 5])
        guard case .scheduled(let next) = try reopened.schedule(routes: routesWithCampaign(), at: Self.minutes(30), base: 1, author: "m", message: "",
                                                                now: now) else {
            Issue.record("scheduled after the restart")
            return
        }
        #expect(next.id == 6, "after the highest, never a removed one's")
        // Ended before the others (a clock set back): still kept, being the highest.
        _ = try reopened.cancelSchedule(6, actor: "m", now: now)
        #expect(reopened.snapshot.schedules.map(\.id) == [1, 4, 5, 6])
        #expect(reopened.snapshot.schedules.first?.status == .pending)
        guard case .scheduled(let seventh) = try reopened.schedule(routes: routesWithCampaign(), at: Self.minutes(30), base: 1, author: "m",
                                                                   message: "", now: now) else {
            Issue.record("scheduled again")
            return
        }
        #expect(seventh.id == 7)
        _ = try reopened.cancelSchedule(7, actor: "m", now: Self.minutes(2))
        #expect(reopened.snapshot.schedules.map(\.id) == [1, 4, 5, 7], "6, no longer the highest, ended first")
        guard case .unknownSchedule(3) = try reopened.cancelSchedule(3, actor: "m", now: Self.minutes(2)) else {
            Issue.record("a removed schedule is unknown")
            return
        }
        // It fires as before, and the one that ended first goes.
        #expect(try reopened.fireDueSchedules(now: Self.minutes(11)).map(\.status) == [.fired(revision: 2)])
        #expect(reopened.snapshot.schedules.map(\.id) == [1, 5, 7], "4 ended first")
        #expect(reopened.snapshot.schedules.first?.status == .fired(revision: 2))
    }

    @Test("A crash after the publish and before the schedule's status: the next look finds it fired, not stale")
    func crashBetweenPublishAndStatus() throws {
        let scratch = ScratchDirectory()
        let store = try seeded(scratch)
        _ = try store.schedule(routes: routesWithCampaign("x"), at: Self.minutes(10), base: 1, author: "m", message: "x", now: now)
        // What the fire had done before the crash: the revision, by the schedule's author, with its message.
        _ = try store.publish(routes: routesWithCampaign("x"), base: 1, author: "m", message: "x", now: Self.minutes(10))
        #expect(try store.fireDueSchedules(now: Self.minutes(11)).map(\.status) == [.fired(revision: 2)])
        #expect(store.snapshot.revisions.count == 2)
    }

    @Test("The newest schedule change's audit entry, lost to a crash, is recovered at start")
    func auditRecovered() throws {
        let scratch = ScratchDirectory()
        do {
            let store = try seeded(scratch)
            _ = try store.schedule(routes: routesWithCampaign(), at: Self.minutes(10), base: 1, author: "m", message: "", now: now)
        }
        // The crash: the record is there, its audit line is not.
        let lines = scratch.bytes("audit.log").split(separator: UInt8(ascii: "\n"))
        scratch.write("audit.log", Array(lines.dropLast().joined(separator: [UInt8(ascii: "\n")])) + [UInt8(ascii: "\n")])
        do {
            let (store, report) = try ManifestStore.open(at: scratch.path)
            #expect(report.recoveredAuditEntries == 1)
            let last = try store.auditEntries().last
            #expect(last?["schedule"] == 1 && last?["status"] == "pending" && last?["recovered"] == true)
        }
        // Nothing to recover the second time.
        #expect(try ManifestStore.open(at: scratch.path).report.recoveredAuditEntries == 0)
    }
}
