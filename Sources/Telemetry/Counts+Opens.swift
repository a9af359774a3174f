/// One route's opens by one build in one hour (`Counts.opens`).
public struct RouteOpens: Hashable, Sendable {
    public var route: String
    public var platform: String
    public var appVersion: String
    /// The hour's start, seconds since 1970.
    public var hour: Int
    public var count: UInt64
}

extension Counts {
    /// The hour buckets `opens` and `unattributedOpens` read for `from`...`to` (both whole hours).
    public func openingWindow(from: Int, to: Int) -> CountsWindow {
        window(step: .hour, from: from, end: (CountQuery.floor(to, 3_600) + 1) * 3_600)
    }

    /// `CountsWindow.opens` on this value's own window (internal, as `query` is).
    func opens(from: Int, to: Int, routes: Set<String>) -> [RouteOpens] {
        openingWindow(from: from, to: to).opens(from: from, to: to, routes: routes)
    }

    /// `CountsWindow.unattributedOpens` on this value's own window (internal, as `query` is).
    func unattributedOpens(from: Int, to: Int) -> (unattributed: UInt64, total: UInt64) {
        openingWindow(from: from, to: to).unattributedOpens(from: from, to: to)
    }
}

extension CountsWindow {
    /// The resolutions that opened one of `routes` (outcome `proceed` or `gated`, entry not `bot`) in the hours
    /// from the one holding `from` to the one holding `to`, both whole (so an event in the
    /// second `to` names is read), per route, platform, app version and hour: one entry per such
    /// combination that has a count, so what it returns is bounded by the cells held.
    /// Routes no count names are skipped.
    /// - Complexity: O(cells in those hours).
    public func opens(from: Int, to: Int, routes: Set<String>) -> [RouteOpens] {
        let wanted = Set(routes.compactMap { value(of: $0, for: .route) }.filter { $0 > Interned.other })
        guard !wanted.isEmpty else { return [] }
        let keep = TelemetryDimension.route.mask | TelemetryDimension.platform.mask | TelemetryDimension.appVersion.mask
        let proceed = UInt64(Outcome.proceed.rawValue), gated = UInt64(Outcome.gated.rawValue), bot = UInt64(EntryPoint.bot.rawValue)
        var found: [RouteOpens] = []
        let first = CountQuery.floor(from, 3_600), end = CountQuery.floor(to, 3_600) + 1
        for hour in first..<max(first, end) {
            guard let bucket = buckets[Int32(clamping: hour)] else { continue }
            var tallies: [UInt64: UInt64] = [:]
            for (key, count) in bucket {
                let outcome = TelemetryDimension.outcome.value(of: key)
                guard outcome == proceed || outcome == gated, TelemetryDimension.entry.value(of: key) != bot, wanted.contains(TelemetryDimension.route.value(of: key)) else { continue }
                tallies[key & keep, default: 0] += count
            }
            for (key, count) in tallies {
                found.append(RouteOpens(route: name(of: TelemetryDimension.route.value(of: key), for: .route),
                                        platform: name(of: TelemetryDimension.platform.value(of: key), for: .platform),
                                        appVersion: name(of: TelemetryDimension.appVersion.value(of: key), for: .appVersion),
                                        hour: hour * 3_600, count: count))
            }
        }
        return found
    }

    /// The opens (`proceed` or `gated`) of the same hours that name no route a revision has:
    /// route `other` (a count past the cell cap folded, an id no revision ever had, a route
    /// past the route cap), against all opens of those hours. What a draft does to the first
    /// cannot be known, so a replay says how many there were.
    public func unattributedOpens(from: Int, to: Int) -> (unattributed: UInt64, total: UInt64) {
        let proceed = UInt64(Outcome.proceed.rawValue), gated = UInt64(Outcome.gated.rawValue), bot = UInt64(EntryPoint.bot.rawValue)
        var unattributed: UInt64 = 0, total: UInt64 = 0
        let first = CountQuery.floor(from, 3_600), end = CountQuery.floor(to, 3_600) + 1
        for hour in first..<max(first, end) {
            guard let bucket = buckets[Int32(clamping: hour)] else { continue }
            for (key, count) in bucket {
                let outcome = TelemetryDimension.outcome.value(of: key)
                guard outcome == proceed || outcome == gated, TelemetryDimension.entry.value(of: key) != bot else { continue }
                total += count
                if TelemetryDimension.route.value(of: key) == Interned.other { unattributed += count }
            }
        }
        return (unattributed, total)
    }
}
