import CivilDate
import HTTPCore
import RouteEngine
import Telemetry

/// The query string of the telemetry reads: range, step, filters and limit, checked.
enum TelemetryQuery {
    static let filterNames = TelemetryDimension.allCases.map(\.rawValue)

    /// The query string and what `counts` and `top` share: range, filters and limit.
    static func read(_ request: HTTPRequest, context: APIContext, allowed: Set<String>, defaultSpan: Int, defaultLimit: Int)
        throws(Refusal) -> (query: Query, countQuery: CountQuery) {
        let query = try APIResponse.query(request, malformed: "The query string has a malformed %-escape.")
        var countQuery = try range(query, limits: context.telemetry.options.limits, now: context.telemetry.options.clock(),
                                   allowed: allowed, defaultSpan: defaultSpan)
        countQuery.limit = try limit(query, default: defaultLimit)
        return (query, countQuery)
    }

    /// The range, filters and step.
    private static func range(_ query: Query, limits: TelemetryLimits, now: Int, allowed: Set<String>, defaultSpan: Int) throws(Refusal) -> CountQuery {
        let known = allowed.union(["from", "to", "step"]).union(filterNames)
        if let unknown = query.pairs.map(\.name).first(where: { !known.contains($0) }) {
            throw Refusal(.badRequest, "unknownParameter",
                "Unknown query parameter \"\(unknown)\"; use from, to, step, \(filterNames.joined(separator: ", ")) and \(allowed.sorted().joined(separator: ", ")).")
        }
        func time(_ name: String) throws(Refusal) -> Int? {
            guard var text = query[name] else { return nil }
            guard let seconds = text.withUTF8(Timestamp.parse) else {
                throw Refusal(.badRequest, "badParameter", "\(name) must be an RFC 3339 time such as 2026-11-21T10:00:00Z.")
            }
            return seconds
        }
        // The range is [from, to): by default it ends just after this second, so an event
        // stamped now is in it even when now starts a minute.
        let end = try time("to")
        let start = try time("from")
        let to = end ?? now + 1
        let from = start ?? to - defaultSpan
        guard from < to else { throw Refusal(.badRequest, "badParameter", "from must be before to.") }
        let minutesKept = now - limits.minuteRetention
        let step: Step
        switch query["step"] {
        case nil: step = from >= minutesKept ? .minute : .hour
        case "1m"?:
            guard from >= minutesKept - 60 else {
                throw Refusal(.badRequest, "badParameter",
                    "Per-minute counts are kept for \(limits.minuteRetention / 3_600) hours; use step=1h for older ranges.")
            }
            step = .minute
        case "1h"?: step = .hour
        case let other?: throw Refusal(.badRequest, "badParameter", "step must be 1m or 1h, not \"\(other)\".")
        }
        var result = CountQuery(from: from, to: to, step: step)
        guard result.points <= 10_000 else {
            throw Refusal(.badRequest, "badParameter", "The range holds \(result.points) steps; at most 10,000 (use step=1h or a shorter range).")
        }
        for dimension in TelemetryDimension.allCases {
            guard let value = query[dimension.rawValue] else { continue }
            guard Counts.isValid(value, for: dimension) else {
                throw Refusal(.badRequest, "badParameter", "\"\(value)\" is not a value \(dimension.rawValue) can have.")
            }
            result.filters[dimension] = value
        }
        return result
    }

    /// `route,outcome` as dimensions, each once.
    static func dimensions(_ text: String, parameter: String) throws(Refusal) -> [TelemetryDimension] {
        var dimensions: [TelemetryDimension] = []
        for name in text.split(separator: ",", omittingEmptySubsequences: false) {
            guard let dimension = TelemetryDimension(rawValue: String(name)) else {
                throw Refusal(.badRequest, "badParameter", "\(parameter) takes \(filterNames.joined(separator: ", ")); \"\(name)\" is none of them.")
            }
            if !dimensions.contains(dimension) { dimensions.append(dimension) }
        }
        return dimensions
    }

    private static func limit(_ query: Query, default value: Int) throws(Refusal) -> Int {
        guard let text = query["limit"] else { return value }
        guard let number = Int(text), (1...1_000).contains(number) else {
            throw Refusal(.badRequest, "badParameter", "limit must be a whole number from 1 to 1000.")
        }
        return number
    }

    static func filtersJSON(_ countQuery: CountQuery) -> JSONValue {
        .object(Dictionary(uniqueKeysWithValues: countQuery.filters.map { ($0.key.rawValue, JSONValue.string($0.value)) }))
    }
}
