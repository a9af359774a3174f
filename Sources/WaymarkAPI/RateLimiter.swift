import Dispatch
import ManifestStore
import Synchronization

/// Per-token rate limits: one token bucket per (token, scope of the route called), refilled
/// at the token's rate for that scope (`TokenRecord.rate(for:)`) and holding its burst.
/// Checked at the end of a request's head, after the token and its scope, so a request
/// over its rate costs no body read and no handler. Unlimited rates take no lock.
///
/// Buckets are few: one per live token and scope it uses, and only an admin creates tokens.
final class RateLimiter: Sendable {
    private struct Bucket {
        var available: Double
        /// Monotonic nanoseconds of the last refill.
        var updated: UInt64
        var name: String
        var refused: UInt64 = 0
    }

    private struct Key: Hashable {
        let token: String
        let scope: Scope
    }

    private let buckets = Mutex<[Key: Bucket]>([:])
    /// Nanoseconds since some start; tests move it.
    private let clock: @Sendable () -> UInt64

    init(clock: @escaping @Sendable () -> UInt64 = { DispatchTime.now().uptimeNanoseconds }) {
        self.clock = clock
    }

    /// Takes one request from `record`'s bucket for `scope`: nil when it may go ahead, else
    /// the whole seconds until one more would be allowed (for `Retry-After`, at least 1).
    func take(_ record: TokenRecord, scope: Scope) -> Int? {
        guard case .perSecond(let rate) = record.rate(for: scope) else { return nil }
        let burst = Double(record.rate(for: scope).burst)
        return buckets.withLock { buckets in
            // The clock is read under the lock: read before it, a loop that waited for the
            // lock would bring an older time than the bucket's, and the refill must never
            // see time run backwards (it wrapped to a full bucket: a token at 10/s got 406
            // requests through in 6 s across two loops). Negative elapsed time counts as none.
            let now = clock()
            let key = Key(token: record.id, scope: scope)
            var bucket = buckets[key] ?? Bucket(available: burst, updated: now, name: record.name)
            let elapsed = now > bucket.updated ? Double(now - bucket.updated) / 1e9 : 0
            bucket.available = min(burst, bucket.available + elapsed * Double(rate))
            bucket.updated = max(bucket.updated, now)
            defer { buckets[key] = bucket }
            if bucket.available >= 1 {
                bucket.available -= 1
                return nil
            }
            bucket.refused += 1
            let wait = (1 - bucket.available) / Double(rate)
            return max(1, Int(wait.rounded(.up)))
        }
    }

    /// Requests refused so far, by token name and scope (for `/metrics`).
    var refusals: [(token: String, scope: Scope, count: UInt64)] {
        buckets.withLock { buckets in
            buckets.compactMap { key, bucket in bucket.refused > 0 ? (bucket.name, key.scope, bucket.refused) : nil }
        }.sorted { ($0.token, $0.scope) < ($1.token, $1.scope) }
    }
}
