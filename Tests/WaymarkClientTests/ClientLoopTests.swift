// Against a live daemon, which runs where the server does (Linux; Package.swift).
#if WAYMARK_SERVER
import Foundation
import ManifestStore
import RouteEngine
import TestSupport
import Testing
import WaymarkClient

/// The whole loop, headless, against `waymark serve` on loopback (the API and HTTP server
/// in-process, real sockets, `URLSession` as the transport): fetch, the three doors, the
/// gates, the stash, serialization, publishes and rollbacks, a server that is down, a
/// corrupt cache, and telemetry read back from the server.
@Suite("Client loop against a live server")
struct ClientLoopTests {
    static let build = Fixtures.storefrontBuild
    static let link = "https://storefront.example/orders/42"

    static func manifestClient(_ service: LiveService, cache: URL, bundled: URL? = nil, server: URL? = nil) -> ManifestClient {
        var configuration = ManifestClientConfiguration(server: server ?? URL(string: service.url)!, build: build,
                                                        token: service.tokens[.manifestRead], cacheDirectory: cache)
        configuration.bundledManifest = bundled
        return ManifestClient(configuration: configuration)
    }

    /// A dispatcher over a freshly fetched table, with an app showing the home tab.
    static func dispatcher(tables: any RouteTableSource, session: Session, login: ScriptedLogin? = nil, leave: ScriptedLeave? = nil,
                           observer: (any DispatchObserver)? = nil, navigator: RecordingNavigator? = nil,
                           configure: (inout DispatcherConfiguration) -> Void = { _ in }) -> (RouteDispatcher, RecordingNavigator) {
        let navigator = navigator ?? RecordingNavigator(NavigationState(selectedTab: "home", stacks: ["home": [Screen("home")]]))
        var configuration = DispatcherConfiguration()
        configure(&configuration)
        let dispatcher = RouteDispatcher(tables: tables, navigator: navigator, context: session, gates: login, leave: leave,
                                         observer: observer, configuration: configuration)
        return (dispatcher, navigator)
    }

