import CivilDate
import Foundation

/// Why a link resolved to nothing. A value, never a crash.
public enum NotFoundReason: String, Hashable, Sendable, CaseIterable {
    /// Not an acceptable link for this app: bad syntax or encoding, or an undeclared scheme, host or port.
    case malformed
    /// A link of this app that no route matches (or whose route is not live yet).
    case unknownRoute
    /// A route matched, but a param is missing or does not fit its type.
    case validationFailed
    /// A route matched, but its window has ended.
    case expired
}

/// What the resolver needs to know about the user and the moment: injected, never read from the device.
/// The instant is kept as whole microseconds since 1970, the precision windows compare at.
public struct ResolutionContext: Hashable, Sendable {
    public var satisfied: Set<String>
    /// Microseconds since 1970: what windows are compared with, as integers.
    public var nowMicroseconds: Int

    public var now: Date {
        get { Timestamp.date(microseconds: nowMicroseconds) }
        set { nowMicroseconds = Timestamp.microseconds(of: newValue) }
    }

    public init(satisfied: Set<String> = [], now: Date = Date()) {
        self.init(satisfied: satisfied, nowMicroseconds: Timestamp.microseconds(of: now))
    }

    public init(satisfied: Set<String> = [], nowMicroseconds: Int) {
        self.satisfied = satisfied
        self.nowMicroseconds = nowMicroseconds
    }
}

/// An in-app navigation request by destination and typed params.
public struct DestinationRequest: Hashable, Sendable {
    public var destination: String
    public var params: [String: ParamValue]

    public init(destination: String, params: [String: ParamValue] = [:]) {
        self.destination = destination
        self.params = params
    }
}

/// What was asked, kept by a gate so it can be resolved again once the precondition holds.
public enum ResolutionRequest: Hashable, Sendable {
    case url(String)
    case destination(DestinationRequest)
}

/// Resolved and allowed: everything the app needs to build its navigation stack.
public struct Proceed: Hashable, Sendable {
    /// The route that matched; nil for an in-app request.
    public var routeID: String?
    public var destination: String
    public var params: [String: ParamValue]
    /// Root first: `["home", "orders", "orderDetail"]`.
    public var path: [String]
    public var tab: String?
    public var presentation: Presentation

    /// For an app's own tests (a navigator or handler fed a made-up resolution); the
    /// resolver makes the real ones.
    public init(routeID: String?, destination: String, params: [String: ParamValue] = [:], path: [String],
                tab: String? = nil, presentation: Presentation = .push) {
        self.routeID = routeID
        self.destination = destination
        self.params = params
        self.path = path
        self.tab = tab
        self.presentation = presentation
    }
}

/// Resolved, but a precondition must be satisfied first.
public struct Gate: Hashable, Sendable {
    public var precondition: String
    public var routeID: String?
    public var destination: String
    /// The original request, to resolve again afterwards.
    public var resume: ResolutionRequest

    /// For an app's own tests (a gate handler fed a made-up gate); the resolver makes the real ones.
    public init(precondition: String, routeID: String?, destination: String, resume: ResolutionRequest) {
        self.precondition = precondition
        self.routeID = routeID
        self.destination = destination
        self.resume = resume
    }
}

/// Resolved to nothing, and why.
public struct NotFound: Hashable, Sendable {
    public var reason: NotFoundReason
    /// The route that matched, when one did (validation failures, expiry).
    public var routeID: String?
    /// A sentence for people previewing links; not part of the resolution's identity for clients.
    public var detail: String?

    public init(_ reason: NotFoundReason, routeID: String? = nil, detail: String? = nil) {
        self.reason = reason
        self.routeID = routeID
        self.detail = detail
    }
}

/// The typed decision a link or request resolves to.
public enum Resolution: Hashable, Sendable {
    case proceed(Proceed)
    case gated(Gate)
    case notFound(NotFound)

    /// Whether the link opens something: it resolved to a route that is live (`proceed`, or
    /// `gated` behind a precondition), not `notFound`.
    public var isLive: Bool {
        if case .notFound = self { return false }
        return true
    }

    public var outcome: String {
        switch self {
        case .proceed: "proceed"
        case .gated: "gated"
        case .notFound: "notFound"
        }
    }

    /// `{"outcome", "route", "destination", "params", "path", "tab", "presentation", "precondition", "reason"}`,
    /// with the fields that apply.
    public var json: JSONValue {
        var object: [String: JSONValue] = ["outcome": .string(outcome)]
        switch self {
        case .proceed(let proceed):
            if let routeID = proceed.routeID { object["route"] = .string(routeID) }
            object["destination"] = .string(proceed.destination)
            object["params"] = .object(proceed.params.mapValues(\.json))
            object["path"] = .array(proceed.path.map(JSONValue.string))
            if let tab = proceed.tab { object["tab"] = .string(tab) }
            object["presentation"] = .string(proceed.presentation.rawValue)
        case .gated(let gate):
            if let routeID = gate.routeID { object["route"] = .string(routeID) }
            object["destination"] = .string(gate.destination)
            object["precondition"] = .string(gate.precondition)
        case .notFound(let notFound):
            object["reason"] = .string(notFound.reason.rawValue)
            if let routeID = notFound.routeID { object["route"] = .string(routeID) }
            if let detail = notFound.detail { object["detail"] = .string(detail) }
        }
        return .object(object)
    }
}
