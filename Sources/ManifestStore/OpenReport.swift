import CivilDate
import Foundation
import Rollout
import RouteEngine
import Synchronization
import SystemIO

/// What `open` found and repaired.
public struct OpenReport: Sendable {
    public var removedTemporaries: [String] = []
    public var truncatedAuditBytes = 0
    public var recoveredAuditEntries = 0
    /// Lines of the audit log read at start that were not JSON (skipped).
    public var damagedAuditLines = 0

    /// Nothing found: what opening a store on a database reports (a change and its audit entry are one transaction).
    public init() {}
}
