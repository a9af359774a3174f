import CivilDate
import Foundation
import Rollout
import RouteEngine

/// A publish set for a time: validated when scheduled, validated again when it fires
/// against the schemas of that moment, and published only if its base is still the
/// current revision. `DIR/schedules/NNNNNNNN`, one record each, replaced as its status changes.
public struct ScheduledPublish: Hashable, Sendable {
    public enum Status: Hashable, Sendable {
        /// Waiting for its time.
        case pending
        /// Published as this revision (or found published: its content is the current revision's).
        case fired(revision: Int)
        /// Did not fire, and why (the routes no longer validate; the base is no longer current).
        case skipped(reason: String)
        /// Withdrawn before its time.
        case cancelled(by: String)

        public var name: String {
            switch self {
            case .pending: "pending"
            case .fired: "fired"
            case .skipped: "skipped"
            case .cancelled: "cancelled"
            }
        }
    }

    public let id: Int
    /// When it fires.
    public let at: Date
    /// The revision it was made against (`If-Match`); nil for the first revision.
    public let base: Int?
    public let author: String
    public let created: Date
    public let message: String
    /// The routes document's size in bytes. The document itself stays in its file until it
    /// is asked for (`ManifestStore.scheduledRoutes(of:)`) or the publish fires.
    public internal(set) var bytes: Int
    /// Its SHA-256, hex: checked whenever it is read.
    public internal(set) var sha256: String
    /// Set when it starts a rollout (over `base`) instead of replacing the current revision.
    public let rollout: [RolloutStep]?
    public internal(set) var status: Status
    /// When the status last changed (`created` while pending).
    public internal(set) var changed: Date

    static func fileName(_ id: Int) -> String { zeroPadded(id, width: 8) }

    /// The record stored for it, with `routes` (its document) as the body.
    func record(routes: [UInt8]) -> Record {
        var metadata: [String: JSONValue] = [
            "kind": "schedule", "id": .int(id), "at": .string(Timestamp.format(at)), "base": base.map(JSONValue.int) ?? .null,
            "author": .string(author), "time": .string(Timestamp.format(created)), "message": .string(message),
            "status": .string(status.name), "changed": .string(Timestamp.format(changed)),
        ]
        switch status {
        case .pending: break
        case .fired(let revision): metadata["revision"] = .int(revision)
        case .skipped(let reason): metadata["reason"] = .string(reason)
        case .cancelled(let actor): metadata["cancelledBy"] = .string(actor)
        }
        if let rollout, let base { metadata["rollout"] = RolloutStart(stable: base, steps: rollout).json }
        return Record(metadata: metadata, body: routes)
    }

    static func from(_ header: Record.Header, id expected: Int) -> Result<ScheduledPublish, RecordError> {
        let metadata = header.metadata
        guard metadata["kind"]?.stringValue == "schedule", metadata["id"]?.intValue == expected,
              let at = metadata["at"]?.stringValue.flatMap(Timestamp.parse),
              let author = metadata["author"]?.stringValue,
              let created = metadata["time"]?.stringValue.flatMap(Timestamp.parse),
              let changed = metadata["changed"]?.stringValue.flatMap(Timestamp.parse),
              let message = metadata["message"]?.stringValue
        else { return .failure(.content("the header's kind, id, at, author, time, changed or message is missing or wrong")) }
        let status: Status
        switch metadata["status"]?.stringValue {
        case "pending": status = .pending
        case "fired":
            guard let revision = metadata["revision"]?.intValue else { return .failure(.content("a fired schedule names no revision")) }
            status = .fired(revision: revision)
        case "skipped": status = .skipped(reason: metadata["reason"]?.stringValue ?? "")
        case "cancelled": status = .cancelled(by: metadata["cancelledBy"]?.stringValue ?? "")
        default: return .failure(.content("the status is not pending, fired, skipped or cancelled"))
        }
        var rollout: [RolloutStep]?
        if let json = metadata["rollout"] {
            guard let start = RolloutStart.from(json), start.stable == metadata["base"]?.intValue else {
                return .failure(.content("its rollout (steps over its base) is not readable"))
            }
            rollout = start.steps
        }
        return .success(ScheduledPublish(id: expected, at: at, base: metadata["base"]?.intValue, author: author, created: created,
                                         message: message, bytes: header.bodyLength, sha256: header.sha256, rollout: rollout, status: status,
                                         changed: changed))
    }

    /// The resource the API shows (without the routes; `GET /v1/schedules/N/routes` has them).
    public var json: JSONValue {
        var object: [String: JSONValue] = [
            "id": .int(id), "at": .string(Timestamp.format(at)), "base": base.map(JSONValue.int) ?? .null, "author": .string(author),
            "created": .string(Timestamp.format(created)), "message": .string(message), "status": .string(status.name),
            "changed": .string(Timestamp.format(changed)),
        ]
        switch status {
        case .pending: break
        case .fired(let revision): object["revision"] = .int(revision)
        case .skipped(let reason): object["reason"] = .string(reason)
        case .cancelled(let actor): object["cancelledBy"] = .string(actor)
        }
        if let rollout, let base, case .object(let start) = RolloutStart(stable: base, steps: rollout).json {
            object["rollout"] = ["steps": start["steps"] ?? .array([])]
        }
        return .object(object)
    }
}

/// What scheduling a publish did.
public enum ScheduleOutcome: Sendable {
    case scheduled(ScheduledPublish)
    /// The routes fail validation now; nothing was stored.
    case invalid(ValidationReport)
    /// `base` is not the current revision.
    case staleBase(current: Int?)
    /// The time is not in the future (or more than a year away).
    case badTime(String)
    /// The rollout's steps do not make one, or there is no revision to roll out over.
    case badRollout(String)
    /// As many publishes are pending as may be, or their routes would hold too many bytes.
    case full(String)
}

/// What cancelling one did.
public enum CancelOutcome: Sendable {
    case cancelled(ScheduledPublish)
    case unknownSchedule(Int)
    /// It already fired, was skipped or was cancelled.
    case notPending(ScheduledPublish)
}
