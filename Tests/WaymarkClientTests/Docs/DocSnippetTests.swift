import Foundation
import RouteEngine
import LibraryTestSupport
import Testing
import WaymarkClient

/// docs/client.md's snippets are the compiled code of `AdoptionSnippets.swift`, both ways:
/// each `doc:begin` region is a Swift block of the page, character for character, and each
/// Swift block of the page is a region (or the Package.swift lines, checked against the
/// package). Then the snippets run: the UIKit-shaped navigator, the login screen with its
/// auth callback, the notFound observer, the push handler, on the storefront example.
@Suite("docs/client.md snippets")
struct DocSnippetTests {
    static let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent().deletingLastPathComponent()

    static func read(_ path: String) throws -> String {
        try String(contentsOf: root.appendingPathComponent(path), encoding: .utf8)
    }

    /// The Swift blocks of a Markdown text, each without its fences.
    static func swiftBlocks(_ markdown: String) -> [String] {
        var blocks: [String] = []
        var current: [Substring]?
        for line in markdown.split(separator: "\n", omittingEmptySubsequences: false) {
            if current == nil, line == "```swift" {
                current = []
            } else if current != nil, line == "```" {
                blocks.append(current!.joined(separator: "\n") + "\n")
                current = nil
            } else if current != nil {
                current!.append(line)
            }
        }
        return blocks
    }

    /// The `doc:begin NAME` … `doc:end` regions of a Swift file, by name.
    static func regions(_ source: String) -> [String: String] {
        var regions: [String: String] = [:]
        var name: String?
        var lines: [Substring] = []
        for line in source.split(separator: "\n", omittingEmptySubsequences: false) {
            if line.hasPrefix("// doc:begin ") {
                name = String(line.dropFirst("// doc:begin ".count))
                lines = []
            } else if line == "// doc:end", let current = name {
                regions[current] = lines.joined(separator: "\n") + "\n"
                name = nil
            } else if name != nil {
                lines.append(line)
            }
        }
        return regions
    }

    @Test("Every Swift block of the page is compiled code, and every region is on the page")
    func snippetsAreCompiled() throws {
        let page = try Self.read("docs/client.md")
        let regions = Self.regions(try Self.read("Tests/WaymarkClientTests/Docs/AdoptionSnippets.swift"))
        #expect(regions.count >= 7)
        let blocks = Self.swiftBlocks(page)
        for (name, region) in regions.sorted(by: { $0.key < $1.key }) {
            #expect(blocks.contains(region), "the region \(name) is not on the page as it compiles")
        }
        let package = try Self.read("Package.swift")
        for block in blocks where !regions.values.contains(block) {
            guard block.hasPrefix("// Package.swift\n") else {
                Issue.record("a Swift block of the page is not compiled anywhere:\n\(block)")
                continue
            }
            for product in ["WaymarkClient", "RouteEngine"] {
                #expect(block.contains(#".product(name: "\#(product)""#), "the package lines name \(product)")
                #expect(package.contains(#".library(name: "\#(product)""#))
            }
        }
    }

    static let table: RouteTable = {
        guard case .success(let manifest) = Manifest.decode(Fixtures.storefrontManifest(), for: Fixtures.storefrontBuild) else {
            fatalError("the storefront manifest is refused")
        }
        return RouteTable(manifest: manifest, origin: .bundled)
    }()

    @MainActor
    static func tabBar() -> UITabBarController {
        let tabs = UITabBarController()
        var controllers: [UIViewController] = []
        for (tab, root) in [("home", "home"), ("cart", "cart"), ("account", "orders")] {
            let navigation = UINavigationController(rootViewController: ScreenViewController(Screen(root)))
            navigation.title = tab
            controllers.append(navigation)
        }
        tabs.viewControllers = controllers
        tabs.selectedViewController = controllers[0]
        return tabs
    }

