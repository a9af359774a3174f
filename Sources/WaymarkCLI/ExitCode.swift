/// What `waymark` tells the shell: scripts and CI branch on these.
public enum ExitCode: Int32, Sendable {
    /// Done; for `validate`, the routes are valid (warnings allowed).
    case success = 0
    /// The input was read but is invalid (the report says why).
    case invalid = 1
    /// Bad usage, or an input that cannot be read at all.
    case usage = 2
    /// The service could not start (damaged store, port taken) or the server could not be
    /// reached or answered with a server error.
    case unavailable = 3
}

/// Why a command could not run; each maps to an exit code and a sentence on stderr.
public enum CLIError: Error, Hashable, Sendable {
    case unknownCommand(String)
    case unknownOption(String, command: String)
    case missingValue(String)
    case missingArgument(String)
    case unexpectedArgument(String)
    case invalidValue(option: String, value: String, expected: String)
    case unreadableFile(String, reason: String)
    case invalidJSON(String, reason: String)
    case invalidSchema(String, problems: [String])
    /// The data directory cannot be used (damaged, locked, unwritable).
    case store(String)
    /// Listening, connecting, or a 5xx from the server.
    case unavailable(String)
    /// The server understood and refused (4xx): the message is its explanation.
    case refused(String)

    public var message: String {
        switch self {
        case .unknownCommand(let name): "Unknown command '\(name)'. Run 'waymark --help' for the list."
        case .unknownOption(let option, let command): "Unknown option '\(option)' for '\(command)'. Run 'waymark \(command) --help'."
        case .missingValue(let option): "The option \(option) needs a value."
        case .missingArgument(let what): "Missing \(what)."
        case .unexpectedArgument(let argument): "Unexpected argument '\(argument)'."
        case .invalidValue(let option, let value, let expected): "\(option) '\(value)' is not valid: expected \(expected)."
        case .unreadableFile(let path, let reason): "Cannot read \(path): \(reason)"
        case .invalidJSON(let path, let reason): "\(path) is not valid JSON: \(reason)"
        case .invalidSchema(let path, let problems):
            "\(path) is not a usable schema:\n" + problems.map { "  " + $0 }.joined(separator: "\n")
        case .store(let message), .unavailable(let message), .refused(let message): message
        }
    }

    public var exitCode: ExitCode {
        switch self {
        case .store, .unavailable: .unavailable
        case .refused: .invalid
        default: .usage
        }
    }
}
