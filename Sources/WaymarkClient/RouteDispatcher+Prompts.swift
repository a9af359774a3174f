import Foundation
import RouteEngine

/// The dispatcher's handler to whom a task belongs: a dispatch made from inside a gate or
/// leave handler (that task and the tasks it starts) is queued, never awaited.
enum HandlerScope {
    @TaskLocal static var dispatcher: ObjectIdentifier?
}

/// What a prompt's handler said.
enum PromptAnswer: Sendable {
    case gate(Bool)
    case leave(LeaveDecision)
    case saved(Bool)
    /// The navigator's apply returned.
    case applied
}

/// How a prompt ended: the handler's answer, or the dispatcher's own ending of it.
enum PromptEnd: Sendable {
    case answered(PromptAnswer)
    case timedOut
    case interrupted(DispatchOutcome)
}

/// One handler call (or the navigator's apply) in progress, raced against its timeout and
/// any interruption; whichever comes first ends it, once. Touched only on the dispatcher's
/// actor (hence unchecked).
final class Prompt: @unchecked Sendable {
    /// The gate it satisfies (nil for the leave prompt and the apply): where an auth callback goes.
    let gate: Gate?
    /// A prompt waits for the user, and a newer link may supersede it; an apply is the
    /// navigation under way, which only `cancel()` or its timeout ends.
    let isApply: Bool
    var continuation: CheckedContinuation<PromptEnd, Never>?
    var handler: Task<Void, Never>?
    var timer: Task<Void, Never>?

    init(gate: Gate?, isApply: Bool = false) {
        self.gate = gate
        self.isApply = isApply
    }

    /// The first ending wins; the handler's task is cancelled when it is not the answer.
    func end(_ ending: PromptEnd) {
        guard let continuation else { return }
        self.continuation = nil
        timer?.cancel()
        if case .answered = ending {} else { handler?.cancel() }
        continuation.resume(returning: ending)
    }
}

extension RouteDispatcher {
    /// Ends the running intent as `cancelled`: at its prompt or its apply at once (the apply's
    /// task is cancelled and no longer awaited: the navigator decides what a half-done
    /// navigation shows), else at its next step. False when nothing runs.
    @discardableResult
    public func cancel() -> Bool {
        guard let current, current.result == nil else { return false }
        interrupt(current, .cancelled)
        return true
    }

    /// Ends `pending` as `outcome`: at once if it waits, at its prompt or next step if it runs.
    func interrupt(_ pending: Pending, _ outcome: DispatchOutcome) {
        guard pending.result == nil else { return }
        if let index = waiting.firstIndex(where: { $0 === pending }) {
            waiting.remove(at: index)
            finish(pending, outcome)
        } else if pending.interruption == nil {
            // Running (or about to be queued: a cancellation can arrive first): it stops at its next step.
            pending.interruption = outcome
            if current === pending { prompt?.end(.interrupted(outcome)) }
        }
    }

    /// Why `pending` must stop now, if it must: interrupted, or its caller's task cancelled
    /// (when it runs in that task).
    func interruption(of pending: Pending) -> DispatchOutcome? {
        if let interruption = pending.interruption { return interruption }
        guard pending.runsInCallerTask, Task.isCancelled else { return nil }
        pending.interruption = .cancelled
        return .cancelled
    }

    /// Asks a handler, for at most `timeout` seconds; the handler runs in its own task, marked
    /// as serving this dispatcher (`HandlerScope`), and is cancelled if the prompt ends otherwise.
    func ask(_ pending: Pending, gate: Gate?, isApply: Bool = false, timeout: TimeInterval?,
             _ body: @escaping @Sendable () async -> PromptAnswer) async -> PromptEnd {
        if let interruption = interruption(of: pending) { return .interrupted(interruption) }
        let prompt = Prompt(gate: gate, isApply: isApply)
        self.prompt = prompt
        let marker = ObjectIdentifier(self)
        // The caller's task cancelled while the prompt is up (it runs in that task) ends it too.
        let ending = await withTaskCancellationHandler {
            await withCheckedContinuation { continuation in
                prompt.continuation = continuation
                prompt.handler = Task {
                    let answer = await HandlerScope.$dispatcher.withValue(marker) { await body() }
                    self.settle(prompt, .answered(answer))
                }
                if let timeout {
                    prompt.timer = Task {
                        await Sleep.seconds(timeout)
                        if !Task.isCancelled { self.settle(prompt, .timedOut) }
                    }
                }
            }
        } onCancel: {
            Task { await self.interrupt(pending, .cancelled) }
        }
        if self.prompt === prompt { self.prompt = nil }
        if isApply, case .answered = ending {} else if isApply { lingeringApply = prompt.handler }
        return ending
    }

