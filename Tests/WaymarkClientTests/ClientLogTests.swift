import Foundation
import RouteEngine
import LibraryTestSupport
import Testing
@testable import WaymarkClient

/// The logging hook: what each part tells the app's log, at which level — and never a link
/// or a token.
@Suite("Client log")
struct ClientLogTests {
    final class Collected: @unchecked Sendable {
        private let lock = NSLock()
        private var kept: [ClientLogMessage] = []
        var hook: ClientLog { { message in self.lock.withLock { self.kept.append(message) } } }
        var messages: [ClientLogMessage] { lock.withLock { kept } }
    }

    static let secretLink = "https://storefront.example/p/secret-jane@example.com"

    @Test("Manifest, telemetry and dispatcher messages reach the hook; none holds a link or a token")
    func routed() async throws {
        let log = Collected()
        var manifest = ManifestClientConfiguration(server: URL(string: "https://links.example")!, build: Fixtures.storefrontBuild,
                                                   token: "wm_secret_token", cacheDirectory: temporaryDirectory())
        manifest.log = log.hook
        let client = ManifestClient(configuration: manifest, transport: ScriptedTransport([
            .success(TransportResponse(status: 200, body: Data(Fixtures.storefrontManifest(revision: 2)))),
            .success(TransportResponse(status: 200, body: Data("garbage".utf8))),
            .success(TransportResponse(status: 401)),
        ]))
        for _ in 0..<3 { _ = await client.refresh() }

        var telemetry = TelemetryConfiguration(server: URL(string: "https://links.example")!, build: Fixtures.storefrontBuild,
                                               token: "wm_secret_token", cacheDirectory: temporaryDirectory())
        telemetry.log = log.hook
        let reporter = TelemetryReporter(configuration: telemetry, transport: ScriptedTransport([
            .success(TransportResponse(status: 400, body: Data(#"{"message":"bad"}"#.utf8))),
        ]))
        await reporter.record(.testEvent(route: "product", minute: 1_795_000_000 / 60 * 60), count: 1)
        _ = await reporter.flush(now: Date(timeIntervalSince1970: 1_795_000_000))

        var dispatch = DispatcherConfiguration()
        dispatch.log = log.hook
        let navigator = RecordingNavigator(NavigationState(selectedTab: "home", stacks: ["home": [Screen("home")]]))
        let dispatcher = RouteDispatcher(tables: client, navigator: navigator, context: Session(loggedIn: true), configuration: dispatch)
        await dispatcher.ready()
        await dispatcher.dispatch(.link(Self.secretLink, door: .universalLink))
        await dispatcher.dispatch(.link("https://storefront.example/p/p1", door: .universalLink))

        let seen = log.messages.map { "\($0.level.rawValue) \($0.category)" }
        #expect(seen == ["info manifest", "error manifest", "error manifest", "error telemetry", "info dispatcher"], "\(log.messages)")
        for message in log.messages {
            for secret in ["secret", "jane", "wm_", "example.com"] { #expect(!message.text.contains(secret), "\(message)") }
        }
        #expect(ClientLogMessage.Level.debug < ClientLogMessage.Level.info && ClientLogMessage.Level.warning < ClientLogMessage.Level.error)
    }
}
