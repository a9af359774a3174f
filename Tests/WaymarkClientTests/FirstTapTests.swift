import Foundation
import RouteEngine
import LibraryTestSupport
import Testing
@testable import WaymarkClient

/// The product's headline promise: a user whose app cached the previous revision taps the
/// new campaign's link and cold-starts the app — the link proceeds. Revision 1 (cached)
/// lacks the `/p/:id` route; revision 2 (on the server) has it.
@Suite("The first tap")
struct FirstTapTests {
    static let link = "https://storefront.example/p/p1"

    static let allRoutes = Fixtures.storefrontRoutesJSON["routes"]!.arrayValue!
    static let withoutCampaign = allRoutes.filter { route in
        !(route["patterns"]?.arrayValue ?? []).contains { $0.stringValue?.hasPrefix("/p/") == true }
    }

    static func response(revision: Int) -> TransportResponse {
        TransportResponse(status: 200, headers: ["ETag": "\"m\(revision)\""],
                          body: Data(Fixtures.storefrontManifest(revision: revision, routes: revision == 1 ? withoutCampaign : allRoutes)))
    }

    /// A cache holding revision 1, and a client over it whose server is `transport`.
    static func staleClient(_ transport: any Transport) async -> ManifestClient {
        let cache = temporaryDirectory()
        let seeding = OverlapTests.manifestClient(ScriptedTransport([.success(response(revision: 1))]), cache: cache)
        #expect(await seeding.refresh() == .updated(revision: 1))
        return OverlapTests.manifestClient(transport, cache: cache)
    }

    static func dispatcher(_ tables: ManifestClient, configure: (inout DispatcherConfiguration) -> Void = { _ in }) -> (RouteDispatcher, RecordingNavigator) {
        let navigator = RecordingNavigator(NavigationState(selectedTab: "home", stacks: ["home": [Screen("home")]]))
        var configuration = DispatcherConfiguration()
        configure(&configuration)
        return (RouteDispatcher(tables: tables, navigator: navigator, context: Session(loggedIn: true), configuration: configuration), navigator)
    }

    @Test("The stale cache alone: the campaign link is not found (the fixture is what the other tests need)")
    func staleCacheAlone() async {
        let client = await Self.staleClient(ScriptedTransport([]))
        #expect(await client.currentTable().revision == 1)
        let (dispatcher, _) = Self.dispatcher(client)
        await dispatcher.ready()
        #expect(await dispatcher.dispatch(.link(Self.link, door: .universalLink)).outcome.name == "notFound(unknownRoute)")
    }

    @Test("ready(waitingForManifest:): the cold-start link waits for the first refresh and proceeds")
    func readyWaitsForManifest() async {
        let transport = HeldTransport()
        let client = await Self.staleClient(transport)
        let (dispatcher, navigator) = Self.dispatcher(client)
        let tap = Task { await dispatcher.dispatch(.link(Self.link, door: .universalLink)) }  // the cold-start link
        #expect(await eventually { await dispatcher.arrivals == 1 })
        let launch = Task { await dispatcher.ready(waitingForManifest: .seconds(60)) }
        #expect(await eventually { await transport.requests.count == 1 })
        #expect(await transport.answer(0, Self.response(revision: 2)))
        await launch.value
        let result = await tap.value
        #expect(result.outcome.name == "navigated" && result.revision == 2)
        #expect(await navigator.applied.count == 1)
    }

    @Test("The documented wiring (ready() at once, the refresh in flight): the link is resolved again once it lands")
    func resolvedAgainAfterRefresh() async {
        let transport = HeldTransport()
        let client = await Self.staleClient(transport)
        let (dispatcher, _) = Self.dispatcher(client)
        let refresh = Task { await client.refresh() }
        #expect(await eventually { await transport.requests.count == 1 })
        await dispatcher.ready()
        let tap = Task { await dispatcher.dispatch(.link(Self.link, door: .universalLink)) }
        #expect(await eventually { await dispatcher.arrivals == 1 })
        #expect(await transport.answer(0, Self.response(revision: 2)))
        let result = await tap.value
        #expect(result.outcome.name == "navigated" && result.revision == 2)
        #expect(await refresh.value == .updated(revision: 2))
    }

    /// (label, what the refresh in flight brings, the wait, the link's door) → still notFound.
    static let notFoundRows: [(String, Int?, TimeInterval?, Door)] = [
        ("the refresh brings the same revision", 1, 60, .universalLink),
        ("the refresh never lands within the bound", nil, 0.05, .universalLink),
        ("waiting is turned off", 2, nil, .universalLink),
    ]

    @Test(arguments: notFoundRows)
    func staysNotFound(_ label: String, _ brings: Int?, _ wait: TimeInterval?, _ door: Door) async {
        let transport = HeldTransport()
        let client = await Self.staleClient(transport)
        let (dispatcher, _) = Self.dispatcher(client) { $0.unknownRouteWait = wait }
        let refresh = Task { await client.refresh() }
        #expect(await eventually { await transport.requests.count == 1 })
        await dispatcher.ready()
        let tap = Task { await dispatcher.dispatch(.link(Self.link, door: door)) }
        #expect(await eventually { await dispatcher.arrivals == 1 })
        if let brings {
            if wait == nil { #expect(await tap.value.outcome.name == "notFound(unknownRoute)", "\(label)") }
            #expect(await transport.answer(0, Self.response(revision: brings)))
        }
        #expect(await tap.value.outcome.name == "notFound(unknownRoute)", "\(label)")
        if brings == nil { await transport.answer(0, Self.response(revision: 1)) }
        _ = await refresh.value
    }

    @Test("An in-app request is not retried: it names a destination, not a route the table may lack")
    func inAppNotRetried() async {
        let transport = HeldTransport()
        let client = await Self.staleClient(transport)
        let table = await client.currentTable()
        let (dispatcher, _) = Self.dispatcher(client)
        let refresh = Task { await client.refresh() }
        #expect(await eventually { await transport.requests.count == 1 })
        await dispatcher.ready()
        let result = await dispatcher.dispatch(.request(DestinationRequest(destination: "nowhere", params: [:])))
        #expect(result.outcome.name.hasPrefix("notFound") && result.revision == table.revision)
        await transport.answer(0, Self.response(revision: 2))
        _ = await refresh.value
    }
}
