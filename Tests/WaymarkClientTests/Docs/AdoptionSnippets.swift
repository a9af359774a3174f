import Foundation
import RouteEngine
import WaymarkClient

// The code of docs/client.md, "Adopting it": each region between `doc:begin` and `doc:end`
// is a snippet of the page, character for character (DocSnippetTests checks both ways), so
// every snippet an app team copies compiles — here against UIKit stand-ins
// (UIKitStandIns.swift) — and runs in DocSnippetTests.

/// The app's own secrets and session, as the snippets assume them.
enum Secrets {
    static let manifestToken = "wm_manifest_read"
    static let telemetryToken = "wm_telemetry_write"
}

// doc:begin links
/// The app's deep-link stack: one table and one reporter for the app, made once, at launch.
final class AppLinks: Sendable {
    static let shared = AppLinks(server: URL(string: "https://links.storefront.example")!)

    let manifests: ManifestClient
    let telemetry: TelemetryReporter
    let directory: URL

    init(server: URL) {
        let version = Bundle.main.object(forInfoDictionaryKey: "CFBundleShortVersionString") as? String ?? "0.0.0"
        let build = AppBuild(app: "storefront", platform: "ios", version: version)
        // Application Support, never Caches: the system may purge Caches, and the install id
        // kept here is the install's rollout cohort. The library makes the folder when it writes.
        let support = FileManager.default.urls(for: .applicationSupportDirectory, in: .userDomainMask).first
            ?? FileManager.default.temporaryDirectory
        directory = support.appendingPathComponent("waymark", isDirectory: true)
        manifests = ManifestClient(configuration: ManifestClientConfiguration(
            server: server, build: build, token: Secrets.manifestToken, cacheDirectory: directory,
            bundledManifest: Bundle.main.url(forResource: "manifest", withExtension: "json")))
        telemetry = TelemetryReporter(configuration: TelemetryConfiguration(
            server: server, build: build, token: Secrets.telemetryToken, cacheDirectory: directory))
    }

    /// One dispatcher per scene (window), each with that scene's navigator and prompts.
    func makeDispatcher(navigator: any Navigator, session: any ContextProvider, login: any GateHandler,
                        unsavedWork: any LeaveHandler, notFound: any DispatchObserver) -> RouteDispatcher {
        var configuration = DispatcherConfiguration()
        configuration.authCallbackPrefixes = ["storefront://auth/callback"]  // OAuth redirects go to the login screen
        configuration.pushLinkKeys = ["deeplink", "data.deeplink"]
        configuration.gateStash = GateStash(directory: directory)         // a kill at the login screen keeps the link
        return RouteDispatcher(tables: manifests, navigator: navigator, context: session, gates: login, leave: unsavedWork,
                               observer: telemetry, observers: [notFound], configuration: configuration)
    }
}
// doc:end

// doc:begin scene
/// UIKit makes it with `init()` (the Info.plist names the class): what it needs is the app's.
final class SceneDelegate: UIResponder, UIWindowSceneDelegate {
    var dispatcher: RouteDispatcher?
    let links = AppLinks.shared
    let root: RootFactory = AppRoot()

    // A cold start: the link that launched the app arrives here, and only here.
    func scene(_ scene: UIScene, willConnectTo session: UISceneSession, options connectionOptions: UIScene.ConnectionOptions) {
        let (navigator, login, unsavedWork) = root.makeRoot()
        let dispatcher = links.makeDispatcher(navigator: navigator, session: AppSession.shared, login: login,
                                              unsavedWork: unsavedWork, notFound: OpenInBrowser(tables: links.manifests))
        self.dispatcher = dispatcher
        for activity in connectionOptions.userActivities { deliver(activity) }
        deliver(connectionOptions.urlContexts)
        // Links wait until the root exists and the first refresh has ended (or 1.5 s have passed).
        Task { await dispatcher.ready(waitingForManifest: .milliseconds(1500)) }
    }

    // The app was running: a universal link, then a custom-scheme link.
    func scene(_ scene: UIScene, continue userActivity: NSUserActivity) {
        deliver(userActivity)
    }

    func scene(_ scene: UIScene, openURLContexts URLContexts: Set<UIOpenURLContext>) {
        deliver(URLContexts)
    }

    func sceneWillEnterForeground(_ scene: UIScene) {
        Task { await links.manifests.refresh() }        // a campaign published while away
    }

