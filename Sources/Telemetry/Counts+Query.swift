/// The resolution of a count series.
public enum Step: Int, Sendable {
    case minute = 60
    case hour = 3_600

    public var name: String { self == .minute ? "1m" : "1h" }
}

/// `GET /v1/telemetry/counts` and `/top`, as values.
public struct CountQuery: Sendable {
    /// Seconds since 1970; the range is [from, to), widened to whole steps.
    public var from: Int
    public var to: Int
    public var step: Step
    /// TelemetryDimension → the one name it must have.
    public var filters: [TelemetryDimension: String] = [:]
    public var groupBy: [TelemetryDimension] = []
    /// The most groups returned, largest first; the rest are counted in `omittedGroups`.
    public var limit = 100
    /// Whether each group carries its series (top lists do not).
    public var series = true
    /// The most series values an answer holds (groups kept × buckets): past it no series is
    /// made and the result says how many it would have had (`CountResult.seriesValues`), so
    /// the endpoint refuses it rather than build it. An answer's memory is bounded by this,
    /// not by the range and the limit (10,000 buckets × 1,000 groups).
    public var maximumSeriesValues = CountQuery.seriesValueLimit
    public static let seriesValueLimit = 500_000

    public init(from: Int, to: Int, step: Step) {
        self.from = from
        self.to = to
        self.step = step
    }

    /// Buckets in the range.
    public var points: Int {
        let first = Self.floor(from, step.rawValue), end = Self.floor(to + step.rawValue - 1, step.rawValue)
        return max(0, end - first)
    }

    static func floor(_ value: Int, _ unit: Int) -> Int { value >= 0 ? value / unit : (value - unit + 1) / unit }
}

public struct CountGroup: Sendable {
    /// The group's value of each `groupBy` dimension, in that order.
    public var key: [(dimension: TelemetryDimension, name: String)]
    public var total: UInt64 = 0
    /// Resolutions that ended in `notFound`.
    public var failures: UInt64 = 0
    /// Per bucket, when series were asked for.
    public var counts: [UInt64] = []
    public var failureCounts: [UInt64] = []

    public var failureRate: Double { total == 0 ? 0 : Double(failures) / Double(total) }
}

public struct CountResult: Sendable {
    /// The start of each bucket, seconds since 1970.
    public var bucketStarts: [Int]
    public var groups: [CountGroup]
    public var total: UInt64
    public var failures: UInt64
    public var omittedGroups: Int
    /// Groups kept × buckets: the series values the answer holds, or would have held when
    /// past `CountQuery.maximumSeriesValues` (`tooLarge`; then no group has a series).
    public var seriesValues = 0
    public var tooLarge: Bool = false
    /// Within the limit, but `admit` did not let its series be made (no group has one).
    public var notAdmitted: Bool = false

    public var failureRate: Double { total == 0 ? 0 : Double(failures) / Double(total) }
}

/// The buckets of one resolution (minutes or hours) in a range, with the names that read
/// their keys: what a query or a replay of opens reads, taken from `Counts` under the
/// store's lock in time proportional to the buckets held (`Counts.window`), no cell copied
/// (each table is shared until the store writes it again, and the write copies only that
/// one). The query then runs on the window with the lock released, so however many cells
/// it scans, ingestion waits for none of it.
public struct CountsWindow: Sendable {
    let names: CountNames
    /// Hour (or minute) since 1970 → key → count, for the window's range only.
    let buckets: [Int32: CountTable]

    /// The packed value of a dimension's name, or nil if no count can have it.
    public func value(of name: String, for dimension: TelemetryDimension) -> UInt64? { names.value(of: name, for: dimension) }

    /// The name of a packed value; "none" for an absent route, reason or precondition.
    public func name(of value: UInt64, for dimension: TelemetryDimension) -> String { names.name(of: value, for: dimension) }
}

extension Counts {
    /// The `step` buckets from the one holding `from` to the one before `end` (both in
    /// seconds, `end` exclusive), and the names.
    /// - Complexity: O(buckets held at that step), whatever the range.
    public func window(step: Step, from: Int, end: Int) -> CountsWindow {
        let unit = step.rawValue
        let first = CountQuery.floor(from, unit), last = CountQuery.floor(end + unit - 1, unit)
        let held = step == .minute ? minutes : hours
        var buckets: [Int32: CountTable] = [:]
        for (index, table) in held where Int(index) >= first && Int(index) < last { buckets[index] = table }
        return CountsWindow(names: names, buckets: buckets)
    }

