import Foundation
import HTTPCore
import HTTPServer
import ManifestStore
@testable import WaymarkAPI
import Synchronization
import Testing
import TestSupport

/// Per-token rate limits, on a clock the test moves: a token over its rate for a scope is
/// answered `429` with `Retry-After` (its body unread), the bucket refills with time, each
/// scope has its own bucket, and the refusals show in `/metrics` and, aggregated, in the
/// audit log.
@Suite("Per-token rate limits", .serialized)
struct RateLimitTests {
    final class Clock: Sendable {
        let nanoseconds = Atomic<UInt64>(1_000_000_000)
        func advance(seconds: Double) { nanoseconds.add(UInt64(seconds * 1e9), ordering: .relaxed) }
    }

    @Test func aTokenOverItsRateGets429WithRetryAfterAndTheBucketRefills() throws {
        let clock = Clock()
        let service = try LiveService(monotonicClock: { clock.nanoseconds.load(ordering: .relaxed) }, transport: .inProcess)
        let phone = try service.store.tokens.create(name: "phone", scopes: [.telemetryWrite, .manifestRead], rate: .perSecond(2), actor: "test").token
        let body = #"{"client": {"platform": "ios", "appVersion": "5.3.0", "revision": 1}, "events": []}"#
        // A burst of five seconds' worth, at least 10.
        let statuses = (0..<11).map { _ in service.call("POST", "/v1/telemetry", token: phone, body: body).status }
        #expect(statuses.prefix(10).allSatisfy { $0 != 429 }, "\(statuses)")
        let refused = service.call("POST", "/v1/telemetry", token: phone, body: body)
        #expect(refused.status == 429)
        #expect(refused.errorCode == "rateLimited")
        #expect(refused["Retry-After"] == "1", "one request's worth at 2/s is half a second, rounded up")
        #expect(refused.text.contains("phone") && refused.text.contains("2/s"))
        // Its own bucket per scope: manifest reads still go through.
        #expect(service.call("GET", "/v1/manifest?platform=ios&version=5.3.0", token: phone).status == 200)
        clock.advance(seconds: 1)
        #expect(service.call("POST", "/v1/telemetry", token: phone, body: body).status != 429, "two more a second later")
        #expect(service.call("POST", "/v1/telemetry", token: phone, body: body).status != 429)
        #expect(service.call("POST", "/v1/telemetry", token: phone, body: body).status == 429)
        let metrics = service.call("GET", "/metrics", token: service.tokens[.telemetryRead]).text
        #expect(metrics.contains(#"waymark_rate_limited_total{token="phone",scope="telemetry:write"} 3"#), "\(metrics)")
        let audited = try service.store.auditEntries().filter { $0["reason"]?.stringValue == "rateLimited" }
        #expect(audited.count == 1 && audited.first?["count"]?.intValue == 3, "one line for the minute's refusals: \(audited)")
    }

    @Test func defaultsFollowTheScopeAndAnAdminIsUnlimited() throws {
        let clock = Clock()
        let service = try LiveService(monotonicClock: { clock.nanoseconds.load(ordering: .relaxed) }, transport: .inProcess)
        let ci = try service.store.tokens.create(name: "ci", scopes: [.routesPublish], actor: "test").token
        let admin = try service.store.tokens.create(name: "root", scopes: [.admin], actor: "test").token
        let document = "{\"routes\": \(storefrontRoutesText)}"
        // routes:publish: 10 a second, bursts of 50.
        let statuses = (0..<51).map { _ in service.call("POST", "/v1/validate", token: ci, body: document).status }
        #expect(statuses.filter { $0 == 429 }.count == 1 && statuses.last == 429, "\(statuses)")
        #expect(service.call("GET", "/v1/revisions", token: ci).status == 200, "its reads (manifest:read) are unlimited")
        #expect((0..<200).allSatisfy { _ in service.call("POST", "/v1/validate", token: admin, body: document).status == 200 })
    }

