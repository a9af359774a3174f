import CivilDate
import Dispatch
import Foundation
import RouteEngine
import Synchronization
import SystemIO

/// A token as stored: never the token itself, only its SHA-256.
public struct TokenRecord: Hashable, Sendable {
    /// Public part of the token (`wm_<id>_<secret>`), to find the record without a scan.
    public let id: String
    public let name: String
    public let scopes: Set<Scope>
    public let created: Date
    public var revoked: Date?
    let sha256: [UInt8]
    /// Its own rate for every scope it uses; nil: `TokenRate.default(for:)` each.
    public var rate: TokenRate?
    /// `scopes` as bits (`Scope.bit`).
    private let scopeMask: UInt8

    init(id: String, name: String, scopes: Set<Scope>, created: Date, revoked: Date? = nil, sha256: [UInt8], rate: TokenRate? = nil) {
        self.id = id
        self.name = name
        self.scopes = scopes
        self.created = created
        self.revoked = revoked
        self.sha256 = sha256
        self.rate = rate
        scopeMask = scopes.reduce(0) { $0 | $1.bit }
    }

    /// The rate for requests this token makes to routes needing `scope`. An admin token
    /// that sets no rate is unlimited wherever it goes.
    public func rate(for scope: Scope) -> TokenRate {
        if let rate { return rate }
        return scopeMask & Scope.admin.bit != 0 ? .unlimited : TokenRate.default(for: scope)
    }

    /// Token names: 1 to 100 letters, digits and `- _ . @ :`, starting with a letter or
    /// digit (the route id grammar, plus `@` and `:` for names like `ci@shop` or
    /// `telemetry:write`): nothing an audit line, a table or a terminal could misshow.
    /// Not `public` or `anonymous`, the names of callers without a token: a token so named
    /// would be taken for one, without a token's share of the work queue.
    public static let reservedNames: Set<String> = ["public", "anonymous"]

    public static func isValidName(_ name: String) -> Bool {
        guard !reservedNames.contains(name) else { return false }
        let bytes = Array(name.utf8)
        guard (1...100).contains(bytes.count) else { return false }
        func isAlphanumeric(_ byte: UInt8) -> Bool {
            (0x30...0x39).contains(byte) || (0x41...0x5A).contains(byte) || (0x61...0x7A).contains(byte)
        }
        return isAlphanumeric(bytes[0]) && bytes.allSatisfy { isAlphanumeric($0) || $0 == 0x2D || $0 == 0x5F || $0 == 0x2E || $0 == 0x40 || $0 == 0x3A }
    }

    /// Written with every record: a record without it was made before `routes:read` split
    /// from `manifest:read` (`Tokens.parse` upgrades it).
    static let scopesVersion = 2

    public func allows(_ scope: Scope) -> Bool {
        guard revoked == nil else { return false }
        if scopeMask & (scope.bit | Scope.admin.bit) != 0 { return true }
        // `Scope.implied`, without building sets on every request.
        return (scope == .manifestRead || scope == .routesRead) && scopeMask & (Scope.routesPublish.bit | Scope.schemasWrite.bit) != 0
    }

    var json: JSONValue {
        var object: [String: JSONValue] = ["id": .string(id), "name": .string(name), "scopes": .array(scopes.sorted().map { .string($0.rawValue) }),
                                           "created": .string(Timestamp.format(created)), "sha256": .string(sha256.hexString),
                                           "scopesVersion": .int(TokenRecord.scopesVersion)]
        if let revoked { object["revoked"] = .string(Timestamp.format(revoked)) }
        if let rate { object["rate"] = rate.json }
        return .object(object)
    }

    /// Name, scopes, rate and dates for listings: nothing that helps forge a token.
    public var publicJSON: JSONValue {
        var object: [String: JSONValue] = ["id": .string(id), "name": .string(name), "scopes": .array(scopes.sorted().map { .string($0.rawValue) }),
                                           "created": .string(Timestamp.format(created))]
        if let revoked { object["revoked"] = .string(Timestamp.format(revoked)) }
        if let rate { object["rate"] = rate.json }
        return .object(object)
    }
}

