import CivilDate
import Foundation
import RouteEngine

/// `waymark schedule`, `schedules` and `unschedule`: publishes set for a time, from a shell
/// or a CI job (`docs/api.md`, "Scheduled publishing").
enum ScheduleCommands {
    static let scheduleHelp = """
        Usage: waymark schedule ROUTES --at TIME --server URL --token T [--message M] [--base N] [--rollout] [--json]

        Schedules a routes file to be published at TIME (RFC 3339, e.g. 2026-12-01T09:00:00Z;
        from now to a year ahead). The server validates it now, and again when it fires
        against the app builds registered then; it fires only if the base revision is
        still current, otherwise it is skipped and says why. With --rollout it starts a
        rollout of the routes over the base revision when it fires ('waymark rollout').
        Needs the scope routes:publish.

        Options:
        \(RemoteCommands.connection)
          --at TIME        When to publish
          --message M      Why, for the revision history
          --base N         The revision these routes were edited from (default: the current one)
          --rollout        At TIME, start a rollout (1% → 10% → 50% → 100%) instead of publishing
          --json           Print the server's answer as JSON
          --help           Show this help

        Exit status: 0 scheduled, 1 refused (invalid routes, stale base, bad time, token),
        2 bad usage, 3 server unreachable or failing.
        """

    static let listHelp = """
        Usage: waymark schedules --server URL --token T [--json]

        Lists the server's scheduled publishes: pending, fired (with the revision), skipped
        (with the reason) and cancelled. Needs the scope routes:read.

        Options:
        \(RemoteCommands.connection)
          --json           Print the server's answer as JSON
          --help           Show this help
        """

    static let cancelHelp = """
        Usage: waymark unschedule N --server URL --token T [--json]

        Cancels pending scheduled publish N. Needs the scope routes:publish.

        Options:
        \(RemoteCommands.connection)
          --json           Print the server's answer as JSON
          --help           Show this help
        """

    static func schedule(_ arguments: [String], environment: [String: String], output: inout Output) throws(CLIError) -> ExitCode {
        let parsed = try Arguments(arguments, command: "schedule", options: RemoteCommands.options.union(["--at"]), booleans: ["--json", "--help", "--rollout"])
        if parsed.has("--help") {
            output.print(scheduleHelp)
            return .success
        }
        guard let path = parsed.positionals.first else { throw .missingArgument("the ROUTES file") }
        guard parsed.positionals.count == 1 else { throw .unexpectedArgument(parsed.positionals[1]) }
        guard let at = parsed.last("--at") else { throw .missingArgument("--at TIME") }
        guard Timestamp.parse(at) != nil else { throw .invalidValue(option: "--at", value: at, expected: "an RFC 3339 time such as 2026-12-01T09:00:00Z") }
        let routes = try InputFiles.json(at: path)
        let client = try APIClient(parsed, environment: environment)
        let message = parsed.last("--message") ?? "Scheduled \(URL(fileURLWithPath: path).lastPathComponent) with waymark schedule"
        let precondition = try RemoteCommands.base(parsed, client)
        var envelope: [String: JSONValue] = ["at": .string(at), "message": .string(message), "routes": routes]
        if parsed.has("--rollout") { envelope["rollout"] = [:] }
        let body = JSONValue.object(envelope).serializedBytes()
        let answer = try client.send("POST", "/v1/schedules", body: body, headers: precondition)
        if parsed.has("--json") {
            output.print(answer.json.serialized(pretty: true))
            return answer.status == 201 ? .success : .invalid
        }
        guard answer.status == 201 else { throw APIClient.refusal(answer) }
        let json = answer.json
        output.print("Scheduled \(json["id"]?.intValue ?? 0): \(path) at \(json["at"]?.stringValue ?? at), on top of revision "
            + "\(json["base"]?.intValue.map(String.init) ?? "none"), by \(json["author"]?.stringValue ?? "?")"
            + (json["rollout"] == nil ? "." : "; it starts a rollout."))
        return .success
    }

    static func list(_ arguments: [String], environment: [String: String], output: inout Output) throws(CLIError) -> ExitCode {
        guard let (_, schedules) = try APIClient.listing(arguments, command: "schedules", help: listHelp, path: "/v1/schedules",
                                                        key: "schedules", none: "No scheduled publishes.", environment: environment, output: &output) else {
            return .success
        }
        output.table([["ID", "AT", "STATUS", "AUTHOR", "MESSAGE"]] + schedules.map { item in
            var status = item["status"]?.stringValue ?? ""
            if let revision = item["revision"]?.intValue { status += " (revision \(revision))" }
            if let reason = item["reason"]?.stringValue { status += ": \(reason)" }
            return [String(item["id"]?.intValue ?? 0), item["at"]?.stringValue ?? "", status, item["author"]?.stringValue ?? "",
                    item["message"]?.stringValue ?? ""]
        })
        return .success
    }

    static func cancel(_ arguments: [String], environment: [String: String], output: inout Output) throws(CLIError) -> ExitCode {
        let parsed = try Arguments(arguments, command: "unschedule", options: ["--server", "--token"], booleans: ["--json", "--help"])
        if parsed.has("--help") {
            output.print(cancelHelp)
            return .success
        }
        guard let text = parsed.positionals.first else { throw .missingArgument("the schedule N to cancel") }
        guard parsed.positionals.count == 1 else { throw .unexpectedArgument(parsed.positionals[1]) }
        guard let id = Int(text), id >= 1 else { throw .invalidValue(option: "unschedule", value: text, expected: "a schedule number") }
        let client = try APIClient(parsed, environment: environment)
        let answer = try client.send("DELETE", "/v1/schedules/\(id)")
        if parsed.has("--json") {
            output.print(answer.json.serialized(pretty: true))
            return answer.status == 200 ? .success : .invalid
        }
        guard answer.status == 200 else { throw APIClient.refusal(answer) }
        output.print("Cancelled schedule \(id).")
        return .success
    }
}