    func sceneDidEnterBackground(_ scene: UIScene) {
        Task { await links.telemetry.flushAll() }       // a flush already running is joined, never doubled
    }

    private func deliver(_ activity: NSUserActivity) {
        guard activity.activityType == NSUserActivityTypeBrowsingWeb, let url = activity.webpageURL, let dispatcher else { return }
        Task { await dispatcher.dispatch(.link(url.absoluteString, door: .universalLink)) }
    }

    private func deliver(_ contexts: Set<UIOpenURLContext>) {
        guard let dispatcher else { return }
        for context in contexts {
            Task { await dispatcher.dispatch(.link(context.url.absoluteString, door: .scheme)) }
        }
    }
}
// doc:end

/// Makes a scene's root: its navigator and the prompts that show over it.
@MainActor protocol RootFactory: Sendable {
    func makeRoot() -> (any Navigator, any GateHandler, any LeaveHandler)
}

/// The app's root, as the scene snippet names it: a tab bar of the storefront's tabs.
@MainActor struct AppRoot: RootFactory {
    func makeRoot() -> (any Navigator, any GateHandler, any LeaveHandler) {
        let tabs = DocSnippetTests.tabBar()
        return (TabNavigator(tabs: tabs, make: { ScreenViewController($0) }), LoginPresenter(presenter: tabs), KeepWork())
    }
}

/// A leave handler that keeps the user's work (the app's own prompt would ask).
struct KeepWork: LeaveHandler {
    func decide(leaving dirty: [Screen], for plan: NavigationPlan) async -> LeaveDecision { .cancel }
    func save(_ dirty: [Screen]) async -> Bool { false }
}

// doc:begin push
extension AppDelegate {
    func userNotificationCenter(_ center: UNUserNotificationCenter, didReceive response: UNNotificationResponse) async {
        let keys = dispatcher.configuration.pushLinkKeys
        guard let intent = Intent.push(response.notification.request.content.userInfo, keys: keys) else { return }
        await dispatcher.dispatch(intent)
    }
}
// doc:end

/// The app delegate, as far as the push snippet needs it: the active scene's dispatcher.
final class AppDelegate: Sendable {
    let dispatcher: RouteDispatcher
    init(dispatcher: RouteDispatcher) { self.dispatcher = dispatcher }
}

// doc:begin navigator
/// A view controller made for a screen; it knows the screen it shows, and whether its
/// form holds unsaved input.
@MainActor class ScreenViewController: UIViewController {
    private(set) var screen: Screen
    var hasUnsavedInput = false

    init(_ screen: Screen) {
        self.screen = screen
        super.init(nibName: nil, bundle: nil)
    }

    required init?(coder: NSCoder) { nil }  // made in code, never from a storyboard

    /// The same screen with other params (a product page showing another product).
    func update(_ params: [String: ParamValue]) { screen = Screen(screen.destination, params: params) }

    var currentScreen: Screen { Screen(screen.destination, params: screen.params, isDirty: hasUnsavedInput) }
}

/// A tab bar of navigation controllers, one per tab, titled with the tab's name.
@MainActor final class TabNavigator: Navigator {
    let tabs: UITabBarController
    let make: @MainActor (Screen) -> ScreenViewController

    init(tabs: UITabBarController, make: @escaping @MainActor (Screen) -> ScreenViewController) {
        self.tabs = tabs
        self.make = make
    }

    private func navigation(_ tab: String) -> UINavigationController? {
        tabs.viewControllers?.lazy.compactMap { $0 as? UINavigationController }.first { $0.title == tab }
    }

    /// The screens of a stack: positions in a plan count these, and nothing else the stack holds.
    private func screens(_ navigation: UINavigationController) -> [ScreenViewController] {
        navigation.viewControllers.compactMap { $0 as? ScreenViewController }
    }

    /// The top of what is presented, whatever it is (an alert, a login sheet): UIKit presents
    /// from there or not at all.
    private func top() -> UIViewController {
        var top: UIViewController = tabs
        while let next = top.presentedViewController { top = next }
        return top
    }

    /// The modals, bottom first: each a navigation controller of screens.
    private func presented() -> [UINavigationController] {
        var modals: [UINavigationController] = []
        var top = tabs.presentedViewController
        while let modal = top as? UINavigationController {
            modals.append(modal)
            top = modal.presentedViewController
        }
        return modals
    }

