/// Who a resolution claim comes from, as the guard caps it: the install's source key for the
/// day (`client.source`, two words) or, for a client that sends none, its network alone.
public struct EvidenceSource: Hashable, Sendable {
    public var high: UInt64
    public var low: UInt64

    public init(high: UInt64, low: UInt64) {
        (self.high, self.low) = (high, low)
    }
}

/// What a rollout's guard counts, and how much of it one source may supply.
public struct EvidencePolicy: Hashable, Sendable {
    /// Resolutions counted from one install in one UTC day (its source key changes daily).
    public var perSource = 5
    /// Resolutions counted from one network (IPv4 /24, IPv6 /48) in one UTC day, per side
    /// (candidate, stable).
    public var perNetwork = 50
    /// Sources and networks tracked in one day; past them a new one is not evidence.
    public var maximumSources = 500_000
    public var maximumNetworks = 100_000
    /// An event more than this many seconds older than its arrival is not evidence.
    public var lateness = 600

    public init() {}
}

/// Why a claim was not counted as evidence (`GET /v1/rollout`'s `evidence.refused`).
public enum EvidenceRefusal: String, Hashable, Sendable, CaseIterable {
    /// The install already supplied `perSource` resolutions today.
    case perSource
    /// Its network already supplied `perNetwork` resolutions to that side today.
    case perNetwork
    /// The candidate claimed by an install whose cohort the step does not serve (or that
    /// sent none).
    case cohort
    /// An event older than the lateness window, or from before the rollout began.
    case late
    /// The day's table of sources or networks is full.
    case full
    /// A claim on a build no schema is registered for (or one that names no app version):
    /// not a build the fleet runs (`RolloutWatch.record`).
    case unregistered
}

/// One claim as the guard sees it: a side, a route on a build, how it ended, how many.
public struct EvidenceClaim: Hashable, Sendable {
    public var candidate: Bool
    public var route: String
    public var build: String
    /// `notFound`'s reason; nil for a resolution that did not fail.
    public var failure: String?
    public var count: Int
    /// The event's minute (since 1970).
    public var minute: Int

    public init(candidate: Bool, route: String, build: String, failure: String?, count: Int, minute: Int) {
        (self.candidate, self.route, self.build, self.failure, self.count, self.minute) = (candidate, route, build, failure, count, minute)
    }
}

/// The active rollout's evidence, kept apart from the shared telemetry table (so it never
/// folds into `other`) and capped per source: each install supplies at most `perSource`
/// resolutions a day and each network `perNetwork` a side, so no single source moves the
/// guard more than its share. Counts accumulate over the whole rollout (every step), by
/// side, route and build, with the distinct installs and networks behind them.
///
/// In memory: a restart begins the evidence again (the guard waits, never guesses).
/// - Complexity: `record` O(claims); memory O(sources and networks of one day + cells).
public struct GuardEvidence: Sendable {
    public let candidate: Int
    public let stable: Int
    public let policy: EvidencePolicy
    /// The first minute counted: the candidate's publish.
    public let startMinute: Int

    private var day = Int.min
    private var sources: [EvidenceSource: Int] = [:]
    /// Network → resolutions today on (candidate, stable).
    private var networks: [UInt64: (candidate: Int, stable: Int)] = [:]
    public private(set) var candidateCounts = GuardCounts()
    public private(set) var stableCounts = GuardCounts()
    /// The step the per-step figures are about, its capped candidate resolutions, and the
    /// installs (up to `GuardCounts.breadthCap`) that supplied them.
    public private(set) var step = 0
    public private(set) var stepResolutions = 0
    private var stepSources: Set<EvidenceSource> = []
    public var stepInstalls: Int { stepSources.count }
    /// The networks that supplied the step's candidate resolutions (up to `stepNetworkCap`):
    /// a step advances only when enough of them also report the stable side.
    public private(set) var stepNetworks: Set<UInt64> = []
    public static let stepNetworkCap = 4_096
    public private(set) var refused: [EvidenceRefusal: Int] = [:]
    public private(set) var counted = 0
    /// Looks made (each spends its own alpha), and what the last one saw.
    public private(set) var looks = 0
    public private(set) var lastLookResolutions = 0
    public private(set) var lastLookStep = -1

