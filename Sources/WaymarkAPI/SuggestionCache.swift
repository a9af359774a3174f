import Glibc
import LinkLanding
import ManifestStore
import RouteEngine
import Synchronization

/// Route suggestions for unknown-link shapes (`RouteSuggestion.suggest`), made once per shape
/// and kept for as long as what decides them is unchanged: a suggestion validates a document,
/// tens of milliseconds to a second on a large one, so a listing of 200 shapes made afresh
/// for every request, or after every publish, would cost seconds of CPU each time.
///
/// What decides a shape's suggestion is the routes that could compete with it — those with
/// a pattern of as many segments, or one ending in `*rest`: its candidates come from them
/// and it is validated against them (`RouteSuggestion.suggest`) — and the schemas. So a
/// suggestion is kept against a `Key`: the schemas' digests and a digest of those routes,
/// as the revision has them (`Competitors`, made once per revision). A publish that changes
/// no route of a shape's length leaves its suggestion standing; one that does makes it
/// again. Everything is dropped when `capacity` shapes are held.
final class SuggestionCache: Sendable {
    /// What a shape's suggestion was made against.
    struct Key: Hashable, Sendable {
        let schemas: [String]
        /// The digest of the routes that could compete with the shape (`Competitors`).
        let competitors: [UInt8]
    }

    /// Per path length (segments), the digest of the routes that could compete with a shape
    /// of that length, for one revision: each route with a pattern of that length, as
    /// serialised, in document order, then the digest of the document's app and format and
    /// of every route with a pattern ending in `*rest` (which competes at every length).
    struct Competitors: Sendable {
        let revision: Int
        private let digests: [[UInt8]]
        /// The revision's patterns parsed once, for every suggestion made against it.
        let index: RouteSuggestion.Index

        init(revision: Int, routes: JSONValue, document: RoutesDocument) {
            self.revision = revision
            index = RouteSuggestion.Index(document)
            // Routes with a `*rest` compete with every length: hashed once, into a digest
            // of their own that each length's digest takes in, with the document's app and
            // format (what a suggestion validates against besides the routes).
            var hashers = Array(repeating: SHA256(), count: URLPattern.maximumSegments + 1)
            var everyLength = SHA256()
            everyLength.update(JSONValue.object(["app": routes["app"] ?? .null, "format": routes["format"] ?? .null]).serializedBytes() + [0x0A])
            for route in routes["routes"]?.arrayValue ?? [] {
                let patterns = (route["patterns"]?.arrayValue ?? []).compactMap(\.stringValue).compactMap { try? URLPattern($0) }
                guard !patterns.isEmpty else { continue }
                let bytes = route.serializedBytes() + [0x0A]
                if patterns.contains(where: \.endsWithRest) {
                    everyLength.update(bytes)
                    continue
                }
                for length in Set(patterns.map(\.segments.count)) where length < hashers.count { hashers[length].update(bytes) }
            }
            let shared = everyLength.finalize()
            digests = hashers.map { hasher in
                var hasher = hasher
                hasher.update(shared)
                return hasher.finalize()
            }
        }

        /// The digest for shapes of `length` segments.
        func digest(length: Int) -> [UInt8] { digests[min(max(0, length), digests.count - 1)] }
    }

    static let capacity = 4_096

    private struct State {
        /// Shape → its suggestion (nil when none validates) and what it was made against.
        var made: [String: (key: Key, suggestion: RouteSuggestion?)] = [:]
        var competitors: Competitors?
    }

    private let state = Mutex(State())

    /// The suggestion made for `shape` against `key`: `.some(nil)` when none validates,
    /// nil when none has been made against it.
    func suggestion(for shape: String, at key: Key) -> RouteSuggestion?? {
        state.withLock { state in
            guard let kept = state.made[shape], kept.key == key else { return nil }
            return .some(kept.suggestion)
        }
    }

    /// Keeps `suggestion`, made for `shape` against `key`. A request that read an older
    /// snapshot keeps what it made against the routes it read: it is found only while those
    /// routes are what the current revision has.
    func keep(_ suggestion: RouteSuggestion?, for shape: String, at key: Key) {
        state.withLock { state in
            if state.made[shape] == nil, state.made.count >= Self.capacity { state.made = [:] }
            state.made[shape] = (key, suggestion)
        }
    }

    /// The competitors' digests and the index of `revision` (its routes `json`, decoded as
    /// `document`), made once per revision.
    func competitors(revision: Int, routes json: JSONValue, document: RoutesDocument) -> Competitors {
        if let kept = state.withLock({ $0.competitors }), kept.revision == revision { return kept }
        let made = Competitors(revision: revision, routes: json, document: document)
        state.withLock { $0.competitors = made }
        return made
    }

    /// Shapes held (tests).
    var count: Int { state.withLock { $0.made.count } }

    /// CPU seconds the calling thread has used: what bounds the suggestions one request makes.
    static func threadCPUSeconds() -> Double {
        var time = timespec()
        clock_gettime(CLOCK_THREAD_CPUTIME_ID, &time)
        return Double(time.tv_sec) + Double(time.tv_nsec) / 1e9
    }
}
