import ManifestStore
import RouteEngine

/// What a primary holds, as `GET /v1/replication/state` tells its followers: every
/// revision's number and SHA-256, every schema's build and SHA-256, and the SHA-256 of its
/// tokens file (hashes of tokens, never tokens). A follower compares it with its own store
/// and fetches what differs.
public struct ReplicationState: Equatable, Sendable {
    public struct SchemaEntry: Equatable, Sendable {
        public var key: SchemaKey
        public var sha256: String
    }

    public var app: String?
    /// Revision n's SHA-256 at index n - 1.
    public var revisions: [String]
    public var schemas: [SchemaEntry]
    public var tokens: String
    /// The newest rollout's state (`ManifestStore.replicationJSON`), which followers mirror.
    public var rollout: JSONValue?

    public init(store: ManifestStore) throws(StoreError) {
        let snapshot = store.snapshot
        rollout = snapshot.rollout.map(ManifestStore.replicationJSON)
        app = snapshot.app
        revisions = snapshot.revisions.map(\.sha256)
        schemas = snapshot.orderedSchemas.map { SchemaEntry(key: $0.key, sha256: $0.sha256) }
        tokens = SHA256.hex(try store.tokens.fileBytes())
    }

    init(app: String?, revisions: [String], schemas: [SchemaEntry], tokens: String, rollout: JSONValue?) {
        self.rollout = rollout
        self.app = app
        self.revisions = revisions
        self.schemas = schemas
        self.tokens = tokens
    }

    public var json: JSONValue {
        .object([
            "app": app.map(JSONValue.string) ?? .null,
            "revisions": .array(revisions.enumerated().map { .object(["number": .int($0.offset + 1), "sha256": .string($0.element)]) }),
            "schemas": .array(schemas.map { .object(["platform": .string($0.key.platform), "version": .string($0.key.version), "sha256": .string($0.sha256)]) }),
            "tokens": .string(tokens),
            "rollout": rollout ?? .null,
        ])
    }

    public static func decode(_ bytes: [UInt8]) -> Result<ReplicationState, ReplicationError> {
        func isHash(_ text: String) -> Bool { text.utf8.count == 64 && text.utf8.allSatisfy { (0x30...0x39).contains($0) || (0x61...0x66).contains($0) } }
        guard let json = try? JSONParser().parse(bytes), let revisionList = json["revisions"]?.arrayValue,
              let schemaList = json["schemas"]?.arrayValue, let tokens = json["tokens"]?.stringValue, isHash(tokens) else {
            return .failure(ReplicationError("The primary's replication state is not the expected JSON object."))
        }
        var revisions: [String] = []
        for (index, entry) in revisionList.enumerated() {
            guard entry["number"]?.intValue == index + 1, let sha = entry["sha256"]?.stringValue, isHash(sha) else {
                return .failure(ReplicationError("The primary's revision list is out of order or lacks a SHA-256 at \(index + 1)."))
            }
            revisions.append(sha)
        }
        var schemas: [SchemaEntry] = []
        for entry in schemaList {
            guard let platform = entry["platform"]?.stringValue, let version = entry["version"]?.stringValue,
                  let sha = entry["sha256"]?.stringValue, isHash(sha) else {
                return .failure(ReplicationError("An entry of the primary's schema list is incomplete."))
            }
            schemas.append(SchemaEntry(key: SchemaKey(platform: platform, version: version), sha256: sha))
        }
        var rollout: JSONValue?
        if case .object? = json["rollout"] { rollout = json["rollout"] }
        return .success(ReplicationState(app: json["app"]?.stringValue, revisions: revisions, schemas: schemas, tokens: tokens, rollout: rollout))
    }
}
