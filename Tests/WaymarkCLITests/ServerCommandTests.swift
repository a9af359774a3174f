import CivilDate
import Foundation
import ManifestStore
import RouteEngine
import Testing
import TestSupport
import WaymarkCLI

/// `waymark` with an environment (no WAYMARK_* from the machine running the tests).
func waymark(environment: [String: String], _ arguments: String...) -> (code: ExitCode, out: String, err: String) {
    var output = Output()
    let code = CLI.run(arguments, environment: environment, output: &output)
    return (code, output.standardOutput, output.standardError)
}

@Suite("waymark token, publish, revisions, rollback", .serialized)
struct ServerCommandTests {
    @Test func tokenCreateListRevokeOnADataDirectory() throws {
        let directory = NSTemporaryDirectory() + "waymark-cli-\(UUID().uuidString)"
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let created = waymark(environment: [:], "token", "create", "--data-dir", directory, "--name", "ci", "--scope", "routes:publish,manifest:read")
        #expect(created.code == .success, "\(created.err)")
        let token = created.out.trimmingCharacters(in: .whitespacesAndNewlines)
        #expect(token.hasPrefix("wm_") && !created.out.contains(" "), "stdout is the token alone, for scripts")
        #expect(created.err.contains("shown only this once"))
        let tokens = try ManifestStore.openTokens(at: directory)
        #expect(tokens.authenticate(token)?.allows(.routesPublish) == true)
        #expect(tokens.authenticate(token)?.allows(.schemasWrite) == false)

        let list = waymark(environment: [:], "token", "list", "--data-dir", directory)
        #expect(list.code == .success && list.out.contains("ci") && list.out.contains("manifest:read,routes:publish"))
        #expect(!list.out.contains(token.split(separator: "_", maxSplits: 2)[2]), "a listing never shows a secret")
        let json = try JSONParser().parse(waymark(environment: [:], "token", "list", "--data-dir", directory, "--json").out)
        #expect(json.arrayValue?.first?["name"] == "ci" && json.arrayValue?.first?["sha256"] == nil)

        #expect(waymark(environment: [:], "token", "create", "--data-dir", directory, "--name", "ci", "--scope", "admin").code == .invalid,
                "a second live token with the same name is refused")
        #expect(waymark(environment: [:], "token", "create", "--data-dir", directory, "--name", "x", "--scope", "root").code == .usage)
        #expect(waymark(environment: [:], "token", "create", "--data-dir", directory, "--name", "x").code == .usage)
        #expect(waymark(environment: [:], "token", "revoke", "nobody", "--data-dir", directory).code == .invalid)
        #expect(waymark(environment: [:], "token", "list", "--data-dir", directory + "-missing").code == .unavailable)
        #expect(waymark(environment: [:], "token", "frobnicate", "--data-dir", directory).code == .usage)
        let revoked = waymark(environment: [:], "token", "revoke", "ci", "--data-dir", directory)
        #expect(revoked.code == .success && revoked.out.contains("Revoked 1 token"))
        Thread.sleep(forTimeInterval: Double(TokenStore.recheckInterval) / 1e9 + 0.05)  // a running daemon's recheck
        #expect(tokens.authenticate(token) == nil)
    }

    @Test func publishRevisionsAndRollbackAgainstALiveServer() throws {
        let service = try LiveService()
        let environment = ["WAYMARK_SERVER": service.url, "WAYMARK_TOKEN": service.tokens[.routesPublish]!]
        let campaign = temporaryFile(String(decoding: routesWithCampaign("spring-launch"), as: UTF8.self))

        let published = waymark(environment: environment, "publish", campaign, "--message", "Spring launch")
        #expect(published.code == .success, "\(published.err)")
        #expect(published.out.contains("Published revision 2 on top of 1 as routes:publish: Spring launch"))
        #expect(service.store.snapshot.current?.message == "Spring launch")

        // The same routes again, even respaced and reordered: nothing is published.
        let respaced = temporaryFile(try JSONParser().parse(routesWithCampaign("spring-launch")).serialized())
        for file in [campaign, respaced] {
            let again = waymark(environment: environment, "publish", file, "--message", "CI run")
            #expect(again.code == .success && again.out.contains("Unchanged: revision 2 already has these routes"), "\(again.out)\(again.err)")
        }
        #expect(service.store.snapshot.revisions.count == 2)

        // A stale --base publishes nothing.
        let stale = waymark(environment: environment, "publish", campaign, "--base", "1")
        #expect(stale.code == .invalid && stale.err.contains("412 staleBase"))
        // Invalid routes: the server's report, nothing published.
        let bad = temporaryFile(#"{"format": "waymark.routes/1", "app": "storefront", "routes": [{"id": "w", "patterns": ["/w"], "destination": "wishlist"}]}"#)
        let invalid = waymark(environment: environment, "publish", bad)
        #expect(invalid.code == .invalid && invalid.err.contains("unknownDestination at routes[0].destination"))
        #expect(service.store.snapshot.revisions.count == 2)

        let rolledBack = waymark(environment: environment, "rollback", "1", "--base", "2")
        #expect(rolledBack.code == .success && rolledBack.out.contains("Published revision 3 on top of 2"), "\(rolledBack.err)")
        #expect(service.store.snapshot.current?.restores == 1)

        let listing = waymark(environment: ["WAYMARK_TOKEN": service.tokens[.routesRead]!], "revisions", "--server", service.url)
        #expect(listing.code == .success)
        let lines = listing.out.split(separator: "\n")
        #expect(lines.count == 4 && lines[1].hasPrefix("*  3") && lines[3].contains("seed"), "\(listing.out)")
        let json = try JSONParser().parse(waymark(environment: environment, "revisions", "--json", "--server", service.url).out)
        #expect(json["current"] == 3)
    }

    @Test("waymark schedule, schedules and unschedule against a live server")
    func scheduleCommands() throws {
        let service = try LiveService()
        let environment = ["WAYMARK_SERVER": service.url, "WAYMARK_TOKEN": service.tokens[.routesPublish]!]
        let campaign = temporaryFile(String(decoding: routesWithCampaign("nine"), as: UTF8.self))
        let at = Timestamp.format(Date().addingTimeInterval(3_600))
        let scheduled = waymark(environment: environment, "schedule", campaign, "--at", at, "--message", "At nine")
        #expect(scheduled.code == .success && scheduled.out.contains("Scheduled 1: ") && scheduled.out.contains("on top of revision 1"), "\(scheduled.err)")
        let past = waymark(environment: environment, "schedule", campaign, "--at", "2020-01-01T00:00:00Z")
        #expect(past.code == .invalid && past.err.contains("badTime"))
        #expect(waymark(environment: environment, "schedule", campaign, "--at", "tomorrow").code == .usage)
        let listed = waymark(environment: ["WAYMARK_SERVER": service.url, "WAYMARK_TOKEN": service.tokens[.routesRead]!], "schedules")
        #expect(listed.code == .success && listed.out.contains("pending") && listed.out.contains("At nine"), "\(listed.out)")
        #expect(waymark(environment: environment, "unschedule", "1").out.contains("Cancelled schedule 1."))
        let again = waymark(environment: environment, "unschedule", "1")
        #expect(again.code == .invalid && again.err.contains("notPending"))
        #expect(service.store.snapshot.schedules.first?.status == .cancelled(by: "routes:publish"))
    }

    @Test("waymark publish --rollout and waymark rollout against a live server")
    func rolloutCommands() throws {
        let service = try LiveService()
        let environment = ["WAYMARK_SERVER": service.url, "WAYMARK_TOKEN": service.tokens[.routesPublish]!]
        let reader = ["WAYMARK_SERVER": service.url, "WAYMARK_TOKEN": service.tokens[.routesRead]!]
        #expect(waymark(environment: reader, "rollout", "status").err.contains("404 noRollout"))
        let campaign = temporaryFile(String(decoding: routesWithCampaign("rolled"), as: UTF8.self))
        let started = waymark(environment: environment, "publish", campaign, "--rollout", "--message", "Gradually")
        #expect(started.code == .success && started.out.contains("rolling out over revision 1: 1% of installs first"), "\(started.out)\(started.err)")
        let status = waymark(environment: reader, "rollout", "status")
        #expect(status.out.contains("Rollout of revision 2 over 1: running at step 1 of 4 (1% of cohorts)"), "\(status.out)")
        #expect(waymark(environment: environment, "rollout", "pause").out.contains("paused at step 1"))
        #expect(waymark(environment: environment, "rollout", "pause").err.contains("notApplicable"))
        #expect(waymark(environment: environment, "rollout", "advance").out.contains("running at step 2 of 4 (10% of cohorts)"))
        #expect(waymark(environment: environment, "rollout", "promote").out.contains("completed"))
        #expect(service.store.snapshot.current?.number == 2)
        #expect(waymark(environment: environment, "rollout", "sideways").code == .usage)
    }

    @Test func remoteCommandsExplainTokenAndServerProblems() throws {
        let service = try LiveService()
        let campaign = temporaryFile(String(decoding: routesWithCampaign("x"), as: UTF8.self))
        let wrongScope = waymark(environment: ["WAYMARK_TOKEN": service.tokens[.routesRead]!], "publish", campaign, "--server", service.url)
        #expect(wrongScope.code == .invalid && wrongScope.err.contains("403 forbidden") && wrongScope.err.contains("routes:publish"))
        let badToken = waymark(environment: [:], "revisions", "--server", service.url, "--token", "wm_00000000_nope")
        #expect(badToken.code == .invalid && badToken.err.contains("401 unauthorized"))
        #expect(waymark(environment: [:], "revisions", "--server", service.url).err.contains("Missing --token"))
        #expect(waymark(environment: ["WAYMARK_TOKEN": "t"], "revisions").err.contains("Missing --server"))
        #expect(waymark(environment: ["WAYMARK_TOKEN": "t"], "revisions", "--server", "ftp://x").code == .usage)
        // Nothing listens on port 1.
        let unreachable = waymark(environment: ["WAYMARK_TOKEN": "t"], "revisions", "--server", "http://127.0.0.1:1")
        #expect(unreachable.code == .unavailable && unreachable.err.contains("Cannot reach"))
        #expect(waymark(environment: ["WAYMARK_TOKEN": "t"], "publish", "/nonexistent.json", "--server", service.url).code == .usage)
        #expect(waymark(environment: ["WAYMARK_TOKEN": "t"], "rollback", "zero", "--server", service.url).code == .usage)
    }

    @Test func serveRefusesBadOptionsAndADamagedStore() throws {
        #expect(waymark(environment: [:], "serve", "--port", "70000").err.contains("--port '70000' is not valid"))
        #expect(waymark(environment: [:], "serve", "--threads", "0").code == .usage)
        #expect(waymark(environment: [:], "serve", "extra").code == .usage)
        let directory = NSTemporaryDirectory() + "waymark-cli-\(UUID().uuidString)"
        defer { try? FileManager.default.removeItem(atPath: directory) }
        try FileManager.default.createDirectory(atPath: directory + "/revisions", withIntermediateDirectories: true)
        try Data("garbage".utf8).write(to: URL(fileURLWithPath: directory + "/revisions/00000001"))
        let damaged = waymark(environment: [:], "serve", "--data-dir", directory, "--port", "0")
        #expect(damaged.code == .unavailable && damaged.err.contains("damaged"), "\(damaged.err)")
    }

    @Test func aStoreThatLostItsTokensIsRefusedUnlessAskedToInitialise() throws {
        let directory = NSTemporaryDirectory() + "waymark-cli-\(UUID().uuidString)"
        defer { try? FileManager.default.removeItem(atPath: directory) }
        do {
            let store = try ManifestStore.open(at: directory).store
            #expect(try store.seedIfEmpty(from: Fixtures.path("manifests/storefront")))
        }
        // No tokens.json beside revisions and schemas: refused before it listens, and still absent.
        let refused = waymark(environment: [:], "serve", "--data-dir", directory, "--port", "0", "--no-seed")
        #expect(refused.code == .unavailable, "\(refused.out) \(refused.err)")
        #expect(refused.err.contains("no tokens") && refused.err.contains("--init-tokens"), "\(refused.err)")
        #expect(!refused.out.contains("wm_"), "no admin token was minted")
        #expect(!FileManager.default.fileExists(atPath: directory + "/tokens.json"))
    }
}

/// The storefront routes with one more campaign route.
func routesWithCampaign(_ id: String) -> [UInt8] {
    guard case .object(var document) = Fixtures.storefrontRoutesJSON, case .array(var routes)? = document["routes"] else { return [] }
    routes.append(["id": .string(id), "patterns": [.string("/campaign/\(id)")], "destination": "home", "owner": "marketing"])
    document["routes"] = .array(routes)
    return JSONValue.object(document).serializedBytes(pretty: true)
}
