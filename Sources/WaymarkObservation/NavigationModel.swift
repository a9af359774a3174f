import Observation
import RouteEngine
import WaymarkClient

/// The app's navigation as an observable value, for SwiftUI: it is the `Navigator` the
/// dispatcher drives, and what the views bind to — each tab's `NavigationStack(path:)` to
/// `$model[path: tab]`, `TabView(selection:)` to `$model.selectedTab`, `.sheet(item:)` to
/// `$model.sheet` and `.fullScreenCover(item:)` to `$model.fullScreenCover`. A plan is
/// carried out by `NavigationState.apply` (the reference), so what SwiftUI shows is what
/// the planner planned; what the user does (Back, a swipe) is written back through the
/// same bindings, so the next plan starts from what is shown.
@available(iOS 17, macOS 14, *)
@Observable
@MainActor
public final class NavigationModel: Navigator {
    /// Everything shown: each tab's stack (its root first), the modals, the selected tab.
    public private(set) var shown: NavigationState
    /// Plans applied so far (a view may animate on it).
    public private(set) var appliedPlans = 0

    /// `roots`: each tab's root screen (a `NavigationStack`'s root view), which no path holds.
    public init(selectedTab: String?, roots: [String: Screen]) {
        shown = NavigationState(selectedTab: selectedTab, stacks: roots.mapValues { [$0] })
    }

    // MARK: Navigator

    public var state: NavigationState { shown }

    public func apply(_ plan: NavigationPlan) async {
        var next = shown
        next.apply(plan)
        shown = next
        appliedPlans += 1
    }

    // MARK: What views bind to

    public var selectedTab: String? {
        get { shown.selectedTab }
        set { shown.selectedTab = newValue }
    }

    /// A tab's `NavigationStack` path: the screens pushed above its root. Setting it (Back,
    /// a swipe) keeps the root.
    public subscript(path tab: String) -> [Screen] {
        get { Array((shown.stacks[tab] ?? []).dropFirst()) }
        set {
            guard let root = shown.stacks[tab]?.first else { return }
            shown.stacks[tab] = [root] + newValue
        }
    }

    /// The bottom modal when it is a sheet; set to nil (swiped away), it and every modal
    /// above it are gone.
    public var sheet: Modal? {
        get { shown.modals.first.flatMap { $0.style == .sheet ? $0 : nil } }
        set { setBottomModal(newValue, style: .sheet) }
    }

    /// The bottom modal when it is a full-screen cover.
    public var fullScreenCover: Modal? {
        get { shown.modals.first.flatMap { $0.style == .fullScreen ? $0 : nil } }
        set { setBottomModal(newValue, style: .fullScreen) }
    }

    private func setBottomModal(_ modal: Modal?, style: Presentation) {
        guard let modal else {
            if shown.modals.first?.style == style { shown.modals = [] }
            return
        }
        shown.modals = [modal]
    }

    /// Marks a screen (by identity) as holding unsaved work, or not: the leave gate reads it.
    public func setDirty(_ screen: Screen, _ dirty: Bool = true) {
        for (tab, stack) in shown.stacks {
            shown.stacks[tab] = stack.map { $0 == screen ? Screen($0.destination, params: $0.params, isDirty: dirty) : $0 }
        }
        shown.modals = shown.modals.map { modal in
            Modal(modal.style, stack: modal.stack.map { $0 == screen ? Screen($0.destination, params: $0.params, isDirty: dirty) : $0 })
        }
    }
}