    /// What `query` reads: the window of its range at its step.
    public func window(for query: CountQuery) -> CountsWindow {
        window(step: query.step, from: query.from, end: query.to)
    }

    /// `CountsWindow.query` on this value's own window. Internal: a reader of the store takes
    /// the window under its lock and queries it after (`TelemetryStore.read`), never this.
    func query(_ query: CountQuery) -> CountResult {
        window(for: query).query(query)
    }
}

extension CountsWindow {
    /// Counts in the query's range matching every filter, grouped. Two passes: totals per
    /// group, then series for the `limit` largest only, so memory stays bounded by the limit.
    /// `admit`: asked with the series values before they are made (a memory budget); when
    /// it says no, the result has totals only (`notAdmitted`).
    public func query(_ query: CountQuery, admit: (Int) -> Bool = { _ in true }) -> CountResult {
        let unit = query.step.rawValue
        let first = CountQuery.floor(query.from, unit)
        let starts = (0..<query.points).map { (first + $0) * unit }
        var result = CountResult(bucketStarts: starts, groups: [], total: 0, failures: 0, omittedGroups: 0)
        var mask: UInt64 = 0, wanted: UInt64 = 0
        for (dimension, name) in query.filters {
            // A name no count has (yet) matches nothing.
            guard let value = value(of: name, for: dimension) else { return result }
            mask |= dimension.mask
            wanted |= value << dimension.field.shift
        }
        // Bots are no one's opens: counted only when the entry is asked for by name.
        let bots = query.filters[.entry] == nil ? UInt64(EntryPoint.bot.rawValue) << TelemetryDimension.entry.field.shift : UInt64.max
        let entryMask = TelemetryDimension.entry.mask
        let groupMask = query.groupBy.reduce(UInt64(0)) { $0 | $1.mask }
        let failureMask = TelemetryDimension.outcome.mask
        let failure = UInt64(Outcome.notFound.rawValue) << TelemetryDimension.outcome.field.shift

        var totals: [UInt64: (total: UInt64, failures: UInt64)] = [:]
        for index in 0..<starts.count {
            guard let bucket = buckets[Int32(clamping: first + index)] else { continue }
            for (key, count) in bucket where key & mask == wanted && key & entryMask != bots {
                let failed = key & failureMask == failure ? count : 0
                totals[key & groupMask, default: (0, 0)].total += count
                totals[key & groupMask, default: (0, 0)].failures += failed
                result.total += count
                result.failures += failed
            }
        }
        let ranked = totals.sorted { $0.value.total != $1.value.total ? $0.value.total > $1.value.total : $0.key < $1.key }
        let kept = ranked.prefix(max(0, query.limit))
        result.omittedGroups = ranked.count - kept.count
        if query.series {
            result.seriesValues = kept.count * starts.count
            guard result.seriesValues <= query.maximumSeriesValues else {
                result.tooLarge = true
                return result
            }
            guard admit(result.seriesValues) else {
                result.notAdmitted = true
                return result
            }
        }
        var position: [UInt64: Int] = [:]
        for (index, entry) in kept.enumerated() {
            position[entry.key] = index
            var group = CountGroup(key: query.groupBy.map { ($0, name(of: $0.value(of: entry.key), for: $0)) })
            group.total = entry.value.total
            group.failures = entry.value.failures
            if query.series {
                group.counts = Array(repeating: 0, count: starts.count)
                group.failureCounts = Array(repeating: 0, count: starts.count)
            }
            result.groups.append(group)
        }
        guard query.series, !kept.isEmpty else { return result }
        for index in 0..<starts.count {
            guard let bucket = buckets[Int32(clamping: first + index)] else { continue }
            for (key, count) in bucket where key & mask == wanted && key & entryMask != bots {
                guard let slot = position[key & groupMask] else { continue }
                result.groups[slot].counts[index] += count
                if key & failureMask == failure { result.groups[slot].failureCounts[index] += count }
            }
        }
        return result
    }
}