    /// A publishing token reading counts (the console's performance view) is rated as
    /// `telemetry:read` (50 a second, bursts of 250), in that bucket: charts never spend the
    /// publishing rate validate-as-you-type needs.
    @Test func countsReadWithAPublishingTokenAreRatedAsTelemetryRead() throws {
        let clock = Clock()
        let service = try LiveService(monotonicClock: { clock.nanoseconds.load(ordering: .relaxed) }, transport: .inProcess)
        let marketing = try service.store.tokens.create(name: "marketing", scopes: [.routesPublish], actor: "test").token
        let statuses = (0..<251).map { _ in service.call("GET", "/v1/telemetry/counts?step=1h", token: marketing).status }
        #expect(statuses.prefix(250).allSatisfy { $0 == 200 } && statuses.last == 429, "\(Set(statuses))")
        let document = "{\"routes\": \(storefrontRoutesText)}"
        #expect(service.call("POST", "/v1/validate", token: marketing, body: document).status == 200, "the publishing bucket is untouched")
        let metrics = service.call("GET", "/metrics", token: service.tokens[.telemetryRead]).text
        #expect(metrics.contains(#"waymark_rate_limited_total{token="marketing",scope="telemetry:read"} 1"#), "\(metrics)")
    }

    /// Each row: the clock's readings, one per request, in the order the requests take the
    /// bucket (a reading older than the last is another loop's), at 2/s with a burst of 10;
    /// how many go through. A reading that runs backwards refills nothing.
    static let clockRows: [(String, [Double], Int)] = [
        ("a burst at one instant", Array(repeating: 1, count: 12), 10),
        ("a burst, then a second later", Array(repeating: 1, count: 10) + [2, 2, 2], 12),
        ("readings in order across two loops", Array(repeating: 1, count: 10) + [1.5, 1.5, 1.6], 11),
        ("a stale reading after the burst", Array(repeating: 5, count: 10) + [4.9], 10),
        ("stale readings far behind", Array(repeating: 100, count: 10) + [1, 2, 3, 50], 10),
        ("a stale reading between fresh ones", Array(repeating: 5, count: 10) + [4, 5.5], 11),
        ("time back then forward only counts past the newest", Array(repeating: 5, count: 10) + [3, 4, 5.4], 10),
        ("a stale first reading of a new bucket", [0] + Array(repeating: 0, count: 10), 10),
    ]

    @Test(arguments: clockRows)
    func theClockIsReadUnderTheLock(_ label: String, _ readings: [Double], _ allowed: Int) throws {
        let service = try LiveService(transport: .inProcess)
        let record = try service.store.tokens.create(name: "phone", scopes: [.telemetryWrite], rate: .perSecond(2), actor: "test").record
        let next = Mutex<[Double]>(readings)
        let limiter = RateLimiter(clock: { UInt64(next.withLock { $0.removeFirst() } * 1e9) })
        let through = readings.indices.filter { _ in limiter.take(record, scope: .telemetryWrite) == nil }.count
        #expect(through == allowed, "\(label)")
    }