/// The tokens of a data directory, in `tokens.json` (rewritten durably on every change).
/// Tokens are `wm_` + 8 hex id + `_` + 43 characters of base64url secret (256 random bits
/// from the system's CSPRNG); only SHA-256 of the whole token is kept, and a presented token
/// is checked with a constant-time comparison of hashes.
///
/// `waymark token` edits the file while a daemon serves the directory: every change takes
/// the flock `DIR/tokens.lock`, re-reads the file, writes it back and audits it. A daemon
/// notices a new version (a new inode, since every write is a rename) and reloads it: it
/// looks (one `stat`) at most every `recheckInterval`, and at once when a presented token
/// is unknown, so a new token works immediately and a revoked one stops within 0.2 s.
public final class TokenStore: Sendable {
    /// The records of one version of the file, and the tokens verified against them.
    private struct Loaded {
        var records: [TokenRecord]
        var identity: FileIdentity?
        /// By the token's id, its 8 bytes read as one word (no string on the hot path).
        var verified: [UInt64: Verified] = [:]
    }

    /// A token that matched its record's hash, kept whole (a class: one retain to read).
    private final class Verified: Sendable {
        let token: [UInt8]
        let record: TokenRecord

        init(token: [UInt8], record: TokenRecord) {
            self.token = token
            self.record = record
        }
    }

    public static let fileName = "tokens.json"
    static let lockName = "tokens.lock"
    private let directory: DataDirectory
    /// With a database (`StoreMedium.keepsTokens`), where `tokens.json` is kept
    /// instead of `directory`: a change is made under the medium's exclusion, and other nodes'
    /// changes are reloaded when the store catches up with them (`reload`), never looked for
    /// on a request (an unknown token costs no query).
    private let medium: (any StoreMedium)?
    private let loaded: Mutex<Loaded>
    private let writer = Mutex<Void>(())
    /// How stale the daemon's copy may be before a presented token makes it look again.
    public static let recheckInterval: UInt64 = 200_000_000
    /// When the file was last looked at (monotonic nanoseconds).
    private let lastCheck = Atomic<UInt64>(0)

    /// The audit log's rotation size, as the store's (`ManifestStore.open`).
    private let auditRotationBytes: Int

    init(directory: DataDirectory, medium: (any StoreMedium)? = nil, auditRotationBytes: Int = DataDirectory.defaultAuditRotationBytes) throws(StoreError) {
        self.directory = directory
        self.medium = medium
        self.auditRotationBytes = auditRotationBytes
        let identity = medium == nil ? directory.identity(Self.fileName) : nil
        loaded = Mutex(Loaded(records: try Self.load(directory, medium), identity: identity))
    }

    /// The tokens of the database `medium` keeps its records in, for `waymark token --database`.
    /// (`directory` is then never read or written: the system's temporary directory stands in.)
    public static func open(medium: any StoreMedium) throws(StoreError) -> TokenStore {
        precondition(medium.keepsTokens, "a medium that keeps no tokens")
        let unused = try onDisk { () throws(IOError) in try DataDirectory(path: NSTemporaryDirectory(), subdirectories: [], exclusive: false) }
        return try TokenStore(directory: unused, medium: medium)
    }

    private static func load(_ directory: DataDirectory, _ medium: (any StoreMedium)?) throws(StoreError) -> [TokenRecord] {
        guard let bytes = try stored(directory, medium) else { return [] }
        return try parse(bytes, medium?.location ?? directory.path)
    }

    /// `tokens.json` as stored; nil when there is none yet.
    private static func stored(_ directory: DataDirectory, _ medium: (any StoreMedium)?) throws(StoreError) -> [UInt8]? {
        if let medium { return try medium.exists(fileName) ? try medium.read(fileName) : nil }
        guard directory.exists(fileName) else { return nil }
        return try onDisk { () throws(IOError) in try directory.read(fileName) }
    }

