import SystemIO

/// Why telemetry could not be opened, accepted or forwarded: a case to match, and a
/// `message` for the operator (and, for a refused batch, the client).
public enum TelemetryError: Error, Hashable, Sendable, CustomStringConvertible {
    /// A system call on the telemetry files failed (a full disk).
    case io(IOError)
    /// A telemetry file is damaged; `reason` says how and what to do.
    case damaged(file: String, reason: String)
    /// The store is closing and takes nothing more.
    case closing
    /// A failed commit could not be undone in the log, so nothing more is accepted until the
    /// committer repairs it (it tries every second).
    case unrepaired(IOError)

    public var message: String {
        switch self {
        case .io(let error): error.description
        case .damaged(let file, let reason): "\(file) is damaged: \(reason)"
        case .closing: "The telemetry store is closing."
        case .unrepaired(let error): "Telemetry is not accepted: the log could not be repaired after \(error)."
        }
    }

    public var description: String { message }

    /// The message for a client: no path of the server's in it.
    public var clientMessage: String {
        switch self {
        case .io(let error): error.withoutPath
        case .damaged: "a telemetry file is damaged"
        case .closing: message
        case .unrepaired(let error): "Telemetry is not accepted: the log could not be repaired after \(error.withoutPath)."
        }
    }
}

/// Runs file operations for telemetry, reading their failure as a `TelemetryError`.
@inline(__always)
func onDisk<T>(_ body: () throws(IOError) -> T) throws(TelemetryError) -> T {
    try readingIOErrors(as: TelemetryError.io, body)
}
