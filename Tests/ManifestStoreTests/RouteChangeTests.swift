import Foundation
import ManifestStore
import Rollout
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

    /// A whole publish made from a base that single-route changes have overtaken: applied on
    /// top of them when it left the routes they changed as they were, else stale (412).
    @Test func aPublishIsRebasedOverRouteChangesOfOtherRoutes() throws {
        let scratch = ScratchDirectory()
        do {
            let store = try seeded(scratch)
            // A CMS adds route a (revision 2) while a marketer edits from revision 1.
            guard case .decided(.published) = try store.change(base: nil, author: "cms", message: "", change: RouteChange(action: "route.put", ids: ["a"]),
                                                                now: now, edit: Self.adding("a")) else { Issue.record("the change was refused"); return }
            guard case .published(let rebased) = try store.publish(routes: routesWithCampaign(), base: 1, author: "marketer", message: "", now: now) else {
                Issue.record("a publish over another route's change was refused"); return
            }
            #expect(rebased.number == 3 && rebased.rebasedFrom == 1)
            let ids = try JSONParser().parse(store.routes(of: rebased))["routes"]?.arrayValue?.compactMap { $0["id"]?.stringValue } ?? []
            #expect(ids.contains("a") && ids.contains("winter-sale"), "both kept: \(ids)")
        }
        // Reopened from disk: the rebased revision names its base, the change's revision what it changed.
        let reopened = try ManifestStore.open(at: scratch.path).store
        #expect(reopened.snapshot.revision(3)?.rebasedFrom == 1 && reopened.snapshot.revision(2)?.changedRoutes == ["a"])
        // Another change (b), then a publish from revision 3 that changes route a (not b): its to make, rebased over b.
        guard case .decided(.published) = try reopened.change(base: nil, author: "cms", message: "", change: RouteChange(action: "route.put", ids: ["b"]),
                                                              now: now, edit: Self.adding("b")) else { Issue.record("the second change was refused"); return }
        guard case .object(var document) = try JSONParser().parse(reopened.routes(of: reopened.snapshot.revision(3)!)),
              case .array(var routes)? = document["routes"], let index = routes.firstIndex(where: { $0["id"] == "a" }) else { return }
        routes[index] = ["id": "a", "patterns": ["/c/a/x"], "destination": "cart"]
        routes.removeAll { $0["id"] == "b" }
        document["routes"] = .array(routes)
        let conflicting = JSONValue.object(document).serializedBytes(pretty: true)
        // Route a was changed by revision 2 only, before base 3: the publish's own change to it is its to make.
        guard case .published(let fine) = try reopened.publish(routes: conflicting, base: 3, author: "marketer", message: "", now: now) else {
            Issue.record("a publish over a change of another route (b) was refused"); return
        }
        #expect(fine.rebasedFrom == 3)
        let after = try JSONParser().parse(reopened.routes(of: fine))["routes"]?.arrayValue ?? []
        #expect(after.contains { $0["id"] == "b" } && after.first { $0["id"] == "a" }?["destination"] == "cart")
        // One from revision 5 that adds a route c of its own, while a change since put another c: stale.
        guard case .decided(.published) = try reopened.change(base: nil, author: "cms", message: "", change: RouteChange(action: "route.put", ids: ["c"]),
                                                              now: now, edit: Self.adding("c")) else { return }
        guard case .object(var five) = try JSONParser().parse(reopened.routes(of: fine)), case .array(var fiveRoutes)? = five["routes"] else { return }
        fiveRoutes.append(["id": "c", "patterns": ["/c/c/mine"], "destination": "home"])
        five["routes"] = .array(fiveRoutes)
        let count = reopened.snapshot.revisions.count
        guard case .staleBase = try reopened.publish(routes: JSONValue.object(five).serializedBytes(pretty: true), base: fine.number, author: "marketer", message: "", now: now) else {
            Issue.record("a publish changing a route a change since its base changed was not refused"); return
        }
        #expect(reopened.snapshot.revisions.count == count)
        // Over a whole publish (not a route change): stale, as ever.
        guard case .published = try reopened.publish(routes: routesWithCampaign("other"), base: reopened.snapshot.current!.number, author: "x", message: "", now: now),
              case .staleBase = try reopened.publish(routes: routesWithCampaign("third"), base: count, author: "marketer", message: "", now: now) else {
            Issue.record("a publish over a whole publish was not refused"); return
        }
    }

    /// After an aborted candidate, changes are applied to the stable revision: a publish whose
    /// base is the candidate is not rebased over them (it would put the candidate's routes back).
    @Test func noRebaseFromAnAbortedCandidate() throws {
        let scratch = ScratchDirectory()
        let store = try seeded(scratch)
        guard case .started(let state, let candidate) = try store.startRollout(routes: routesWithCampaign("candidate-only"), base: 1, author: "m", message: "", now: now),
              case .success = try store.controlRollout("abort", version: state.version, actor: "lead", now: now, { r throws(RolloutRefusal) in try r.abort(version: state.version) }) else {
            Issue.record("the rollout did not start and abort"); return
        }
        #expect(store.snapshot.current?.number == 1)
        guard case .decided(.published(let change)) = try store.change(base: nil, author: "cms", message: "", change: RouteChange(action: "route.put", ids: ["y"]),
                                                                       now: now, edit: Self.adding("y")) else { Issue.record("the change was refused"); return }
        #expect(change.changedOn == 1 && store.snapshot.routesChanged(since: candidate.number) == nil)
        let count = store.snapshot.revisions.count
        guard case .staleBase = try store.publish(routes: routesWithCampaign("candidate-only"), base: candidate.number, author: "m", message: "", now: now) else {
            Issue.record("a publish from the aborted candidate was rebased over a change of the stable revision"); return
        }
        #expect(store.snapshot.revisions.count == count)
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
