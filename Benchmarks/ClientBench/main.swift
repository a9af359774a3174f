// make bench-client: the app's half on a 10,000-route manifest (release build).
//
//   build      decoding and checking the manifest into a table (`Manifest.decode`), beside
//              Foundation's JSONSerialization only parsing the same bytes (the peer)
//   dispatch   one intent through `RouteDispatcher` to the navigator's apply and back — the
//              actor hops, a fresh context, the engine and the planner — from a task, beside
//              the engine and the planner called directly on the same links (the peer);
//              then from the main actor, where thread wake-ups are added
//   memory     bytes malloc holds for the built table, beside the manifest's own bytes
//
// Targets (issue "WaymarkClient"): build < 150 ms, dispatch median < 20 µs, table < 20 MB.
import BenchSupport
import CSystemShim
import Foundation
import RouteEngine
import WaymarkClient

let routeCount = 10_000
let generated = GeneratedManifest(routeCount: routeCount)
let routes = generated.routesJSON["routes"]!.arrayValue!
let build = AppBuild(app: "bench", platform: "ios", version: "1.0.0")
let manifestJSON: JSONValue = [
    "format": "waymark.manifest/1", "app": "bench", "platform": "ios", "version": "1.0.0", "revision": 1,
    "routesSha256": .string(Manifest.canonicalRoutesDigest(.array(routes))), "revisionSha256": "0",
    "schema": generated.schemaJSON, "routes": .array(routes),
]
let bytes = manifestJSON.serializedBytes()
let data = Data(bytes)
let now = Date(timeIntervalSince1970: 1_773_532_800)  // 2026-03-15

func milliseconds(_ duration: Duration) -> Double {
    Double(duration.components.seconds) * 1e3 + Double(duration.components.attoseconds) / 1e15
}

func percentile(_ sorted: [Double], _ fraction: Double) -> Double {
    sorted[min(sorted.count - 1, Int(Double(sorted.count) * fraction))]
}

// MARK: Build

var buildTimes: [Double] = []
var parseTimes: [Double] = []
var manifest: Manifest!
for _ in 0..<9 {
    let start = ContinuousClock.now
    guard case .success(let decoded) = Manifest.decode(bytes, for: build, now: now) else { fatalError("the generated manifest is refused") }
    buildTimes.append(milliseconds(ContinuousClock.now - start))
    manifest = decoded
    let parseStart = ContinuousClock.now
    _ = try JSONSerialization.jsonObject(with: data)
    parseTimes.append(milliseconds(ContinuousClock.now - parseStart))
}
precondition(manifest.leftOut.isEmpty && manifest.resolver.routeIDs.count == routeCount + 1)
buildTimes.sort()
parseTimes.sort()

// MARK: Memory

func allocatedBytes() -> Int { Int(waymark_allocated_bytes()) }
manifest = nil
var kept: [Manifest] = []
let before = allocatedBytes()
for _ in 0..<5 {
    guard case .success(let decoded) = Manifest.decode(bytes, for: build, now: now) else { fatalError() }
    kept.append(decoded)
}
let tableBytes = (allocatedBytes() - before) / kept.count
let table = RouteTable(manifest: kept[0], origin: .server)
kept.removeSubrange(1...)

// MARK: Dispatch

struct FixedContext: ContextProvider {
    func context() async -> ResolutionContext { ResolutionContext(satisfied: ["auth"], now: now) }
}

/// Applies nothing; always shows the same screens, so every link plans from the same state.
struct NullNavigator: Navigator {
    let shown: NavigationState
    var state: NavigationState { get async { shown } }
    func apply(_ plan: NavigationPlan) async {}
}

let startState = NavigationState(selectedTab: "home", stacks: ["home": [Screen("home"), Screen("page")]])
let dispatcher = RouteDispatcher(tables: FixedRouteTable(table), navigator: NullNavigator(shown: startState), context: FixedContext())
await dispatcher.ready()
let links = Array(generated.links.prefix(20_000))
let context = ResolutionContext(satisfied: ["auth"], now: now)

/// Timed off the main actor, as an app's delivery task would call it: the main thread's
/// run loop would add its own wake-up to every round trip.
func timeDispatch() async -> (dispatch: [Double], direct: [Double], navigated: Int) {
    var dispatchTimes: [Double] = []
    var directTimes: [Double] = []
    var navigated = 0
    for round in 0..<3 {
        for link in links {
            let start = ContinuousClock.now
            let result = await dispatcher.dispatch(.link(link, door: .universalLink))
            let elapsed = milliseconds(ContinuousClock.now - start) * 1_000
            if round > 0 { dispatchTimes.append(elapsed) }
            if round == 0, case .navigated = result.outcome { navigated += 1 }

            let directStart = ContinuousClock.now
            if case .proceed(let proceed) = table.resolve(.url(link), context: context) {
                _ = NavigationPlanner.plan(from: startState, to: table.target(for: proceed), source: .external)
            }
            if round > 0 { directTimes.append(milliseconds(ContinuousClock.now - directStart) * 1_000) }
        }
    }
    return (dispatchTimes.sorted(), directTimes.sorted(), navigated)
}
let (dispatchTimes, directTimes, navigated) = await Task.detached { await timeDispatch() }.value

/// The same from the main actor (where UIKit delivers links): each call also waits for a
/// cooperative-pool thread to wake and for the main thread to be woken with the answer.
var mainTimes: [Double] = []
for link in links.prefix(5_000) {
    let start = ContinuousClock.now
    _ = await dispatcher.dispatch(.link(link, door: .universalLink))
    mainTimes.append(milliseconds(ContinuousClock.now - start) * 1_000)
}
mainTimes.sort()
precondition(navigated > links.count * 8 / 10)

func verdict(_ value: Double, under target: Double) -> String { value < target ? "under" : "OVER" }

let buildMedian = percentile(buildTimes, 0.5)
let dispatchMedian = percentile(dispatchTimes, 0.5)
let megabytes = Double(tableBytes) / 1_048_576
print("client bench: \(routeCount) routes, a manifest of \(bytes.count / 1024) KB, \(links.count) links (\(navigated) navigate)")
print(String(format: "  build     median %7.1f ms  best %7.1f ms   (JSONSerialization parse alone: median %.1f ms; build/parse %.2fx)  target < 150 ms: %@",
             buildMedian, buildTimes[0], percentile(parseTimes, 0.5), buildMedian / percentile(parseTimes, 0.5), verdict(buildMedian, under: 150)))
print(String(format: "  dispatch  median %7.2f µs  p99 %7.2f µs   (engine + planner alone: median %.2f µs, p99 %.2f µs; dispatcher/direct %.1fx)  target < 20 µs: %@",
             dispatchMedian, percentile(dispatchTimes, 0.99), percentile(directTimes, 0.5), percentile(directTimes, 0.99),
             dispatchMedian / percentile(directTimes, 0.5), verdict(dispatchMedian, under: 20)))
print(String(format: "            from the main actor: median %.2f µs, p99 %.2f µs (two thread wake-ups per call)",
             percentile(mainTimes, 0.5), percentile(mainTimes, 0.99)))
print(String(format: "  table     %7.1f MB held by malloc   (the manifest's bytes: %.1f MB; table/bytes %.1fx)  target < 20 MB: %@",
             megabytes, Double(bytes.count) / 1_048_576, Double(tableBytes) / Double(bytes.count), verdict(megabytes, under: 20)))
