import CivilDate
import Foundation
import Rollout
import RouteEngine
import Synchronization
import SystemIO

public enum PublishOutcome: Sendable {
    case published(Revision)
    /// The routes equal the current revision's (canonically): nothing was stored, and the
    /// current revision (and every manifest's ETag) stays as it is.
    case unchanged(Revision)
    /// The document fails validation; nothing was stored.
    case invalid(ValidationReport)
    /// `base` is not the current revision: someone else published first.
    case staleBase(current: Int?)
    case unknownRevision(Int)
    /// A rollout of this candidate is running or paused: it ends (completes, trips or is
    /// aborted) before anything else is published.
    case rolloutInProgress(candidate: Int)
    /// Asked to supersede the rollout of `candidate` with the stable revision's own routes:
    /// nothing would be published and the rollout would go on, so nothing is done — aborting
    /// it is what serves the stable routes to everyone.
    case stableOverRollout(candidate: Int)
}

public enum SchemaOutcome: Sendable {
    /// `replaced`: a schema for the same build was registered before and is replaced.
    case registered(StoredSchema, replaced: Bool)
    case invalid([ValidationProblem])
    /// The schema is for another app than this data directory serves.
    case wrongApp(expected: String)
    /// The body's platform/version disagree with the ones addressed.
    case keyMismatch(SchemaKey)
}