    var state: NavigationState {
        var stacks: [String: [Screen]] = [:]
        for case let navigation as UINavigationController in tabs.viewControllers ?? [] {
            guard let tab = navigation.title else { continue }
            stacks[tab] = screens(navigation).map(\.currentScreen)
        }
        let modals = presented().map { modal in
            Modal(modal.modalPresentationStyle == .fullScreen ? .fullScreen : .sheet, stack: screens(modal).map(\.currentScreen))
        }
        return NavigationState(selectedTab: tabs.selectedViewController?.title, stacks: stacks, modals: modals)
    }

    func apply(_ plan: NavigationPlan) async {
        for (index, operation) in plan.operations.enumerated() {
            let animated = index == plan.operations.count - 1    // animate the last step only
            switch operation {
            case .dismissModals(let from):
                let modals = presented()
                guard modals.indices.contains(from) else { continue }
                let presenter: UIViewController = from == 0 ? tabs : modals[from - 1]
                await presentation { done in presenter.dismiss(animated: animated, completion: done); return true }
            case .selectTab(let tab):
                tabs.selectedViewController = navigation(tab)
            case .update(let tab, let position, let params):
                guard let navigation = navigation(tab), screens(navigation).indices.contains(position) else { continue }
                screens(navigation)[position].update(params)
            case .popTo(let tab, let position):
                guard let navigation = navigation(tab), screens(navigation).indices.contains(position) else { continue }
                let target = screens(navigation)[position]
                await transition { navigation.popToViewController(target, animated: animated) }
            case .setStack(let tab, let targetScreens, let keeping):
                guard let navigation = navigation(tab) else { continue }
                let kept = Array(screens(navigation).prefix(keeping))
                let controllers = kept + targetScreens.dropFirst(kept.count).map(make)
                await transition { navigation.setViewControllers(controllers, animated: animated) }
            case .present(let modal):
                let controllers = modal.stack.map(make)
                guard let first = controllers.first else { continue }
                let container = UINavigationController(rootViewController: first)
                container.setViewControllers(controllers, animated: false)
                container.modalPresentationStyle = modal.style == .fullScreen ? .fullScreen : .pageSheet
                let presenter = top()
                await presentation { done in
                    presenter.present(container, animated: animated, completion: done)
                    return presenter.presentedViewController === container  // false: UIKit refused it
                }
            }
        }
    }

    /// Waits for a presentation's completion — or not at all when UIKit refused it, since it
    /// then never calls the completion. (The dispatcher's `applyTimeout` bounds the rest.)
    private func presentation(_ start: (@escaping @MainActor () -> Void) -> Bool) async {
        final class Once { var done = false }
        let once = Once()
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
            let finish: @MainActor () -> Void = {
                guard !once.done else { return }
                once.done = true
                continuation.resume()
            }
            if !start(finish) { finish() }
        }
    }

    /// Runs a push or pop and returns once its animation has ended.
    private func transition(_ change: () -> Void) async {
        await withCheckedContinuation { done in
            CATransaction.begin()
            CATransaction.setCompletionBlock { done.resume() }
            change()
            CATransaction.commit()
        }
    }
}
// doc:end

// doc:begin login
/// The login screen as the dispatcher's gate handler.
@MainActor final class LoginPresenter: GateHandler {
    let presenter: UIViewController
    private var answer: CheckedContinuation<Bool, Never>?
    private var sheet: UIViewController?
    /// The OAuth request's `state`, made for each sign-in: a callback without it is not ours.
    private(set) var state: String?

    init(presenter: UIViewController) { self.presenter = presenter }

    func satisfy(_ precondition: String, for gate: Gate) async -> Bool {
        guard precondition == "auth" else { return false }        // a gate this app has no screen for
        let sheet = UIViewController()                            // your login view controller
        var top = presenter
        while let next = top.presentedViewController { top = next }
        top.present(sheet, animated: true)
        guard top.presentedViewController === sheet else { return false }  // UIKit refused it: no login now
        self.sheet = sheet
        state = UUID().uuidString                                 // send it with the OAuth request
        return await withCheckedContinuation { answer = $0 }
    }

    /// The user signed in with a password: commit the session first, then answer.
    func signedIn(as user: String) {
        AppSession.shared.commit(user: user)
        finish(true)
    }

