import Foundation
import RouteEngine
import LibraryTestSupport
import Testing
@testable import WaymarkClient

/// Exactly once, the client's half (docs/api.md, "The envelope"): a batch is formed once
/// with its id, kept in the journal, sent the same on every retry, and a `duplicate` answer
/// is a delivery; what one batch claims stays within the server's bounds.
@Suite("Telemetry batches")
struct TelemetryBatchTests {
    static let minute = 1_795_000_000 / 60 * 60  // 2026-11-18T11:06:00Z
    static let now = Date(timeIntervalSince1970: TimeInterval(minute))
    static let accepted = Result<TransportResponse, URLError>.success(TransportResponse(status: 202, body: Data(#"{"accepted":1,"rejected":[]}"#.utf8)))
    static let duplicate = Result<TransportResponse, URLError>.success(
        TransportResponse(status: 202, body: Data(#"{"accepted":0,"rejected":[],"duplicate":true}"#.utf8)))

    static func reporter(_ transport: ScriptedTransport, directory: URL = temporaryDirectory(),
                         configure: (inout TelemetryConfiguration) -> Void = { _ in }) -> TelemetryReporter {
        var configuration = TelemetryConfiguration(server: URL(string: "https://links.example")!, build: Fixtures.storefrontBuild,
                                                   token: "wm_w", cacheDirectory: directory)
        configure(&configuration)
        return TelemetryReporter(configuration: configuration, transport: transport, random: { 0.5 })
    }

    static func event(_ route: String) -> TelemetryEvent { .testEvent(route: route, minute: minute) }

    @Test("The day's source key: SHA-256 of waymark-source/1|<install id>|<UTC day>, first 16 bytes, and the cohort")
    func sourceKey() throws {
        let install = TelemetryBatch.Install(id: try #require(UUID(uuidString: "00000065-0000-4000-8000-000000000000")))
        // Worked out apart from the library (Python's hashlib) for this id and day.
        #expect(install.sourceKey(day: "2026-11-24") == "ba6b966c9c65f53c23d1b7c701f8d4f1")
        #expect(install.sourceKey(day: "2026-11-25") != install.sourceKey(day: "2026-11-24"), "a new key every day")
        #expect(install.cohort == 1)
        #expect(TelemetryBatch.day(of: Self.now) == "2026-11-18")
        #expect(TelemetryBatch.day(of: Date(timeIntervalSince1970: 1_795_046_399)) == "2026-11-18", "the last second of the UTC day")
        #expect(TelemetryBatch.day(of: Date(timeIntervalSince1970: 1_795_046_400)) == "2026-11-19")
        let ids = (0..<100).map { _ in TelemetryBatch.makeID() }
        #expect(Set(ids).count == 100)
        #expect(ids.allSatisfy { $0.utf8.count == 32 && $0.allSatisfy { "0123456789abcdef".contains($0) } })
    }

    @Test("A lost 202: the retry sends the same id and the same bytes; duplicate is a delivery, counted once")
    func retrySameBatch() async throws {
        let transport = ScriptedTransport([.failure(URLError(.networkConnectionLost)), .success(TransportResponse(status: 503)), Self.duplicate])
        let reporter = Self.reporter(transport)
        await reporter.record(Self.event("product"), count: 4)
        #expect(await reporter.flush(now: Self.now) == .retryLater(status: nil, retryAfter: nil))
        // Recorded between the tries: not added to the batch already formed.
        await reporter.record(Self.event("product"), count: 1)
        #expect(await reporter.flush(now: Self.now.addingTimeInterval(86_400)) == .retryLater(status: 503, retryAfter: nil))
        #expect(await reporter.flush(now: Self.now) == .alreadyDelivered(events: 1, resolutions: 4))
        let bodies = await transport.requests.map { $0.body! }
        #expect(bodies.count == 3)
        #expect(bodies[1] == bodies[0] && bodies[2] == bodies[0], "byte for byte, the day's key of when it was formed included")
        #expect(await reporter.pendingResolutions == 1, "the one recorded later waits for its own batch")
    }

    @Test("Killed after forming a batch: the next launch posts the same batch, then the rest")
    func batchSurvivesKill() async throws {
        let directory = temporaryDirectory()
        let first = Self.reporter(ScriptedTransport([.success(TransportResponse(status: 503))]), directory: directory)
        await first.record(Self.event("product"), count: 2)
        _ = await first.flush(now: Self.now)
        await first.record(Self.event("cart"), count: 3)
        let transport = ScriptedTransport([Self.accepted, Self.accepted])
        let second = Self.reporter(transport, directory: directory)
        #expect(await second.pendingResolutions == 5)
        #expect(await second.flushAll(now: Self.now) == .delivered(events: 1, resolutions: 3, rejected: 0))
        let bodies = await transport.requests.map { try! JSONParser().parse($0.body!) }
        #expect(bodies.map { $0["events"]!.arrayValue!.first!["route"]! } == ["product", "cart"])
        #expect(bodies[0]["batch"] != bodies[1]["batch"])
        #expect(await Self.reporter(ScriptedTransport([]), directory: directory).pendingResolutions == 0)
    }

    /// (label, pending counts in order, drops, lines per batch, each batch's line counts, its drops)
    static let limits: [(String, [Int], Int, Int, [[Int]], [Int])] = [
        ("small counts: one line each", [3, 1], 0, 200, [[3, 1]], [0]),
        ("a count of 2,500: three lines", [2_500], 0, 200, [[1_000, 1_000, 500]], [0]),
        ("exactly 1,000: one line", [1_000], 0, 200, [[1_000]], [0]),
        ("12,000 in all: 10,000 then the rest", [6_000, 6_000], 0, 200,
         [[1_000, 1_000, 1_000, 1_000, 1_000, 1_000, 1_000, 1_000, 1_000, 1_000], [1_000, 1_000]], [0, 0]),
        ("a line budget splits an event across batches", [2_500], 0, 2, [[1_000, 1_000], [500]], [0, 0]),
        ("drops past 100,000 wait for the next batch", [1, 1], 150_000, 1, [[1], [1]], [100_000, 50_000]),
        ("drops under the cap go at once", [1], 7, 200, [[1]], [7]),
    ]

    @Test(arguments: limits)
    func withinBounds(_ label: String, _ counts: [Int], _ drops: Int, _ lines: Int, _ batches: [[Int]], _ reported: [Int]) {
        var order = counts.indices.map { Self.event("r\($0)") }
        var pending = Dictionary(uniqueKeysWithValues: zip(order, counts))
        var dropped = drops
        var formed: [[Int]] = []
        var drops: [Int] = []
        while let next = TelemetryBatch.form(id: TelemetryBatch.makeID(), order: order, pending: pending, dropped: dropped, lines: lines,
                                             install: nil, now: Self.now) {
            formed.append(next.batch.body["events"]!.arrayValue!.map { $0["count"]!.intValue! })
            drops.append(next.batch.drops)
            #expect(next.batch.resolutions <= TelemetryBatch.maximumBatchCount, "\(label)")
            for (event, count) in next.taken { pending[event]! -= count }
            order.removeAll { pending[$0] == 0 }
            dropped -= next.reportedDrops
            if formed.count > 5 { break }
        }
        #expect(formed == batches, "\(label)")
        #expect(drops == reported, "\(label)")
    }

    /// Journal lines that look like a batch and are not one: skipped like a torn tail.
    static let notBatches: [(String, String)] = [
        ("an id too short", #"{"outgoing":{"batch":"abc","client":{},"events":[{"count":1}]}}"#),
        ("no client", #"{"outgoing":{"batch":"0123456789abcdef0123456789abcdef","events":[{"count":1}]}}"#),
        ("no events", #"{"outgoing":{"batch":"0123456789abcdef0123456789abcdef","client":{}}}"#),
        ("an event without a count", #"{"outgoing":{"batch":"0123456789abcdef0123456789abcdef","client":{},"events":[{}]}}"#),
        ("not an object", #"{"outgoing":"0123456789abcdef0123456789abcdef"}"#),
        ("cut short by a kill", #"{"outgoing":{"batch":"0123456789abcdef0123456789abcdef","client":{"plat"#),
    ]

    @Test(arguments: notBatches)
    func notABatch(_ label: String, _ line: String) async throws {
        let directory = temporaryDirectory()
        let good = #"{"outgoing":{"batch":"0123456789abcdef0123456789abcdef","client":{},"events":[{"count":2}]}}"#
        #expect(TelemetryBatch(journal: try JSONParser().parse(Array(good.utf8)))?.resolutions == 2)
        let file = directory.appendingPathComponent("telemetry-ios.jsonl")
        try Data((line + "\n").utf8).write(to: file)
        #expect(await Self.reporter(ScriptedTransport([]), directory: directory).pendingResolutions == 0, "\(label)")
    }
}
