import CivilDate
import Foundation
import Rollout
import RouteEngine
import Synchronization
import SystemIO

/// What a follower reads from its primary and stores as it is (revision and schema
/// records), and which primary a data directory follows.
extension ManifestStore {
    /// Revision `number` as stored (its record: header line and body), for a follower.
    public func revisionRecord(_ number: Int) throws(StoreError) -> [UInt8]? {
        guard snapshot.revision(number) != nil else { return nil }
        return try medium.read("revisions/" + Self.revisionFileName(number))
    }

    /// The schema of `key` as stored, for a follower. Re-registration replaces the file, so
    /// the bytes may be newer than a snapshot the caller read a moment ago.
    public func schemaRecord(_ key: SchemaKey) throws(StoreError) -> [UInt8]? {
        guard snapshot.schemas[key] != nil else { return nil }
        return try medium.read("schemas/" + Self.schemaFileName(key))
    }

    /// A follower's copy of the primary's revision `number`: `record` exactly as the primary
    /// stores it, checked (its body's SHA-256 against its header and against `sha256`, the
    /// number and parent) before it is stored the same way as a publish and served.
    /// Revisions are mirrored in order; anything else is refused and changes nothing.
    @discardableResult
    public func mirrorRevision(_ record: [UInt8], number: Int, sha256: String, actor: String) throws(StoreError) -> Revision {
        try exclusively { () throws(StoreError) in
            let next = snapshot.revisions.count + 1
            guard number == next else { throw StoreError.refusedMirror("Revision \(number) cannot be mirrored here: the next is \(next).") }
            let decoded: Record
            switch Record.decode(record) {
            case .success(let value): decoded = value
            case .failure(let problem): throw StoreError.refusedMirror("The primary's revision \(number) is damaged: \(problem.message).")
            }
            guard decoded.sha256 == sha256 else {
                throw StoreError.refusedMirror("The primary's revision \(number) has SHA-256 \(decoded.sha256), its list says \(sha256).")
            }
            let revision: Revision
            switch Self.revision(from: decoded, number: number) {
            case .success(let value): revision = value
            case .failure(let problem): throw StoreError.refusedMirror("The primary's revision \(number) is not valid: \(problem.message).")
            }
            try writeAudited(record, "revisions", Self.revisionFileName(number), replacing: false,
                             ["action": "mirror", "actor": .string(actor), "outcome": "ok", "revision": .int(number), "sha256": .string(sha256)],
                             time: Date())
            state.withLock { snapshot in
                snapshot.revisions.append(revision)
                // A candidate's rollout starts as it did on the primary; a follower never moves it on its own.
                if let start = revision.rollout {
                    snapshot.rollout = RolloutState(candidate: number, stable: start.stable, steps: start.steps, now: revision.time)
                }
                if revision.supersedes != nil, snapshot.rollout?.candidate == revision.supersedes { snapshot.rollout?.supersede() }
                snapshot.pinBodies(adding: number, decoded.body)
            }
            changed()
            return revision
        }
    }

    /// A follower's copy of the primary's schema for `key`, checked the same way; replaces
    /// the schema it had for that build.
    @discardableResult
    public func mirrorSchema(_ record: [UInt8], key: SchemaKey, sha256: String, actor: String) throws(StoreError) -> StoredSchema {
        try exclusively { () throws(StoreError) in
            let decoded: Record
            switch Record.decode(record) {
            case .success(let value): decoded = value
            case .failure(let problem): throw StoreError.refusedMirror("The primary's schema for \(key) is damaged: \(problem.message).")
            }
            guard decoded.sha256 == sha256 else {
                throw StoreError.refusedMirror("The primary's schema for \(key) has SHA-256 \(decoded.sha256), its list says \(sha256).")
            }
            let stored: StoredSchema
            switch Self.schema(from: decoded) {
            case .success(let value): stored = value
            case .failure(let problem): throw StoreError.refusedMirror("The primary's schema for \(key) is not valid: \(problem.message).")
            }
            guard stored.key == key else { throw StoreError.refusedMirror("The primary's schema for \(key) holds the schema for \(stored.key).") }
            let current = snapshot
            if let app = current.app, app != stored.schema.app, current.schemas.count > (current.schemas[key] == nil ? 0 : 1) {
                throw StoreError.refusedMirror("The primary's schema for \(key) is for the app \(stored.schema.app); this data directory serves \(app).")
            }
            try writeAudited(record, "schemas", Self.schemaFileName(key), replacing: true,
                             ["action": "mirrorSchema", "actor": .string(actor), "outcome": "ok", "platform": .string(key.platform),
                              "version": .string(key.version), "sha256": .string(sha256)], time: Date())
            state.withLock { $0.schemas[key] = stored }
            changed()
            return stored
        }
    }

    /// `DIR/FOLLOWING` holds the primary's URL while the directory is a follower's, so that
    /// `waymark token` refuses changes the next mirror would overwrite.
    static let followingName = "FOLLOWING"

    /// The primary the data directory at `path` follows, if it is a follower's.
    public static func following(dataDirectory path: String) -> String? {
        guard let data = FileManager.default.contents(atPath: path + "/" + followingName) else { return nil }
        return String(decoding: data, as: UTF8.self).trimmingCharacters(in: .whitespacesAndNewlines)
    }

    /// Marks the directory as following `primary`, or (nil) as a primary again.
    public func setFollowing(_ primary: String?) throws(StoreError) {
        if let primary {
            try onDisk { () throws(IOError) in try directory.writeDurably(Array((primary + "\n").utf8), subdirectory: ".", name: Self.followingName, replacing: true) }
        } else if directory.exists(Self.followingName) {
            try onDisk { () throws(IOError) in try directory.remove(Self.followingName) }
        }
    }
}