    /// iOS's deferred link, end to end: the landing page an iPhone without the app gets carries
    /// the hand-off text its button copies (handoff-check.py shows a browser copies exactly
    /// it); pasted after the install, `DeferredLink` opens what the link opens when tapped,
    /// by the deferred door, once.
    @Test func aHandOffPastedOpensWhatTheLinkOpens() async throws {
        let service = try LiveService()
        let page = service.call("GET", "/orders/42?utm_campaign=spring", host: "storefront.example",
                                headers: [("User-Agent", "Mozilla/5.0 (iPhone; CPU iPhone OS 17_4 like Mac OS X) AppleWebKit/605.1.15 Mobile/15E148 Safari/604.1")])
        #expect(page.status == 200, "\(page.head)")
        let attribute = try #require(page.text.range(of: #"data-handoff="[^"]*""#, options: .regularExpression))
        let text = page.text[attribute].dropFirst(#"data-handoff=""#.count).dropLast().replacingOccurrences(of: "&amp;", with: "&")
        #expect(text.hasPrefix(Self.link + "#waymark="), "\(text)")
        let client = Self.manifestClient(service, cache: temporaryDirectory())
        #expect(await client.refresh() == .updated(revision: 1))
        let deferred = DeferredLink(directory: temporaryDirectory(), hosts: ["storefront.example"])
        let intent = try #require(deferred.intent(fromPasted: "  " + text + "\n"))
        #expect(intent == .link(Self.link, door: .deferred))
        var plans: [[String]] = []
        for given in [intent, Intent.link(Self.link, door: .universalLink)] {
            let (dispatcher, _) = Self.dispatcher(tables: client, session: Session(loggedIn: true))
            await dispatcher.ready()
            guard case .navigated(let plan) = await dispatcher.dispatch(given).outcome else { Issue.record("\(given) did not navigate"); continue }
            plans.append(plan.operations.map(\.description))
        }
        #expect(plans.count == 2 && plans[0] == plans[1], "\(plans)")
        #expect(deferred.intent(fromPasted: text) == nil, "pasted again: nothing")
    }

    @Test("Fetched, then the three doors give the same plan for the same link")
    func threeDoors() async throws {
        let service = try LiveService()
        let client = Self.manifestClient(service, cache: temporaryDirectory())
        #expect(await client.currentTable().origin == .empty)
        #expect(await client.refresh() == .updated(revision: 1))
        let table = await client.currentTable()
        #expect(table.origin == .server && table.revision == 1)

        var plans: [[String]] = []
        for intent in [Intent.link(Self.link, door: .universalLink), .link("storefront://orders/42", door: .scheme),
                       Intent.push(["deeplink": Self.link], keys: DispatcherConfiguration().pushLinkKeys)!] {
            let (dispatcher, navigator) = Self.dispatcher(tables: client, session: Session(loggedIn: true))
            await dispatcher.ready()
            let result = await dispatcher.dispatch(intent)
            guard case .navigated(let plan) = result.outcome else { Issue.record("\(intent): \(result.outcome)"); continue }
            plans.append(plan.operations.map(\.description))
            #expect(await navigator.current.stacks["account"]?.map(\.description) == ["orders", "orderDetail(orderId=42)"])
            #expect(result.intent.door == intent.door)
        }
        #expect(plans.count == 3 && Set(plans).count == 1, "\(plans)")
        #expect(plans.first == ["selectTab(account)", "setStack(account: orders > orderDetail(orderId=42), keeping 0)"])
        // The in-app door reaches the same gate: no door skips it.
        let (dispatcher, _) = Self.dispatcher(tables: client, session: Session(loggedIn: false))
        await dispatcher.ready()
        let inApp = await dispatcher.dispatch(.request(DestinationRequest(destination: "orderDetail", params: ["orderId": .int(42)])))
        #expect(inApp.outcome == .gateCancelled(precondition: "auth"))
    }

    @Test("Logged out: gated, login, resumed against a fresh context, applied")
    func gateThenResume() async throws {
        let service = try LiveService()
        let client = Self.manifestClient(service, cache: temporaryDirectory())
        await client.refresh()
        let session = Session(loggedIn: false)
        let login = ScriptedLogin(session: session, behaviour: .succeed)
        let (dispatcher, navigator) = Self.dispatcher(tables: client, session: session, login: login)
        await dispatcher.ready()
        let result = await dispatcher.dispatch(.link(Self.link, door: .universalLink))
        guard case .navigated = result.outcome else { Issue.record("\(result.outcome)"); return }
        #expect(await login.asked == ["auth"])
        #expect(await session.reads == 2, "one context before the gate, a fresh one after it")
        #expect(await navigator.applied.count == 1)
        #expect(await navigator.current.selectedTab == "account")
    }

    @Test("A cancelled login drops the intent; a login that signals before committing ends once")
    func cancelledAndLoopingLogins() async throws {
        let service = try LiveService()
        let client = Self.manifestClient(service, cache: temporaryDirectory())
        await client.refresh()
        for (behaviour, expected) in [(ScriptedLogin.Behaviour.cancel, DispatchOutcome.gateCancelled(precondition: "auth")),
                                      (.signalBeforeCommit, .gateLoop(precondition: "auth"))] {
            let session = Session(loggedIn: false)
            let login = ScriptedLogin(session: session, behaviour: behaviour)
            let (dispatcher, navigator) = Self.dispatcher(tables: client, session: session, login: login)
            await dispatcher.ready()
            let result = await dispatcher.dispatch(.link(Self.link, door: .universalLink))
            #expect(result.outcome == expected)
            #expect(await login.asked == ["auth"], "the handler is asked once, never in a loop")
            #expect(await navigator.applied.isEmpty)
            // The next intent still runs: the loop did not wedge the dispatcher.
            let next = await dispatcher.dispatch(.link("https://storefront.example/p/p1", door: .universalLink))
            guard case .navigated = next.outcome else { Issue.record("after \(behaviour): \(next.outcome)"); continue }
        }
    }

    @Test("A cold-start link waits for ready(), then is applied")
    func coldStart() async throws {
        let service = try LiveService()
        let client = Self.manifestClient(service, cache: temporaryDirectory())
        await client.refresh()
        let (dispatcher, navigator) = Self.dispatcher(tables: client, session: Session(loggedIn: true))
        let pending = Task { await dispatcher.dispatch(.link("https://storefront.example/p/p7", door: .universalLink)) }
        #expect(await eventually { await dispatcher.arrivals == 1 })
        try await Task.sleep(nanoseconds: 20_000_000)
        #expect(await navigator.applied.isEmpty, "nothing is applied before the app is ready")
        await dispatcher.ready()
        let result = await pending.value
        guard case .navigated = result.outcome else { Issue.record("\(result.outcome)"); return }
        #expect(await navigator.current.stacks["home"]?.last == Screen("product", params: ["id": .string("p7")]))
    }

    @Test("200 intents from concurrent tasks are applied one at a time, in arrival order")
    func serialized() async throws {
        let service = try LiveService()
        let client = Self.manifestClient(service, cache: temporaryDirectory())
        await client.refresh()
        let navigator = RecordingNavigator(NavigationState(selectedTab: "home", stacks: ["home": [Screen("home")]]), applyNanoseconds: 200_000)
        let (dispatcher, _) = Self.dispatcher(tables: client, session: Session(loggedIn: true), navigator: navigator) { $0.supersede = .keepAll }
        await dispatcher.ready()
        let results = await withTaskGroup(of: DispatchResult.self) { group in
            for index in 0..<200 {
                group.addTask {
                    switch index % 4 {
                    case 0: await dispatcher.dispatch(.link("https://storefront.example/p/p\(index)", door: .universalLink))
                    case 1: await dispatcher.dispatch(.link("storefront://p/p\(index)", door: .scheme))
                    case 2: await dispatcher.dispatch(push: ["url": "https://storefront.example/product/p\(index)"])!
                    default: await dispatcher.dispatch(.request(DestinationRequest(destination: "product", params: ["id": .string("p\(index)")])))
                    }
                }
            }
            return await group.reduce(into: []) { $0.append($1) }
        }
        #expect(await navigator.overlaps == 0)
        #expect(results.count == 200 && results.allSatisfy { if case .navigated = $0.outcome { true } else { false } })
        // Each plan shows the product its intent asked for, in the order the intents arrived.
        let bySequence = results.sorted { $0.sequence < $1.sequence }
        let asked = bySequence.map { result -> String in
            switch result.resolution {
            case .proceed(let proceed)?: proceed.params["id"]!.description
            default: "?"
            }
        }
        let appliedIDs = await navigator.applied.map { plan in plan.target.base.last!.params["id"]!.description }
        #expect(appliedIDs == asked)
        #expect(Set(asked).count == 200)
    }

    @Test("Newer external links supersede waiting ones; in-app requests are never superseded")
    func supersede() async throws {
        let service = try LiveService()
        let client = Self.manifestClient(service, cache: temporaryDirectory())
        await client.refresh()
        let (dispatcher, navigator) = Self.dispatcher(tables: client, session: Session(loggedIn: true))
        // Before ready(): two links, an in-app request, a third link.
        // Each waits until the one before it has arrived, so the arrival order is the written one.
        async let first = dispatcher.dispatch(.link("https://storefront.example/p/p1", door: .universalLink))
        #expect(await eventually { await dispatcher.arrivals == 1 })
        async let second = dispatcher.dispatch(.link("https://storefront.example/p/p2", door: .universalLink))
        #expect(await eventually { await dispatcher.arrivals == 2 })
        async let request = dispatcher.dispatch(.request(DestinationRequest(destination: "cart")))
        #expect(await eventually { await dispatcher.arrivals == 3 })
        async let third = dispatcher.dispatch(.link("https://storefront.example/p/p3", door: .push))
        #expect(await eventually { await dispatcher.arrivals == 4 })
        await dispatcher.ready()
        let outcomes = await [first, second, request, third].map(\.outcome.name)
        #expect(outcomes == ["superseded", "superseded", "navigated", "navigated"])
        #expect(await navigator.applied.count == 2)
    }

    @Test("A dirty screen stops a push link until the leave handler answers")
    func leaveGate() async throws {
        let service = try LiveService()
        let client = Self.manifestClient(service, cache: temporaryDirectory())
        await client.refresh()
        for (decision, expected) in [(LeaveDecision.discard, "navigated"), (.cancel, "leaveCancelled"), (.saveThenContinue, "navigated")] {
            let leave = ScriptedLeave()
            let navigator = RecordingNavigator(NavigationState(selectedTab: "home", stacks: ["home": [Screen("home"), Screen("search", isDirty: true)]]))
            let (dispatcher, _) = Self.dispatcher(tables: client, session: Session(loggedIn: true), leave: leave, navigator: navigator)
            await dispatcher.ready()
            let pending = Task { await dispatcher.dispatch(push: ["deeplink": "https://storefront.example/p/p9"])! }
            #expect(await eventually { await leave.isAsking })
            #expect(await navigator.applied.isEmpty, "nothing moves while the user is asked")
            #expect(await leave.asked.first?.map(\.destination) == ["search"])
            await leave.answer(decision)
            let result = await pending.value
            #expect(result.outcome.name == expected)
            #expect(await navigator.applied.count == (expected == "navigated" ? 1 : 0))
            #expect(await leave.saved.count == (decision == .saveThenContinue ? 1 : 0))
        }
    }

    @Test("A publish reaches the client on its next refresh, a rollback too; revisions never go back")
    func publishAndRollback() async throws {
        let service = try LiveService()
        let client = Self.manifestClient(service, cache: temporaryDirectory())
        #expect(await client.refresh() == .updated(revision: 1))
        #expect(await client.refresh() == .notModified)
        let context = ResolutionContext(satisfied: ["auth"])
        #expect(await client.currentTable().resolve(.url("https://storefront.example/deals"), context: context).outcome == "notFound")

        var routes = Fixtures.storefrontRoutesJSON["routes"]!.arrayValue!
        routes.append(["id": "deals", "patterns": ["/deals"], "destination": "newArrivals"])
        let body: JSONValue = ["message": "deals", "routes": ["format": "waymark.routes/1", "app": "storefront", "routes": .array(routes)]]
        let published = service.call("POST", "/v1/revisions", token: service.tokens[.routesPublish], headers: [("If-Match", "\"rev-1\"")],
                                     body: body.serialized())
        #expect(published.status == 201, "\(published.text)")
        #expect(await client.refresh() == .updated(revision: 2))
        #expect(await client.currentTable().resolve(.url("https://storefront.example/deals"), context: context).outcome == "proceed")

        let rolledBack = service.call("POST", "/v1/revisions/1/rollback", token: service.tokens[.routesPublish], headers: [("If-Match", "\"rev-2\"")])
        #expect(rolledBack.status == 201, "\(rolledBack.text)")
        #expect(await client.refresh() == .updated(revision: 3))
        #expect(await client.currentTable().resolve(.url("https://storefront.example/deals"), context: context).outcome == "notFound")
    }

    @Test("The server down: the cached table; a corrupt cache: the bundled manifest")
    func offline() async throws {
        let service = try LiveService()
        let cache = temporaryDirectory()
        let online = Self.manifestClient(service, cache: cache)
        #expect(await online.refresh() == .updated(revision: 1))

        // A port nothing listens on: the next launch finds the cache, and refreshing fails harmlessly.
        let down = URL(string: "http://127.0.0.1:9")!
        let offline = Self.manifestClient(service, cache: cache, server: down)
        #expect(await offline.currentTable().origin == .cache)
        #expect(await offline.currentTable().revision == 1)
        guard case .unreachable = await offline.refresh() else { Issue.record("expected unreachable"); return }
        #expect(await offline.currentTable().origin == .cache)
        #expect(await offline.nextDelay() >= 2.5, "backoff, not a hot loop")

        // The cache file damaged on disk: the bundled manifest, then the empty table without one.
        let cacheFile = await offline.cacheFile
        var damaged = try Data(contentsOf: cacheFile)
        damaged[damaged.count / 2] ^= 0x20
        try damaged.write(to: cacheFile)
        let bundled = cache.appendingPathComponent("bundled-manifest.json")
        try Data(Fixtures.storefrontManifest(revision: 1)).write(to: bundled)
        #expect(await Self.manifestClient(service, cache: cache, bundled: bundled, server: down).currentTable().origin == .bundled)
        #expect(await Self.manifestClient(service, cache: cache, server: down).currentTable().origin == .empty)
        let empty = await Self.manifestClient(service, cache: cache, server: down).currentTable()
        #expect(empty.resolve(.url(Self.link), context: ResolutionContext()) == .notFound(NotFound(.unknownRoute, detail: "There is no route table yet.")))
    }

    @Test("Telemetry from the client is counted by the server exactly, across an app kill before posting")
    func telemetryCounted() async throws {
        let service = try LiveService()
        let client = Self.manifestClient(service, cache: temporaryDirectory())
        await client.refresh()
        let journal = temporaryDirectory()
        func reporter() -> TelemetryReporter {
            TelemetryReporter(configuration: TelemetryConfiguration(server: URL(string: service.url)!, build: Self.build,
                                                                    token: service.tokens[.telemetryWrite], cacheDirectory: journal))
        }
        let session = Session(loggedIn: false)
        var first: TelemetryReporter? = reporter()
        let (dispatcher, _) = Self.dispatcher(tables: client, session: session, login: ScriptedLogin(session: session, behaviour: .cancel),
                                             observer: first!)
        await dispatcher.ready()
        var expected: [String: Int] = [:]
        let links = [("https://storefront.example/p/p1", "proceed"), ("https://storefront.example/p/bad", "notFound"),
                     ("https://storefront.example/nowhere", "notFound"), (Self.link, "gated"), ("storefront://p/p2", "proceed")]
        for round in 0..<3 {
            for (link, outcome) in links {
                await dispatcher.dispatch(.link(link, door: round == 1 ? .scheme : .universalLink))
                expected[outcome, default: 0] += 1
            }
        }
        #expect(await first!.pendingResolutions == 15)
        first = nil  // killed before it posted: only the journal remains
        let second = reporter()
        #expect(await second.pendingResolutions == 15)
        guard case .delivered(_, let resolutions, let rejected) = await second.flushAll() else { Issue.record("not delivered"); return }
        #expect(resolutions == 15 && rejected == 0)
        #expect(await second.pendingResolutions == 0)

        let counts = service.call("GET", "/v1/telemetry/counts?groupBy=outcome&from=\(Self.hourAgo())", token: service.tokens[.telemetryRead])
        var counted: [String: Int] = [:]
        for group in counts.json["groups"]?.arrayValue ?? [] {
            counted[group["key"]?["outcome"]?.stringValue ?? "?"] = group["total"]?.intValue
        }
        #expect(counted == expected, "\(counts.text)")
        #expect(await reporter().pendingResolutions == 0, "nothing is posted twice after a restart")
    }

    @Test("Events the client had to drop reach the server as client.dropped, in /metrics")
    func dropsCounted() async throws {
        let service = try LiveService()
        var configuration = TelemetryConfiguration(server: URL(string: service.url)!, build: Self.build, token: service.tokens[.telemetryWrite],
                                                   cacheDirectory: temporaryDirectory())
        configuration.maximumPending = 2
        let reporter = TelemetryReporter(configuration: configuration)
        let now = Int(Date().timeIntervalSince1970) / 60 * 60
        for index in 0..<5 {
            await reporter.record(TelemetryEvent.testEvent(route: "product", minute: now - 60 * (5 - index)), count: 1)
        }
        #expect(await reporter.dropped == 4)
        guard case .delivered(_, 1, 0) = await reporter.flushAll() else { Issue.record("not delivered"); return }
        #expect(await reporter.dropped == 0)
        let metrics = service.call("GET", "/metrics", token: service.tokens[.telemetryRead]).text
        #expect(metrics.contains(#"waymark_telemetry_client_dropped_total{platform="ios"} 4"#), "\(metrics)")
    }

    /// The real transport, except that the first answer to a telemetry post is lost on the
    /// way back (the server has the batch; the app sees a dropped connection).
    final class LosesFirstAnswer: Transport, @unchecked Sendable {
        private let lock = NSLock()
        private var lost = false
        let inner = URLSessionTransport()

        func send(_ request: TransportRequest) async throws -> TransportResponse {
            let response = try await inner.send(request)
            let lose = lock.withLock { () -> Bool in
                defer { lost = true }
                return !lost && request.method == "POST"
            }
            if lose { throw URLError(.networkConnectionLost) }
            return response
        }
    }

    /// Both halves of exactly once (docs/api.md, "The envelope"): the client posts the same
    /// batch again, the server remembers its id and answers `duplicate`.
    @Test("A batch whose 202 was lost is posted again, the same, and the server counts it once")
    func lostAcknowledgement() async throws {
        let service = try LiveService()
        let reporter = TelemetryReporter(configuration: TelemetryConfiguration(server: URL(string: service.url)!, build: Self.build,
                                                                               token: service.tokens[.telemetryWrite], cacheDirectory: temporaryDirectory()),
                                         transport: LosesFirstAnswer())
        let now = Int(Date().timeIntervalSince1970) / 60 * 60
        await reporter.record(TelemetryEvent.testEvent(route: "product", minute: now - 60), count: 3)
        #expect(await reporter.flush() == .retryLater(status: nil, retryAfter: nil), "the 202 was lost")
        #expect(await reporter.flush() == .alreadyDelivered(events: 1, resolutions: 3))
        #expect(await reporter.pendingResolutions == 0)
        let counts = service.call("GET", "/v1/telemetry/counts?from=\(Self.hourAgo())", token: service.tokens[.telemetryRead])
        #expect(counts.json["total"]?.intValue == 3, "\(counts.text)")
    }

    static func hourAgo() -> String {
        let formatter = ISO8601DateFormatter()
        return formatter.string(from: Date().addingTimeInterval(-3600))
    }
}
#endif
