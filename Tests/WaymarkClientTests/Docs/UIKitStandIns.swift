import Foundation

// Stand-ins for the few UIKit and UserNotifications types docs/client.md's snippets use, with
// their names and signatures, so that the snippets compile and run here, headless on Linux.
// Transitions finish at once (their completions are called), and a presentation is recorded
// where UIKit would show it. Not a UIKit: only what the snippets touch — but UIKit's rules
// where a snippet could break them: a view controller's designated initializers are
// `init(nibName:bundle:)` and the required `init?(coder:)` (a subclass cannot call
// `super.init()`), UIKit makes a scene delegate with `init()`, and a presentation UIKit
// refuses (the presenter is already presenting) never calls its completion.

@MainActor class UIResponder {
    /// What the responder takes from a paste (`UIPasteConfigurationSupporting`, which UIResponder adopts).
    var pasteConfiguration: UIPasteConfiguration?
    init() {}
    func paste(itemProviders: [NSItemProvider]) {}
}

@MainActor class UIView {
    private(set) var subviews: [UIView] = []
    var frame = CGRect.zero
    init() {}
    func addSubview(_ view: UIView) { subviews.append(view) }
}

final class UIPasteConfiguration: Sendable {
    let acceptableTypeIdentifiers: [String]
    init(acceptableTypeIdentifiers: [String]) { self.acceptableTypeIdentifiers = acceptableTypeIdentifiers }
}

/// The system paste control (iOS 16): no prompt, as the person taps it; the system hands the
/// pasteboard's items to its `target`'s `paste(itemProviders:)`. `tapped(holding:)` stands for the tap.
@MainActor final class UIPasteControl: UIView {
    final class Configuration {
        enum DisplayMode { case iconAndLabel, iconOnly, labelOnly }
        var displayMode = DisplayMode.iconAndLabel
        init() {}
    }
    weak var target: UIResponder?
    let configuration: Configuration
    init(configuration: Configuration) {
        self.configuration = configuration
        super.init()
    }
    func tapped(holding text: String) { target?.paste(itemProviders: [NSItemProvider(object: text as NSString)]) }
}

#if !canImport(Darwin)
/// Foundation's item provider on Apple platforms; a string's, here.
final class NSItemProvider: @unchecked Sendable {
    private let text: String?
    init(object: NSString) { text = String(object) }
    func canLoadObject(ofClass: String.Type) -> Bool { text != nil }
    func loadObject(ofClass: String.Type, completionHandler: @escaping @Sendable (String?, (any Error)?) -> Void) -> Progress {
        completionHandler(text, nil)
        return Progress(totalUnitCount: 1)
    }
}
#endif

@MainActor class UIViewController: UIResponder {
    var title: String?
    lazy var view = UIView()
    var modalPresentationStyle = UIModalPresentationStyle.automatic
    private(set) var presentedViewController: UIViewController?
    private(set) weak var presentingViewController: UIViewController?
    /// Presentations refused, as UIKit logs them ("…which is already presenting…").
    static var refusedPresentations = 0

    init(nibName: String?, bundle: Bundle?) {
        super.init()
    }

    required init?(coder: NSCoder) {
        super.init()
    }

    func viewDidLoad() {}

    /// `UIViewController()`: a convenience, which a subclass's own initializer cannot call as `super.init()`.
    convenience override init() {
        self.init(nibName: nil, bundle: nil)
    }

    func present(_ controller: UIViewController, animated: Bool, completion: (@MainActor () -> Void)? = nil) {
        guard presentedViewController == nil, controller.presentingViewController == nil else {
            Self.refusedPresentations += 1  // UIKit shows nothing and never calls the completion
            return
        }
        presentedViewController = controller
        controller.presentingViewController = self
        completion?()
    }

    /// Dismisses what this controller presented (and everything above it).
    func dismiss(animated: Bool, completion: (@MainActor () -> Void)? = nil) {
        if let presented = presentedViewController {
            presented.presentingViewController = nil
            presentedViewController = nil
        } else if let presenting = presentingViewController {
            presenting.presentedViewController = nil
            presentingViewController = nil
        }
        completion?()
    }
}

