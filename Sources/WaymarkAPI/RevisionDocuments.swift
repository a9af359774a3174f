import ManifestStore
import RouteEngine
import Synchronization

/// A stored revision read as a document: its JSON, its routes by id, and the decoded
/// routes document. Revisions are immutable, so each is parsed once for every reader (the
/// revision and diff endpoints, build views, the associated-domain files, telemetry's
/// vocabulary) while it is kept.
///
/// What is kept is bounded whatever history holds: the documents of the revisions the
/// store keeps in memory (the current one and the newest: during a rollout its stable
/// revision and its candidate), and at most `historyCapacity` others, read from disk when
/// asked, whose documents come to at most `historyBytes` together (a parsed document takes
/// a few times its bytes); an older one larger than that is parsed, used and let go.
final class RevisionDocuments: Sendable {
    struct Document: Sendable {
        let number: Int
        let json: JSONValue
        /// Each route's id with its JSON, in document order.
        let routes: [(id: String, json: JSONValue)]
        /// Every stored revision passed validation, so it decodes; nil only for a damaged one.
        let document: RoutesDocument?

        init(number: Int, routes bytes: [UInt8]) {
            self.number = number
            json = (try? JSONParser().parse(bytes)) ?? .null
            routes = Self.routes(json)
            document = RoutesDocument.decode(json).document
        }

        static func routes(_ json: JSONValue) -> [(id: String, json: JSONValue)] {
            ServedManifest.routes(of: json)
        }
    }

    /// Documents of revisions the store does not keep in memory, kept at most.
    static let historyCapacity = 4
    /// Bytes of those documents (as stored) kept together at most.
    static let historyBytes = 8 << 20

    let store: ManifestStore

    init(store: ManifestStore) {
        self.store = store
    }

    private struct Entry {
        let sha256: String
        let bytes: Int
        let document: Document
    }

    /// Most recently used last.
    private let kept = Mutex<[Entry]>([])

    /// The route ids of `revision`, from the kept document if there is one; otherwise read
    /// and parsed without keeping it (telemetry's vocabulary reads history once, and must
    /// not push the current ones out).
    func routeIDs(_ revision: Revision) throws(StoreError) -> [String] {
        if let kept = kept.withLock({ kept in kept.last { $0.document.number == revision.number && $0.sha256 == revision.sha256 }?.document }) {
            return kept.routes.map(\.id)
        }
        let json = (try? JSONParser().parse(try store.routes(of: revision))) ?? .null
        return Document.routes(json).map(\.id)
    }

    /// The document of `revision`, parsed on first use: from memory for the revisions the
    /// store keeps there, otherwise read from disk and checked against its SHA-256 (a
    /// damaged file is the store's `damaged` error naming it; nothing is kept).
    /// - Complexity: O(size of the revision) the first time, O(kept) after.
    func document(_ revision: Revision) throws(StoreError) -> Document {
        let found = kept.withLock { kept -> Document? in
            guard let index = kept.firstIndex(where: { $0.document.number == revision.number && $0.sha256 == revision.sha256 }) else { return nil }
            let entry = kept.remove(at: index)
            kept.append(entry)
            return entry.document
        }
        if let found { return found }
        // Read and parsed outside the lock; a race parses it twice, harmlessly.
        let document = Document(number: revision.number, routes: try store.routes(of: revision))
        let pinned = store.snapshot.pinned
        kept.withLock { kept in
            kept.removeAll { $0.document.number == revision.number }
            kept.append(Entry(sha256: revision.sha256, bytes: revision.bytes, document: document))
            // History's share, least recently used out first; the pinned ones stay.
            var count = 0, bytes = 0
            for index in kept.indices.reversed() where !pinned.contains(kept[index].document.number) {
                count += 1
                bytes += kept[index].bytes
                if count > Self.historyCapacity || bytes > Self.historyBytes { kept.remove(at: index) }
            }
        }
        return document
    }

    /// `document(_:)` for a handler: a revision that cannot be read is a `500` naming the
    /// damaged file, and nothing else is affected.
    func read(_ revision: Revision) throws(Refusal) -> Document {
        do throws(StoreError) {
            return try document(revision)
        } catch {
            throw Refusal.storeFailed(error, "Revision \(revision.number) could not be read", "Nothing else is affected.")
        }
    }

    /// The revisions whose documents are kept now (tests, and the hostile script's figure).
    var keptNumbers: [Int] { kept.withLock { $0.map(\.document.number) } }
}
