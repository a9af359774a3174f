import Foundation
import ManifestStore
import Testing

@Suite("Bearer tokens", .serialized)
struct TokenTests {
    @Test func aCreatedTokenAuthenticatesAndOnlyItsHashIsStored() throws {
        let scratch = ScratchDirectory()
        let store = try ManifestStore.open(at: scratch.path).store
        let (record, token) = try store.tokens.create(name: "marketing-ci", scopes: [.routesPublish], actor: "test", now: now)
        #expect(token.hasPrefix("wm_\(record.id)_") && token.utf8.count == 3 + 8 + 1 + 43)
        #expect(store.tokens.authenticate(token)?.name == "marketing-ci")
        #expect(store.tokens.authenticate(token)?.allows(.routesPublish) == true)
        #expect(store.tokens.authenticate(token)?.allows(.schemasWrite) == false)
        let onDisk = String(decoding: scratch.bytes("tokens.json"), as: UTF8.self)
        #expect(!onDisk.contains(String(token.split(separator: "_", maxSplits: 2)[2])), "the secret is never written")
        #expect(try store.auditEntries().last?["action"]?.stringValue == "createToken")
    }

    static let forgeries: [String] = [
        "", "wm_", "wm_00000000_", "Bearer x", "wm_zzzzzzzz_abc", "WM_12345678_abc", "wm_1234567_abc",
    ]

