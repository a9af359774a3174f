// Against a live daemon, which runs where the server does (Linux; Package.swift).
#if WAYMARK_SERVER
import Foundation
import RouteEngine
import TestSupport
import Testing
@testable import WaymarkClient

/// What a server, a proxy or a captive portal may send that must not crash the app: the
/// two run loops (`ManifestClient.run()`, `TelemetryReporter.run()`) against answers that
/// carry a `Retry-After` of 10^12 seconds or a date in the year 9999. Before the waits were
/// bounded, the conversion to a sleep trapped and took the test process down.
@Suite("A hostile server's headers")
struct HostileServerTests {
    static let headers = ["1000000000000", "Fri, 31 Dec 9999 23:59:59 GMT"]

    /// Answers every request with the same response, and counts them.
    actor SameAnswer: Transport {
        let response: TransportResponse
        private(set) var asked = 0

        init(_ response: TransportResponse) {
            self.response = response
        }

        func send(_ request: TransportRequest) async throws -> TransportResponse {
            asked += 1
            return response
        }
    }

    @Test("Retry-After is read whole, however far", arguments: headers)
    func readWhole(_ value: String) throws {
        let now = Date(timeIntervalSince1970: 1_795_000_000)
        let seconds = try #require(TransportResponse(status: 503, headers: ["Retry-After": value]).retryAfter(now: now))
        #expect(seconds > 2e11, "\(seconds)")
    }

    @Test("The manifest client's loop waits its maximum and asks again", arguments: headers)
    func manifestLoop(_ value: String) async throws {
        let transport = SameAnswer(TransportResponse(status: 503, headers: ["Retry-After": value]))
        var configuration = ManifestClientConfiguration(server: URL(string: "https://links.example")!, build: Fixtures.storefrontBuild,
                                                        token: "wm_t", cacheDirectory: temporaryDirectory())
        configuration.backoff = Backoff(interval: 0.01, minimum: 0.01, maximum: 0.02)
        let client = ManifestClient(configuration: configuration, transport: transport, random: { 0.5 })
        let loop = Task { await client.run() }
        #expect(await eventually { await transport.asked >= 3 }, "asked again after the capped wait")
        #expect(await client.nextDelay() == 0.02)
        loop.cancel()
        await loop.value
    }

    @Test("The telemetry reporter's loop waits its maximum and posts again", arguments: headers)
    func telemetryLoop(_ value: String) async throws {
        let transport = SameAnswer(TransportResponse(status: 503, headers: ["Retry-After": value]))
        var configuration = TelemetryConfiguration(server: URL(string: "https://links.example")!, build: Fixtures.storefrontBuild,
                                                   token: "wm_w", cacheDirectory: temporaryDirectory())
        configuration.backoff = Backoff(interval: 0.01, minimum: 0.01, maximum: 0.02)
        let reporter = TelemetryReporter(configuration: configuration, transport: transport, random: { 0.5 })
        let minute = Int(Date().timeIntervalSince1970) / 60 * 60
        await reporter.record(TelemetryEvent(client: .init(platform: "ios", appVersion: "5.3.0", revision: 1), minute: minute,
                                             entry: .universalLink, outcome: "proceed", reason: nil, route: "product",
                                             destination: "product", precondition: nil), count: 1)
        let loop = Task { await reporter.run() }
        #expect(await eventually { await transport.asked >= 3 }, "posted again after the capped wait")
        #expect(await reporter.nextDelay() == 0.02)
        #expect(await reporter.pendingResolutions == 1, "kept for the next post")
        loop.cancel()
        await loop.value
    }

    static let sleeps: [(Double, UInt64)] = [
        (-1, 0), (.nan, 0), (0, 0), (0.5, 500_000_000), (1e12, 1_000_000_000_000_000_000), (.infinity, 1_000_000_000_000_000_000),
    ]

    @Test("Any number of seconds is a sleep that cannot trap", arguments: sleeps)
    func sleep(_ seconds: Double, _ nanoseconds: UInt64) {
        #expect(Sleep.nanoseconds(seconds) == nanoseconds)
    }
}

/// Both clients over `URLSessionTransport` against a server that sends 400 MB (with a length,
/// and chunked without one) and one that drips a byte every 10 s: the body is abandoned at the
/// limit as it arrives, the whole request has one deadline, and neither client throws.
@Suite("A hostile server's bodies", .serialized)
struct HostileBodyTests {
    static let origin = HostileOrigin.shared

    static let statsTransport = URLSessionTransport()

    static func sent(_ kind: String) async throws -> Int {
        let response = try await statsTransport.send(TransportRequest(url: origin.stats, timeout: 10))
        return try JSONParser().parse(response.body)[kind]?.intValue ?? 0
    }

