import Foundation

/// A navigator that keeps its screens as a `NavigationState` and records every plan: the
/// simulator's, and a spy for an app's own tests. It checks the dispatcher's promise that
/// applies never overlap (`overlaps` counts any that did).
public actor RecordingNavigator: Navigator {
    public private(set) var current: NavigationState
    /// Every plan applied, in order.
    public private(set) var applied: [NavigationPlan] = []
    /// Applies that started while another was still running: 0 unless dispatch is broken.
    public private(set) var overlaps = 0
    private var applying = false
    /// How long each apply takes (an animation), so an overlap would have time to happen.
    private let applyDuration: UInt64

    public init(_ state: NavigationState = NavigationState(), applyNanoseconds: UInt64 = 0) {
        current = state
        applyDuration = applyNanoseconds
    }

    public var state: NavigationState { current }

    public func apply(_ plan: NavigationPlan) async {
        if applying { overlaps += 1 }
        applying = true
        if applyDuration > 0 { try? await Task.sleep(nanoseconds: applyDuration) } else { await Task.yield() }
        current.apply(plan)
        applied.append(plan)
        applying = false
    }

    /// Marks the screens of `destination` dirty (a form with unsaved input) or clean.
    public func setDirty(_ destination: String, _ dirty: Bool = true) {
        func mark(_ screens: [Screen]) -> [Screen] {
            screens.map { screen in
                var screen = screen
                if screen.destination == destination { screen.isDirty = dirty }
                return screen
            }
        }
        current.stacks = current.stacks.mapValues(mark)
        current.modals = current.modals.map { Modal($0.style, stack: mark($0.stack)) }
    }

    /// Replaces what is shown (a test's starting point).
    public func show(_ state: NavigationState) {
        current = state
    }
}