    /// How long the dispatcher waits for a handler's `close` or an observer (a dismissal UIKit
    /// refuses never completes), and for an abandoned apply before the next one.
    static let handlerBound: TimeInterval = 2

    /// Runs `body` for at most `handlerBound` seconds; past it, on without it (it is not cancelled).
    static func bounded(_ body: @escaping @Sendable () async -> Void) async {
        _ = await BoundedWait.value(within: handlerBound, body)
    }

    private func settle(_ prompt: Prompt, _ ending: PromptEnd) {
        prompt.end(ending)
    }

    /// The leave gate, then the apply.
    func navigate(_ pending: Pending, to target: NavigationTarget, source: NavigationSource) async -> DispatchOutcome {
        var plan = NavigationPlanner.plan(from: await navigator.state, to: target, source: source)
        var answered: [Screen] = []
        for round in 0...Self.leaveRounds {
            if let interruption = interruption(of: pending) { return interruption }
            let dirty = plan.leaving.filter { $0.isDirty && !answered.contains($0) }
            guard !dirty.isEmpty else { return plan.isEmpty ? .navigated(plan) : await apply(pending, plan) }
            guard round < Self.leaveRounds, let leaveHandler else { return .leaveCancelled(dirty: dirty) }
            let currentPlan = plan
            let decision: LeaveDecision
            switch await ask(pending, gate: nil, timeout: configuration.leaveTimeout, { .leave(await leaveHandler.decide(leaving: dirty, for: currentPlan)) }) {
            case .answered(.leave(let answer)): decision = answer
            case .answered: return .leaveCancelled(dirty: dirty)
            case let ending: return await Self.ended(leaveHandler, ending, dirty: dirty)
            }
            switch decision {
            case .cancel: return .leaveCancelled(dirty: dirty)
            case .discard: answered += dirty
            case .saveThenContinue:
                switch await ask(pending, gate: nil, timeout: configuration.leaveTimeout, { .saved(await leaveHandler.save(dirty)) }) {
                case .answered(.saved(true)): answered += dirty
                case .answered: return .leaveCancelled(dirty: dirty)
                // The "Saving…" sheet is the handler's: told to close, as for its decision.
                case let ending: return await Self.ended(leaveHandler, ending, dirty: dirty)
                }
            }
            // The user may have done something while asked: plan again from what is shown now.
            plan = NavigationPlanner.plan(from: await navigator.state, to: target, source: source)
        }
        fatalError("unreachable: the last round returns")
    }

    /// The navigator applies `plan`, for at most `applyTimeout`: raced like a prompt (its own
    /// task, marked as a handler's, so a dispatch from inside `apply` is queued, not awaited),
    /// but never superseded — only `cancel()` or the timeout ends the wait. The apply's task is
    /// cancelled then; whatever it still does, the next plan is made from `navigator.state`.
    private func apply(_ pending: Pending, _ plan: NavigationPlan) async -> DispatchOutcome {
        if let lingering = lingeringApply {
            lingeringApply = nil
            await Self.bounded { await lingering.value }
        }
        let navigator = navigator
        switch await ask(pending, gate: nil, isApply: true, timeout: configuration.applyTimeout, { await navigator.apply(plan); return .applied }) {
        case .answered: return .navigated(plan)
        case .timedOut: return .applyTimedOut(plan)
        case .interrupted(let outcome): return outcome
        }
    }

    /// A leave prompt (the decision or the save) the dispatcher ended: the handler is told to
    /// close, and how the intent ends.
    private static func ended(_ leaveHandler: any LeaveHandler, _ ending: PromptEnd, dirty: [Screen]) async -> DispatchOutcome {
        switch ending {
        case .timedOut:
            await bounded { await leaveHandler.close(because: .timedOut) }
            return .leaveTimedOut(dirty: dirty)
        case .interrupted(let outcome):
            await bounded { await leaveHandler.close(because: outcome == .superseded ? .superseded : .cancelled) }
            return outcome
        case .answered:
            return .leaveCancelled(dirty: dirty)
        }
    }

    /// Times the leave handler is asked for one intent (new dirty screens may appear while it asks).
    static let leaveRounds = 3
}

extension RouteDispatcher {
    /// The log message a result makes: none for a navigation; never the link (`Intent`'s
    /// description is its door and length).
    static func message(for result: DispatchResult) -> ClientLogMessage? {
        let level: ClientLogMessage.Level
        switch result.outcome {
        case .navigated, .queuedFromHandler: return nil
        case .notFound, .gateCancelled, .leaveCancelled, .superseded, .cancelled, .handedToGate: level = .info
        case .dropped, .gateTimedOut, .leaveTimedOut, .applyTimedOut: level = .warning
        case .gateLoop: level = .error
        }
        return ClientLogMessage(level, "dispatcher", "Intent \(result.sequence) (\(result.intent)) ended \(result.outcome.name).")
    }
}
