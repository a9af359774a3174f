import Foundation
import RouteEngine

/// One line of a telemetry batch, as `POST /v1/telemetry` takes it: how resolutions of one
/// kind ended in one minute, with how many there were. Never the link.
public struct TelemetryEvent: Hashable, Sendable {
    /// The client it is posted under: events of different builds or revisions go in different batches.
    public struct Client: Hashable, Sendable {
        public var platform: String
        public var appVersion: String
        public var revision: Int
    }

    public var client: Client
    /// The start of the minute it happened in, seconds since 1970.
    public var minute: Int
    public var entry: Door
    /// `proceed`, `gated` or `notFound`.
    public var outcome: String
    public var reason: NotFoundReason?
    public var route: String?
    public var destination: String?
    public var precondition: String?
    /// An unknown link's shape (`LinkShape`: ids, e-mail addresses and tokens replaced by
    /// `:param`, query values dropped), when the app opts in; never the link.
    public var shape: String?

    /// The event a dispatch result counts as; nil for intents that never reached the
    /// engine (dropped, superseded) — they were not resolutions. `shapes`: a link that
    /// resolved `notFound(unknownRoute)` carries its shape (computed here, on the device).
    public init?(_ result: DispatchResult, build: AppBuild, shapes: Bool = false) {
        guard let resolution = result.resolution else { return nil }
        client = Client(platform: build.platform, appVersion: build.version, revision: result.revision)
        minute = Int(result.time.timeIntervalSince1970 / 60) * 60
        entry = result.intent.door
        outcome = resolution.outcome
        switch resolution {
        case .proceed(let proceed):
            route = proceed.routeID
            destination = proceed.destination
        case .gated(let gate):
            route = gate.routeID
            destination = gate.destination
            precondition = gate.precondition
        case .notFound(let notFound):
            reason = notFound.reason
            route = notFound.routeID
            if shapes, notFound.reason == .unknownRoute, case .link(let link, _) = result.intent {
                // The dispatcher's shape keeps its table's words; a result made elsewhere keeps none.
                let made = result.unknownLinkShape ?? LinkShape(link: link, vocabulary: []).description
                shape = String(made.utf8.prefix(Self.maximumShapeBytes)) ?? nil
            }
        }
    }

    /// The longest shape the server takes.
    static let maximumShapeBytes = 512

    init(client: Client, minute: Int, entry: Door, outcome: String, reason: NotFoundReason?, route: String?,
         destination: String?, precondition: String?, shape: String? = nil) {
        self.client = client
        self.minute = minute
        self.entry = entry
        self.outcome = outcome
        self.reason = reason
        self.route = route
        self.destination = destination
        self.precondition = precondition
        self.shape = shape
    }

    /// The event as the server takes it, with its count.
    func json(count: Int) -> JSONValue {
        var object: [String: JSONValue] = [
            "ts": .string(Self.timestamp(minute)), "entry": .string(entry.rawValue), "outcome": .string(outcome), "count": .int(count),
        ]
        if let reason { object["reason"] = .string(reason.rawValue) }
        if let route { object["route"] = .string(route) }
        if let destination { object["destination"] = .string(destination) }
        if let precondition { object["precondition"] = .string(precondition) }
        if let shape { object["shape"] = .string(shape) }
        return .object(object)
    }

    /// A line of the side journal, written without file protection: the event without its
    /// shape (derived from a link, so kept only where the files are protected).
    func lockedJournalJSON(count: Int) -> JSONValue {
        var event = self
        event.shape = nil
        return event.journalJSON(count: count)
    }

    /// The journal's line: the event, its client and a count.
    func journalJSON(count: Int) -> JSONValue {
        guard case .object(var object) = json(count: count) else { return .null }
        object["platform"] = .string(client.platform)
        object["appVersion"] = .string(client.appVersion)
        object["revision"] = .int(client.revision)
        object["minute"] = .int(minute)
        return .object(object)
    }

    /// Back from a journal line; nil for a line that is not one (a torn tail).
    static func fromJournal(_ json: JSONValue) -> (event: TelemetryEvent, count: Int)? {
        guard let platform = json["platform"]?.stringValue, let appVersion = json["appVersion"]?.stringValue,
              let revision = json["revision"]?.intValue, let minute = json["minute"]?.intValue,
              let entry = json["entry"]?.stringValue.flatMap(Door.init(rawValue:)), let outcome = json["outcome"]?.stringValue,
              let count = json["count"]?.intValue, count > 0 else { return nil }
        let reason = json["reason"]?.stringValue.flatMap(NotFoundReason.init(rawValue:))
        let event = TelemetryEvent(client: Client(platform: platform, appVersion: appVersion, revision: revision), minute: minute,
                                   entry: entry, outcome: outcome, reason: reason, route: json["route"]?.stringValue,
                                   destination: json["destination"]?.stringValue, precondition: json["precondition"]?.stringValue,
                                   shape: json["shape"]?.stringValue)
        return (event, count)
    }

    /// RFC 3339 in UTC, whole seconds: `2026-11-24T10:05:00Z`. A format style, a value:
    /// a third of a microsecond, where making an `ISO8601DateFormatter` per event cost 86 µs.
    static func timestamp(_ seconds: Int) -> String {
        Date(timeIntervalSince1970: TimeInterval(seconds)).formatted(rfc3339)
    }

    private static let rfc3339 = Date.ISO8601FormatStyle(timeZone: TimeZone(identifier: "UTC")!)
}
