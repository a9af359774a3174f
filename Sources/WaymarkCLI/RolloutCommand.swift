import Foundation
import RouteEngine

/// `waymark rollout status|pause|resume|advance|promote|abort`: a server's staged rollout
/// from a shell (`docs/api.md`, "Staged rollouts").
enum RolloutCommand {
    static let help = """
        Usage: waymark rollout ACTION --server URL --token T [--json]

        Shows or changes the server's staged rollout. ACTION is status (scope routes:read),
        or pause, resume, advance, promote or abort (scope routes:publish), each against the
        rollout as just read, so two people cannot race. Start one with
        'waymark publish ROUTES --rollout'.

        Options:
        \(RemoteCommands.connection)
          --json           Print the server's answer as JSON
          --help           Show this help

        Exit status: 0 done, 1 refused (no rollout, not applicable, changed meanwhile,
        token), 2 bad usage, 3 server unreachable or failing.
        """

    static let actions = ["status", "pause", "resume", "advance", "promote", "abort"]

    static func run(_ arguments: [String], environment: [String: String], output: inout Output) throws(CLIError) -> ExitCode {
        let parsed = try Arguments(arguments, command: "rollout", options: ["--server", "--token"], booleans: ["--json", "--help"])
        if parsed.has("--help") {
            output.print(help)
            return .success
        }
        guard let action = parsed.positionals.first else { throw .missingArgument("the ACTION (\(actions.joined(separator: ", ")))") }
        guard actions.contains(action) else { throw .invalidValue(option: "rollout", value: action, expected: actions.joined(separator: ", ")) }
        guard parsed.positionals.count == 1 else { throw .unexpectedArgument(parsed.positionals[1]) }
        let client = try APIClient(parsed, environment: environment)
        let current = try client.send("GET", "/v1/rollout")
        guard current.status == 200 else { throw APIClient.refusal(current) }
        var answer = current
        if action != "status" {
            guard let etag = current.headers["etag"] else { throw .unavailable("The server's rollout came without its ETag.") }
            answer = try client.send("POST", "/v1/rollout/\(action)", headers: ["If-Match": etag])
            guard answer.status == 200 else { throw APIClient.refusal(answer) }
        }
        if parsed.has("--json") {
            output.print(answer.json.serialized(pretty: true))
            return .success
        }
        let json = answer.json
        output.print("Rollout of revision \(json["candidate"]?.intValue ?? 0) over \(json["stable"]?.intValue ?? 0): "
            + "\(json["status"]?.stringValue ?? "?") at step \((json["step"]?.intValue ?? 0) + 1) of \(json["steps"]?.arrayValue?.count ?? 0) "
            + "(\(json["percent"]?.intValue ?? 0)% of cohorts), since \(json["stepStarted"]?.stringValue ?? "?")")
        for finding in json["findings"]?.arrayValue ?? [] { output.print("  tripped: \(finding["text"]?.stringValue ?? "")") }
        return .success
    }
}
