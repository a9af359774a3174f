import Foundation
import RouteEngine
import LibraryTestSupport
import Testing
@testable import WaymarkClient

/// The reporter through a scripted transport: what it posts, what each answer does to
/// what is pending, the storage bound, and a journal cut short by a kill.
@Suite("Telemetry reporter")
struct TelemetryReporterTests {
    static let build = Fixtures.storefrontBuild
    static let minute = 1_795_000_000 / 60 * 60

    static func reporter(_ transport: ScriptedTransport, directory: URL = temporaryDirectory(),
                         configure: (inout TelemetryConfiguration) -> Void = { _ in }) -> TelemetryReporter {
        var configuration = TelemetryConfiguration(server: URL(string: "https://links.example")!, build: build, token: "wm_w",
                                                   cacheDirectory: directory)
        configure(&configuration)
        return TelemetryReporter(configuration: configuration, transport: transport, random: { 0.5 })
    }

    static func event(_ route: String, outcome: String = "proceed", reason: NotFoundReason? = nil, minute: Int = minute,
                      revision: Int = 4) -> TelemetryEvent {
        TelemetryEvent(client: .init(platform: "ios", appVersion: "5.3.0", revision: revision), minute: minute, entry: .universalLink,
                       outcome: outcome, reason: reason, route: route, destination: outcome == "proceed" ? route : nil, precondition: nil)
    }

