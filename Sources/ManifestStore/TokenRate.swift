import CivilDate
import Dispatch
import Foundation
import RouteEngine
import Synchronization
import SystemIO

/// How many requests a token may make, per scope of the routes it calls: a token bucket
/// refilled at `perSecond` and holding `burst` (five seconds' worth, at least 10).
public enum TokenRate: Hashable, Sendable, CustomStringConvertible {
    case unlimited
    case perSecond(Int)

    public static let maximum = 1_000_000

    public var burst: Int {
        switch self {
        case .unlimited: .max
        case .perSecond(let rate): max(rate * 5, 10)
        }
    }

    public var description: String {
        switch self {
        case .unlimited: "unlimited"
        case .perSecond(let rate): "\(rate)/s"
        }
    }

    /// `N` (requests per second, 1 to 1,000,000) or `unlimited`.
    public init?(_ text: String) {
        if text == "unlimited" { self = .unlimited; return }
        guard let rate = Int(text), (1...Self.maximum).contains(rate) else { return nil }
        self = .perSecond(rate)
    }

    /// The rate of a token that does not set one, for requests needing `scope`: the people
    /// and pipelines that change things get a rate no person or CI job reaches; the fleet's
    /// own scopes are set for a fleet (every install shares its token); `admin`,
    /// `manifest:read` (a cached answer, the cheapest request there is) and `routes:read`
    /// (held to its share of the reads lane, `docs/api.md`) are unlimited.
    public static func `default`(for scope: Scope) -> TokenRate {
        switch scope {
        case .admin, .manifestRead, .routesRead: .unlimited
        case .routesPublish, .schemasWrite: .perSecond(10)
        case .telemetryRead: .perSecond(50)
        case .replication: .perSecond(200)
        case .telemetryWrite: .perSecond(2_000)
        }
    }
}

extension TokenRate {
    var json: JSONValue {
        switch self {
        case .unlimited: .string("unlimited")
        case .perSecond(let rate): .int(rate)
        }
    }

    init?(json: JSONValue) {
        if json.stringValue == "unlimited" { self = .unlimited; return }
        guard let rate = json.intValue, (1...Self.maximum).contains(rate) else { return nil }
        self = .perSecond(rate)
    }
}
