/// One message the library has for the app's logs. The library never writes a log itself
/// (no `print`, no `os_log`): every message goes to the hook the app configures
/// (`log` on each configuration), which routes it to `os.Logger`, its crash reporter or
/// nowhere. A message never holds a link (links may carry personal data) nor a token.
public struct ClientLogMessage: Hashable, Sendable, CustomStringConvertible {
    public enum Level: String, Hashable, Sendable, Comparable {
        case debug, info, warning, error

        public static func < (lhs: Level, rhs: Level) -> Bool {
            let order: [Level] = [.debug, .info, .warning, .error]
            return order.firstIndex(of: lhs)! < order.firstIndex(of: rhs)!
        }
    }

    public let level: Level
    /// `manifest`, `dispatcher` or `telemetry`: an `os.Logger` category.
    public let category: String
    public let text: String

    public init(_ level: Level, _ category: String, _ text: String) {
        self.level = level
        self.category = category
        self.text = text
    }

    public var description: String { "[\(level.rawValue)] \(category): \(text)" }
}

/// The hook: called on whatever task the library runs on; keep it quick and thread-safe.
public typealias ClientLog = @Sendable (ClientLogMessage) -> Void
