import Foundation
import ManifestStore
import Rollout
import RouteEngine
import Testing
import TestSupport

/// Rollouts in the store: the candidate is a revision that is not current until its
/// rollout completes; its state is durable and audited as it changes; start-up reads it back.
@Suite("Rollouts in the store", .serialized)
struct RolloutStoreTests {
    static func minutes(_ count: Double) -> Date { now.addingTimeInterval(count * 60) }
    static let finding = GuardFinding(scope: .route, route: "product", build: nil, reason: nil, candidateFailures: 50, candidateTotal: 100,
                                      stableFailures: 10, stableTotal: 1_000, pValue: 1e-20, threshold: 1e-4)

    static func started(_ scratch: ScratchDirectory) throws -> ManifestStore {
        let store = try seeded(scratch)
        guard case .started(let rollout, let revision) = try store.startRollout(routes: routesWithCampaign("candidate"), base: 1, author: "m",
                                                                                message: "Winter", now: now) else {
            Issue.record("not started")
            return store
        }
        #expect(revision.number == 2 && revision.rollout == RolloutStart(stable: 1, steps: RolloutStep.defaults))
        #expect(rollout.candidate == 2 && rollout.stable == 1 && rollout.status == .running && rollout.percent == 1)
        return store
    }

    @Test("A candidate is stored but not current; publishing waits for its rollout; start-up reads it back")
    func candidateIsNotCurrent() throws {
        let scratch = ScratchDirectory()
        do {
            let store = try Self.started(scratch)
            #expect(store.snapshot.current?.number == 1 && store.snapshot.revisions.count == 2)
            #expect(store.snapshot.activeRollout?.candidate == 2)
            guard case .rolloutInProgress(candidate: 2) = try store.publish(routes: routesWithCampaign("other"), base: 1, author: "m", message: "", now: now),
                  case .rolloutInProgress(candidate: 2) = try store.startRollout(routes: routesWithCampaign("third"), base: 1, author: "m", message: "", now: now)
            else {
                Issue.record("published during a rollout")
                return
            }
        }
        let reopened = try ManifestStore.open(at: scratch.path).store
        #expect(reopened.snapshot.current?.number == 1 && reopened.snapshot.rollout?.status == .running && reopened.snapshot.rollout?.version == 1)
    }

    @Test("Controls are durable and audited, against the version read")
    func controls() throws {
        let scratch = ScratchDirectory()
        do {
            let store = try Self.started(scratch)
            guard case .failure(.staleVersion(current: 1)) = try store.controlRollout("pause", version: 7, actor: "lead", now: Self.minutes(1), { r throws(RolloutRefusal) in
                try r.pause(version: 7)
            }) else { Issue.record("a stale version was accepted"); return }
            guard case .success(let paused) = try store.controlRollout("pause", version: 1, actor: "lead", now: Self.minutes(1), { r throws(RolloutRefusal) in
                try r.pause(version: 1)
            }) else { Issue.record("not paused"); return }
            #expect(paused.status == .paused && paused.version == 2)
            #expect(try store.auditEntries().last?["action"] == "rollout.pause")
        }
        do {
            let reopened = try ManifestStore.open(at: scratch.path).store
            #expect(reopened.snapshot.rollout?.status == .paused && reopened.snapshot.rollout?.version == 2)
            guard case .success(let promoted) = try reopened.controlRollout("promote", version: 2, actor: "lead", now: Self.minutes(2), { r throws(RolloutRefusal) in
                _ = try r.promote(version: 2)
            }) else { Issue.record("not promoted"); return }
            #expect(promoted.status == .completed && reopened.snapshot.current?.number == 2, "completed: the candidate is current")
        }
        #expect(try ManifestStore.open(at: scratch.path).store.snapshot.current?.number == 2, "and stays so after a restart")
    }

