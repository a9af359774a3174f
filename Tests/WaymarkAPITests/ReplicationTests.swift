import Foundation
import WaymarkAPI
import ManifestStore
@testable import Replication
import RouteEngine
import Telemetry
import Testing
import TestSupport

@Suite("Followers", .serialized)
struct ReplicationTests {
    static let builds = ["/v1/manifest?platform=ios&version=5.2.0", "/v1/manifest?platform=ios&version=5.3.0"]

    @Test func aFollowerServesThePrimarysBytesAndETags() throws {
        let primary = try LiveService()
        let follower = try LiveService(following: primary)
        let replica = try #require(follower.follower)
        #expect(follower.call("GET", "/readyz").status == 503, "nothing mirrored yet")
        let first = try replica.syncOnce().get()
        #expect(first == 4, "two schemas, a revision, the tokens file")
        let reader = primary.reader!
        for target in Self.builds + ["/v1/revisions/1", "/v1/revisions", "/.well-known/apple-app-site-association", "/v1/schemas"] {
            let (a, b) = (primary.call("GET", target, token: reader), follower.call("GET", target, token: reader))
            #expect(a.status == 200 && b.status == 200, "\(target)")
            #expect(a.body == b.body && a["ETag"] == b["ETag"], "\(target) differs")
        }
        #expect(try replica.syncOnce().get() == 0, "nothing new")

        // A publish and a new token on the primary arrive with the next poll.
        let published = primary.call("POST", "/v1/revisions", token: primary.tokens[.routesPublish]!,
                                     headers: [("If-Match", "\"rev-1\"")], body: publishBody(extraRoute: "mirror-me"))
        #expect(published.status == 201)
        let (_, fresh) = try primary.store.tokens.create(name: "fresh", scopes: [.manifestRead], actor: "test")
        #expect(follower.call("GET", Self.builds[1], token: fresh).status == 401)
        #expect(try replica.syncOnce().get() == 2)
        for target in Self.builds {
            let (a, b) = (primary.call("GET", target, token: reader), follower.call("GET", target, token: fresh))
            #expect(b.status == 200 && a.body == b.body && a["ETag"] == b["ETag"] && b["ETag"]?.hasPrefix("\"m2-") == true)
        }
        #expect(follower.store.snapshot.revision(2)?.sha256 == primary.store.snapshot.revision(2)?.sha256)
        let ready = follower.call("GET", "/readyz").json
        #expect(ready["revision"]?.intValue == 2)
        #expect(ready["follower"]?["primaryReachable"] == true && ready["follower"]?["primary"]?.stringValue == primary.url)
        let audit = try follower.store.auditEntries().compactMap { $0["action"]?.stringValue }
        #expect(audit.filter { $0 == "mirror" }.count == 2 && audit.contains("mirrorSchema") && audit.contains("mirrorTokens"))
    }

