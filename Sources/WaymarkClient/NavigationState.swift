import RouteEngine

/// One screen the app shows: which destination, with which params, and whether it holds
/// work the user has not saved (the leave gate reads it). Its identity (`==`, `hash`) is
/// the destination and params alone: a screen whose form becomes dirty is the same screen,
/// so it can be an element of a SwiftUI `NavigationStack` path.
public struct Screen: Hashable, Sendable, Identifiable, CustomStringConvertible {
    public var destination: String
    public var params: [String: ParamValue]
    /// Set by the app (a form with unsaved input); the library only reads it.
    public var isDirty: Bool

    public init(_ destination: String, params: [String: ParamValue] = [:], isDirty: Bool = false) {
        self.destination = destination
        self.params = params
        self.isDirty = isDirty
    }

    /// The same screen: destination and params equal (dirtiness is not identity).
    public func isSameScreen(as other: Screen) -> Bool {
        destination == other.destination && params == other.params
    }

    public static func == (lhs: Screen, rhs: Screen) -> Bool { lhs.isSameScreen(as: rhs) }

    public func hash(into hasher: inout Hasher) {
        hasher.combine(destination)
        hasher.combine(params)
    }

    /// Its identity: the screen itself, compared without `isDirty`.
    public var id: Screen { self }

    public var description: String {
        let shown = params.keys.sorted().map { "\($0)=\(params[$0]!)" }.joined(separator: ",")
        return (shown.isEmpty ? destination : "\(destination)(\(shown))") + (isDirty ? "*" : "")
    }
}

/// A presented container on top of the tabs: a sheet or full-screen cover with its own stack.
/// `Identifiable` by its style and screens (without their dirtiness), so `.sheet(item:)`
/// keeps a sheet up while its form changes, and presents again when its screens do.
public struct Modal: Hashable, Sendable, Identifiable, CustomStringConvertible {
    /// `.sheet` or `.fullScreen`.
    public var style: Presentation
    /// Its screens, the presented one first.
    public var stack: [Screen]

    public init(_ style: Presentation, stack: [Screen]) {
        self.style = style
        self.stack = stack
    }

    /// Same style and the same screens (by destination and params).
    public func isSameModal(as other: Modal) -> Bool {
        style == other.style && stack.count == other.stack.count
            && zip(stack, other.stack).allSatisfy { $0.isSameScreen(as: $1) }
    }

    public var id: Modal { self }

    public var description: String { "\(style.rawValue)[\(stack.map(\.description).joined(separator: " > "))]" }
}

/// What the app shows now, as the app's `Navigator` reports it.
public struct NavigationState: Hashable, Sendable {
    /// The stack of an app (or destination) without tabs.
    public static let mainStack = ""

    /// nil for an app without tabs.
    public var selectedTab: String?
    /// Each tab's stack, root first; `mainStack` for an app without tabs.
    public var stacks: [String: [Screen]]
    /// Presented on top of the selected tab, bottom first.
    public var modals: [Modal]

    public init(selectedTab: String? = nil, stacks: [String: [Screen]] = [:], modals: [Modal] = []) {
        self.selectedTab = selectedTab
        self.stacks = stacks
        self.modals = modals
    }

    /// Every screen shown or kept in a back stack, with where it is.
    public var allScreens: [Screen] {
        stacks.keys.sorted().flatMap { stacks[$0]! } + modals.flatMap(\.stack)
    }
}

/// Where a navigation came from; it decides what happens to a stack that does not hold the target.
public enum NavigationSource: String, Hashable, Sendable {
    /// A link from outside (universal link, custom scheme, push): the stack is reset to the
    /// target's canonical ancestry, so Back goes where the manifest says, not where the user was.
    case external
    /// A typed request from inside the app: what the user built stays where it agrees with the target.
    case inApp
}

/// Where a `proceed` resolution takes the app: the tab, the pushed run, then the modals.
public struct NavigationTarget: Hashable, Sendable {
    /// The tab whose stack holds `base`; nil for a destination without a tab (the selected
    /// tab's stack, or `mainStack` in an app without tabs).
    public var tab: String?
    /// The pushed screens, root first, up to the first sheet or full-screen step.
    public var base: [Screen]
    /// Each sheet or full-screen step starts a modal; push steps after it go in its stack.
    public var modals: [Modal]

    public init(tab: String?, base: [Screen], modals: [Modal] = []) {
        self.tab = tab
        self.base = base
        self.modals = modals
    }

    /// The target of a resolution: `schema.steps(for:)` split at modal presentations.
    public init(_ proceed: Proceed, schema: Schema) {
        self.init(tab: proceed.tab, steps: schema.steps(for: proceed))
    }

    /// Splits `steps` (root first) into the pushed run and the modal chain: the run starts at
    /// the last `tab` step (a tab's root; `home` above `orders` in the path belongs to
    /// another tab) and ends before the first `sheet` or `fullScreen` step.
    public init(tab: String?, steps: [PathStep]) {
        var base: [Screen] = []
        var modals: [Modal] = []
        for step in steps {
            let screen = Screen(step.destination, params: step.params)
            switch step.presentation {
            case .sheet, .fullScreen: modals.append(Modal(step.presentation, stack: [screen]))
            case .tab:
                // A tab's root starts the stack: what was above it belongs to another tab.
                base = [screen]
                modals = []
            case .push:
                if modals.isEmpty { base.append(screen) } else { modals[modals.count - 1].stack.append(screen) }
            }
        }
        self.init(tab: tab, base: base, modals: modals)
    }
}
