import Foundation
import RouteEngine
import Testing
import WaymarkClient  // not @testable: only what an app can reach

/// What an app's own code and tests need from the library, through its public surface only:
/// initializers for every result it receives, `Screen` identity a `NavigationStack` path can
/// hold, `Modal` for `.sheet(item:)`, several observers, nested push keys.
@Suite("Fit for an app")
struct AppFitTests {
    /// (label, a, b, equal?) — identity is destination and params; dirtiness is not identity.
    static let identities: [(String, Screen, Screen, Bool)] = [
        ("the same screen", Screen("product", params: ["id": .string("p1")]), Screen("product", params: ["id": .string("p1")]), true),
        ("one of them dirty", Screen("review", params: ["id": .int(1)], isDirty: true), Screen("review", params: ["id": .int(1)]), true),
        ("both dirty", Screen("review", isDirty: true), Screen("review", isDirty: true), true),
        ("other params", Screen("product", params: ["id": .string("p1")]), Screen("product", params: ["id": .string("p2")]), false),
        ("another destination", Screen("product"), Screen("cart"), false),
        ("a param more", Screen("orders"), Screen("orders", params: ["page": .int(2)]), false),
    ]

    @Test(arguments: identities)
    func screenIdentity(_ label: String, _ a: Screen, _ b: Screen, _ equal: Bool) {
        #expect((a == b) == equal, "\(label)")
        #expect((a.id == b.id) == equal, "\(label)")
        if equal { #expect(a.hashValue == b.hashValue, "\(label)") }
        #expect(Set([a, b]).count == (equal ? 1 : 2), "\(label)")
    }

    @Test("A modal keeps its identity while its form becomes dirty, and changes with its screens")
    func modalIdentity() {
        let clean = Modal(.sheet, stack: [Screen("review", params: ["id": .int(1)])])
        let dirty = Modal(.sheet, stack: [Screen("review", params: ["id": .int(1)], isDirty: true)])
        #expect(clean.id == dirty.id)
        #expect(clean.id != Modal(.fullScreen, stack: clean.stack).id)
        #expect(clean.id != Modal(.sheet, stack: [Screen("review", params: ["id": .int(2)])]).id)
    }

    /// An app's own observer and the telemetry reporter side by side.
    actor Collector: DispatchObserver {
        private(set) var outcomes: [String] = []
        func dispatched(_ result: DispatchResult) async { outcomes.append(result.outcome.name) }
    }

    struct Shown: Navigator {
        var state: NavigationState { NavigationState(selectedTab: "main", stacks: ["main": [Screen("root")]]) }
        func apply(_ plan: NavigationPlan) async {}
    }

    struct NobodyLoggedIn: ContextProvider {
        func context() async -> ResolutionContext { ResolutionContext() }
    }

    @Test("Results an app receives can be made in its tests, and fed to its own observers, all of them")
    func publicInitializers() async {
        let gate = Gate(precondition: "auth", routeID: "order", destination: "orderDetail",
                        resume: .url("https://storefront.example/orders/42"))
        let proceed = Proceed(routeID: "order", destination: "orderDetail", params: ["orderId": .int(42)],
                              path: ["home", "orders", "orderDetail"], tab: "home")
        let target = NavigationTarget(tab: "home", base: [Screen("home"), Screen("orders"), Screen("orderDetail", params: ["orderId": .int(42)])])
        let plan = NavigationPlan(operations: [.selectTab("home")], target: target)
        let results = [
            DispatchResult(sequence: 1, intent: .link("https://storefront.example/orders/42", door: .universalLink),
                           outcome: .navigated(plan), resolution: .proceed(proceed), revision: 7, time: Date()),
            DispatchResult(sequence: 2, intent: .link("https://storefront.example/orders/42", door: .universalLink),
                           outcome: .gateTimedOut(precondition: "auth"), resolution: .gated(gate), revision: 7, time: Date()),
        ]
        let first = Collector(), second = Collector()
        for result in results {
            for observer in [first, second] { await observer.dispatched(result) }
        }
        #expect(await first.outcomes == ["navigated", "gateTimedOut"])
        #expect(plan.isEmpty == false && plan.leaving.isEmpty)

        // The dispatcher tells every observer, in order, the one given as `observer` first.
        let (a, b, c) = (Collector(), Collector(), Collector())
        let dispatcher = RouteDispatcher(tables: FixedRouteTable(.empty), navigator: Shown(), context: NobodyLoggedIn(),
                                         observer: a, observers: [b, c])
        await dispatcher.ready()
        await dispatcher.dispatch(.link("https://storefront.example/orders/42", door: .universalLink))
        for collector in [a, b, c] { #expect(await collector.outcomes == ["notFound(unknownRoute)"]) }
    }

    /// (label, payload, keys, the link found)
    static var pushes: [(String, [AnyHashable: Any], [String], String?)] { [
        ("nested under data", ["data": ["deeplink": "shop://p/1"]], ["data.deeplink"], "shop://p/1"),
        ("nested as [AnyHashable: Any]", ["data": ["deeplink": "shop://p/2"] as [AnyHashable: Any]], ["data.deeplink"], "shop://p/2"),
        ("two levels, a URL", ["a": ["b": ["c": URL(string: "shop://p/3")!]]], ["a.b.c"], "shop://p/3"),
        ("a flat key with a dot wins", ["data.deeplink": "shop://p/4", "data": ["deeplink": "shop://p/5"]], ["data.deeplink"], "shop://p/4"),
        ("the first key that holds a link", ["data": ["other": 1], "url": "shop://p/6"], ["data.deeplink", "url"], "shop://p/6"),
        ("the path ends at a dictionary", ["data": ["deeplink": ["x": "shop://p/7"]]], ["data.deeplink"], nil),
        ("the path goes through a string", ["data": "shop://p/8"], ["data.deeplink"], nil),
        ("a number at the end", ["data": ["deeplink": 42]], ["data.deeplink"], nil),
        ("an empty segment", ["data": ["": "shop://p/9"]], ["data."], nil),
        ("no such key", ["aps": ["alert": "Hi"]], ["data.deeplink"], nil),
    ] }

    @Test(arguments: 0..<10)
    func nestedPushKeys(_ row: Int) {
        #expect(Self.pushes.count == 10, "one test case per row")
        let (label, payload, keys, link) = Self.pushes[row]
        #expect(Intent.push(payload, keys: keys) == link.map { .link($0, door: .push) }, "\(label)")
    }
}

extension AppFitTests {
    static let storefront: RouteTable = {
        guard case .success(let manifest) = Manifest.decode(TestManifest.storefront, for: AppBuild(app: "storefront", platform: "ios", version: "5.3.0")) else {
            fatalError("the storefront manifest is refused")
        }
        return RouteTable(manifest: manifest, origin: .bundled)
    }()

    /// (label, table, the notFound) → the fallback, or nil.
    static var fallbacks: [(String, RouteTable, NotFound, String?)] { [
        ("an expired campaign with a fallback", storefront, NotFound(.expired, routeID: "spring-sale"), "https://storefront.example/sale"),
        ("a known route without a fallback", storefront, NotFound(.validationFailed, routeID: "product"), nil),
        ("an unknown route: no route to ask", storefront, NotFound(.unknownRoute), nil),
        ("a route id the table does not have", storefront, NotFound(.expired, routeID: "nope"), nil),
        ("the empty table", .empty, NotFound(.expired, routeID: "spring-sale"), nil),
    ] }

    @Test(arguments: 0..<5)
    func fallbackURL(_ row: Int) {
        #expect(Self.fallbacks.count == 5, "one test case per row")
        let (label, table, notFound, expected) = Self.fallbacks[row]
        #expect(table.fallbackURL(for: notFound)?.absoluteString == expected, "\(label)")
    }
}

/// The storefront example's manifest, read from the repository (this file imports only what an app can).
enum TestManifest {
    static let storefront: [UInt8] = {
        let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
        let schema = (try? Data(contentsOf: root.appendingPathComponent("manifests/storefront/schema-ios-5.3.0.json"))) ?? Data()
        let routes = (try? Data(contentsOf: root.appendingPathComponent("manifests/storefront/routes.json"))) ?? Data()
        guard let schemaJSON = try? JSONParser().parse([UInt8](schema)), let routesJSON = try? JSONParser().parse([UInt8](routes)),
              let list = routesJSON["routes"]?.arrayValue else { return [] }
        let body: JSONValue = ["format": "waymark.manifest/1", "app": "storefront", "platform": "ios", "version": "5.3.0", "revision": 1,
                               "revisionSha256": "0", "routesSha256": .string(Manifest.canonicalRoutesDigest(.array(list))),
                               "schema": schemaJSON, "routes": .array(list)]
        return body.serializedBytes()
    }()
}