    @Test("The snippets run: the navigator, a login finished by an auth callback, notFound to the browser, a push")
    @MainActor
    func snippetsRun() async throws {
        AppSession.shared.signOut()
        let tabs = Self.tabBar()
        let navigator = TabNavigator(tabs: tabs, make: { ScreenViewController($0) })
        let login = LoginPresenter(presenter: tabs)
        var configuration = DispatcherConfiguration()
        configuration.authCallbackPrefixes = ["storefront://auth/callback"]
        configuration.pushLinkKeys = ["deeplink", "data.deeplink"]
        let dispatcher = RouteDispatcher(tables: FixedRouteTable(Self.table), navigator: navigator, context: AppSession.shared, gates: login,
                                         observers: [OpenInBrowser(tables: FixedRouteTable(Self.table))], configuration: configuration)
        await dispatcher.ready()

        #expect(await dispatcher.dispatch(.link("https://storefront.example/p/p1", door: .universalLink)).outcome.name == "navigated")
        #expect(navigator.state.stacks["home"] == [Screen("home"), Screen("product", params: ["id": .string("p1")])])

        // Logged out: the login sheet; a forged callback changes nothing, then the OAuth
        // redirect with the request's state arrives while it is up.
        let order = Task { await dispatcher.dispatch(.link("https://storefront.example/orders/42", door: .universalLink)) }
        #expect(await eventually { await MainActor.run { tabs.presentedViewController != nil } })
        let state = try #require(login.state)
        let forged = await dispatcher.dispatch(.link("storefront://auth/callback?code=evil&state=guessed", door: .scheme))
        #expect(forged.outcome == .handedToGate(precondition: "auth"))
        #expect(tabs.presentedViewController != nil && login.state == state, "a callback without the state signs nobody in")
        let callback = await dispatcher.dispatch(.link("storefront://auth/callback?code=abc123&state=\(state)", door: .scheme))
        #expect(callback.outcome == .handedToGate(precondition: "auth"))
        #expect(await order.value.outcome.name == "navigated")
        let shown = navigator.state
        #expect(shown.selectedTab == "account")
        #expect(shown.stacks["account"] == [Screen("orders"), Screen("orderDetail", params: ["orderId": .int(42)])])
        #expect(shown.modals.isEmpty, "the login sheet is gone")

        // A sheet, then a link elsewhere: the sheet is dismissed first.
        #expect(await dispatcher.dispatch(.link("https://storefront.example/settings", door: .universalLink)).outcome.name == "navigated")
        #expect(navigator.state.modals.map(\.style) == [.sheet])
        #expect(await dispatcher.dispatch(.link("storefront://p/p2", door: .scheme)).outcome.name == "navigated")
        #expect(navigator.state.modals.isEmpty)
        #expect(navigator.state.stacks["home"]?.last == Screen("product", params: ["id": .string("p2")]))

        // notFound: the expired campaign's fallback, an unknown link itself, a custom scheme
        // nowhere, and a push's link to another site, which is never opened.
        let opened = UIApplication.shared.opened.count
        for link in ["https://storefront.example/sale/spring", "https://storefront.example/nowhere", "storefront://nowhere"] {
            #expect(await dispatcher.dispatch(.link(link, door: .universalLink)).outcome.name.hasPrefix("notFound"))
        }
        #expect(await dispatcher.dispatch(.link("https://evil.example/login", door: .push)).outcome.name.hasPrefix("notFound"))
        #expect(await eventually { await MainActor.run { UIApplication.shared.opened.count == opened + 2 } })
        #expect(Array(UIApplication.shared.opened.suffix(2)).map(\.absoluteString)
            == ["https://storefront.example/sale", "https://storefront.example/nowhere"])