enum UIModalPresentationStyle { case automatic, pageSheet, fullScreen }

@MainActor final class UINavigationController: UIViewController {
    private(set) var viewControllers: [UIViewController] = []

    init(rootViewController: UIViewController) {
        viewControllers = [rootViewController]
        super.init(nibName: nil, bundle: nil)
    }

    required init?(coder: NSCoder) {
        super.init(coder: coder)
    }

    func setViewControllers(_ controllers: [UIViewController], animated: Bool) {
        viewControllers = controllers
    }

    @discardableResult
    func popToViewController(_ controller: UIViewController, animated: Bool) -> [UIViewController]? {
        guard let index = viewControllers.firstIndex(where: { $0 === controller }) else { return nil }
        let popped = Array(viewControllers[(index + 1)...])
        viewControllers.removeSubrange((index + 1)...)
        return popped
    }
}

@MainActor final class UITabBarController: UIViewController {
    var viewControllers: [UIViewController]?
    var selectedViewController: UIViewController?
}

/// Core Animation's transaction: its completion block runs once the transitions committed in it have ended.
@MainActor enum CATransaction {
    private static var completion: (@MainActor () -> Void)?
    static func begin() { completion = nil }
    static func setCompletionBlock(_ block: (@MainActor () -> Void)?) { completion = block }
    static func commit() {
        let block = completion
        completion = nil
        block?()
    }
}

@MainActor class UIScene: UIResponder {
    final class ConnectionOptions {
        let userActivities: Set<NSUserActivity>
        let urlContexts: Set<UIOpenURLContext>
        init(userActivities: Set<NSUserActivity> = [], urlContexts: Set<UIOpenURLContext> = []) {
            self.userActivities = userActivities
            self.urlContexts = urlContexts
        }
    }
}

@MainActor final class UIWindowScene: UIScene {}
@MainActor final class UISceneSession {}
/// UIKit makes the scene delegate itself, from the class the Info.plist names, with `init()`.
@MainActor protocol UIWindowSceneDelegate: AnyObject {
    init()
}

final class UIOpenURLContext: Hashable, Sendable {
    let url: URL
    init(url: URL) { self.url = url }
    static func == (lhs: UIOpenURLContext, rhs: UIOpenURLContext) -> Bool { lhs === rhs }
    func hash(into hasher: inout Hasher) { hasher.combine(ObjectIdentifier(self)) }
}

let NSUserActivityTypeBrowsingWeb = "NSUserActivityTypeBrowsingWeb"

final class NSUserActivity: Hashable, @unchecked Sendable {
    let activityType: String
    var webpageURL: URL?
    init(activityType: String) { self.activityType = activityType }
    static func == (lhs: NSUserActivity, rhs: NSUserActivity) -> Bool { lhs === rhs }
    func hash(into hasher: inout Hasher) { hasher.combine(ObjectIdentifier(self)) }
}

/// The app object: where `open(_:)` hands a URL to the system (the browser, here recorded).
@MainActor final class UIApplication {
    static let shared = UIApplication()
    private(set) var opened: [URL] = []
    func open(_ url: URL) { opened.append(url) }
}

/// The app delegate's protocol: what the push snippet's `AppDelegate` adopts.
@MainActor protocol UIApplicationDelegate: AnyObject {}
@MainActor protocol UNUserNotificationCenterDelegate: AnyObject {}

final class UNNotificationContent: Sendable {
    nonisolated(unsafe) let userInfo: [AnyHashable: Any]
    init(userInfo: [AnyHashable: Any]) { self.userInfo = userInfo }
}
final class UNNotificationRequest: Sendable {
    let content: UNNotificationContent
    init(content: UNNotificationContent) { self.content = content }
}
final class UNNotification: Sendable {
    let request: UNNotificationRequest
    init(request: UNNotificationRequest) { self.request = request }
}
final class UNNotificationResponse: Sendable {
    let notification: UNNotification
    init(userInfo: [AnyHashable: Any]) { notification = UNNotification(request: UNNotificationRequest(content: UNNotificationContent(userInfo: userInfo))) }
}
final class UNUserNotificationCenter: Sendable {}