    /// Reads the tokens again after another node changed them (`ManifestStore.catchUp`).
    /// A version that cannot be read keeps the last good one, and throws.
    public func reload() throws(StoreError) {
        try writer.withLock { _ throws(StoreError) in
            let records = try Self.load(directory, medium)
            loaded.withLock { $0 = Loaded(records: records, identity: nil) }
        }
    }

    private static func parse(_ bytes: [UInt8], _ location: String) throws(StoreError) -> [TokenRecord] {
        guard case .array(let items)? = try? JSONParser().parse(bytes) else {
            throw .damaged(directory: location, file: fileName, reason: "not a JSON list")
        }
        var records: [TokenRecord] = []
        for item in items {
            guard let id = item["id"]?.stringValue, let name = item["name"]?.stringValue,
                  let scopes = item["scopes"]?.arrayValue?.compactMap({ $0.stringValue.flatMap(Scope.init(rawValue:)) }),
                  let created = item["created"]?.stringValue.flatMap(Timestamp.parse),
                  let hash = item["sha256"]?.stringValue.flatMap({ [UInt8](hex: $0) }), hash.count == 32
            else { throw .damaged(directory: location, file: fileName, reason: "an entry is incomplete") }
            var rate: TokenRate?
            if let value = item["rate"] {
                guard let parsed = TokenRate(json: value) else {
                    throw .damaged(directory: location, file: fileName, reason: "a rate is neither \"unlimited\" nor 1 to \(TokenRate.maximum)")
                }
                rate = parsed
            }
            // Made before `routes:read` split from `manifest:read`, which then opened revisions,
            // schedules, the rollout, schemas, QR codes and resolving too: such a token keeps
            // them, unless it also writes telemetry (a phone's, shipped in every binary: it
            // keeps the manifest only). The upgraded record is written with the next change.
            var granted = Set(scopes)
            if item["scopesVersion"] == nil, granted.contains(.manifestRead), !granted.contains(.telemetryWrite) { granted.insert(.routesRead) }
            records.append(TokenRecord(id: id, name: name, scopes: granted, created: created,
                                       revoked: item["revoked"]?.stringValue.flatMap(Timestamp.parse), sha256: hash, rate: rate))
        }
        return records
    }

    public var all: [TokenRecord] {
        refreshIfChanged()
        return loaded.withLock { $0.records }
    }

    public var isEmpty: Bool { all.isEmpty }

    /// Creates a token (audited) and returns it; the plaintext exists only in this return value.
    public func create(name: String, scopes: Set<Scope>, rate: TokenRate? = nil, actor: String, now: Date = Date()) throws(StoreError) -> (record: TokenRecord, token: String) {
        guard TokenRecord.isValidName(name) else {
            throw .refusedToken("A token name must be 1 to 100 letters, digits and - _ . @ :, starting with a letter or digit, "
                                + "and not \"public\" or \"anonymous\" (callers without a token).")
        }
        guard !scopes.isEmpty else { throw .refusedToken("A token needs at least one scope: \(Scope.allCases.map(\.rawValue).joined(separator: ", ")).") }
        return try change { current throws(StoreError) in
            guard !current.contains(where: { $0.name == name && $0.revoked == nil }) else {
                throw .refusedToken("A live token named \"\(name)\" exists; revoke it first or pick another name.")
            }
            var generator = SystemRandomNumberGenerator()
            var id: String
            repeat {
                id = (0..<4).map { _ in UInt8.random(in: 0...255, using: &generator) }.hexString
            } while current.contains(where: { $0.id == id })
            let secret = Self.base64url((0..<32).map { _ in UInt8.random(in: 0...255, using: &generator) })
            let token = "wm_\(id)_\(secret)"
            let record = TokenRecord(id: id, name: name, scopes: scopes, created: Timestamp.parse(Timestamp.format(now)) ?? now,
                                     revoked: nil, sha256: SHA256.hash(Array(token.utf8)), rate: rate)
            current.append(record)
            var audit: [String: JSONValue] = ["action": "createToken", "actor": .string(actor), "outcome": "ok", "token": .string(id),
                                              "name": .string(name), "scopes": .array(scopes.sorted().map { .string($0.rawValue) })]
            if let rate { audit["rate"] = rate.json }
            return ((record, token), audit)
        }
    }

