import Foundation
import RouteEngine
import LibraryTestSupport
import Testing
@testable import WaymarkClient

/// An actor is not a lock across `await`: every client method that awaits, called twice at
/// once, one answered slowly and one fast (`HeldTransport` answers in the order the test
/// chooses).
@Suite("Overlapping calls")
struct OverlapTests {
    static let server = URL(string: "https://links.example")!

    static func manifestClient(_ transport: any Transport, cache: URL) -> ManifestClient {
        ManifestClient(configuration: ManifestClientConfiguration(server: server, build: Fixtures.storefrontBuild, token: "wm_t",
                                                                  cacheDirectory: cache),
                       transport: transport, random: { 0.5 })
    }

    static func manifest(_ revision: Int) -> TransportResponse {
        TransportResponse(status: 200, headers: ["ETag": "\"m\(revision)\""], body: Data(Fixtures.storefrontManifest(revision: revision)))
    }

    @Test("Two refreshes at once: one request, both callers get its outcome")
    func refreshesJoin() async throws {
        let transport = HeldTransport()
        let cache = temporaryDirectory()
        let client = Self.manifestClient(transport, cache: cache)
        let first = Task { await client.refresh() }
        #expect(await eventually { await transport.requests.count == 1 })
        let second = Task { await client.refresh() }
        #expect(await eventually { await client.joins == 1 })
        #expect(await transport.answer(0, Self.manifest(2)))
        #expect(await first.value == .updated(revision: 2))
        #expect(await second.value == .updated(revision: 2))
        #expect(await transport.requests.count == 1, "the second joined the first instead of asking again")
        #expect(await Self.manifestClient(ScriptedTransport([]), cache: cache).currentTable().revision == 2)
    }

    /// Two requests in flight (the joining is bypassed through `fetch()`, the one place that
    /// asks): the older answer arrives last and is compared with the table in use then.
    @Test("A slow old answer after a fast new one never goes backwards, in memory or in the cache",
          arguments: [("new answered first", [1, 0]), ("old answered first", [0, 1])])
    func neverBackwards(_ label: String, _ answerOrder: [Int]) async throws {
        let transport = HeldTransport()
        let cache = temporaryDirectory()
        let client = Self.manifestClient(transport, cache: cache)
        let slow = Task { await client.fetch() }
        #expect(await eventually { await transport.requests.count == 1 })
        let fast = Task { await client.fetch() }
        #expect(await eventually { await transport.requests.count == 2 })
        let revisions = [0: 1, 1: 2]  // request 0 is answered by a stale replica (revision 1)
        for index in answerOrder {
            #expect(await transport.answer(index, Self.manifest(revisions[index]!)), "\(label)")
            if index == 0 { _ = await slow.value } else { _ = await fast.value }
        }
        #expect(await fast.value == .updated(revision: 2), "\(label)")
        let old = await slow.value
        #expect(old == (answerOrder == [1, 0] ? .olderIgnored(served: 1, inUse: 2) : .updated(revision: 1)), "\(label)")
        #expect(await client.currentTable().revision == 2, "\(label)")
        #expect(await Self.manifestClient(ScriptedTransport([]), cache: cache).currentTable().revision == 2, "\(label): the cache")
    }

    static func reporter(_ transport: any Transport, directory: URL) -> TelemetryReporter {
        TelemetryReporter(configuration: TelemetryConfiguration(server: server, build: Fixtures.storefrontBuild, token: "wm_w",
                                                                cacheDirectory: directory),
                          transport: transport, random: { 0.5 })
    }

    static let minute = 1_795_000_000 / 60 * 60
    static let now = Date(timeIntervalSince1970: TimeInterval(minute))
    static let accepted = TransportResponse(status: 202, body: Data(#"{"accepted":1,"rejected":[]}"#.utf8))

    @Test("A flush during a flush: one post, both callers get its outcome, nothing left")
    func flushesJoin() async throws {
        let transport = HeldTransport()
        let reporter = Self.reporter(transport, directory: temporaryDirectory())
        await reporter.record(TelemetryEvent.testEvent(route: "product", minute: Self.minute), count: 3)
        let scheduled = Task { await reporter.flush(now: Self.now) }
        #expect(await eventually { await transport.requests.count == 1 })
        // The app enters the background while the scheduled flush is posting.
        let background = Task { await reporter.flush(now: Self.now) }
        #expect(await eventually { await reporter.joins == 1 })
        #expect(await transport.answer(0, Self.accepted))
        #expect(await scheduled.value == .delivered(events: 1, resolutions: 3, rejected: 0))
        #expect(await background.value == .delivered(events: 1, resolutions: 3, rejected: 0))
        #expect(await transport.requests.count == 1)
        #expect(await reporter.pendingResolutions == 0)
    }

    @Test("Recorded while a batch is posted: kept for the next batch, never in the one in flight")
    func recordDuringFlush() async throws {
        let transport = HeldTransport()
        let reporter = Self.reporter(transport, directory: temporaryDirectory())
        await reporter.record(TelemetryEvent.testEvent(route: "product", minute: Self.minute), count: 2)
        let flush = Task { await reporter.flush(now: Self.now) }
        #expect(await eventually { await transport.requests.count == 1 })
        await reporter.record(TelemetryEvent.testEvent(route: "product", minute: Self.minute), count: 5)
        #expect(await transport.answer(0, Self.accepted))
        #expect(await flush.value == .delivered(events: 1, resolutions: 2, rejected: 0))
        #expect(await reporter.pendingResolutions == 5)
        let next = Task { await reporter.flush(now: Self.now) }
        #expect(await eventually { await transport.requests.count == 2 })
        let body = try JSONParser().parse(try #require(await transport.requests[1].body))
        #expect(body["events"]?.arrayValue?.first?["count"] == 5)
        #expect(await transport.answer(1, Self.accepted))
        _ = await next.value
    }
}

extension OverlapTests {
    @Test("Two dispatches at once, the first slow to apply: applied one at a time, in arrival order")
    func dispatchesOverlap() async {
        let navigator = RecordingNavigator(NavigationState(selectedTab: "main", stacks: ["main": [Screen("root")]]), applyNanoseconds: 20_000_000)
        let dispatcher = RouteDispatcher(tables: FixedRouteTable(DispatcherTests.table), navigator: navigator, context: DispatcherTests.Preconditions())
        await dispatcher.ready()
        let slow = Task { await dispatcher.dispatch(.request(DestinationRequest(destination: "kind", params: ["k": .string("a")]))) }
        #expect(await eventually { await dispatcher.arrivals == 1 })
        let fast = Task { await dispatcher.dispatch(.request(DestinationRequest(destination: "kind", params: ["k": .string("b")]))) }
        #expect(await fast.value.sequence == 2)
        #expect(await slow.value.outcome.name == "navigated")
        #expect(await navigator.overlaps == 0)
        #expect(await navigator.applied.map { $0.target.base.last!.params["k"]!.description } == ["a", "b"])
    }
}
