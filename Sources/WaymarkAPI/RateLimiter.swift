import Dispatch
import Foundation
import HTTPCore
import ManifestStore
import Synchronization

/// Per-token rate limits: one token bucket per (token, scope of the route called), refilled
/// at the token's rate for that scope (`TokenRecord.rate(for:)`) and holding its burst.
/// Checked at the end of a request's head, after the token and its scope, so a request
/// over its rate costs no body read and no handler. Unlimited rates take no lock.
///
/// The app's token (one holding `telemetry:write`) is held by every install and by anyone
/// who unpacks the app, so its rate is shared out by peer (an IPv4 address, an IPv6 /64;
/// behind a trusted proxy, the address it forwards):
/// - one peer may use at most `peerPercent` of the token's rate, and never less than
///   `peerFloor` a second, in a bucket of its own: one address flooding it gets its share;
/// - an IPv6 peer's /56 at most twice that and its /48 four times, each in a bucket of its
///   own, since whoever holds a /48 holds 65,536 /64s: one site's network, however many
///   addresses it spreads over, gets at most four peers' shares;
/// - while the token's bucket is below half, only quiet peers (about one request a second
///   or less over the last `quietHalfLife` seconds, as an install posting its batches is)
///   may take from it: a few dozen addresses each spending its share cannot spend what
///   the installs need.
/// Other tokens are credentials of the people and machines that hold them: one bucket.
///
/// Token buckets are few: one per live token and scope it uses, and only an admin creates
/// tokens. Peer buckets are at most `maximumPeerBuckets`; past it the idle ones (refilled
/// whole) go first, then the least recently used.
final class RateLimiter: Sendable {
    private struct Bucket {
        var available: Double
        /// Monotonic nanoseconds of the last refill.
        var updated: UInt64
        var name: String
        var refused: UInt64 = 0
        var refusedOverPeerShare: UInt64 = 0

        mutating func refill(rate: Int, burst: Int, now: UInt64) {
            RateLimiter.refill(&available, &updated, rate: rate, burst: burst, now: now)
        }
    }

    /// Refills `available` at `rate` up to `burst` for the time since `updated` (none if
    /// the clock went back), and moves `updated` to `now`.
    private static func refill(_ available: inout Double, _ updated: inout UInt64, rate: Int, burst: Int, now: UInt64) {
        let elapsed = now > updated ? Double(now - updated) / 1e9 : 0
        available = min(Double(burst), available + elapsed * Double(rate))
        updated = max(updated, now)
    }

    private struct Key: Hashable {
        let token: String
        let scope: Scope
    }

    private struct PeerKey: Hashable {
        let token: String
        let scope: Scope
        let peer: PeerAddress
        /// 0: the peer (an IPv4 address, an IPv6 /64); 1: its IPv6 /56; 2: its /48.
        let level: UInt8
    }

    /// The buckets a request from `peer` takes from: the peer's, and for IPv6 its /56 and
    /// /48 (the /64's address with the rest of its bits cleared), each with its multiple of
    /// the peer's share.
    private static func levels(of peer: PeerAddress) -> [(peer: PeerAddress, level: UInt8, multiple: Int)] {
        guard peer.low == 1 else { return [(peer, 0, 1)] }
        return [(peer, 0, 1), (PeerAddress(high: peer.high & ~0xFF, low: 1), 1, 2), (PeerAddress(high: peer.high & ~0xFFFF, low: 1), 2, 4)]
    }

    struct PeerBucket {
        var available: Double
        var updated: UInt64
        var rate: Int
        /// Requests taken, decayed by half every `quietHalfLife` seconds.
        var recent: Double = 0

        /// Whether dropping it changes nothing: its share refilled whole by `now` and its
        /// count of requests decayed below one (a busy peer dropped would come back quiet).
        func isIdle(at now: UInt64) -> Bool {
            let elapsed = now > updated ? Double(now - updated) / 1e9 : 0
            return available + elapsed * Double(rate) >= Double(TokenRate.perSecond(rate).burst)
                && recent * exp2(-elapsed / RateLimiter.quietHalfLife) < 1
        }

        /// Whether one more request would make it busy: its decayed count is past
        /// `quietRequests - 1` (a new peer starts there: one quiet request, then busy).
        var isBusy: Bool { recent + 1 > RateLimiter.quietRequests }

        /// Whole seconds until its count decays back to a quiet one's (at least 1).
        var quietAgain: Int {
            max(1, Int((RateLimiter.quietHalfLife * log2(recent / (RateLimiter.quietRequests - 1))).rounded(.up)))
        }
    }

    private struct State {
        var buckets: [Key: Bucket] = [:]
        var peers: [PeerKey: PeerBucket] = [:]
    }

    /// Why a request was refused, and when to come back (whole seconds, at least 1).
    struct Refusal: Equatable {
        let wait: Int
        /// The peer's share of the token's rate, when that share, not the token's rate, was
        /// spent, or the peer was too busy to take from a token's bucket below half.
        let peerRate: Int?
    }

    /// The percent of a token's rate one peer may use (0: no share).
    let peerPercent: Int
    /// A peer may always use this many requests a second of a token's rate (or all of a smaller rate).
    static let peerFloor = 10
    static let maximumPeerBuckets = 10_000
    /// A peer is quiet while its decayed count of requests plus the one it asks for is at
    /// most `quietRequests` (about one a second, with a half-life of `quietHalfLife` seconds).
    static let quietHalfLife = 10.0
    static let quietRequests = 15.0

    private let state = Mutex(State())
    /// Nanoseconds since some start; tests move it.
    private let clock: @Sendable () -> UInt64

