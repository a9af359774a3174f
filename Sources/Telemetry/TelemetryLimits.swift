import RouteEngine
import CivilDate

/// Limits and retention of telemetry; configuration, with these defaults.
public struct TelemetryLimits: Sendable {
    /// Events in one batch; more is refused whole (413).
    public var maximumEvents = 1_000
    /// Bytes of one batch; more is refused whole (413).
    public var maximumBatchBytes = 1 << 20
    /// The largest `count` one event may carry (one install in one minute); more refuses
    /// the batch whole (400 `countTooLarge`).
    public var maximumCount = 1_000
    /// The most a batch's counts may add up to; more refuses it whole (400 `batchTooLarge`).
    public var maximumBatchCount = 10_000
    /// The largest `client.dropped`; more refuses the batch whole (400 `droppedTooLarge`).
    public var maximumDropped = 100_000
    /// How far in the future an event's `ts` may be, in seconds (clock skew).
    public var maximumClockSkew = 300
    /// How long per-minute counts are kept, in seconds.
    public var minuteRetention = 48 * 3_600
    /// How long per-hour counts are kept, in seconds; older events are rejected.
    public var hourRetention = 90 * 86_400
    /// Distinct route ids, preconditions and app versions counted by name; past the cap
    /// (and for names the server never had) they are counted as `other`.
    public var maximumRoutes = 10_000
    public var maximumPreconditions = 60
    public var maximumAppVersions = 1_000
    /// The longest route id, destination, precondition or app version, in bytes.
    public var maximumNameBytes = 128
    /// Cells (one combination of dimensions in one minute or hour bucket) counted with
    /// their own names; past it a new combination is folded (`Counts.fold`) into at most
    /// 210 cells per bucket. About 35 bytes each: the default is ~35 MB.
    public var maximumCells = 1_000_000
    /// Unknown-link shapes held by the heavy-hitters sketch (`Counts.shapes`).
    public var maximumShapes = 1_000
    /// The longest `shape` an event may carry, in bytes (normalised again on arrival).
    public var maximumShapeBytes = 512
    /// How long the ids of accepted batches are remembered, in seconds, and how many at
    /// most (`BatchIDs`): a repeat within both is answered and not counted.
    public var batchWindow = 168 * 3_600
    public var maximumBatchIDs = 250_000
    /// Seconds an event may be older than its batch's arrival and still count in the
    /// per-minute cells read as "now"; an older one counts in its hour only, and may take a
    /// new cell only while fewer than half of `maximumCells` are held (so a flood of old
    /// events cannot fold the present into `other`).
    public var lateness = 600

    public init() {}
}
