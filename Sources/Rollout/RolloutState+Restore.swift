import Foundation

extension RolloutState {
    /// A rollout as it was stored: the store reads its state back with this.
    public init(candidate: Int, stable: Int, steps: [RolloutStep], step: Int, stepStarted: Date, status: RolloutStatus,
                version: Int, findings: [GuardFinding]) {
        self.init(candidate: candidate, stable: stable, steps: steps, now: stepStarted)
        restore(step: step, stepStarted: stepStarted, status: status, version: version, findings: findings)
    }
}