    init(peerPercent: Int = 5, clock: @escaping @Sendable () -> UInt64 = { DispatchTime.now().uptimeNanoseconds }) {
        self.peerPercent = min(max(peerPercent, 0), 100)
        self.clock = clock
    }

    /// One peer's rate of a token's `rate`: nil when it is the whole rate (no share to keep).
    func peerRate(of rate: Int) -> Int? {
        guard peerPercent > 0 else { return nil }
        let share = max(rate * peerPercent / 100, Self.peerFloor)
        return share < rate ? share : nil
    }

    /// Takes one request from `record`'s bucket for `scope`, and from `peer`'s share of it:
    /// nil when it may go ahead. A request refused takes nothing from either.
    func take(_ record: TokenRecord, scope: Scope, peer: PeerAddress? = nil) -> Refusal? {
        guard case .perSecond(let rate) = record.rate(for: scope) else { return nil }
        let burst = record.rate(for: scope).burst
        // Shared out only for the app's token.
        let share = record.scopes.contains(.telemetryWrite) ? peer.flatMap { _ in peerRate(of: rate) } : nil
        return state.withLock { state in
            // The clock is read under the lock: read before it, a loop that waited for the
            // lock would bring an older time than the bucket's, and the refill must never
            // see time run backwards (it wrapped to a full bucket: a token at 10/s got 406
            // requests through in 6 s across two loops). Negative elapsed time counts as none.
            let now = clock()
            let key = Key(token: record.id, scope: scope)
            var bucket = state.buckets[key] ?? Bucket(available: Double(burst), updated: now, name: record.name)
            bucket.refill(rate: rate, burst: burst, now: now)
            defer { state.buckets[key] = bucket }
            guard bucket.available >= 1 else {
                bucket.refused += 1
                return Refusal(wait: Self.wait(bucket.available, rate), peerRate: nil)
            }
            if let share, let peer {
                // Widest first (the /48, the /56, then the peer), and a bucket is made only for a
                // request every level lets through: a refused one stores nothing new, so it
                // cannot fill the table and push out others' buckets (or a spent network's).
                var passed: [(key: PeerKey, held: PeerBucket, new: Bool)] = []
                for (address, level, multiple) in Self.levels(of: peer).reversed() {
                    let peerKey = PeerKey(token: record.id, scope: scope, peer: address, level: level)
                    let levelShare = min(rate, share * multiple)
                    let peerBurst = TokenRate.perSecond(levelShare).burst
                    let existing = state.peers[peerKey]
                    // One quiet request, then busy unless it stays quiet: a fresh address is no free burst.
                    var held = existing ?? PeerBucket(available: Double(peerBurst), updated: now, rate: levelShare, recent: Self.quietRequests - 1)
                    let elapsed = now > held.updated ? Double(now - held.updated) / 1e9 : 0
                    held.recent *= exp2(-elapsed / Self.quietHalfLife)
                    Self.refill(&held.available, &held.updated, rate: levelShare, burst: peerBurst, now: now)
                    held.rate = levelShare
                    // Below half the token's bucket, a busy peer waits for the quiet ones (the
                    // peer itself: a network is many installs, never quiet).
                    let busy = level == 0 && held.isBusy && bucket.available < Double(burst) / 2
                    guard held.available >= 1, !busy else {
                        // Nothing is taken; buckets that existed keep their refill, none is made.
                        for entry in passed where !entry.new { state.peers[entry.key] = entry.held }
                        if existing != nil { state.peers[peerKey] = held }
                        bucket.refusedOverPeerShare += 1
                        return Refusal(wait: busy ? held.quietAgain : Self.wait(held.available, levelShare), peerRate: levelShare)
                    }
                    passed.append((peerKey, held, existing == nil))
                }
                if passed.contains(where: \.new) { Self.makeRoom(in: &state, now: now) }
                for (key, var held, _) in passed {
                    held.available -= 1
                    held.recent += 1
                    state.peers[key] = held
                }
            }
            bucket.available -= 1
            return nil
        }
    }

    private static func wait(_ available: Double, _ rate: Int) -> Int {
        max(1, Int(((1 - available) / Double(rate)).rounded(.up)))
    }

    /// Before a new peer bucket: at the bound, drops the idle ones (`PeerBucket.isIdle`),
    /// and if none is, the least recently used quarter.
    private static func makeRoom(in state: inout State, now: UInt64) {
        guard state.peers.count >= maximumPeerBuckets else { return }
        state.peers = state.peers.filter { _, held in !held.isIdle(at: now) }
        guard state.peers.count >= maximumPeerBuckets else { return }
        let oldest = state.peers.sorted { $0.value.updated < $1.value.updated }.prefix(maximumPeerBuckets / 4).map(\.key)
        for key in oldest { state.peers[key] = nil }
    }

    /// Peer buckets held (tests: bounded by `maximumPeerBuckets`).
    var peerBuckets: Int { state.withLock { $0.peers.count } }

    /// Requests refused so far, by token name and scope (for `/metrics`): over the token's
    /// rate, and over one peer's share of it (or busy while the token's bucket was low).
    var refusals: [(token: String, scope: Scope, count: UInt64, overPeerShare: UInt64)] {
        state.withLock { state in
            state.buckets.compactMap { key, bucket in
                bucket.refused + bucket.refusedOverPeerShare > 0 ? (bucket.name, key.scope, bucket.refused, bucket.refusedOverPeerShare) : nil
            }
        }.sorted { ($0.token, $0.scope) < ($1.token, $1.scope) }
    }
}
