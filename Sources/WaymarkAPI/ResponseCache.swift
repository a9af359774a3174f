import HTTPCore
import Synchronization

/// Whole answers that never change — a revision with its routes, the diff of two — kept so
/// that a repeated read costs a lookup, not a serialization of the document (a 10,000-route
/// revision is a megabyte of JSON). Least recently used first out, bounded by count and by
/// bytes; an answer larger than a quarter of the bytes is never kept.
final class ResponseCache: Sendable {
    let capacity: Int
    let maximumBytes: Int
    /// Most recently used last.
    private let kept = Mutex<(entries: [(key: String, response: HTTPResponse)], bytes: Int)>(([], 0))

    init(capacity: Int = 16, maximumBytes: Int = 16 << 20) {
        self.capacity = capacity
        self.maximumBytes = maximumBytes
    }

    /// The answer for `key`, made by `make` the first time (outside the lock: two readers
    /// racing make it twice, harmlessly).
    func response<E: Error>(_ key: String, make: () throws(E) -> HTTPResponse) throws(E) -> HTTPResponse {
        if let found = cached(key) { return found }
        let response = try make()
        keep(response, as: key)
        return response
    }

    /// The answer kept for `key`, if there is one (it becomes the most recently used).
    func cached(_ key: String) -> HTTPResponse? {
        kept.withLock { kept -> HTTPResponse? in
            guard let index = kept.entries.firstIndex(where: { $0.key == key }) else { return nil }
            let entry = kept.entries.remove(at: index)
            kept.entries.append(entry)
            return entry.response
        }
    }

    /// Keeps `response` for `key` when it is a `200` small enough, letting the least
    /// recently used go past the count or the bytes.
    func keep(_ response: HTTPResponse, as key: String) {
        guard response.status == .ok, response.body.count <= maximumBytes / 4 else { return }
        kept.withLock { kept in
            guard !kept.entries.contains(where: { $0.key == key }) else { return }
            kept.entries.append((key, response))
            kept.bytes += response.body.count
            while kept.entries.count > capacity || kept.bytes > maximumBytes {
                kept.bytes -= kept.entries.removeFirst().response.body.count
            }
        }
    }

    /// Answers kept now (tests).
    var count: Int { kept.withLock { $0.entries.count } }
}

/// One answer kept for the store generation it was made in: a list that changes with every
/// change (`GET /v1/revisions`, `GET /v1/schedules`), made once per generation whoever asks.
final class GenerationAnswer: Sendable {
    private let kept = Mutex<(generation: Int, response: HTTPResponse)?>(nil)

    /// The generation the kept answer was made in (tests).
    var generation: Int? { kept.withLock { $0?.generation } }

    /// The answer for `generation`, made by `make` the first time. Read the generation
    /// before the snapshot `make` reads: an answer kept under it is never older than it.
    func response(for generation: Int, make: () -> HTTPResponse) -> HTTPResponse {
        if let found = kept.withLock({ $0?.generation == generation ? $0?.response : nil }) { return found }
        let response = make()
        kept.withLock { kept in if kept.map({ $0.generation < generation }) ?? true { kept = (generation, response) } }
        return response
    }
}