    /// Revokes every live token whose name or id is `nameOrID` (audited); returns how many.
    public func revoke(_ nameOrID: String, actor: String, now: Date = Date()) throws(StoreError) -> Int {
        try change { current throws(StoreError) in
            var count = 0
            for index in current.indices where current[index].revoked == nil && (current[index].name == nameOrID || current[index].id == nameOrID) {
                current[index].revoked = Timestamp.parse(Timestamp.format(now)) ?? now
                count += 1
            }
            let audit: [String: JSONValue] = ["action": "revokeToken", "actor": .string(actor), "outcome": count > 0 ? "ok" : "refused",
                                              "token": .string(nameOrID), "revoked": .int(count)]
            return (count, audit)
        }
    }

    /// Read, change, write and audit under the cross-process lock; the change is durable
    /// and in the audit log before this returns. A change that throws writes nothing.
    private func change<T: Sendable>(_ body: (inout [TokenRecord]) throws(StoreError) -> (T, audit: [String: JSONValue])) throws(StoreError) -> T {
        if let medium {
            return try writer.withLock { _ throws(StoreError) in
                // Others' changes to the records are the store's to apply (`since: .max` asks for none).
                // In memory once committed (the change is one transaction, kept when `exclusively` returns).
                let (result, records) = try medium.exclusively(since: .max) { _ throws(StoreError) -> (T, [TokenRecord]) in
                    let before = try Self.load(directory, medium)
                    var records = before
                    let (result, audit) = try body(&records)
                    if records != before {
                        try medium.write(Self.encode(records), kind: ".", name: Self.fileName, replacing: true, audit: audit, time: Date())
                    } else {
                        try medium.appendAudit([audit], time: Date())
                    }
                    return (result, records)
                }
                loaded.withLock { $0 = Loaded(records: records, identity: nil) }
                return result
            }
        }
        return try writer.withLock { _ throws(StoreError) in
            try directory.withFileLock(Self.lockName, failure: StoreError.init) { () throws(StoreError) -> T in
                let before = try Self.load(directory, nil)
                var records = before
                let (result, audit) = try body(&records)
                // The file and its audit entry, all or nothing (`DataDirectory.writeDurably`).
                if records != before {
                    let bytes = Self.encode(records)
                    _ = try onDisk { () throws(IOError) in
                        try directory.writeDurably(bytes, subdirectory: ".", name: Self.fileName, replacing: true) { () throws(IOError) in
                            try directory.appendAudit(audit, time: Date(), rotateAt: auditRotationBytes)
                        }
                    }
                } else {
                    try onDisk { () throws(IOError) in try directory.appendAudit(audit, time: Date(), rotateAt: auditRotationBytes) }
                }
                let identity = directory.identity(Self.fileName)
                loaded.withLock { $0 = Loaded(records: records, identity: identity) }
                return result
            }
        }
    }

    private static func encode(_ records: [TokenRecord]) -> [UInt8] {
        JSONValue.array(records.map(\.json)).serializedBytes(pretty: true) + [UInt8(ascii: "\n")]
    }

    /// `tokens.json` as stored (empty when there are no tokens yet), for a follower.
    public func fileBytes() throws(StoreError) -> [UInt8] {
        try writer.withLock { _ throws(StoreError) in try Self.stored(directory, medium) ?? [] }
    }

