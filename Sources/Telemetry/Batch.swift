import RouteEngine
import CivilDate

/// One accepted event, reduced to what is counted. Names are slots: 0 none, 1 other,
/// n ≥ 2 the batch's `routes[n - 2]` / `preconditions[n - 2]`.
public struct Tally: Hashable, Sendable {
    public var minute: Int32
    public var entry: UInt8
    public var outcome: UInt8
    public var reason: UInt8
    public var route: UInt16
    public var precondition: UInt16
    public var count: UInt32

    public init(minute: Int32, entry: UInt8, outcome: UInt8, reason: UInt8, route: UInt16, precondition: UInt16, count: UInt32) {
        (self.minute, self.entry, self.outcome, self.reason) = (minute, entry, outcome, reason)
        (self.route, self.precondition, self.count) = (route, precondition, count)
    }
}

/// An unknown link's shape (`LinkShape`, already normalised) seen `count` times in
/// `minute` through `entry`: reported by a client that opts in, or by link landing.
public struct ShapeTally: Hashable, Sendable {
    public var minute: Int32
    public var entry: UInt8
    public var shape: [UInt8]
    public var count: UInt32
    /// Who it came from: a hash of the install's source key or of its network (0: not known).
    public var source: UInt32

    public init(minute: Int32, entry: UInt8, shape: [UInt8], count: UInt32, source: UInt32 = 0) {
        (self.minute, self.entry, self.shape, self.count, self.source) = (minute, entry, shape, count, source)
    }
}

public struct Rejection: Hashable, Sendable {
    public var index: Int
    public var error: String
}

/// A validated batch: its client, the events accepted (as tallies) and those rejected.
public struct Batch: Sendable {
    public var platform: Platform = .ios
    /// The app version, or nil when no schema has it (`other`).
    public var appVersion: [UInt8]?
    /// The manifest revision the client had, or 0 when no such revision exists (`other`).
    public var revision: UInt32 = 0
    public var routes: [[UInt8]] = []
    public var preconditions: [[UInt8]] = []
    public var tallies: [Tally] = []
    /// Shapes of unknown links, counted in `Counts.shapes` (not by dimension).
    public var shapes: [ShapeTally] = []
    public var rejected: [Rejection] = []
    /// Resolutions the client dropped before it could send them (its storage bound), as it
    /// reports them (`client.dropped`); counted in `/metrics`, not stored with the batch.
    public var droppedByClient: UInt32 = 0
    /// The batch's id (`batch`): a repeat of an accepted one is answered and not counted.
    public var id: HexID?
    /// The install's source key for the day (`client.source`), for the guard's caps.
    public var source: HexID?
    /// The install's cohort (`client.cohort`, 0…99).
    public var cohort: UInt8?
    /// The minute the store accepted it (set by `TelemetryStore.submit`, kept in its frame
    /// with the id): when the id is forgotten.
    public var acceptedMinute: Int32 = 0

    public init() {}
}