    static let accepted = Result<TransportResponse, URLError>.success(TransportResponse(status: 202, body: Data(#"{"accepted":1,"rejected":[]}"#.utf8)))

    @Test("Equal events are added up into one with a count; the batch is the server's shape, never a URL")
    func aggregation() async throws {
        let transport = ScriptedTransport([Self.accepted])
        let reporter = Self.reporter(transport)
        for _ in 0..<3 { await reporter.record(Self.event("product"), count: 1) }
        await reporter.record(Self.event("product", outcome: "notFound", reason: .validationFailed), count: 2)
        #expect(await reporter.pendingResolutions == 5)
        #expect(await reporter.flush(now: Date(timeIntervalSince1970: TimeInterval(Self.minute))) == .delivered(events: 2, resolutions: 5, rejected: 0))
        let request = try #require(await transport.requests.first)
        #expect(request.url.absoluteString == "https://links.example/v1/telemetry")
        #expect(request.headers["Authorization"] == "Bearer wm_w")
        let body = try JSONParser().parse(request.body!)
        let install = try #require(Cohort.installID(in: await reporter.configuration.cacheDirectory))
        #expect(body["client"] == ["platform": "ios", "appVersion": "5.3.0", "revision": 4, "cohort": .int(Cohort.of(installID: install)),
                                   "source": .string(TelemetryBatch.Install(id: install).sourceKey(day: "2026-11-18"))])
        #expect(body["batch"]?.stringValue?.utf8.count == 32)
        let events = body["events"]!.arrayValue!
        #expect(events.count == 2)
        #expect(events[0] == ["ts": .string(TelemetryEvent.timestamp(Self.minute)), "entry": "universalLink", "outcome": "proceed",
                              "route": "product", "destination": "product", "count": 3])
        #expect(events[1]["reason"] == "validationFailed" && events[1]["count"] == 2)
        #expect(!String(decoding: request.body!, as: UTF8.self).contains("://"))
    }

    /// An unknown link is reported by its shape only when the app opts in; the shape is made
    /// on the device, so nothing of the link's ids or personal data leaves it either way.
    @Test("Unknown links' shapes, opted in")
    func shapes() async throws {
        let link = "https://storefront.example/products/98765?email=jane%40example.com&utm_source=mail"
        let unknown = DispatchResult(sequence: 1, intent: .link(link, door: .universalLink), outcome: .notFound(NotFound(.unknownRoute)),
                                     resolution: .notFound(NotFound(.unknownRoute)), revision: 4, time: Date(timeIntervalSince1970: TimeInterval(Self.minute)))
        let expired = DispatchResult(sequence: 2, intent: .link("https://storefront.example/sale/spring", door: .universalLink),
                                     outcome: .notFound(NotFound(.expired, routeID: "spring-sale")),
                                     resolution: .notFound(NotFound(.expired, routeID: "spring-sale")), revision: 4,
                                     time: Date(timeIntervalSince1970: TimeInterval(Self.minute)))
        for optedIn in [false, true] {
            let transport = ScriptedTransport([Self.accepted])
            let reporter = Self.reporter(transport) { $0.reportsUnknownLinkShapes = optedIn }
            await reporter.dispatched(unknown)
            await reporter.dispatched(unknown)
            await reporter.dispatched(expired)
            _ = await reporter.flush(now: Date(timeIntervalSince1970: TimeInterval(Self.minute)))
            let body = try #require(await transport.requests.first?.body)
            let events = try JSONParser().parse(body)["events"]!.arrayValue!
            let shapes = events.compactMap { $0["shape"]?.stringValue }
            // A result made outside the dispatcher has no table: no word of the link is kept.
            #expect(shapes == (optedIn ? ["/:param/:param?utm_source"] : []), "opted in: \(optedIn)")
            #expect(events.first { $0["shape"] != nil }?["count"] == (optedIn ? 2 : nil))
            let text = String(decoding: body, as: UTF8.self)
            for secret in ["98765", "jane", "example.com", "://"] { #expect(!text.contains(secret), "\(secret) left the device") }
        }
    }

    /// A segment that is a plain word and also personal (a username, a name) never leaves the
    /// phone: the dispatcher's shape keeps only the words of the app's own route table.
    @Test("Unknown links' shapes keep only the table's words", arguments: [
        ("https://storefront.example/u/janedoe/orders", "/:param/:param/orders"),
        ("https://storefront.example/profile/maria-garcia", "/:param/:param"),
        ("storefront://sale/winter?utm_campaign=w&email=jane%40example.com", "/sale/:param?utm_campaign"),
        ("https://storefront.example/orders/42/janedoe", "/orders/:param/:param"),
    ])
    func shapesKeepTheTablesWords(_ link: String, _ expected: String) async throws {
        let transport = ScriptedTransport([Self.accepted])
        let reporter = Self.reporter(transport) { $0.reportsUnknownLinkShapes = true }
        guard case .success(let manifest) = Manifest.decode(Fixtures.storefrontManifest(), for: Self.build) else { Issue.record("manifest"); return }
        let dispatcher = RouteDispatcher(tables: FixedRouteTable(RouteTable(manifest: manifest, origin: .bundled)),
                                         navigator: RecordingNavigator(), context: DispatcherTests.Preconditions(), observer: reporter)
        await dispatcher.ready()
        let result = await dispatcher.dispatch(.link(link, door: .universalLink))
        #expect(result.outcome == .notFound(NotFound(.unknownRoute)) || result.outcome.name == "notFound(unknownRoute)")
        #expect(result.unknownLinkShape == expected)
        _ = await reporter.flush()
        let body = try #require(await transport.requests.first?.body)
        let shapes = try JSONParser().parse(body)["events"]!.arrayValue!.compactMap { $0["shape"]?.stringValue }
        #expect(shapes == [expected])
        // Words only: no letter of them is a hex digit, so a batch id or a source key cannot spell one by chance.
        for secret in ["janedoe", "maria", "garcia", "winter", "jane"] where !expected.contains(secret) {
            #expect(!String(decoding: body, as: UTF8.self).contains(secret), "\(secret) left the device")
        }
    }

    @Test("400 drops the batch with a report; 503, 401 and no network keep it")
    func answers() async throws {
        let transport = ScriptedTransport([
            .success(TransportResponse(status: 503, headers: ["Retry-After": "30"])), .failure(URLError(.networkConnectionLost)),
            .success(TransportResponse(status: 401)),
            .success(TransportResponse(status: 400, body: Data(#"{"error":{"code":"invalidClient"},"message":"bad client"}"#.utf8))),
        ])
        let reporter = Self.reporter(transport)
        await reporter.record(Self.event("cart"), count: 7)
        let now = Date(timeIntervalSince1970: TimeInterval(Self.minute))
        #expect(await reporter.flush(now: now) == .retryLater(status: 503, retryAfter: 30))
        #expect(await reporter.nextDelay() == 30)
        #expect(await reporter.flush(now: now) == .retryLater(status: nil, retryAfter: nil))
        #expect(await reporter.flush(now: now) == .retryLater(status: 401, retryAfter: nil))
        #expect(await reporter.pendingResolutions == 7)
        guard case .refused(1, 7, _) = await reporter.flush(now: now) else { Issue.record("not refused"); return }
        #expect(await reporter.pendingResolutions == 0)
        #expect(await reporter.flush(now: now) == .idle)
        #expect(await transport.requests.count == 4, "nothing is posted once the batch is dropped")
    }

    @Test("Batches are per client (build and revision) and at most batchSize events")
    func batching() async throws {
        let transport = ScriptedTransport([Self.accepted, Self.accepted, Self.accepted])
        let reporter = Self.reporter(transport) { $0.batchSize = 2 }
        for route in ["a", "b", "c"] { await reporter.record(Self.event(route), count: 1) }
        await reporter.record(Self.event("a", revision: 5), count: 1)
        #expect(await reporter.flushAll(now: Date(timeIntervalSince1970: TimeInterval(Self.minute))) == .delivered(events: 1, resolutions: 1, rejected: 0))
        let sent = await transport.requests.map { try! JSONParser().parse($0.body!) }
        #expect(sent.map { $0["events"]!.arrayValue!.count } == [2, 1, 1])
        #expect(sent.map { $0["client"]!["revision"]!.intValue! } == [4, 4, 5])
    }

    @Test("Storage is bounded: the oldest go and are counted; events too old to post too")
    func bounded() async throws {
        let directory = temporaryDirectory()
        let reporter = Self.reporter(ScriptedTransport([]), directory: directory) { $0.maximumPending = 10 }
        for index in 0..<25 { await reporter.record(Self.event("r\(index)", minute: Self.minute + 60 * index), count: 2) }
        // Each time an 11th distinct event arrives, the oldest go down to 9: 11 → 9 at the
        // 11th, 13th, … 25th record: 8 times, 2 events of 2 resolutions each; 9 are left.
        #expect(await reporter.pendingResolutions == 18)
        #expect(await reporter.dropped == 32)
        let journal = try Data(contentsOf: await reporter.journalFile)
        #expect(journal.split(separator: 0x0A).count <= 4 * 10 + 1)
        // A restart reads the same state back.
        let again = Self.reporter(ScriptedTransport([]), directory: directory) { $0.maximumPending = 10 }
        #expect(await again.pendingResolutions == 18)
        #expect(await again.dropped == 32)
        // Eighty days later, none can be posted any more.
        _ = await again.flush(now: Date(timeIntervalSince1970: TimeInterval(Self.minute + 81 * 86_400)))
        #expect(await again.pendingResolutions == 0)
        #expect(await again.dropped == 50)
    }

    @Test("Drops ride with the next batch as client.dropped, and are taken off once it is delivered")
    func dropsReported() async throws {
        let transport = ScriptedTransport([.success(TransportResponse(status: 503)), Self.accepted])
        let reporter = Self.reporter(transport) { $0.maximumPending = 2 }
        for index in 0..<5 { await reporter.record(Self.event("r\(index)", minute: Self.minute + 60 * index), count: 1) }
        #expect(await reporter.dropped == 4, "down to one (nine tenths of 2) at each third distinct event")
        let now = Date(timeIntervalSince1970: TimeInterval(Self.minute))
        _ = await reporter.flush(now: now)
        #expect(await reporter.dropped == 4, "not delivered: still to report")
        _ = await reporter.flush(now: now)
        #expect(await reporter.dropped == 0)
        let bodies = await transport.requests.map { try! JSONParser().parse($0.body!) }
        #expect(bodies.map { $0["client"]!["dropped"] } == [4, 4])
    }

    @Test("A journal line cut short by a kill is skipped; the lines before it count")
    func tornJournal() async throws {
        let directory = temporaryDirectory()
        let first = Self.reporter(ScriptedTransport([]), directory: directory)
        await first.record(Self.event("product"), count: 3)
        await first.record(Self.event("cart"), count: 1)
        let file = await first.journalFile
        var bytes = try Data(contentsOf: file)
        bytes.append(contentsOf: Array(#"{"appVersion":"5.3.0","count":9,"ent"#.utf8))
        try bytes.write(to: file)
        let second = Self.reporter(ScriptedTransport([]), directory: directory)
        #expect(await second.pendingResolutions == 4)
    }
}
