import CivilDate
import Foundation
import RouteEngine
import Synchronization
import SystemIO

extension DataDirectory {
    /// `DIR/audit.log`: one JSON object per line, appended with O_APPEND (so the daemon and
    /// `waymark token` may both append) and fdatasynced before the change is acknowledged.
    static let auditLog = "audit.log"
    /// The size at which `audit.log` is moved aside before the next line (64 MiB).
    public static let defaultAuditRotationBytes = 64 << 20

    /// Appends one line durably; a log that has reached `rotateAt` bytes is moved aside
    /// first (`rotateAudit`), whoever appends — the daemon's changes and `waymark token`'s alike.
    func appendAudit(_ fields: [String: JSONValue], time: Date, rotateAt limit: Int = DataDirectory.defaultAuditRotationBytes) throws(IOError) {
        try? rotateAudit(limit: limit, now: Date())
        try appendDurably(Self.auditLine(fields, time: time), to: Self.auditLog)
    }

    static func auditLine(_ fields: [String: JSONValue], time: Date) -> [UInt8] {
        var entry = fields
        entry["time"] = .string(Timestamp.format(time))
        return JSONValue.object(entry).serializedBytes() + [UInt8(ascii: "\n")]
    }

    /// Moves `audit.log` aside as `audit-<time>.log` when it has reached `limit` bytes, so
    /// the next line starts a new file. Rotated files are kept (they are the history);
    /// nothing reads them but people.
    func rotateAudit(limit: Int, now: Date) throws(IOError) {
        guard let size = FileSystem.size(path + "/" + Self.auditLog), size >= limit else { return }
        var name = "audit-" + Timestamp.format(now).replacingOccurrences(of: ":", with: "") + ".log"
        var suffix = 1
        while exists(name) {
            suffix += 1
            name = "audit-" + Timestamp.format(now).replacingOccurrences(of: ":", with: "") + "-\(suffix).log"
        }
        try FileSystem.rename(path + "/" + Self.auditLog, to: path + "/" + name)
        try FileSystem.syncDirectory(path)
    }

    /// The complete lines of `name`, last first, read backwards in 64 KiB pieces until
    /// `visit` returns false: start-up reads only as far back as it must.
    func scanBackwards(_ name: String, _ visit: (ArraySlice<UInt8>) -> Bool) throws(IOError) {
        let filePath = path + "/" + name
        guard let size = FileSystem.size(filePath), size > 0 else { return }
        let fd = try FileSystem.open(filePath, O_RDONLY)
        defer { FileSystem.close(fd) }
        var end = size
        var carry: [UInt8] = []  // the start of a line whose end was read already
        while end > 0 {
            let start = max(0, end - (64 << 10))
            var piece = try FileSystem.read(fd, count: end - start, at: start, path: filePath) + carry
            end = start
            var lineEnd = piece.count
            while let newline = piece[..<lineEnd].lastIndex(of: UInt8(ascii: "\n")) {
                if newline + 1 < lineEnd, !visit(piece[(newline + 1)..<lineEnd]) { return }
                lineEnd = newline
            }
            piece.removeSubrange(lineEnd...)
            carry = piece
        }
        if !carry.isEmpty { _ = visit(carry[...]) }
    }
}

/// Refused attempts, counted per minute instead of written one by one: a client that is
/// refused a thousand times a second costs the log one line per minute per (action, actor,
/// reason, network), not a thousand fsynced lines. At most `maximumKeys` different keys a
/// minute; past them, refusals count under the actor `"(others)"`: however many addresses
/// a flood comes from, the log grows by at most `maximumKeys` lines a minute (about 30 MB
/// a day at worst).
final class RefusalTally: Sendable {
    struct Key: Hashable {
        let action: String
        let actor: String
        let reason: String
        /// The client's network (an IPv4 /24 or an IPv6 /48), when known.
        var peer: String? = nil
    }

    static let maximumKeys = 100

    private struct Bucket {
        var minute: Int
        var order: [Key] = []
        var counts: [Key: Int] = [:]
    }

    private struct State {
        var bucket: Bucket?
        /// Lines of minutes that have ended, waiting to be written.
        var ready: [[String: JSONValue]] = []
    }

    private let state = Mutex(State())

    /// Counts one refusal at `now`. Never writes: it may be called under the store's writer
    /// lock. Returns whether this opened a minute (schedule a flush for its end) and whether
    /// an earlier minute's lines are now ready (flush them soon, outside any lock).
    func add(_ key: Key, now: Date) -> (opened: Bool, ready: Bool) {
        let minute = Int((now.timeIntervalSince1970 / 60).rounded(.down))
        return state.withLock { state in
            var opened = false
            if let current = state.bucket, current.minute != minute {
                state.ready += Self.lines(current)
                state.bucket = nil
            }
            if state.bucket == nil {
                state.bucket = Bucket(minute: minute)
                opened = true
            }
            var key = key
            if state.bucket!.counts[key] == nil, state.bucket!.order.count >= Self.maximumKeys {
                key = Key(action: key.action, actor: "(others)", reason: key.reason, peer: key.peer == nil ? nil : "(others)")
            }
            if state.bucket!.counts[key] == nil { state.bucket!.order.append(key) }
            state.bucket!.counts[key, default: 0] += 1
            return (opened, !state.ready.isEmpty)
        }
    }

    /// The lines ready to write: those of minutes ended by `now` (all of them with `all`).
    func take(before now: Date, all: Bool = false) -> [[String: JSONValue]] {
        let minute = Int((now.timeIntervalSince1970 / 60).rounded(.down))
        return state.withLock { state in
            var lines = state.ready
            state.ready = []
            if let current = state.bucket, all || current.minute < minute {
                lines += Self.lines(current)
                state.bucket = nil
            }
            return lines
        }
    }

    private static func lines(_ bucket: Bucket) -> [[String: JSONValue]] {
        let from = Timestamp.format(Date(timeIntervalSince1970: TimeInterval(bucket.minute * 60)))
        return bucket.order.map { key in
            var line: [String: JSONValue] = ["action": .string(key.action), "actor": .string(key.actor), "outcome": "refused",
                                             "reason": .string(key.reason), "count": .int(bucket.counts[key]!), "from": .string(from), "seconds": 60]
            if let peer = key.peer { line["peer"] = .string(peer) }
            return line
        }
    }
}