    @Test("A trip puts everyone back on stable; the next publish is on the stable revision and ends the rollout")
    func tripThenPublish() throws {
        let scratch = ScratchDirectory()
        let store = try Self.started(scratch)
        #expect(try store.evaluateRollout(candidateResolutions: 10, verdict: .waiting("few"), now: Self.minutes(1)) == nil)
        #expect(try store.evaluateRollout(candidateResolutions: 3, verdict: .tripped([Self.finding]), now: Self.minutes(2)) == .tripped([Self.finding]))
        #expect(store.snapshot.current?.number == 1 && store.snapshot.activeRollout == nil)
        let trip = try store.auditEntries().last
        #expect(trip?["action"] == "rollout.trip" && trip?["findings"]?.arrayValue?.first?["route"] == "product")
        guard case .published(let next) = try store.publish(routes: routesWithCampaign("fixed"), base: 1, author: "m", message: "", now: Self.minutes(3)) else {
            Issue.record("not published after the trip")
            return
        }
        #expect(next.number == 3 && store.snapshot.current?.number == 3)
        guard case .failure(.noRollout) = try store.controlRollout("resume", version: 2, actor: "lead", now: Self.minutes(4), { r throws(RolloutRefusal) in
            try r.resume(version: 2, now: Self.minutes(4))
        }) else { Issue.record("a control on an ended rollout"); return }
    }

    @Test("A healthy walk to 100% completes it: the candidate becomes current, and stays so after a restart")
    func walkToCompletion() throws {
        let scratch = ScratchDirectory()
        do {
            let store = try Self.started(scratch)
            var minute = 0.0
            while store.snapshot.rollout?.status == .running, minute < 200 {
                minute += 11
                _ = try store.evaluateRollout(candidateResolutions: 500, verdict: .healthy(comparisons: 3), now: Self.minutes(minute))
            }
            #expect(store.snapshot.rollout?.status == .completed && store.snapshot.current?.number == 2)
        }
        let reopened = try ManifestStore.open(at: scratch.path).store
        #expect(reopened.snapshot.current?.number == 2 && reopened.snapshot.rollout?.version == 5)
    }

    @Test("Refused up front: bad steps, no stable revision, the same routes")
    func refusals() throws {
        let scratch = ScratchDirectory()
        let store = try seeded(scratch)
        guard case .refused(let steps) = try store.startRollout(routes: routesWithCampaign(), base: 1,
                                                                 steps: [RolloutStep(percent: 50, minimumDuration: 0, minimumResolutions: 0)],
                                                                 author: "m", message: "", now: now),
              case .unchanged = try store.startRollout(routes: store.routes(of: store.snapshot.current!), base: 1, author: "m", message: "", now: now)
        else { Issue.record("accepted"); return }
        #expect(steps == "The last step must be 100%.")
        let empty = ScratchDirectory()
        guard case .refused = try ManifestStore.open(at: empty.path).store.startRollout(routes: routesWithCampaign(), base: nil, author: "m",
                                                                                         message: "", now: now) else {
            Issue.record("a rollout with nothing to roll out from")
            return
        }
        #expect(store.snapshot.revisions.count == 1)
    }

    @Test("The rollout state's lost audit entry is recovered at start; a damaged state file is refused")
    func recoveryAndDamage() throws {
        let scratch = ScratchDirectory()
        do {
            let store = try Self.started(scratch)
            _ = try store.controlRollout("pause", version: 1, actor: "lead", now: Self.minutes(1)) { r throws(RolloutRefusal) in try r.pause(version: 1) }
        }
        let lines = scratch.bytes("audit.log").split(separator: UInt8(ascii: "\n"))
        scratch.write("audit.log", Array(lines.dropLast().joined(separator: [UInt8(ascii: "\n")])) + [UInt8(ascii: "\n")])
        do {
            let (store, report) = try ManifestStore.open(at: scratch.path)
            #expect(report.recoveredAuditEntries == 1)
            #expect(try store.auditEntries().last?["version"] == 2)
        }
        scratch.flip("rollout", fromEnd: 1, mask: 0x01)
        scratch.write("rollout", Array(scratch.bytes("rollout").dropLast(3)))
        #expect(throws: StoreError.self) { _ = try ManifestStore.open(at: scratch.path) }
    }

