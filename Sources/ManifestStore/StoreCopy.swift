import Foundation
import RouteEngine

/// Moving a store from one medium to another (`waymark migrate`: a data directory into a
/// database, or back): every record copied byte for byte, then the audit log, into a medium
/// that holds nothing yet; then the copy opened as a store and checked against the source.
public enum StoreCopy {
    /// What was copied, and checked.
    public struct Summary: Sendable, Equatable {
        public var revisions = 0
        public var schemas = 0
        public var schedules = 0
        public var rollout = false
        public var tokens = 0
        public var auditEntries = 0
    }

    /// The kinds of records, in the order they are copied (schemas before the revisions
    /// validated against them; a rollout after its candidate).
    static let kinds = ["schemas", "revisions", "schedules"]

    /// Whether `medium` holds nothing a store would read: no record, no token, no audit entry.
    public static func isEmpty(_ medium: any StoreMedium) throws(StoreError) -> Bool {
        for kind in kinds where try !medium.list(kind).isEmpty { return false }
        if try medium.exists(ManifestStore.rolloutFile) { return false }
        if try medium.exists(TokenStore.fileName) { return false }
        return try medium.auditEntries().isEmpty
    }

    /// Copies `source`'s store into `target`, which must be empty (`isEmpty`) and which no
    /// store may have open. Each record is read whole from the source and written as it is;
    /// the copy is checked afterwards by `verify`, not here.
    /// - Complexity: O(the store's bytes); one record in memory at a time, and the audit log.
    public static func copy(from source: any StoreMedium, to target: any StoreMedium) throws(StoreError) -> Summary {
        guard try isEmpty(target) else {
            throw .refusedMirror("\(target.location) is not empty: a store is moved only into an empty directory or database.")
        }
        var summary = Summary()
        for kind in kinds {
            for name in try source.list(kind) {
                try target.copyIn(try source.read(kind + "/" + name), kind: kind, name: name)
                switch kind {
                case "schemas": summary.schemas += 1
                case "revisions": summary.revisions += 1
                default: summary.schedules += 1
                }
            }
        }
        for name in [ManifestStore.rolloutFile, TokenStore.fileName] where try source.exists(name) {
            try target.copyIn(try source.read(name), kind: ".", name: name)
        }
        summary.rollout = try source.exists(ManifestStore.rolloutFile)
        try source.auditHistory { entries throws(StoreError) in
            try target.copyInAudit(entries)
            summary.auditEntries += entries.count
        }
        return summary
    }

    private static func count(_ medium: any StoreMedium) throws(StoreError) -> Int {
        var total = 0
        try medium.auditHistory { entries throws(StoreError) in total += entries.count }
        return total
    }

    /// The differences between two stores, in words (none: the copy is whole): every
    /// revision's number and SHA-256, and each one's document read from the copy and checked
    /// against it; every schema's; every schedule's id, status and SHA-256; the rollout's
    /// state; the tokens; the number of audit entries.
    /// - Complexity: O(the copy's bytes): every document is read once.
    public static func differences(_ source: ManifestStore, _ copy: ManifestStore) throws(StoreError) -> [String] {
        var found: [String] = []
        let a = source.snapshot, b = copy.snapshot
        if a.revisions.map(\.sha256) != b.revisions.map(\.sha256) {
            found.append("revisions: \(a.revisions.count) in the source, \(b.revisions.count) in the copy, or a SHA-256 differs")
        }
        for revision in b.revisions where SHA256.hex(try copy.routes(of: revision)) != revision.sha256 {
            found.append("revision \(revision.number)'s document does not match its SHA-256")
        }
        if a.schemas.mapValues(\.sha256) != b.schemas.mapValues(\.sha256) { found.append("the schemas differ") }
        if a.schedules.map({ "\($0.id) \($0.status) \($0.sha256)" }) != b.schedules.map({ "\($0.id) \($0.status) \($0.sha256)" }) {
            found.append("the schedules differ")
        }
        if a.rollout.map({ "\($0.candidate) \($0.version) \($0.status)" }) != b.rollout.map({ "\($0.candidate) \($0.version) \($0.status)" }) {
            found.append("the rollout's state differs")
        }
        if source.tokens.all.map(\.json) != copy.tokens.all.map(\.json) { found.append("the tokens differ") }
        source.flushRefusals(all: true)
        if try count(source.medium) != count(copy.medium) { found.append("the audit logs differ in length") }
        return found
    }
}
