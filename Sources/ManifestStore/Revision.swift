import CivilDate
import Foundation
import Rollout
import RouteEngine
import Synchronization
import SystemIO

/// One published routes document: immutable, numbered, content-hashed. This is its
/// metadata only, what the store keeps of every revision; the document itself is
/// `ManifestStore.routes(of:)`, in memory for the revisions served and read from
/// `DIR/revisions/N` for the others.
public struct Revision: Hashable, Sendable {
    public let number: Int
    public let parent: Int?
    public let author: String
    public let time: Date
    public let message: String
    /// SHA-256 of the routes document, hex.
    public let sha256: String
    /// The routes document's size in bytes.
    public let bytes: Int
    /// For a rollback: the revision whose routes this republishes.
    public let restores: Int?
    /// Set when it was published as a rollout's candidate: the stable revision and the steps.
    public var rollout: RolloutStart? = nil
    /// Set when it was published over an active rollout, asked to supersede it: that candidate.
    public var supersedes: Int? = nil
    /// Set for a change of single routes (`ManifestStore.change`): the ids it put or deleted.
    /// A publish whose base is older is applied on top of such revisions when it left those
    /// routes as they were (`ManifestStore.rebased`).
    public var changedRoutes: [String]? = nil
    /// For a change of single routes: its action (`route.put`…) and the revision it was
    /// applied to (what was current then; nil for the first). A publish is rebased only over
    /// an unbroken chain of changes, each applied to the one before it.
    public var changeAction: String? = nil
    public var changedOn: Int? = nil
    /// Set when a publish was made from an older base and applied on top of the route
    /// changes since: that base.
    public var rebasedFrom: Int? = nil
}

/// How a candidate revision's rollout began: kept in the revision's own record, so that
/// storing the candidate and starting its rollout are one durable write.
public struct RolloutStart: Hashable, Sendable {
    public let stable: Int
    public let steps: [RolloutStep]

    public init(stable: Int, steps: [RolloutStep]) {
        self.stable = stable
        self.steps = steps
    }

    var json: JSONValue {
        ["stable": .int(stable), "steps": .array(steps.map { step in
            ["percent": .int(step.percent), "minimumDuration": .int(Int(step.minimumDuration)), "minimumResolutions": .int(step.minimumResolutions)]
        })]
    }

    static func from(_ json: JSONValue?) -> RolloutStart? {
        guard let json, let stable = json["stable"]?.intValue, let steps = json["steps"]?.arrayValue else { return nil }
        let parsed = steps.compactMap { step -> RolloutStep? in
            guard let percent = step["percent"]?.intValue, let duration = step["minimumDuration"]?.intValue,
                  let resolutions = step["minimumResolutions"]?.intValue else { return nil }
            return RolloutStep(percent: percent, minimumDuration: TimeInterval(duration), minimumResolutions: resolutions)
        }
        guard parsed.count == steps.count, RolloutState.validate(parsed) == nil else { return nil }
        return RolloutStart(stable: stable, steps: parsed)
    }
}
