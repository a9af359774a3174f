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
