import Foundation
import ManifestStore
import RouteEngine
import Testing
import TestSupport

/// `ManifestStore.change`: one route's edit applied to whatever is current, a base checked
/// when given, a rollout refusing, an edit's own refusal changing nothing, and the audit
/// line's action known to the store when it opens again (no "recovered" entry for it).
@Suite("Route changes in the store")
struct RouteChangeTests {
    /// Adds a route `id` to whatever document the store hands the edit.
    static func adding(_ id: String) -> (JSONValue?) -> Result<Edited, any Error> {
        { current in
            guard case .object(var document)? = current, case .array(var routes)? = document["routes"] else {
                return .failure(StoreError.badSeed("no document"))
            }
            routes.append(["id": .string(id), "patterns": [.string("/c/\(id)/x")], "destination": "home"])
            document["routes"] = .array(routes)
            let new = JSONValue.object(document)
            return .success(Edited(bytes: new.serializedBytes(pretty: true), parsed: new))
        }
    }

    @Test func aChangeLandsOnWhateverIsCurrentAndIsAuditedAsItself() throws {
        let scratch = ScratchDirectory()
        do {
            let store = try seeded(scratch)
            // Someone publishes first: the change, without a base, lands on revision 2.
            guard case .published = try store.publish(routes: routesWithCampaign(), base: 1, author: "marketer", message: "", now: now) else {
                Issue.record("the publish was refused"); return
            }
            guard case .decided(.published(let revision)) = try store.change(base: nil, author: "cms", message: "Put route a",
                                                                             change: RouteChange(action: "route.put", ids: ["a"]), now: now, edit: Self.adding("a")) else {
                Issue.record("the change was not published"); return
            }
            #expect(revision.number == 3 && revision.parent == 2)
            let routes = try JSONParser().parse(store.routes(of: revision))
            let ids = routes["routes"]?.arrayValue?.compactMap { $0["id"]?.stringValue } ?? []
            #expect(ids.contains("winter-sale") && ids.contains("a"), "neither the publish nor the change is lost")
            // With a base that is no longer current: refused, nothing stored.
            guard case .decided(.staleBase(let current)) = try store.change(base: 2, author: "cms", message: "", change: RouteChange(action: "route.put", ids: ["b"]),
                                                                            now: now, edit: Self.adding("b")) else {
                Issue.record("a stale base was not refused"); return
            }
            #expect(current == 3 && store.snapshot.revisions.count == 3)
            // The edit refusing: nothing stored.
            guard case .refused = try store.change(base: nil, author: "cms", message: "", change: RouteChange(action: "route.delete", ids: ["zz"]), now: now,
                                                   edit: { _ in .failure(StoreError.badSeed("no route zz")) }) else {
                Issue.record("the edit's refusal was not passed on"); return
            }
            #expect(store.snapshot.revisions.count == 3)
        }
        let audit = try String(contentsOfFile: scratch.path + "/audit.log", encoding: .utf8)
        #expect(audit.contains("\"action\":\"route.put\"") && audit.contains("\"routes\":[\"a\"]"))
        let (_, report) = try ManifestStore.open(at: scratch.path)
        #expect(report.recoveredAuditEntries == 0, "a route change's audit line is a change's: nothing to recover")
    }
}