    @Test("A publish asked to supersede the active rollout ends it in the same write; start-up reads it back so")
    func supersede() throws {
        let scratch = ScratchDirectory()
        do {
            let store = try Self.started(scratch)
            guard case .staleBase(current: 1) = try store.publish(routes: routesWithCampaign("hotfix"), base: 2, author: "m", message: "",
                                                                  supersede: true, now: Self.minutes(1)) else {
                Issue.record("superseded from the candidate as base (the base is the current, stable revision)")
                return
            }
            guard case .published(let hotfix) = try store.publish(routes: routesWithCampaign("hotfix"), base: 1, author: "m", message: "Hotfix",
                                                                   supersede: true, now: Self.minutes(1)) else {
                Issue.record("not published")
                return
            }
            #expect(hotfix.number == 3 && hotfix.supersedes == 2)
            #expect(store.snapshot.current?.number == 3 && store.snapshot.activeRollout == nil && store.snapshot.rollout?.status == .superseded)
            #expect(store.snapshot.servedRevisions == [3])
            #expect(try store.auditEntries().contains { $0["revision"] == 3 && $0["supersedes"] == 2 })
        }
        let reopened = try ManifestStore.open(at: scratch.path).store
        #expect(reopened.snapshot.current?.number == 3 && reopened.snapshot.rollout?.status == .superseded)
    }

    @Test("Superseding with the stable revision's own routes is refused, pointing to abort: the rollout goes on, nothing stored")
    func supersedeWithTheStableRoutes() throws {
        let scratch = ScratchDirectory()
        let store = try Self.started(scratch)
        let stable = Fixtures.storefrontRoutesJSON.serializedBytes(pretty: true)
        guard case .stableOverRollout(candidate: 2) = try store.publish(routes: stable, base: 1, author: "m", message: "Back to stable",
                                                                        supersede: true, now: Self.minutes(1)) else {
            Issue.record("the stable routes superseded the rollout, or were published")
            return
        }
        #expect(store.snapshot.revisions.count == 2 && store.snapshot.activeRollout?.candidate == 2, "nothing changed")
        // Without supersede, the same routes are the usual refusal while a rollout runs.
        guard case .rolloutInProgress(candidate: 2) = try store.publish(routes: stable, base: 1, author: "m", message: "", now: Self.minutes(1)) else {
            Issue.record("published over a running rollout")
            return
        }
        // Routes that differ from the stable revision's still supersede.
        guard case .published = try store.publish(routes: routesWithCampaign("hotfix"), base: 1, author: "m", message: "", supersede: true,
                                                  now: Self.minutes(1)) else {
            Issue.record("a real supersede was refused")
            return
        }
        #expect(store.snapshot.rollout?.status == .superseded)
    }

    @Test("A scheduled rollout starts one over its base when it fires; refused without a base or with bad steps")
    func scheduledRollout() throws {
        let scratch = ScratchDirectory()
        do {
            let store = try seeded(scratch)
            guard case .badRollout = try store.schedule(routes: routesWithCampaign("bad"), at: Self.minutes(10), base: 1, author: "m", message: "",
                                                       rollout: [RolloutStep(percent: 5, minimumDuration: 0, minimumResolutions: 0)], now: now),
                  case .scheduled(let item) = try store.schedule(routes: routesWithCampaign("nine"), at: Self.minutes(10), base: 1, author: "m",
                                                                 message: "At nine", rollout: RolloutStep.defaults, now: now)
            else { Issue.record("scheduling refused or accepted wrongly"); return }
            #expect(item.rollout == RolloutStep.defaults && item.json["rollout"]?["steps"]?.arrayValue?.count == 4)
        }
        let reopened = try ManifestStore.open(at: scratch.path).store
        #expect(reopened.snapshot.schedules.first?.rollout == RolloutStep.defaults, "the steps are durable with the schedule")
        let fired = try reopened.fireDueSchedules(now: Self.minutes(11))
        #expect(fired.first?.status == .fired(revision: 2))
        #expect(reopened.snapshot.activeRollout?.candidate == 2 && reopened.snapshot.activeRollout?.stable == 1)
        #expect(reopened.snapshot.current?.number == 1, "the candidate is not current: it is rolled out")
    }
}
