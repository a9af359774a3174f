import Foundation

/// One step of a rollout: the share of cohorts that get the candidate, and what the step
/// must see before the next one: a minimum time and a minimum number of the candidate's
/// resolutions (the guard must also have judged it healthy).
public struct RolloutStep: Hashable, Sendable {
    /// 1…100: cohorts `0..<percent` get the candidate.
    public var percent: Int
    public var minimumDuration: TimeInterval
    public var minimumResolutions: Int

    public init(percent: Int, minimumDuration: TimeInterval, minimumResolutions: Int) {
        self.percent = percent
        self.minimumDuration = minimumDuration
        self.minimumResolutions = minimumResolutions
    }

    /// 1 % → 10 % → 50 % → 100 %, each at least 10 minutes and 200 candidate resolutions.
    public static let defaults = [1, 10, 50, 100].map { RolloutStep(percent: $0, minimumDuration: 600, minimumResolutions: 200) }
}

/// Where a rollout stands.
public enum RolloutStatus: String, Hashable, Sendable, CaseIterable {
    /// Steps advance when the guard is satisfied.
    case running
    /// Held at its step by a person; the split stays, nothing advances.
    case paused
    /// The guard found a regression: every cohort is back on the stable revision.
    case tripped
    /// Stopped by a person: every cohort is back on the stable revision.
    case aborted
    /// Reached 100 % healthy (or promoted): the candidate is the current revision.
    case completed
    /// Another revision was published over it, asked for explicitly (`"supersede": true`):
    /// the candidate never became current; the newer revision is.
    case superseded

    /// Whether the rollout still splits cohorts (and so still decides anything).
    public var isActive: Bool { self == .running || self == .paused }
}

/// What a look at the rollout did; the caller makes each durable before it is acknowledged.
public enum RolloutChange: Hashable, Sendable {
    /// The next step began.
    case advanced(toStep: Int, percent: Int)
    /// Healthy at 100 %: make the candidate the current revision.
    case completed
    /// The guard tripped: every cohort back to stable.
    case tripped([GuardFinding])
}

/// Why a control was refused.
public enum RolloutRefusal: Error, Hashable, Sendable, CustomStringConvertible {
    /// The action does not apply in this status (`resume` a running rollout, anything on an ended one).
    case notApplicable(action: String, status: RolloutStatus)
    /// `If-Match` named another version: someone acted in between.
    case staleVersion(current: Int)
    /// No rollout is in progress (none was started, or another revision was published since).
    case noRollout

    public var description: String {
        switch self {
        case .notApplicable(let action, let status): "A \(status.rawValue) rollout cannot \(action)."
        case .staleVersion(let current): "The rollout changed since (it is at version \(current) now); read it again."
        case .noRollout: "There is no rollout to act on."
        }
    }
}

/// A staged rollout of one candidate revision over the stable one, as a value: which
/// cohorts get which revision, and the transitions — a look with the guard's verdict,
/// and people's controls — each returning what changed. Pure: the clock and the verdict
/// are given; the store makes each change durable.
public struct RolloutState: Hashable, Sendable {
    public let candidate: Int
    public let stable: Int
    public let steps: [RolloutStep]
    public private(set) var step: Int
    public private(set) var stepStarted: Date
    public private(set) var status: RolloutStatus
    /// Grows with every change; `If-Match` names it so two people cannot race.
    public private(set) var version: Int
    /// What tripped it, when it did.
    public private(set) var findings: [GuardFinding]

    public init(candidate: Int, stable: Int, steps: [RolloutStep] = RolloutStep.defaults, now: Date) {
        self.candidate = candidate
        self.stable = stable
        self.steps = steps
        step = 0
        stepStarted = now
        status = .running
        version = 1
        findings = []
    }

    mutating func restore(step: Int, stepStarted: Date, status: RolloutStatus, version: Int, findings: [GuardFinding]) {
        self.step = min(max(step, 0), steps.count - 1)
        self.stepStarted = stepStarted
        self.status = status
        self.version = version
        self.findings = findings
    }