        // A push whose link is nested under data.
        await AppDelegate(dispatcher: dispatcher).userNotificationCenter(
            UNUserNotificationCenter(), didReceive: UNNotificationResponse(userInfo: ["data": ["deeplink": "https://storefront.example/p/p3"]]))
        #expect(navigator.state.stacks["home"]?.last == Screen("product", params: ["id": .string("p3")]))
    }

    @Test("The first launch's paste control opens the hand-off once, and nothing else")
    @MainActor
    func aPastedHandOffOpens() async throws {
        let tabs = Self.tabBar()
        let navigator = TabNavigator(tabs: tabs, make: { ScreenViewController($0) })
        let dispatcher = RouteDispatcher(tables: FixedRouteTable(Self.table), navigator: navigator, context: AppSession.shared)
        await dispatcher.ready()
        let welcome = WelcomeViewController(dispatcher: dispatcher, directory: temporaryDirectory())
        welcome.viewDidLoad()
        let paste = try #require(welcome.view.subviews.first as? UIPasteControl)
        paste.tapped(holding: "Meet at 5")
        paste.tapped(holding: "https://storefront.example/p/p1#waymark=\(Int(Date().timeIntervalSince1970) - 90_000)")  // stale
        try await Task.sleep(nanoseconds: 100_000_000)
        #expect(navigator.state.stacks["home"] == [Screen("home")], "nothing opened")
        let handOff = "https://storefront.example/p/p1#waymark=\(Int(Date().timeIntervalSince1970))"
        paste.tapped(holding: handOff)
        #expect(await eventually { await MainActor.run { navigator.state.stacks["home"] == [Screen("home"), Screen("product", params: ["id": .string("p1")])] } })
        // Somewhere else, then the same hand-off pasted again: it does not take the person back.
        #expect(await dispatcher.dispatch(.link("https://storefront.example/p/p2", door: .universalLink)).outcome.name == "navigated")
        paste.tapped(holding: handOff)
        try await Task.sleep(nanoseconds: 100_000_000)
        #expect(navigator.state.stacks["home"]?.last == Screen("product", params: ["id": .string("p2")]), "pasted again: nothing")
    }

    @Test("UIKit's rules: a scene delegate made with init(); a sheet goes over whatever is up, where UIKit would refuse it elsewhere")
    @MainActor
    func uikitRules() async {
        let made = (SceneDelegate.self as any UIWindowSceneDelegate.Type).init()  // as UIKit makes it, from the Info.plist
        #expect((made as? SceneDelegate)?.dispatcher == nil)
        let tabs = Self.tabBar()
        let navigator = TabNavigator(tabs: tabs, make: { ScreenViewController($0) })
        let dispatcher = RouteDispatcher(tables: FixedRouteTable(Self.table), navigator: navigator, context: AppSession.shared)
        await dispatcher.ready()
        // Something the app presented itself (an alert) is up: UIKit would refuse a sheet from
        // the tab bar, and never call its completion (the navigator's apply would never end).
        let alert = UIViewController()
        tabs.present(alert, animated: false)
        let refused = UIViewController.refusedPresentations
        #expect(await dispatcher.dispatch(.link("https://storefront.example/settings", door: .universalLink)).outcome.name == "navigated")
        #expect(UIViewController.refusedPresentations == refused, "presented over the alert, the top")
        #expect(alert.presentedViewController is UINavigationController)
    }

    @Test("A dirty form stops a link until the unsaved-work prompt answers; the navigator reports it")
    @MainActor
    func dirtyState() async {
        let tabs = Self.tabBar()
        let navigator = TabNavigator(tabs: tabs, make: { ScreenViewController($0) })
        let dispatcher = RouteDispatcher(tables: FixedRouteTable(Self.table), navigator: navigator, context: AppSession.shared)
        await dispatcher.ready()
        await dispatcher.dispatch(.link("https://storefront.example/p/p1", door: .universalLink))
        let home = tabs.viewControllers?.first as? UINavigationController
        (home?.viewControllers.last as? ScreenViewController)?.hasUnsavedInput = true
        #expect(navigator.state.stacks["home"]?.last?.isDirty == true)
        let result = await dispatcher.dispatch(.link("https://storefront.example/p/p2", door: .universalLink))
        #expect(result.outcome.name == "leaveCancelled", "no leave handler: the work is never lost silently")
    }
}