    @Test("A follower serves each cohort the revision the primary does, through a rollout's steps, and never moves it itself")
    func aFollowerMirrorsTheRolloutSplit() throws {
        let primary = try LiveService()
        let follower = try LiveService(following: primary)
        let replica = try #require(follower.follower)
        _ = try replica.syncOnce().get()
        let (publish, reader) = (primary.tokens[.routesPublish]!, primary.reader!)
        guard case .object(var body) = try JSONParser().parse(publishBody(extraRoute: "candidate")) else { return }
        body["rollout"] = [:]
        #expect(primary.call("POST", "/v1/revisions", token: publish, headers: [("If-Match", "\"rev-1\"")],
                             body: JSONValue.object(body).serialized()).status == 201)
        func sameSplit(_ note: String) {
            for cohort in [0, 1, 5, 9, 10, 49, 50, 99] {
                let target = Self.builds[1] + "&cohort=\(cohort)"
                let (a, b) = (primary.call("GET", target, token: reader), follower.call("GET", target, token: reader))
                #expect(a.status == 200 && a["ETag"] == b["ETag"] && a.body == b.body, "cohort \(cohort) \(note)")
            }
        }
        _ = try replica.syncOnce().get()
        sameSplit("at 1%")
        #expect(follower.call("GET", "/v1/rollout", token: reader).json["percent"] == 1)
        #expect(primary.call("POST", "/v1/rollout/advance", token: publish, headers: [("If-Match", "\"rollout-2-1\"")]).status == 200)
        #expect(primary.call("POST", "/v1/rollout/advance", token: publish, headers: [("If-Match", "\"rollout-2-2\"")]).status == 200)
        #expect(try replica.syncOnce().get() == 1, "the rollout state")
        sameSplit("at 50%")
        let mirrored = follower.call("GET", "/v1/rollout", token: reader)
        #expect(mirrored.json["percent"] == 50 && mirrored["ETag"] == "\"rollout-2-3\"")
        #expect(try follower.store.auditEntries().last?["action"] == "rollout.mirror")
        #expect(follower.call("POST", "/v1/rollout/abort", token: primary.tokens[.admin]!, headers: [("If-Match", "\"rollout-2-3\"")]).status == 409,
                "a follower refuses controls")
        #expect(primary.call("POST", "/v1/rollout/abort", token: publish, headers: [("If-Match", "\"rollout-2-3\"")]).status == 200)
        _ = try replica.syncOnce().get()
        sameSplit("aborted")
        #expect(follower.call("GET", Self.builds[1] + "&cohort=0", token: reader).json["revision"] == 1)
        // Durable on the follower: its own state file says so.
        let file = String(decoding: FileManager.default.contents(atPath: follower.path + "/rollout") ?? Data(), as: UTF8.self)
        #expect(file.contains("\"aborted\""), "\(file.prefix(300))")
    }

    @Test func writesOnAFollowerAreRefusedAndChangeNothing() throws {
        let primary = try LiveService()
        let follower = try LiveService(following: primary)
        _ = try #require(follower.follower).syncOnce()
        let before = follower.store.snapshot
        let schema = String(decoding: try Data(contentsOf: Fixtures.repositoryRoot.appendingPathComponent("manifests/storefront/schema-ios-5.3.0.json")), as: UTF8.self)
        let admin = primary.tokens[.admin]!
        let attempts = [
            follower.call("POST", "/v1/revisions", token: admin, headers: [("If-Match", "\"rev-1\"")], body: publishBody(extraRoute: "x")),
            follower.call("POST", "/v1/revisions/1/rollback", token: admin, headers: [("If-Match", "\"rev-1\"")]),
            follower.call("PUT", "/v1/schemas/ios/5.3.0", token: admin, body: schema),
            follower.call("POST", "/v1/replication/telemetry", token: admin, body: "x"),
        ]
        for reply in attempts {
            #expect(reply.status == 409 && reply.errorCode == "follower", "\(reply.text)")
        }
        #expect(follower.call("POST", "/v1/revisions", headers: [("If-Match", "\"rev-1\"")], body: "{}").status == 401, "a token first, still")
        let after = follower.store.snapshot
        #expect(after.revisions == before.revisions && after.schemas == before.schemas)
        #expect(follower.call("POST", "/v1/validate", token: admin, body: "{}").status == 200, "a dry run changes nothing: allowed")
    }

    @Test func aDamagedOrMislabelledRecordIsNeverStored() throws {
        let primary = try LiveService()
        let record = try #require(try primary.store.revisionRecord(1))
        let sha = primary.store.snapshot.revision(1)!.sha256
        let scratch = try ManifestStore.open(at: NSTemporaryDirectory() + "waymark-mirror-\(UUID().uuidString)").store
        defer { try? FileManager.default.removeItem(atPath: scratch.path) }
        var flipped = record
        flipped[flipped.count - 3] ^= 0x01
        let attempts: [([UInt8], Int, String)] = [
            (flipped, 1, sha),                           // the body no longer matches its header
            (Array(record.dropLast(10)), 1, sha),        // cut short
            (record, 1, String(repeating: "0", count: 64)),  // not what the primary's list says
            (record, 2, sha),                            // out of order
            (Array("not a record".utf8), 1, sha),
        ]
        for (bytes, number, expected) in attempts {
            #expect { _ = try scratch.mirrorRevision(bytes, number: number, sha256: expected, actor: "test") } throws: { isRefusedMirror($0) }
        }
        #expect(scratch.snapshot.revisions.isEmpty)
        #expect(try FileManager.default.contentsOfDirectory(atPath: scratch.path + "/revisions").isEmpty)
        let key = SchemaKey(platform: "ios", version: "5.3.0")
        let schema = try #require(try primary.store.schemaRecord(key))
        let schemaSHA = primary.store.snapshot.schemas[key]!.sha256
        #expect { _ = try scratch.mirrorSchema(schema, key: SchemaKey(platform: "ios", version: "5.2.0"), sha256: schemaSHA, actor: "test") } throws: { isRefusedMirror($0) }
        #expect { _ = try scratch.mirrorSchema(Array(schema.dropLast()), key: key, sha256: schemaSHA, actor: "test") } throws: { isRefusedMirror($0) }
        #expect(scratch.snapshot.schemas.isEmpty)
        try scratch.mirrorSchema(schema, key: key, sha256: schemaSHA, actor: "test")
        try scratch.mirrorRevision(record, number: 1, sha256: sha, actor: "test")
        #expect(try scratch.routes(of: scratch.snapshot.revision(1)!) == primary.store.routes(of: primary.store.snapshot.revision(1)!))
        #expect { _ = try scratch.mirrorRevision(record, number: 1, sha256: sha, actor: "test") } throws: { isRefusedMirror($0) }
        #expect(try primary.store.tokens.fileBytes() != [])
        #expect { _ = try scratch.tokens.mirror(Array("[{\"id\": 1}]".utf8), actor: "test") } throws: { isRefusedMirror($0) }
        #expect(scratch.tokens.isEmpty)
    }

    @Test func aDivergedPrimaryStopsTheMirrorAndTheFollowerKeepsServing() throws {
        let primary = try LiveService()
        let follower = try LiveService(following: primary)
        #expect(primary.call("POST", "/v1/revisions", token: primary.tokens[.routesPublish]!, headers: [("If-Match", "\"rev-1\"")],
                             body: publishBody(extraRoute: "ours")).status == 201)
        _ = try #require(follower.follower).syncOnce().get()
        // Another primary whose revision 2 is different.
        let other = try LiveService()
        #expect(other.call("POST", "/v1/revisions", token: other.tokens[.routesPublish]!, headers: [("If-Match", "\"rev-1\"")],
                           body: publishBody(extraRoute: "theirs")).status == 201)
        let misdirected = Follower(store: follower.store, telemetry: follower.telemetry,
                                   client: PrimaryClient(base: other.url, token: other.tokens[.replication]!))
        let result = misdirected.syncOnce()
        guard case .failure(let error) = result else { Issue.record("a different history was mirrored"); return }
        #expect(error.message.contains("different history"))
        #expect(misdirected.status.diverged)
        #expect(follower.store.snapshot.revision(2)?.sha256 == primary.store.snapshot.revision(2)?.sha256)
        #expect(follower.call("GET", Self.builds[1], token: primary.tokens[.manifestRead]!).status == 200)
    }

    @Test func withoutItsPrimaryAFollowerKeepsServingAndSaysSo() throws {
        var primary: LiveService? = try LiveService()
        let follower = try LiveService(following: primary!)
        let replica = try #require(follower.follower)
        _ = try replica.syncOnce().get()
        let etag = follower.call("GET", Self.builds[1], token: primary!.tokens[.manifestRead]!)["ETag"]
        let tokens = primary!.tokens
        primary = nil  // stopped and removed
        guard case .failure = replica.syncOnce() else { Issue.record("a poll of a stopped primary succeeded"); return }
        let served = follower.call("GET", Self.builds[1], token: tokens[.manifestRead]!)
        #expect(served.status == 200 && served["ETag"] == etag)
        let ready = follower.call("GET", "/readyz")
        #expect(ready.status == 200 && ready.json["follower"]?["primaryReachable"] == false)
        #expect(ready.json["follower"]?["error"]?.stringValue?.isEmpty == false)
        let metrics = follower.call("GET", "/metrics", token: tokens[.telemetryRead]!).text
        #expect(metrics.contains("waymark_follower_primary_up 0\n") && metrics.contains("waymark_follower_sync_failures_total 1\n"))
        let accepted = follower.call("POST", "/v1/telemetry", token: tokens[.telemetryWrite]!,
                                     body: telemetryBody([#"{"entry": "push", "outcome": "proceed", "route": "home"}"#]))
        #expect(accepted.status == 202, "telemetry is durable on the follower until the primary is back")
        guard case .failure = replica.forwardOnce() else { Issue.record("a forward to a stopped primary succeeded"); return }
        #expect(follower.telemetry.eventsNotForwarded == 1)
    }

    @Test func forwardedCountsAreCountedOnceOnThePrimary() throws {
        let primary = try LiveService()
        let follower = try LiveService(following: primary)
        let replica = try #require(follower.follower)
        _ = try replica.syncOnce().get()
        let body = telemetryBody([#"{"entry": "push", "outcome": "notFound", "reason": "unknownRoute", "route": "orders", "count": 5}"#,
                                  #"{"entry": "scheme", "outcome": "proceed", "route": "home"}"#])
        #expect(follower.call("POST", "/v1/telemetry", token: primary.tokens[.telemetryWrite]!, body: body).status == 202)
        let sealed = try #require(try follower.telemetry.sealForward())
        #expect(try replica.forwardOnce().get() == 6)
        #expect(try replica.forwardOnce().get() == 0, "nothing pending")
        func total() -> Int? {
            primary.call("GET", "/v1/telemetry/counts?groupBy=route", token: primary.tokens[.telemetryRead]!).json["total"]?.intValue
        }
        #expect(total() == 6)
        // The same forward again (a retry after a lost answer): acknowledged, not counted.
        let replication = primary.tokens[.replication]!
        let again = primary.call("POST", "/v1/replication/telemetry", token: replication, bytes: sealed.encoded)
        #expect(again.status == 200 && again.json["through"]?.intValue == Int(sealed.through))
        #expect(total() == 6)
        // Bad forwards (what no follower makes) change nothing.
        var unlisted = sealed
        unlisted.through += 1
        unlisted.batches[0].tallies[0].route = 400
        var damaged = sealed.encoded
        damaged[damaged.count / 2] ^= 0xFF
        for bytes in [unlisted.encoded, damaged, Array(sealed.encoded.prefix(20)), []] {
            let refused = primary.call("POST", "/v1/replication/telemetry", token: replication, bytes: bytes)
            #expect(refused.status == 400 && refused.errorCode == "invalidForward", "\(refused.text)")
        }
        #expect(total() == 6)
        let metrics = primary.call("GET", "/metrics", token: primary.tokens[.telemetryRead]!).text
        #expect(metrics.contains("waymark_telemetry_forwards_applied_total 1\n") && metrics.contains("waymark_telemetry_forwards_repeated_total 1\n"))
        #expect(!metrics.contains("waymark_resolutions_total{"), "forwarded counts are the follower's resolutions, not this node's")
    }
}

/// Whether `error` is the store refusing a record from the primary.
private func isRefusedMirror(_ error: any Error) -> Bool {
    if case .refusedMirror? = error as? StoreError { true } else { false }
}

/// How a follower spells a platform or version in a path: every segment encoded, dot-only
/// ones whole, so nothing on the way can take one for a dot segment.
@Suite("Follower path segments")
struct FollowerSegmentTests {
    @Test(arguments: [("5.3.0", "5.3.0"), ("5.3.0-beta+2", "5.3.0-beta%2B2"), (".", "%2E"), ("..", "%2E%2E"),
                      ("a/b", "a%2Fb"), ("é", "%C3%A9"), ("a b", "a%20b"), ("ios", "ios"), ("x%2e", "x%252e")])
    func segments(_ text: String, _ expected: String) {
        #expect(Follower.segment(text) == expected)
    }
}