    @Test func ratesAreStoredAndNamesHaveAGrammar() throws {
        let scratch = try LiveService(transport: .inProcess)
        let record = try scratch.store.tokens.create(name: "fleet@shop", scopes: [.telemetryWrite], rate: .perSecond(5_000), actor: "test").record
        #expect(scratch.store.tokens.all.first { $0.id == record.id }?.rate == .perSecond(5_000))
        #expect(record.rate(for: .telemetryWrite) == .perSecond(5_000))
        #expect(TokenRate("unlimited") == .unlimited && TokenRate("0") == nil && TokenRate("1000001") == nil && TokenRate("1.5") == nil)
        for name in ["", " lead", "a b", "bidi\u{202E}", "nul\u{0}", "-x", String(repeating: "a", count: 101), "é"] {
            #expect(throws: StoreError.self, "\(name.debugDescription)") {
                _ = try scratch.store.tokens.create(name: name, scopes: [.manifestRead], actor: "test")
            }
        }
    }

    static func address(_ last: UInt64) -> PeerAddress { PeerAddress(high: 0xFFFF, low: 0x7F00_0000 | last) }

    /// Each row: the token's rate, the share percent, the requests peer A then peer B make at
    /// once, what each gets through, and A's through after one more second of 60 more.
    static let shareRows: [(String, Int, Int, Int, (Int, Int), Int)] = [
        // 200/s, burst 1,000: a peer's share is 10/s (5 %), burst 50.
        ("a peer holds its share, another peer its own", 200, 5, 60, (50, 50), 10),
        ("no share", 200, 0, 60, (60, 60), 60),
        // 5 % of 50/s is 2.5: the floor of 10/s (burst 50).
        ("the floor", 50, 5, 60, (50, 50), 10),
        // 5 % of 10/s is under the floor, which is the whole rate: no share (burst 50 for both).
        ("a rate at the floor is one bucket", 10, 5, 60, (50, 0), 10),
    ]

    @Test(arguments: shareRows)
    func onePeerGetsItsShareOfASharedToken(_ label: String, _ rate: Int, _ percent: Int, _ asked: Int, _ through: (Int, Int), _ later: Int) throws {
        let service = try LiveService(transport: .inProcess)
        let record = try service.store.tokens.create(name: "app", scopes: [.telemetryWrite], rate: .perSecond(rate), actor: "test").record
        let clock = Clock()
        let limiter = RateLimiter(peerPercent: percent, clock: { clock.nanoseconds.load(ordering: .relaxed) })
        let a = (0..<asked).filter { _ in limiter.take(record, scope: .telemetryWrite, peer: Self.address(1)) == nil }.count
        let b = (0..<asked).filter { _ in limiter.take(record, scope: .telemetryWrite, peer: Self.address(2)) == nil }.count
        #expect(a == through.0 && b == through.1, "\(label): \(a), \(b)")
        clock.advance(seconds: 1)
        let again = (0..<asked).filter { _ in limiter.take(record, scope: .telemetryWrite, peer: Self.address(1)) == nil }.count
        #expect(again == later, "\(label): \(again) a second later")
        // A refusal over a peer's share says so and takes nothing from the token's bucket:
        // what the token has left is its burst and a second's refill less what went through.
        let share = limiter.peerRate(of: rate)
        if let share {
            #expect(limiter.take(record, scope: .telemetryWrite, peer: Self.address(1)) == RateLimiter.Refusal(wait: 1, peerRate: share), "\(label)")
            let left = (0..<10_000).filter { _ in limiter.take(record, scope: .telemetryWrite) == nil }.count
            let burst = TokenRate.perSecond(rate).burst
            #expect(left == min(burst, burst - a - b + rate) - again, "\(label): \(left) left")
        }
    }

    @Test func peerBucketsAreBounded() throws {
        let service = try LiveService(transport: .inProcess)
        let record = try service.store.tokens.create(name: "app", scopes: [.telemetryWrite], rate: .perSecond(1_000_000), actor: "test").record
        let limiter = RateLimiter(peerPercent: 5, clock: { 1_000_000_000 })
        for index in 0...UInt64(RateLimiter.maximumPeerBuckets) {
            #expect(limiter.take(record, scope: .telemetryWrite, peer: PeerAddress(high: 0x2001_0db8_0000_0000 | index, low: 1)) == nil)
        }
        #expect(limiter.peerBuckets <= RateLimiter.maximumPeerBuckets)
    }

    /// An IPv6 peer is a /64; whoever holds a /48 holds 65,536 of them, so its /56 may take
    /// twice a peer's share and its /48 four times (`RateLimiter.levels`).
    @Test func anIPv6NetworkGetsFourSharesHoweverManyAddressesItSpreadsOver() throws {
        let service = try LiveService(transport: .inProcess)
        let record = try service.store.tokens.create(name: "app", scopes: [.telemetryWrite], rate: .perSecond(200), actor: "test").record
        let clock = Clock()
        let limiter = RateLimiter(peerPercent: 5, clock: { clock.nanoseconds.load(ordering: .relaxed) })
        // 2001:db8:77:SSPP::/64: /56 number SS, /64 PP within it.
        func peer(_ subnet: UInt64, _ index: UInt64, network: UInt64 = 0x77) -> PeerAddress {
            PeerAddress(high: 0x2001_0db8_0000_0000 | network << 16 | subnet << 8 | index, low: 1)
        }
        func through(_ address: PeerAddress, _ asked: Int) -> Int {
            (0..<asked).filter { _ in limiter.take(record, scope: .telemetryWrite, peer: address) == nil }.count
        }
        // Shares of 200/s: a /64 10/s (burst 50), a /56 20/s (burst 100), a /48 40/s (burst 200).
        let first56 = (0..<16).map { through(peer(0, $0), 10) }
        #expect(first56.reduce(0, +) == 100, "one /56: twice a peer's burst, over 16 /64s: \(first56)")
        let all = (1..<4).flatMap { subnet in (0..<16).map { through(peer(subnet, $0), 10) } }
        #expect(all.reduce(0, +) == 100, "the /48: four times a peer's burst, over 64 /64s")
        #expect(limiter.take(record, scope: .telemetryWrite, peer: peer(3, 99)) == RateLimiter.Refusal(wait: 1, peerRate: 40))
        // A refused request makes no bucket: new /64s of a spent /48 cannot fill the table
        // and push others' buckets (or the /48's own) out.
        let held = limiter.peerBuckets
        #expect((0..<100).allSatisfy { limiter.take(record, scope: .telemetryWrite, peer: peer(4 + UInt64($0) / 50, UInt64($0) % 50)) != nil })
        #expect(limiter.peerBuckets == held, "\(limiter.peerBuckets) buckets, \(held) before")
        #expect(through(peer(0, 0, network: 0x78), 60) == 50, "another /48's peer gets its own share")
        #expect(through(Self.address(1), 60) == 50, "and an IPv4 address its own")
        clock.advance(seconds: 1)
        #expect((0..<64).map { through(peer($0 / 16, $0 % 16), 10) }.reduce(0, +) == 40, "a second later, the /48's 40")
    }

    /// Below half the token's bucket, only quiet peers take from it: a few dozen addresses
    /// each spending its share leave the rest to installs that post now and then.
    @Test func busyPeersWaitWhileTheAppsTokenIsLow() throws {
        let service = try LiveService(transport: .inProcess)
        let record = try service.store.tokens.create(name: "app", scopes: [.telemetryWrite], rate: .perSecond(200), actor: "test").record
        let clock = Clock()
        let limiter = RateLimiter(peerPercent: 5, clock: { clock.nanoseconds.load(ordering: .relaxed) })
        func through(_ peer: UInt64, _ asked: Int) -> Int {
            (0..<asked).filter { _ in limiter.take(record, scope: .telemetryWrite, peer: Self.address(peer)) == nil }.count
        }
        // Burst 1,000; each peer's share 10/s, burst 50. Nine take 450, a tenth 30: 520 left.
        #expect((1...9).map { through($0, 50) } == Array(repeating: 50, count: 9))
        #expect(through(10, 30) == 30)
        // Past half, a busy peer is refused with its share unspent (20 left), until its count
        // decays to a quiet one's: 10 · log2(44 / 14) s.
        #expect(through(11, 30) == 21, "to half, then the one request that crosses it")
        #expect(limiter.take(record, scope: .telemetryWrite, peer: Self.address(10)) == RateLimiter.Refusal(wait: 17, peerRate: 10))
        // A new address is served once, then waits, even a moment later.
        #expect(through(21, 1) == 1, "an install posting now and then")
        clock.advance(seconds: 0.001)
        #expect(through(21, 1) == 0)
        // Above half again, busy or not, a peer takes its share.
        clock.advance(seconds: 1)
        #expect(through(10, 30) == 30)
        // Another token's rate (a credential, not the app's label) is one bucket.
        let publisher = try service.store.tokens.create(name: "ci", scopes: [.routesPublish], rate: .perSecond(200), actor: "test").record
        #expect((0..<60).filter { _ in limiter.take(publisher, scope: .routesPublish, peer: Self.address(1)) == nil }.count == 60)
    }

    /// Each row: a peer bucket (10/s, burst 50) and whether dropping it at once changes
    /// nothing: only a full share with a count decayed below one.
    static let idleRows: [(String, Double, Double, Double, Bool)] = [
        ("full and quiet", 50, 0.5, 0, true),
        ("full but busy: dropped, it would come back quiet", 50, 24, 0, false),
        ("busy until its count decays", 50, 24, 46, true),
        ("its share not refilled", 20, 0, 0, false),
        ("refilled by now", 20, 0, 3, true),
    ]

    @Test(arguments: idleRows)
    func aPeerBucketIsIdleOnlyWhenDroppingItChangesNothing(_ label: String, _ available: Double, _ recent: Double, _ later: Double, _ idle: Bool) {
        let bucket = RateLimiter.PeerBucket(available: available, updated: 1_000_000_000, rate: 10, recent: recent)
        #expect(bucket.isIdle(at: 1_000_000_000 + UInt64(later * 1e9)) == idle, "\(label)")
    }

    /// The address a trusted proxy forwards, as the rate's peer and the guard's network.
    static let forwardedRows: [(String, String?)] = [
        ("203.0.113.7", "203.0.113.7"),
        ("203.0.113.7:5000", "203.0.113.7"),
        ("::ffff:203.0.113.7", "203.0.113.7"),
        ("2001:db8:1:2::7", "2001:db8:1:2::/64"),
        ("[2001:db8:1:2::7]:443", "2001:db8:1:2::/64"),
        ("unknown", nil),
        ("", nil),
    ]

    @Test(arguments: forwardedRows)
    func forwardedAddressesAreRead(_ written: String, _ expected: String?) {
        #expect(PeerAddress(written: written)?.description == expected, "\(written)")
    }
}
