import ManifestStore
import RouteEngine
import Synchronization

/// A stored revision read as a document: its JSON, its routes by id, and the decoded
/// routes document. Revisions are immutable, so each is parsed once for every reader (the
/// revision and diff endpoints, build views, the associated-domain files, telemetry's
/// vocabulary) and the most recently used are kept.
final class RevisionDocuments: Sendable {
    struct Document: Sendable {
        let number: Int
        let json: JSONValue
        /// Each route's id with its JSON, in document order.
        let routes: [(id: String, json: JSONValue)]
        /// Every stored revision passed validation, so it decodes; nil only for a damaged one.
        let document: RoutesDocument?

        init(_ revision: Revision) {
            number = revision.number
            json = Self.json(revision)
            routes = Self.routes(json)
            document = RoutesDocument.decode(json).document
        }

        static func json(_ revision: Revision) -> JSONValue { (try? JSONParser().parse(revision.routes)) ?? .null }

        static func routes(_ json: JSONValue) -> [(id: String, json: JSONValue)] {
            ServedManifest.routes(of: json)
        }
    }

    /// How many documents are kept: the current revision, the one a diff compares it with,
    /// and a few more.
    static let capacity = 8

    /// Most recently used last.
    private let kept = Mutex<[(sha256: String, document: Document)]>([])

    /// The route ids of `revision`, from the kept document if there is one; otherwise parsed
    /// without keeping it (telemetry's vocabulary reads every revision once, and must not
    /// push the current ones out).
    func routeIDs(_ revision: Revision) -> [String] {
        let kept = kept.withLock { kept in kept.last { $0.document.number == revision.number && $0.sha256 == revision.sha256 }?.document }
        return (kept?.routes ?? Document.routes(Document.json(revision))).map(\.id)
    }

    /// The document of `revision`, parsed on first use.
    /// - Complexity: O(size of the revision) the first time, O(capacity) after.
    func document(_ revision: Revision) -> Document {
        let found = kept.withLock { kept -> Document? in
            guard let index = kept.firstIndex(where: { $0.document.number == revision.number && $0.sha256 == revision.sha256 }) else { return nil }
            let entry = kept.remove(at: index)
            kept.append(entry)
            return entry.document
        }
        if let found { return found }
        let document = Document(revision)  // parsed outside the lock; a race parses it twice, harmlessly
        kept.withLock { kept in
            kept.removeAll { $0.document.number == revision.number }
            kept.append((revision.sha256, document))
            if kept.count > Self.capacity { kept.removeFirst(kept.count - Self.capacity) }
        }
        return document
    }
}
