import Foundation
import RouteEngine
import LibraryTestSupport
import Testing
@testable import WaymarkClient

/// What a live server will not do on demand, through a scripted transport: truncated and
/// tampered bodies, older revisions, 401, 503 with Retry-After, no network — and the waits
/// that follow each.
@Suite("Manifest client")
struct ManifestClientTests {
    static let build = Fixtures.storefrontBuild

    static func client(_ transport: ScriptedTransport, cache: URL = temporaryDirectory(), bundled: URL? = nil,
                       random: Double = 0.5) -> ManifestClient {
        var configuration = ManifestClientConfiguration(server: URL(string: "https://links.example")!, build: build, token: "wm_t",
                                                        cacheDirectory: cache, bundledManifest: bundled)
        configuration.backoff = Backoff(interval: 900, minimum: 5, maximum: 3600)
        return ManifestClient(configuration: configuration, transport: transport, random: { random })
    }

    static func ok(_ bytes: [UInt8], etag: String = "\"m1-a\"") -> Result<TransportResponse, URLError> {
        .success(TransportResponse(status: 200, headers: ["ETag": etag], body: Data(bytes)))
    }

    @Test("The request: the build, the token, and If-None-Match once there is a table")
    func request() async throws {
        let transport = ScriptedTransport([Self.ok(Fixtures.storefrontManifest()), .success(TransportResponse(status: 304))])
        let client = Self.client(transport)
        #expect(await client.refresh() == .updated(revision: 1))
        #expect(await client.refresh() == .notModified)
        let requests = await transport.requests
        let cohort = try #require(Cohort.installID(in: await client.configuration.cacheDirectory).map(Cohort.of(installID:)))
        #expect(requests[0].url.absoluteString == "https://links.example/v1/manifest?platform=ios&version=5.3.0&cohort=\(cohort)")
        #expect(requests[1].url == requests[0].url, "the install keeps its cohort")
        #expect(requests[0].headers["Authorization"] == "Bearer wm_t")
        #expect(requests[0].headers["If-None-Match"] == nil)
        #expect(requests[1].headers["If-None-Match"] == "\"m1-a\"")
    }

    @Test("Cohorts: the first 32 bits of the install id modulo 100, spread evenly; none or fixed on request")
    func cohorts() async throws {
        #expect(Cohort.of(installID: UUID(uuidString: "00000000-0000-4000-8000-000000000000")!) == 0)
        #expect(Cohort.of(installID: UUID(uuidString: "00000065-0000-4000-8000-000000000000")!) == 1)       // 101
        #expect(Cohort.of(installID: UUID(uuidString: "FFFFFFFF-0000-4000-8000-000000000000")!) == 95)      // 4294967295 % 100
        // Ids from a seeded generator: the same spread every run.
        var generator = SplitMix(seed: 42)
        var buckets = [Int](repeating: 0, count: 100)
        for _ in 0..<100_000 {
            // Only the first 32 bits count; the rest of the id is fixed.
            let first = String(UInt32(truncatingIfNeeded: generator.next() >> 32), radix: 16)
            let id = UUID(uuidString: String(repeating: "0", count: 8 - first.count) + first + "-0000-4000-8000-000000000000")!
            buckets[Cohort.of(installID: id)] += 1
        }
        #expect(buckets.min()! > 800 && buckets.max()! < 1_200, "\(buckets.min()!)…\(buckets.max()!) of an expected 1,000")
        for (choice, expected) in [(ManifestClientConfiguration.CohortChoice.none, "platform=ios&version=5.3.0"),
                                   (.fixed(42), "platform=ios&version=5.3.0&cohort=42")] {
            let transport = ScriptedTransport([.success(TransportResponse(status: 503))])
            var configuration = ManifestClientConfiguration(server: URL(string: "https://links.example")!, build: Self.build, cacheDirectory: temporaryDirectory())
            configuration.cohort = choice
            _ = await ManifestClient(configuration: configuration, transport: transport).refresh()
            #expect(await transport.requests.first?.url.query == expected)
        }
    }