    /// A follower's copy of the primary's `tokens.json` (hashes only, never a token): checked
    /// entry by entry, then written durably and audited, if it differs from the copy here.
    /// Returns whether it did.
    @discardableResult
    public func mirror(_ bytes: [UInt8], actor: String) throws(StoreError) -> Bool {
        guard medium == nil else { throw .refusedMirror("A store on a database is not a follower.") }
        return try writer.withLock { _ throws(StoreError) in
            try directory.withFileLock(Self.lockName, failure: StoreError.init) { () throws(StoreError) -> Bool in
                let records: [TokenRecord]
                do throws(StoreError) {
                    records = try Self.parse(bytes, directory.path)
                } catch {
                    throw .refusedMirror("The primary's \(Self.fileName) is not a list of tokens.")
                }
                let before = directory.exists(Self.fileName) ? try onDisk { () throws(IOError) in try directory.read(Self.fileName) } : []
                guard before != bytes else { return false }
                _ = try onDisk { () throws(IOError) in
                    try directory.writeDurably(bytes, subdirectory: ".", name: Self.fileName, replacing: true) { () throws(IOError) in
                        try directory.appendAudit(["action": "mirrorTokens", "actor": .string(actor), "outcome": "ok", "tokens": .int(records.count)], time: Date(),
                                                  rotateAt: auditRotationBytes)
                    }
                }
                let identity = directory.identity(Self.fileName)
                loaded.withLock { $0 = Loaded(records: records, identity: identity) }
                return true
            }
        }
    }

    /// Reloads `tokens.json` when another process replaced it. A version that cannot be
    /// read keeps the last good one (every write is a rename, so this means tampering).
    private func refreshIfChanged() {
        lastCheck.store(DispatchTime.now().uptimeNanoseconds, ordering: .relaxed)
        guard medium == nil else { return }
        let identity = directory.identity(Self.fileName)
        guard identity != loaded.withLock({ $0.identity }) else { return }
        writer.withLock { _ in
            guard let records = try? Self.load(directory, nil) else { return }
            loaded.withLock { $0 = Loaded(records: records, identity: identity) }
        }
    }

    /// The live token record for a presented token, or nil.
    public func authenticate(_ token: String) -> TokenRecord? {
        var token = token
        return token.withUTF8 { authenticate(bytes: $0) }
    }

    /// The same for the token's bytes (`wm_<8 hex id>_<secret>`) where they lie (the request's `Authorization` field), checked
    /// without building a string or an array: this runs on every request.
    public func authenticate(bytes presented: UnsafeBufferPointer<UInt8>) -> TokenRecord? {
        guard presented.count > 12, presented[0] == UInt8(ascii: "w"), presented[1] == UInt8(ascii: "m"),
              presented[2] == UInt8(ascii: "_"), presented[11] == UInt8(ascii: "_") else { return nil }
        if DispatchTime.now().uptimeNanoseconds &- lastCheck.load(ordering: .relaxed) >= Self.recheckInterval { refreshIfChanged() }
        if let found = lookup(presented) { return found }
        // Unknown: perhaps created a moment ago by `waymark token`.
        refreshIfChanged()
        return lookup(presented)
    }

    /// A token verified once is remembered (in memory only, dropped on every reload) and
    /// later compared whole, in constant time, instead of hashed again: a client presents
    /// the same token on every request, and SHA-256 was the largest cost of a 304.
    private func lookup(_ presented: UnsafeBufferPointer<UInt8>) -> TokenRecord? {
        let key = UnsafeRawBufferPointer(presented).loadUnaligned(fromByteOffset: 3, as: UInt64.self)
        if let known = loaded.withLock({ $0.verified[key] }), known.token.count == presented.count,
           known.token.withUnsafeBufferPointer({ constantTimeEquals($0, presented) }) {
            return known.record
        }
        let presented = Array(presented)
        let id = String(decoding: presented[3..<11], as: UTF8.self)
        let digest = SHA256.hash(presented)
        return loaded.withLock { loaded in
            var found: TokenRecord?
            for record in loaded.records where record.id == id && record.revoked == nil {
                if constantTimeEquals(record.sha256, digest) { found = record }
            }
            if let found { loaded.verified[key] = Verified(token: presented, record: found) }
            return found
        }
    }

    static func base64url(_ bytes: [UInt8]) -> String {
        Data(bytes).base64EncodedString().replacingOccurrences(of: "+", with: "-").replacingOccurrences(of: "/", with: "_")
            .replacingOccurrences(of: "=", with: "")
    }
}