    /// Steps must grow strictly, within 1…100, and end at 100.
    public static func validate(_ steps: [RolloutStep]) -> String? {
        guard !steps.isEmpty else { return "A rollout needs at least one step." }
        guard steps.last!.percent == 100 else { return "The last step must be 100%." }
        for (index, step) in steps.enumerated() {
            guard (1...100).contains(step.percent) else { return "Step \(index + 1)'s percent must be 1 to 100, not \(step.percent)." }
            guard step.minimumDuration >= 0, step.minimumResolutions >= 0 else { return "Step \(index + 1)'s minimums cannot be negative." }
            if index > 0, step.percent <= steps[index - 1].percent {
                return "Steps must grow: step \(index + 1) (\(step.percent)%) is not above step \(index) (\(steps[index - 1].percent)%)."
            }
        }
        return nil
    }

    public var percent: Int { steps[step].percent }

    /// The revision a cohort (0…99) gets; no cohort gets the stable revision while the
    /// rollout runs. Cohorts below the step's percent get the candidate, so a cohort that
    /// had it keeps it as steps grow.
    public func revision(forCohort cohort: Int?) -> Int {
        switch status {
        case .completed: return candidate
        case .tripped, .aborted, .superseded: return stable
        case .running, .paused:
            guard let cohort else { return stable }
            return cohort < percent ? candidate : stable
        }
    }

    /// A look at a running rollout: `candidateResolutions` counted since the step began, and
    /// the guard's verdict on the step's window. Trips at once on a finding; advances only
    /// when the step's time and resolutions are reached and the guard says healthy; else nothing.
    public mutating func evaluate(now: Date, candidateResolutions: Int, verdict: GuardVerdict) -> RolloutChange? {
        guard status == .running else { return nil }
        if case .tripped(let found) = verdict {
            status = .tripped
            findings = found
            version += 1
            return .tripped(found)
        }
        guard case .healthy = verdict, now.timeIntervalSince(stepStarted) >= steps[step].minimumDuration,
              candidateResolutions >= steps[step].minimumResolutions else { return nil }
        return advance(now: now)
    }

    private mutating func advance(now: Date) -> RolloutChange {
        version += 1
        if step == steps.count - 1 {
            status = .completed
            return .completed
        }
        step += 1
        stepStarted = now
        return .advanced(toStep: step, percent: percent)
    }

    // MARK: Controls (each takes the version it was read at)

    private mutating func check(_ action: String, version expected: Int, allowed: Set<RolloutStatus>) throws(RolloutRefusal) {
        guard expected == version else { throw .staleVersion(current: version) }
        guard allowed.contains(status) else { throw .notApplicable(action: action, status: status) }
    }

    public mutating func pause(version expected: Int) throws(RolloutRefusal) {
        try check("pause", version: expected, allowed: [.running])
        status = .paused
        version += 1
    }

    public mutating func resume(version expected: Int, now: Date) throws(RolloutRefusal) {
        try check("resume", version: expected, allowed: [.paused])
        status = .running
        stepStarted = now  // the step's minimums count again from here
        version += 1
    }

    /// The next step now, without waiting for its minimums (the guard still watches).
    public mutating func advanceNow(version expected: Int, now: Date) throws(RolloutRefusal) -> RolloutChange {
        try check("advance", version: expected, allowed: [.running, .paused])
        if status == .paused { status = .running }
        return advance(now: now)
    }

    /// Straight to 100 % and done: the candidate becomes current.
    public mutating func promote(version expected: Int) throws(RolloutRefusal) -> RolloutChange {
        try check("promote", version: expected, allowed: [.running, .paused])
        step = steps.count - 1
        status = .completed
        version += 1
        return .completed
    }

    /// Ended by a newer publish that asked to supersede it (no version: the publish's own
    /// base check is the race guard).
    public mutating func supersede() {
        guard status.isActive else { return }
        status = .superseded
        version += 1
    }

    /// Back to stable for every cohort, for good.
    public mutating func abort(version expected: Int) throws(RolloutRefusal) {
        try check("abort", version: expected, allowed: [.running, .paused])
        status = .aborted
        version += 1
    }
}