    @Test("A bad body keeps the last good table, and is reported")
    func badBodies() async throws {
        let good = Fixtures.storefrontManifest(revision: 2)
        var tampered = good
        let marker = Array(#""patterns":["/"#.utf8)  // a pattern's first slash, inside the routes
        let start = (0...(tampered.count - marker.count)).first { Array(tampered[$0..<($0 + marker.count)]) == marker }!
        tampered[start + marker.count - 1] = UInt8(ascii: "_")
        let other = Fixtures.manifestJSON(schema: Fixtures.storefrontSchema53JSON, routes: [], revision: 9)
        guard case .object(var otherObject) = other else { return }
        otherObject["version"] = "9.9.9"
        let transport = ScriptedTransport([
            Self.ok(good), Self.ok(Array(good.prefix(good.count - 10))), Self.ok(tampered), Self.ok(JSONValue.object(otherObject).serializedBytes()),
            Self.ok(Array("<html>oops</html>".utf8)), Self.ok(Fixtures.storefrontManifest(revision: 1)),
        ])
        let client = Self.client(transport)
        #expect(await client.refresh() == .updated(revision: 2))
        var kinds: [String] = []
        for _ in 0..<4 {
            guard case .rejected(let error) = await client.refresh() else { Issue.record("not rejected"); continue }
            kinds.append(error.kind.rawValue)
            #expect(await client.currentTable().revision == 2)
        }
        #expect(kinds == ["notJSON", "integrity", "wrongBuild", "notJSON"])
        #expect(await client.refresh() == .olderIgnored(served: 1, inUse: 2))
        #expect(await client.currentTable().revision == 2)
        #expect(await client.consecutiveFailures == 0)
    }

    @Test("Waits: the interval after success, backoff with jitter after failures, Retry-After, no hot loop on 401")
    func waits() async throws {
        let transport = ScriptedTransport([
            .success(TransportResponse(status: 503, headers: ["Retry-After": "120"])),
            .failure(URLError(.timedOut)), .failure(URLError(.timedOut)),
            .success(TransportResponse(status: 401)), .success(TransportResponse(status: 403)),
            Self.ok(Fixtures.storefrontManifest()),
        ])
        let client = Self.client(transport, random: 0.5)
        guard case .failed(503, 120) = await client.refresh() else { Issue.record("503"); return }
        #expect(await client.nextDelay() == 120, "Retry-After beats the first step (5 s)")
        guard case .unreachable = await client.refresh() else { Issue.record("timeout"); return }
        #expect(await client.nextDelay() == 7.5, "second failure: a 10 s step, jittered to its upper half")
        _ = await client.refresh()
        #expect(await client.nextDelay() == 15)
        #expect(await client.refresh() == .unauthorized(status: 401))
        #expect(await client.nextDelay() >= 900, "a wrong token waits at least the interval")
        #expect(await client.refresh() == .unauthorized(status: 403))
        #expect(await client.nextDelay() >= 900)
        #expect(await client.refresh() == .updated(revision: 1))
        #expect(await client.nextDelay() == 900)
    }

    static let backoff: [(String, Int, TimeInterval?, Double, TimeInterval)] = [
        ("success: the interval", 0, nil, 0.9, 900),
        ("success with Retry-After past it", 0, 1200, 0.1, 1200),
        ("first failure, lowest jitter: half the step", 1, nil, 0, 2.5),
        ("first failure, highest jitter: the step", 1, nil, 1, 5),
        ("third failure: 20 s step", 3, nil, 0.5, 15),
        ("many failures: capped at the maximum", 40, nil, 1, 3600),
        ("many failures, lowest jitter: half the maximum", 40, nil, 0, 1800),
        ("Retry-After above the step wins", 1, 60, 0.5, 60),
        ("Retry-After below the step loses", 5, 1, 0.5, 60),
        ("Retry-After of 10^12 s: the maximum", 1, 1e12, 0.5, 3600),
        ("Retry-After of 10^12 s after a success: the maximum", 0, 1e12, 0.5, 3600),
        ("Retry-After infinite or NaN: ignored", 1, .infinity, 0.5, 3.75),
        ("Retry-After NaN: ignored", 1, .nan, 0.5, 3.75),
    ]

    @Test(arguments: backoff)
    func backoffDelays(_ label: String, _ failures: Int, _ retryAfter: TimeInterval?, _ random: Double, _ expected: TimeInterval) {
        #expect(Backoff(interval: 900, minimum: 5, maximum: 3600).delay(failures: failures, retryAfter: retryAfter, random: random) == expected, "\(label)")
    }

    @Test("Retry-After in seconds or as an HTTP date; garbage is ignored")
    func retryAfter() {
        let now = Date(timeIntervalSince1970: 1_445_412_480)  // Wed, 21 Oct 2015 07:28:00 GMT
        #expect(TransportResponse(status: 503, headers: ["Retry-After": "30"]).retryAfter(now: now) == 30)
        #expect(TransportResponse(status: 503, headers: ["retry-after": "Wed, 21 Oct 2015 07:30:00 GMT"]).retryAfter(now: now) == 120)
        #expect(TransportResponse(status: 503, headers: ["Retry-After": "soon"]).retryAfter(now: now) == nil)
        #expect(TransportResponse(status: 503, headers: ["Retry-After": "-5"]).retryAfter(now: now) == nil)
    }

    @Test("The cache is written whole and read at the next launch, with its ETag")
    func cache() async throws {
        let cache = temporaryDirectory()
        let first = Self.client(ScriptedTransport([Self.ok(Fixtures.storefrontManifest(revision: 3), etag: "\"m3-x\"")]), cache: cache)
        #expect(await first.refresh() == .updated(revision: 3))
        let leftovers = try FileManager.default.contentsOfDirectory(atPath: cache.path).filter { $0.hasSuffix(".tmp") }
        #expect(leftovers.isEmpty)
        let transport = ScriptedTransport([.success(TransportResponse(status: 304))])
        let second = Self.client(transport, cache: cache)
        let table = await second.currentTable()
        #expect(table.origin == .cache && table.revision == 3)
        #expect(await second.refresh() == .notModified)
        #expect(await transport.requests.first?.headers["If-None-Match"] == "\"m3-x\"")
    }

    @Test("At launch: a newer bundled manifest beats an older cache")
    func bundledNewer() async throws {
        let cache = temporaryDirectory()
        _ = await Self.client(ScriptedTransport([Self.ok(Fixtures.storefrontManifest(revision: 3))]), cache: cache).refresh()
        let bundled = cache.appendingPathComponent("bundled.json")
        try Data(Fixtures.storefrontManifest(revision: 5)).write(to: bundled)
        let table = await Self.client(ScriptedTransport([]), cache: cache, bundled: bundled).currentTable()
        #expect(table.origin == .bundled && table.revision == 5)
    }
}
