import CivilDate
import Dispatch
import Foundation
import RouteEngine
import Synchronization
import SystemIO

/// What a bearer token may do. `admin` may do everything.
public enum Scope: String, CaseIterable, Hashable, Sendable, Comparable {
    /// A phone's: its build's manifest. The app's token ships in every binary, so it opens
    /// nothing a phone does not need.
    case manifestRead = "manifest:read"
    /// Internal reads: revisions and their diffs, schemas, the rollout, schedules, QR codes,
    /// resolving a link (dashboards, the console, tools).
    case routesRead = "routes:read"
    case routesPublish = "routes:publish"
    case schemasWrite = "schemas:write"
    case telemetryWrite = "telemetry:write"
    case telemetryRead = "telemetry:read"
    /// A follower's: read the primary's revisions, schemas and token hashes, forward counts.
    case replication
    case admin

    public static func < (a: Scope, b: Scope) -> Bool { a.rawValue < b.rawValue }

    /// Its bit in `TokenRecord`'s scope mask: a request's check is a mask test, not a
    /// lookup hashing the scope's name.
    var bit: UInt8 {
        switch self {
        case .manifestRead: 1
        case .routesPublish: 2
        case .schemasWrite: 4
        case .telemetryWrite: 8
        case .telemetryRead: 16
        case .replication: 32
        case .admin: 64
        case .routesRead: 128
        }
    }

    /// What holding this scope also allows: `admin` everything; whoever may change routes
    /// or schemas may read what they change (a publisher needs the current revision as base).
    public var implied: Set<Scope> {
        switch self {
        case .admin: Set(Scope.allCases)
        case .routesPublish, .schemasWrite: [self, .manifestRead, .routesRead]
        default: [self]
        }
    }
}
