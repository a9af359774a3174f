import RouteEngine

/// The app's screens, as the dispatcher sees them. The app implements it with UIKit or
/// SwiftUI; the library never does. `apply` is awaited: the next plan is not made until
/// it returns, so it may animate and await presentations — for `applyTimeout` at most, or
/// until `cancel()`; the next apply then waits up to 2 s more for the abandoned one.
public protocol Navigator: Sendable {
    /// What the app shows now, with each screen's dirty flag.
    var state: NavigationState { get async }
    /// Carry out the operations in order.
    func apply(_ plan: NavigationPlan) async
}

/// Satisfies a precondition the engine gated on: shows the login screen, asks for a
/// payment method… `true` only once the app's session says so — a context read right
/// after must see it (commit the session before answering, or the dispatcher reports a
/// gate loop). `false` when the user cancelled: the intent is dropped, never resumed.
public protocol GateHandler: Sendable {
    func satisfy(_ precondition: String, for gate: Gate) async -> Bool
    /// The intent `satisfy` was asked for ended without its answer (`PromptEnding`): close
    /// the login screen. `satisfy`'s task is cancelled too; its late answer is ignored.
    func close(_ gate: Gate, because ending: PromptEnding) async
    /// A link configured as an auth callback (`DispatcherConfiguration.authCallbackPrefixes`)
    /// arrived while `satisfy` runs for `gate`: finish the sign-in with it (commit the
    /// session), then answer `satisfy`.
    func received(callback link: String, for gate: Gate) async
}

extension GateHandler {
    public func close(_ gate: Gate, because ending: PromptEnding) async {}
    public func received(callback link: String, for gate: Gate) async {}
}

/// Why the dispatcher stopped waiting for a handler's answer.
public enum PromptEnding: String, Hashable, Sendable {
    /// It took longer than the configured timeout.
    case timedOut
    /// `cancel()`, or the caller's task was cancelled.
    case cancelled
    /// A newer external link arrived (`DispatcherConfiguration.supersedesPrompts`).
    case superseded
}

/// The user's state as the engine needs it, read fresh for every resolution.
public protocol ContextProvider: Sendable {
    func context() async -> ResolutionContext
}

/// What to do with screens holding unsaved work that a plan would remove.
public enum LeaveDecision: String, Hashable, Sendable {
    /// Throw the work away and navigate.
    case discard
    /// Stay; the intent ends `leaveCancelled`.
    case cancel
    /// Save (the dispatcher calls `save`), then navigate; a failed save stays.
    case saveThenContinue
}

/// Asks the user about unsaved work before a plan removes it.
public protocol LeaveHandler: Sendable {
    func decide(leaving dirty: [Screen], for plan: NavigationPlan) async -> LeaveDecision
    /// Saves the screens' work; `false` if it could not (the plan is then not applied).
    func save(_ dirty: [Screen]) async -> Bool
    /// The intent ended while `decide` was asking (`PromptEnding`): close the prompt.
    func close(because ending: PromptEnding) async
}

extension LeaveHandler {
    public func close(because ending: PromptEnding) async {}
}

/// Receives every intent's one result (the telemetry reporter is one).
public protocol DispatchObserver: Sendable {
    func dispatched(_ result: DispatchResult) async
}
