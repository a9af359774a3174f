import Foundation
import Synchronization

/// The wall clock a daemon reads for the times it decides by (rollout steps, scheduled
/// publishes, telemetry windows, revision and audit times): the system's, or for tests one
/// read from a file, so a test can move a live daemon's time forward without waiting.
public struct WallClock: Sendable {
    public let now: @Sendable () -> Date

    public init(_ now: @escaping @Sendable () -> Date) {
        self.now = now
    }

    public static let system = WallClock { Date() }

    /// The seconds since 1970 (a decimal number) written in the file at `path`, read again
    /// at each use. A read that fails or does not hold a number (the file being replaced,
    /// say) keeps the last good time, and time never goes back; the file must hold one when
    /// the clock is made (nil if it does not).
    public static func file(_ path: String) -> WallClock? {
        guard let first = read(path) else { return nil }
        let last = Mutex<Double>(first)
        return WallClock {
            let seconds = last.withLock { last in
                if let read = read(path), read > last { last = read }
                return last
            }
            return Date(timeIntervalSince1970: seconds)
        }
    }

    private static func read(_ path: String) -> Double? {
        guard let data = FileManager.default.contents(atPath: path), data.count < 64,
              let text = String(data: data, encoding: .utf8), let seconds = Double(text.trimmingCharacters(in: .whitespacesAndNewlines)),
              seconds.isFinite, seconds >= 0 else { return nil }
        return seconds
    }
}
