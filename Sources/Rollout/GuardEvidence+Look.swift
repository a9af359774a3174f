/// A look at a rollout from its evidence: what the guard says, and what the rollout may do
/// with it. The primary's ticker (`RolloutWatch`) and the guard's simulation (`GuardBench`)
/// both decide through this, so what is measured is what runs.
public struct GuardLook: Sendable {
    /// The verdict to show: a judgement when a look was due, else the last one (if made in
    /// this step), else why the rollout waits.
    public var verdict: GuardVerdict
    /// What the rollout acts on: the verdict, except that a healthy one advances a step only
    /// when the step's own evidence comes from `minimumInstalls` installs.
    public var decision: GuardVerdict
    /// The look's number when one was made now (it spent its alpha).
    public var number: Int?
}

extension GuardEvidence {
    /// Judges `rollout` if a look is due (`nextLook`), else keeps `previous` when it was made
    /// during this step.
    public mutating func look(at rollout: RolloutState, policy: GuardPolicy, previous: GuardVerdict?) -> GuardLook {
        begin(step: rollout.step)
        let stepMinimum = rollout.steps[rollout.step].minimumResolutions
        let number = nextLook(policy: policy, stepMinimum: stepMinimum)
        let verdict: GuardVerdict
        if let number {
            verdict = RolloutGuard.judge(candidate: candidateCounts, stable: stableCounts, policy: policy, look: number)
        } else if let previous, looks > 0, lastLookStep == rollout.step {
            verdict = previous
        } else if candidateCounts.overall.total < policy.minimumResolutions || stableCounts.overall.total < policy.minimumResolutions {
            verdict = .waiting("The candidate has \(candidateCounts.overall.total) resolutions and the stable revision "
                + "\(stableCounts.overall.total) counted as evidence; at least \(policy.minimumResolutions) each are needed to judge.")
        } else {
            verdict = .waiting("This step has \(stepResolutions) of the candidate's resolutions counted as evidence; it is judged at \(stepMinimum).")
        }
        var decision = verdict
        if case .healthy = verdict {
            if stepInstalls < policy.minimumInstalls {
                decision = .waiting("This step's evidence comes from \(stepInstalls) install(s); at least \(policy.minimumInstalls) are needed to advance.")
            } else {
                // The step's own evidence needs the breadth of a trip, from networks the stable side vouches for.
                let vouched = GuardCounts.shared(candidate: GuardCounts(), stable: stableCounts, policy: policy).stable.networks
                let honest = stepNetworks.lazy.filter { vouched.contains($0) }.count
                if honest < policy.minimumNetworks {
                    decision = .waiting("This step's evidence comes from \(honest) network(s) that also report the stable revision; "
                        + "at least \(policy.minimumNetworks) are needed to advance.")
                }
            }
        }
        return GuardLook(verdict: verdict, decision: decision, number: number)
    }
}
