import CivilDate
import Foundation
import RouteEngine
import SystemIO

extension DataDirectory {
    /// `DIR/audit.log`: one JSON object per line, appended with O_APPEND (so the daemon and
    /// `waymark token` may both append) and fdatasynced before the change is acknowledged.
    static let auditLog = "audit.log"

    func appendAudit(_ fields: [String: JSONValue], time: Date) throws(IOError) {
        var entry = fields
        entry["time"] = .string(Timestamp.format(time))
        try appendDurably(JSONValue.object(entry).serializedBytes() + [UInt8(ascii: "\n")], to: Self.auditLog)
    }
}