    /// The user closed the sheet (the cancel button, or swiped it away).
    func closedByUser() { finish(false) }

    /// An OAuth or magic-link callback, handed over while this screen is up. Anyone can send
    /// the app a link that looks like one: only the answer to this screen's own request (its
    /// `state`) signs in.
    func received(callback link: String, for gate: Gate) async {
        let items = URLComponents(string: link)?.queryItems ?? []
        guard let state, items.first(where: { $0.name == "state" })?.value == state,
              let code = items.first(where: { $0.name == "code" })?.value else { return }
        AppSession.shared.commit(user: "oauth:\(code.prefix(8))")  // exchange the code with your server here
        finish(true)
    }

    /// The dispatcher stopped waiting (timed out, cancelled, a newer link): take the screen down.
    func close(_ gate: Gate, because ending: PromptEnding) async {
        finish(false)                                             // the dispatcher ignores this late answer
    }

    private func finish(_ signedIn: Bool) {
        sheet?.dismiss(animated: true)
        sheet = nil
        state = nil
        answer?.resume(returning: signedIn)
        answer = nil
    }
}
// doc:end

// doc:begin session
/// The user's session as the engine reads it: which preconditions hold, now.
final class AppSession: ContextProvider, @unchecked Sendable {
    static let shared = AppSession()
    private let lock = NSLock()
    private var user: String?

    func commit(user: String) { lock.withLock { self.user = user } }
    func signOut() { lock.withLock { user = nil } }

    func context() async -> ResolutionContext {
        ResolutionContext(satisfied: lock.withLock { user != nil } ? ["auth"] : [])
    }
}
// doc:end

// doc:begin notfound
/// A link the app cannot show goes to the browser: the route's fallback when it has one
/// (an expired campaign's page), else the link itself if it is on one of the app's own hosts
/// (the server's landing answers it). Never a link to anywhere else: a push or a link can
/// carry `https://evil.example/login`, and the app must not open it for the sender.
struct OpenInBrowser: DispatchObserver {
    let tables: any RouteTableSource

    func dispatched(_ result: DispatchResult) async {
        guard case .notFound(let notFound) = result.outcome, case .link(let link, let door) = result.intent, door != .inApp else { return }
        let table = await tables.currentTable()
        let hosts = table.manifest?.resolver.schema.hosts ?? []
        let ownPage = URL(string: link).flatMap { $0.scheme == "https" && hosts.contains($0.host?.lowercased() ?? "") ? $0 : nil }
        guard let destination = table.fallbackURL(for: notFound) ?? ownPage else { return }
        await UIApplication.shared.open(destination)
    }
}
// doc:end

// doc:begin deferred
/// The first launch's welcome screen. Its system paste control shows no prompt (the person
/// taps it); what it pastes opens its link when it is the hand-off the "Get the app" page
/// copied — on the app's hosts, under a day old, not pasted before. Anything else opens nothing.
@available(iOS 16, *)  // UIPasteControl
final class WelcomeViewController: UIViewController {
    let deferred: DeferredLink
    let dispatcher: RouteDispatcher

    init(dispatcher: RouteDispatcher, directory: URL) {
        self.dispatcher = dispatcher
        deferred = DeferredLink(directory: directory, hosts: ["storefront.example"])
        super.init(nibName: nil, bundle: nil)
        pasteConfiguration = UIPasteConfiguration(acceptableTypeIdentifiers: ["public.url", "public.plain-text"])
    }

    required init?(coder: NSCoder) { nil }  // made in code, never from a storyboard

    override func viewDidLoad() {
        super.viewDidLoad()
        let configuration = UIPasteControl.Configuration()
        configuration.displayMode = .iconAndLabel
        let paste = UIPasteControl(configuration: configuration)
        paste.target = self
        // Visible and of a size to tap: iOS refuses a paste from a control the person cannot see.
        paste.frame = CGRect(x: 24, y: 160, width: 240, height: 48)
        view.addSubview(paste)
    }

    override func paste(itemProviders: [NSItemProvider]) {
        for provider in itemProviders where provider.canLoadObject(ofClass: String.self) {
            _ = provider.loadObject(ofClass: String.self) { [deferred, dispatcher] text, _ in
                guard let text, let intent = deferred.intent(fromPasted: text) else { return }
                Task { _ = await dispatcher.dispatch(intent) }
            }
        }
    }
}
// doc:end