    public init(candidate: Int, stable: Int, startMinute: Int, policy: EvidencePolicy = EvidencePolicy()) {
        (self.candidate, self.stable, self.startMinute, self.policy) = (candidate, stable, startMinute, policy)
    }

    /// A new step: its resolutions and installs count from zero (the evidence stays).
    public mutating func begin(step: Int) {
        guard step != self.step else { return }
        self.step = step
        stepResolutions = 0
        stepSources = []
        stepNetworks = []
    }

    /// The next look's number when one is due, else nil: when the candidate's evidence has
    /// grown by `policy.lookGrowth` since the last look, or when the step's own minimum of
    /// resolutions is reached and the step has had no look yet (so every step is judged on
    /// its own data before it advances). Both sides need `policy.minimumResolutions` first.
    public mutating func nextLook(policy: GuardPolicy, stepMinimum: Int) -> Int? {
        let resolutions = candidateCounts.overall.total
        guard resolutions >= policy.minimumResolutions, stableCounts.overall.total >= policy.minimumResolutions else { return nil }
        let grown = looks == 0 || Double(resolutions) >= Double(lastLookResolutions) * policy.lookGrowth
        let stepReady = lastLookStep != step && stepResolutions >= stepMinimum && resolutions > lastLookResolutions
        guard grown || stepReady else { return nil }
        looks += 1
        lastLookResolutions = resolutions
        lastLookStep = step
        return looks
    }

    /// Counts `count` claims refused before they reached `record` (`unregistered`).
    public mutating func refuse(_ reason: EvidenceRefusal, count: Int) {
        guard count > 0 else { return }
        refused[reason, default: 0] += count
    }

    /// Counts `claims` from one batch as of `now` (seconds since 1970), from `source` (nil:
    /// the client sent no source key) on `network`, whose cohort is `cohort`, while the step
    /// serves cohorts below `percent`. Returns the resolutions counted.
    @discardableResult
    public mutating func record(_ claims: [EvidenceClaim], source: EvidenceSource?, network: UInt64, cohort: Int?,
                                percent: Int, now: Int) -> Int {
        let today = now >= 0 ? now / 86_400 : (now - 86_399) / 86_400
        if today != day {
            day = today
            sources = [:]
            networks = [:]
        }
        // A client without a source key stands for its network: one source per network.
        let key = source ?? EvidenceSource(high: 0, low: network)
        var total = 0
        for claim in claims {
            var left = claim.count
            guard claim.minute >= startMinute, claim.minute * 60 >= now - policy.lateness - 59 else {
                refused[.late, default: 0] += left
                continue
            }
            if claim.candidate, cohort.map({ $0 >= percent }) ?? true {
                refused[.cohort, default: 0] += left
                continue
            }
            var used = sources[key]
            if used == nil, sources.count >= policy.maximumSources { refused[.full, default: 0] += left; continue }
            var networkUse = networks[network]
            if networkUse == nil, networks.count >= policy.maximumNetworks { refused[.full, default: 0] += left; continue }
            let fromSource = min(left, policy.perSource - (used ?? 0))
            let networkSpent = claim.candidate ? (networkUse?.candidate ?? 0) : (networkUse?.stable ?? 0)
            let allowed = min(fromSource, policy.perNetwork - networkSpent)
            if allowed < left {
                refused[fromSource < left ? .perSource : .perNetwork, default: 0] += left - allowed
            }
            left = allowed
            guard left > 0 else { continue }
            used = (used ?? 0) + left
            sources[key] = used
            if claim.candidate { networkUse = (networkSpent + left, networkUse?.stable ?? 0) }
            else { networkUse = (networkUse?.candidate ?? 0, networkSpent + left) }
            networks[network] = networkUse
            let cell = GuardCounts.Cell(route: claim.route, build: claim.build)
            let contributor = GuardCounts.Contributor(source: key, network: network)
            if claim.candidate {
                candidateCounts.add(cell, count: left, failure: claim.failure, from: contributor)
                stepResolutions += left
                if stepSources.count < GuardCounts.breadthCap { stepSources.insert(key) }
                if stepNetworks.count < Self.stepNetworkCap { stepNetworks.insert(network) }
            } else {
                stableCounts.add(cell, count: left, failure: claim.failure, from: contributor)
            }
            total += left
        }
        counted += total
        return total
    }
}