    @Test func forgedAndAlteredTokensAreRejected() throws {
        let scratch = ScratchDirectory()
        let store = try ManifestStore.open(at: scratch.path).store
        let (record, token) = try store.tokens.create(name: "a", scopes: [.admin], actor: "test", now: now)
        for forged in Self.forgeries { #expect(store.tokens.authenticate(forged) == nil, "\(forged)") }
        var altered = Array(token.utf8)
        altered[altered.count - 1] = altered.last == UInt8(ascii: "A") ? UInt8(ascii: "B") : UInt8(ascii: "A")
        #expect(store.tokens.authenticate(String(decoding: altered, as: UTF8.self)) == nil)
        #expect(store.tokens.authenticate("wm_\(record.id)_" + String(repeating: "A", count: 43)) == nil)
        #expect(store.tokens.authenticate(token + "x") == nil)
    }

    @Test func adminAllowsEveryScope() throws {
        let scratch = ScratchDirectory()
        let store = try ManifestStore.open(at: scratch.path).store
        let (record, _) = try store.tokens.create(name: "root", scopes: [.admin], actor: "test", now: now)
        for scope in Scope.allCases { #expect(record.allows(scope)) }
    }

    @Test func whatEachScopeAllows() throws {
        let scratch = ScratchDirectory()
        let store = try ManifestStore.open(at: scratch.path).store
        let expected: [Scope: Set<Scope>] = [
            .manifestRead: [.manifestRead], .routesRead: [.routesRead], .routesPublish: [.routesPublish, .manifestRead, .routesRead],
            .schemasWrite: [.schemasWrite, .manifestRead, .routesRead],
            .telemetryWrite: [.telemetryWrite], .telemetryRead: [.telemetryRead], .replication: [.replication], .admin: Set(Scope.allCases),
        ]
        for (scope, allowed) in expected {
            let record = try store.tokens.create(name: scope.rawValue, scopes: [scope], actor: "test", now: now).record
            #expect(Set(Scope.allCases.filter(record.allows)) == allowed, "\(scope)")
            #expect(scope.implied == allowed, "Scope.implied and TokenRecord.allows say the same for \(scope)")
        }
    }

    /// A `tokens.json` written before `routes:read` split from `manifest:read`: a reader
    /// keeps the internal reads it had, the app's token (it writes telemetry) keeps the
    /// manifest only, and once the file is written again the upgrade is not applied twice.
    @Test func tokensMadeBeforeRoutesReadAreUpgraded() throws {
        let scratch = ScratchDirectory()
        try FileManager.default.createDirectory(atPath: scratch.path, withIntermediateDirectories: true)
        let hash = String(repeating: "ab", count: 32)
        let old = """
            [{"id": "t1", "name": "dashboard", "scopes": ["manifest:read", "telemetry:read"], "created": "2026-11-01T00:00:00Z", "sha256": "\(hash)"},
             {"id": "t2", "name": "app", "scopes": ["manifest:read", "telemetry:write"], "created": "2026-11-01T00:00:00Z", "sha256": "\(String(repeating: "cd", count: 32))"}]
            """
        #expect(FileManager.default.createFile(atPath: scratch.path + "/tokens.json", contents: Data(old.utf8)))
        do {
            let store = try ManifestStore.open(at: scratch.path).store
            let byName = Dictionary(uniqueKeysWithValues: store.tokens.all.map { ($0.name, $0) })
            #expect(byName["dashboard"]?.scopes == [.manifestRead, .routesRead, .telemetryRead])
            #expect(byName["app"]?.scopes == [.manifestRead, .telemetryWrite])
            #expect(byName["app"]?.allows(.routesRead) == false)
            // A change writes every record with its version: the reader keeps routes:read as
            // granted, and a new reader without it is not upgraded on the next open.
            _ = try store.tokens.create(name: "phone", scopes: [.manifestRead], actor: "test", now: now)
        }
        let reopened = try ManifestStore.open(at: scratch.path).store
        let again = Dictionary(uniqueKeysWithValues: reopened.tokens.all.map { ($0.name, $0.scopes) })
        #expect(again["dashboard"] == [.manifestRead, .routesRead, .telemetryRead] && again["phone"] == [.manifestRead])
    }

    @Test func revokedTokensStopWorkingAndStayRevokedAfterReopening() throws {
        let scratch = ScratchDirectory()
        let token: String
        do {
            let store = try ManifestStore.open(at: scratch.path).store
            token = try store.tokens.create(name: "temp", scopes: [.manifestRead], actor: "test", now: now).token
            _ = try store.tokens.create(name: "other", scopes: [.manifestRead], actor: "test", now: now)
            #expect(try store.tokens.revoke("temp", actor: "test", now: now) == 1)
            #expect(try store.tokens.revoke("temp", actor: "test", now: now) == 0)
            #expect(store.tokens.authenticate(token) == nil)
        }
        let store = try ManifestStore.open(at: scratch.path).store
        #expect(store.tokens.authenticate(token) == nil)
        #expect(store.tokens.all.map(\.name).sorted() == ["other", "temp"])
        #expect(store.tokens.all.first { $0.name == "temp" }?.revoked != nil)
        // The name is free again once revoked.
        _ = try store.tokens.create(name: "temp", scopes: [.manifestRead], actor: "test", now: now)
    }

    @Test func badRequestsForTokensChangeNothing() throws {
        let scratch = ScratchDirectory()
        let store = try ManifestStore.open(at: scratch.path).store
        _ = try store.tokens.create(name: "dup", scopes: [.admin], actor: "test", now: now)
        for (name, scopes) in [("dup", Set([Scope.admin])), ("", [.admin]), ("x\ny", [.admin]), ("none", []), ("anonymous", [.routesPublish]),
                               ("public", [.manifestRead])] {
            #expect("\(name)") {
                _ = try store.tokens.create(name: name, scopes: scopes, actor: "test", now: now)
            } throws: { error in
                if case .refusedToken? = error as? StoreError { true } else { false }
            }
        }
        #expect(store.tokens.all.count == 1)
    }

    @Test func aDamagedTokenFileIsRefused() throws {
        let scratch = ScratchDirectory()
        do { _ = try ManifestStore.open(at: scratch.path).store.tokens.create(name: "a", scopes: [.admin], actor: "t", now: now) }
        scratch.write("tokens.json", Array("[{\"id\": 1}]".utf8))
        #expect { _ = try ManifestStore.open(at: scratch.path) } throws: { "\($0)".contains("tokens.json") }
    }

    @Test func theTokenCommandEditsBesideARunningDaemonAndTheDaemonSeesItAtOnce() throws {
        let scratch = ScratchDirectory()
        let daemon = try ManifestStore.open(at: scratch.path).store
        let (_, first) = try daemon.tokens.create(name: "daemon-made", scopes: [.admin], actor: "test", now: now)
        // `waymark token` opens the same directory while the daemon holds DIR/LOCK.
        let command = try ManifestStore.openTokens(at: scratch.path)
        #expect(command.all.map(\.name) == ["daemon-made"])
        let (_, second) = try command.create(name: "cli-made", scopes: [.routesPublish], actor: "cli", now: now)
        #expect(daemon.tokens.authenticate(second)?.name == "cli-made")
        #expect(try command.revoke("daemon-made", actor: "cli", now: now) == 1)
        // The daemon looks at the file at most every recheckInterval (0.2 s): wait past it.
        Thread.sleep(forTimeInterval: Double(TokenStore.recheckInterval) / 1e9 + 0.05)
        #expect(daemon.tokens.authenticate(first) == nil, "a revocation by the command takes effect within the interval")
        // The daemon's next change starts from the file, not from its stale copy.
        _ = try daemon.tokens.create(name: "third", scopes: [.manifestRead], actor: "test", now: now)
        #expect(try ManifestStore.openTokens(at: scratch.path).all.map(\.name) == ["daemon-made", "cli-made", "third"])
        let actions = try daemon.auditEntries().compactMap { $0["action"]?.stringValue }
        #expect(actions == ["createToken", "createToken", "revokeToken", "createToken"])
    }
}
