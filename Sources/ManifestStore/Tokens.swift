import Foundation
import Hashing
import RouteEngine
import Synchronization

/// What a bearer token may do. `admin` may do everything.
public enum Scope: String, CaseIterable, Hashable, Sendable, Comparable {
    case manifestRead = "manifest:read"
    case routesPublish = "routes:publish"
    case schemasWrite = "schemas:write"
    case telemetryWrite = "telemetry:write"
    case telemetryRead = "telemetry:read"
    case admin

    public static func < (a: Scope, b: Scope) -> Bool { a.rawValue < b.rawValue }
}

/// A token as stored: never the token itself, only its SHA-256.
public struct TokenRecord: Hashable, Sendable {
    /// Public part of the token (`wm_<id>_<secret>`), to find the record without a scan.
    public let id: String
    public let name: String
    public let scopes: Set<Scope>
    public let created: Date
    public var revoked: Date?
    let sha256: [UInt8]

    public func allows(_ scope: Scope) -> Bool { revoked == nil && (scopes.contains(scope) || scopes.contains(.admin)) }

    var json: JSONValue {
        var object: [String: JSONValue] = ["id": .string(id), "name": .string(name), "scopes": .array(scopes.sorted().map { .string($0.rawValue) }),
                                           "created": .string(Timestamp.format(created)), "sha256": .string(sha256.hexString)]
        if let revoked { object["revoked"] = .string(Timestamp.format(revoked)) }
        return .object(object)
    }

    /// Name, scopes and dates for listings: nothing that helps forge a token.
    public var publicJSON: JSONValue {
        var object: [String: JSONValue] = ["id": .string(id), "name": .string(name), "scopes": .array(scopes.sorted().map { .string($0.rawValue) }),
                                           "created": .string(Timestamp.format(created))]
        if let revoked { object["revoked"] = .string(Timestamp.format(revoked)) }
        return .object(object)
    }
}

/// The tokens of a data directory, in `tokens.json` (rewritten durably on every change).
/// Tokens are `wm_` + 8 hex id + `_` + 43 characters of base64url secret (256 random bits
/// from the system's CSPRNG); only SHA-256 of the whole token is kept, and a presented token
/// is checked with a constant-time comparison of hashes.
public final class TokenStore: Sendable {
    static let fileName = "tokens.json"
    private let directory: DataDirectory
    private let records: Mutex<[TokenRecord]>
    private let writer = Mutex<Void>(())

    init(directory: DataDirectory) throws(StoreError) {
        self.directory = directory
        var loaded: [TokenRecord] = []
        if directory.exists(Self.fileName) {
            let bytes = try directory.read(Self.fileName)
            guard case .array(let items)? = try? JSONParser().parse(bytes) else {
                throw StoreError("The data directory \(directory.path) is damaged: \(Self.fileName) is not a JSON list.")
            }
            for item in items {
                guard let id = item["id"]?.stringValue, let name = item["name"]?.stringValue,
                      let scopes = item["scopes"]?.arrayValue?.compactMap({ $0.stringValue.flatMap(Scope.init(rawValue:)) }),
                      let created = item["created"]?.stringValue.flatMap(Timestamp.parse),
                      let hash = item["sha256"]?.stringValue.flatMap({ [UInt8](hex: $0) }), hash.count == 32
                else { throw StoreError("The data directory \(directory.path) is damaged: an entry of \(Self.fileName) is incomplete.") }
                loaded.append(TokenRecord(id: id, name: name, scopes: Set(scopes), created: created,
                                          revoked: item["revoked"]?.stringValue.flatMap(Timestamp.parse), sha256: hash))
            }
        }
        records = Mutex(loaded)
    }

    public var all: [TokenRecord] { records.withLock { $0 } }
    public var isEmpty: Bool { records.withLock { $0.isEmpty } }

    /// Creates a token and returns it; the plaintext exists only in this return value.
    func create(name: String, scopes: Set<Scope>, now: Date = Date()) throws(StoreError) -> (record: TokenRecord, token: String) {
        guard !name.isEmpty, name.utf8.count <= 100, name.unicodeScalars.allSatisfy({ $0.value >= 0x20 && $0.value != 0x7f }) else {
            throw StoreError("A token name must be 1 to 100 printable characters.")
        }
        guard !scopes.isEmpty else { throw StoreError("A token needs at least one scope: \(Scope.allCases.map(\.rawValue).joined(separator: ", ")).") }
        return try writer.withLock { _ throws(StoreError) in
            var current = records.withLock { $0 }
            guard !current.contains(where: { $0.name == name && $0.revoked == nil }) else {
                throw StoreError("A live token named \"\(name)\" exists; revoke it first or pick another name.")
            }
            var generator = SystemRandomNumberGenerator()
            var id: String
            repeat {
                id = (0..<4).map { _ in UInt8.random(in: 0...255, using: &generator) }.hexString
            } while current.contains(where: { $0.id == id })
            let secret = Self.base64url((0..<32).map { _ in UInt8.random(in: 0...255, using: &generator) })
            let token = "wm_\(id)_\(secret)"
            let record = TokenRecord(id: id, name: name, scopes: scopes, created: Timestamp.parse(Timestamp.format(now)) ?? now,
                                     revoked: nil, sha256: SHA256.hash(Array(token.utf8)))
            current.append(record)
            try save(current)
            records.withLock { $0 = current }
            return (record, token)
        }
    }

    /// Revokes every live token whose name or id is `nameOrID`; returns how many.
    func revoke(_ nameOrID: String, now: Date = Date()) throws(StoreError) -> Int {
        try writer.withLock { _ throws(StoreError) in
            var current = records.withLock { $0 }
            var count = 0
            for index in current.indices where current[index].revoked == nil && (current[index].name == nameOrID || current[index].id == nameOrID) {
                current[index].revoked = Timestamp.parse(Timestamp.format(now)) ?? now
                count += 1
            }
            if count > 0 {
                try save(current)
                records.withLock { $0 = current }
            }
            return count
        }
    }

    /// The live token record for a presented token, or nil.
    public func authenticate(_ token: String) -> TokenRecord? {
        let parts = token.split(separator: "_", maxSplits: 2, omittingEmptySubsequences: false)
        guard parts.count == 3, parts[0] == "wm", parts[1].utf8.count == 8 else { return nil }
        let id = String(parts[1])
        let presented = SHA256.hash(Array(token.utf8))
        return records.withLock { records in
            var found: TokenRecord?
            for record in records where record.id == id && record.revoked == nil {
                if constantTimeEquals(record.sha256, presented) { found = record }
            }
            return found
        }
    }

    private func save(_ records: [TokenRecord]) throws(StoreError) {
        let bytes = JSONValue.array(records.map(\.json)).serializedBytes(pretty: true) + [UInt8(ascii: "\n")]
        try directory.writeDurably(bytes, subdirectory: ".", name: Self.fileName, replacing: true)
    }

    static func base64url(_ bytes: [UInt8]) -> String {
        Data(bytes).base64EncodedString().replacingOccurrences(of: "+", with: "-").replacingOccurrences(of: "/", with: "_")
            .replacingOccurrences(of: "=", with: "")
    }
}