    static func manifestClient(_ kind: String, timeout: TimeInterval = 30) -> ManifestClient {
        var configuration = ManifestClientConfiguration(server: origin.url(kind), build: Fixtures.storefrontBuild, token: "wm_t",
                                                        cacheDirectory: temporaryDirectory())
        configuration.requestTimeout = timeout
        return ManifestClient(configuration: configuration)
    }

    @Test("400 MB with its Content-Length: refused unread, by its head", arguments: ["big"])
    func lengthOverTheLimit(_ kind: String) async throws {
        let client = Self.manifestClient(kind)
        guard case .rejected(let error) = await client.refresh() else { Issue.record("not rejected"); return }
        #expect(error.message.contains("not read"), "\(error)")
        #expect(await client.currentTable().origin == .empty)
    }

    @Test("A body without a length and without an end: abandoned past 32 MiB as it arrives, and the transfer stops")
    func endlessOverTheLimit() async throws {
        let client = Self.manifestClient("chunked")
        guard case .rejected = await client.refresh() else { Issue.record("not rejected"); return }
        // Read to its end the body would never end: the refresh came back, and the transfer
        // stops (the server stops at the closed connection; cancelling takes a moment on Linux,
        // where URLSession's cancel reaches libcurl's thread later).
        var samples = [try await Self.sent("chunked")]
        for _ in 0..<50 where samples.count < 2 || samples[samples.count - 1] != samples[samples.count - 2] {
            try? await Task.sleep(nanoseconds: 200_000_000)
            samples.append(try await Self.sent("chunked"))
        }
        #expect(samples.count >= 2 && samples[samples.count - 1] == samples[samples.count - 2], "still sending: \(samples)")
    }

    /// A byte every 0.2 s: an idle timeout (`URLRequest.timeoutInterval`) never fires, the
    /// whole request's deadline does. The time limit is the test (the trickle takes 200 s),
    /// far past what a busy run adds: no timing of its own.
    @Test("A byte at a time: the refresh ends at its deadline, unreachable", .timeLimit(.minutes(1)), arguments: ["trickle", "drip"])
    func drip(_ kind: String) async throws {
        let client = Self.manifestClient(kind, timeout: 1)
        guard case .unreachable(let reason) = await client.refresh() else { Issue.record("not unreachable"); return }
        #expect(reason.contains("deadlineExceeded"), "the whole request's deadline: \(reason)")
    }

    @Test("Telemetry: a 400 MB answer or a drip keeps the batch for the next post")
    func telemetryAnswers() async throws {
        for (kind, timeout) in [("big", 30.0), ("chunked", 30.0), ("trickle", 1.0)] {
            var configuration = TelemetryConfiguration(server: Self.origin.url(kind), build: Fixtures.storefrontBuild, token: "wm_w",
                                                       cacheDirectory: temporaryDirectory())
            configuration.requestTimeout = timeout
            configuration.postsOnConstrainedNetworks = true
            let reporter = TelemetryReporter(configuration: configuration)
            let minute = Int(Date().timeIntervalSince1970) / 60 * 60
            await reporter.record(TelemetryEvent(client: .init(platform: "ios", appVersion: "5.3.0", revision: 1), minute: minute,
                                                 entry: .universalLink, outcome: "proceed", reason: nil, route: "product",
                                                 destination: "product", precondition: nil), count: 1)
            #expect(await reporter.flush() == .retryLater(status: nil, retryAfter: nil), "\(kind)")
            #expect(await reporter.pendingResolutions == 1, "\(kind): kept")
        }
    }

    @Test("A redirect to another origin is not followed (the token would go with it); one on the same origin is")
    func redirects() async throws {
        let transport = URLSessionTransport()
        let elsewhere = try await transport.send(TransportRequest(url: Self.origin.url("elsewhere"), headers: ["Authorization": "Bearer wm_t"]))
        #expect(elsewhere.status == 307, "the redirect is the answer")
        let same = try await transport.send(TransportRequest(url: Self.origin.url("same")))
        #expect(same.status == 200 && (try? JSONParser().parse(same.body))?.objectValue != nil)
    }

    /// The request's own deadline is 10 minutes and the drip's end 10,000 s away: only the
    /// cancel can end it inside the time limit.
    @Test("Cancelling the calling task cancels the request", .timeLimit(.minutes(1)))
    func cancelled() async throws {
        let transport = URLSessionTransport()
        let task = Task { try await transport.send(TransportRequest(url: Self.origin.url("drip"), timeout: 600)) }
        try? await Task.sleep(nanoseconds: 100_000_000)
        task.cancel()
        await #expect(throws: CancellationError.self) { try await task.value }
    }
}
#endif
