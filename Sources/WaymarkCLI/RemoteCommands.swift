import Foundation
import RouteEngine

/// `waymark publish`, `revisions` and `rollback`: a server's revisions from a shell or a
/// CI job (routes kept in git). Each takes `--server URL` and `--token T`, or
/// `WAYMARK_SERVER` and `WAYMARK_TOKEN` (a token in the environment stays out of `ps`).
enum RemoteCommands {
    static let connection = """
          --server URL     The Waymark server, e.g. http://127.0.0.1:8080 (or WAYMARK_SERVER)
          --token T        A bearer token with the needed scope (or WAYMARK_TOKEN)
        """

    static let publishHelp = """
        Usage: waymark publish ROUTES --server URL --token T [--message M] [--base N] [--rollout] [--supersede] [--json]

        Publishes a routes file as a new revision. The server validates it against every
        registered app build first; an invalid file publishes nothing and its report is
        printed. With --rollout the revision is a candidate rolled out to a growing share
        of installs (1% → 10% → 50% → 100%; see 'waymark rollout'). Needs the scope
        routes:publish.

        Options:
        \(connection)
          --message M      Why, for the revision history
          --rollout        Roll the revision out in steps instead of serving it to everyone
          --supersede      Publish even while a rollout is in progress, ending it (without
                           it such a publish is refused, 409)
          --base N         The revision these routes were edited from: if another was
                           published since, nothing is published (412). Default: the
                           current revision at the time of the call
          --json           Print the server's answer as JSON
          --help           Show this help

        Exit status: 0 published, 1 refused (invalid routes, stale base, token), 2 bad usage,
        3 server unreachable or failing.
        """

    static let revisionsHelp = """
        Usage: waymark revisions --server URL --token T [--json]

        Lists the server's revisions, newest first. Needs the scope routes:read.

        Options:
        \(connection)
          --json           Print the server's answer as JSON
          --help           Show this help
        """

    static let rollbackHelp = """
        Usage: waymark rollback N --server URL --token T [--message M] [--base N] [--json]

        Publishes revision N's routes again as a new revision (history is never rewritten).
        Validated like any publish. Needs the scope routes:publish.

        Options:
        \(connection)
          --message M      Why (default "Rollback to revision N")
          --base N         Refuse if the current revision is not N (default: the current one)
          --json           Print the server's answer as JSON
          --help           Show this help
        """

    static let options: Set<String> = ["--server", "--token", "--message", "--base"]

    static func publish(_ arguments: [String], environment: [String: String], output: inout Output) throws(CLIError) -> ExitCode {
        let parsed = try Arguments(arguments, command: "publish", options: options, booleans: ["--json", "--help", "--rollout", "--supersede"])
        if parsed.has("--help") {
            output.print(publishHelp)
            return .success
        }
        guard let path = parsed.positionals.first else { throw .missingArgument("the ROUTES file") }
        guard parsed.positionals.count == 1 else { throw .unexpectedArgument(parsed.positionals[1]) }
        let routes = try InputFiles.json(at: path)
        let client = try APIClient(parsed, environment: environment)
        let message = parsed.last("--message") ?? "Published \(URL(fileURLWithPath: path).lastPathComponent) with waymark publish"
        let precondition = try base(parsed, client)
        var envelope: [String: JSONValue] = ["message": .string(message), "routes": routes]
        if parsed.has("--rollout") { envelope["rollout"] = [:] }
        if parsed.has("--supersede") { envelope["supersede"] = true }
        let answer = try client.send("POST", "/v1/revisions", body: JSONValue.object(envelope).serializedBytes(), headers: precondition)
        return try report(answer, parsed, output: &output, what: path)
    }

    static func rollback(_ arguments: [String], environment: [String: String], output: inout Output) throws(CLIError) -> ExitCode {
        let parsed = try Arguments(arguments, command: "rollback", options: options, booleans: ["--json", "--help"])
        if parsed.has("--help") {
            output.print(rollbackHelp)
            return .success
        }
        guard let text = parsed.positionals.first else { throw .missingArgument("the revision N to roll back to") }
        guard parsed.positionals.count == 1 else { throw .unexpectedArgument(parsed.positionals[1]) }
        guard let number = Int(text), number >= 1 else { throw .invalidValue(option: "rollback", value: text, expected: "a revision number") }
        let client = try APIClient(parsed, environment: environment)
        let precondition = try base(parsed, client)
        var body: [String: JSONValue] = [:]
        if let message = parsed.last("--message") { body["message"] = .string(message) }
        let answer = try client.send("POST", "/v1/revisions/\(number)/rollback", body: JSONValue.object(body).serializedBytes(), headers: precondition)
        return try report(answer, parsed, output: &output, what: "revision \(number)'s routes")
    }

    static func revisions(_ arguments: [String], environment: [String: String], output: inout Output) throws(CLIError) -> ExitCode {
        guard let (json, revisions) = try APIClient.listing(arguments, command: "revisions", help: revisionsHelp, path: "/v1/revisions",
                                                           key: "revisions", none: "No revisions yet.", environment: environment, output: &output) else {
            return .success
        }
        let current = json["current"]?.intValue
        let rows = [["", "REVISION", "TIME", "AUTHOR", "MESSAGE"]] + revisions.map { revision in
            let number = revision["number"]?.intValue ?? 0
            var message = revision["message"]?.stringValue ?? ""
            if let restores = revision["restores"]?.intValue, !message.contains("\(restores)") { message += " (restores \(restores))" }
            return [number == current ? "*" : "", String(number), revision["time"]?.stringValue ?? "",
                    revision["author"]?.stringValue ?? "", message]
        }
        output.table(rows)
        return .success
    }

    static let routeHelp = """
        Usage: waymark route put ID FILE --server URL --token T [--message M] [--base N] [--json]
               waymark route delete ID --server URL --token T [--message M] [--base N] [--json]

        Changes one route of the server's current routes, as a new revision: put creates or
        replaces the route ID with FILE's route (a JSON object; its "id", if any, must be
        ID; - reads standard input), delete removes it. Validated there exactly as a publish
        (docs/api.md, "One route at a time"). Without --base the change is applied to
        whatever is current when the server stores it, so a publish meanwhile loses nothing.

        Options:
          --server URL     The Waymark server (or WAYMARK_SERVER)
          --token T        A token with scope routes:publish (or WAYMARK_TOKEN)
          --message M      Why, for the revision history (default: "Put route ID")
          --base N         Refuse if the current revision is not N
          --json           Print the server's answer as JSON
          --help           Show this help

        Exit status: 0 published or unchanged, 1 refused (invalid, no such route, a stale
        base), 2 bad usage or unreadable input, 3 the server cannot be reached.
        """

    static func route(_ arguments: [String], environment: [String: String], output: inout Output) throws(CLIError) -> ExitCode {
        let parsed = try Arguments(arguments, command: "route", options: options, booleans: ["--json", "--help"])
        if parsed.has("--help") {
            output.print(routeHelp)
            return .success
        }
        guard let action = parsed.positionals.first else { throw .missingArgument("put or delete") }
        guard action == "put" || action == "delete" else { throw .invalidValue(option: "route", value: action, expected: "put or delete") }
        guard parsed.positionals.count >= 2 else { throw .missingArgument("the route ID") }
        let id = parsed.positionals[1]
        guard RouteSpec.isValidID(id) else {
            throw .invalidValue(option: "route", value: id, expected: "a route id (1 to 128 ASCII letters, digits and - _ ., starting with a letter or digit)")
        }
        var body: [String: JSONValue] = [:]
        if let message = parsed.last("--message") { body["message"] = .string(message) }
        let expected = action == "put" ? 3 : 2
        if parsed.positionals.count < expected { throw .missingArgument("the FILE holding the route") }
        if parsed.positionals.count > expected { throw .unexpectedArgument(parsed.positionals[expected]) }
        if action == "put" {
            let path = parsed.positionals[2]
            let route = path == "-" ? try InputFiles.standardInputJSON() : try InputFiles.json(at: path)
            guard route.objectValue != nil else { throw .invalidJSON(path, reason: "a route is a JSON object") }
            body["route"] = route
        }
        let client = try APIClient(parsed, environment: environment)
        var headers: [String: String] = [:]
        if parsed.last("--base") != nil { headers = try base(parsed, client) }
        let answer = try client.send(action == "put" ? "PUT" : "DELETE", "/v1/routes/\(id)", body: JSONValue.object(body).serializedBytes(), headers: headers)
        return try report(answer, parsed, output: &output, what: "route \(id)")
    }

    /// `If-Match` for `--base N`, else for the current revision (`If-None-Match: *` when there is none).
    static func base(_ parsed: Arguments, _ client: APIClient) throws(CLIError) -> [String: String] {
        if let text = parsed.last("--base") {
            guard let number = Int(text), number >= 1 else { throw .invalidValue(option: "--base", value: text, expected: "a revision number") }
            return ["If-Match": "\"rev-\(number)\""]
        }
        let answer = try client.send("GET", "/v1/revisions")
        guard answer.status == 200 else { throw APIClient.refusal(answer) }
        guard let current = answer.json["current"]?.intValue else { return ["If-None-Match": "*"] }
        return ["If-Match": "\"rev-\(current)\""]
    }

    private static func report(_ answer: APIClient.Answer, _ parsed: Arguments, output: inout Output, what: String) throws(CLIError) -> ExitCode {
        if parsed.has("--json") {
            output.print(answer.json.serialized(pretty: true))
            return answer.status == 201 || answer.status == 200 ? .success : .invalid
        }
        switch answer.status {
        case 200 where answer.json["unchanged"]?.boolValue == true:
            // The same routes as the current revision: no new revision, no new manifests.
            output.print("Unchanged: revision \(answer.json["number"]?.intValue ?? 0) already has these routes; nothing was published.")
            return .success
        case 201:
            let json = answer.json
            output.print("Published revision \(json["number"]?.intValue ?? 0)"
                + (json["parent"]?.intValue.map { " on top of \($0)" } ?? "") + " as \(json["author"]?.stringValue ?? "?"): "
                + (json["message"]?.stringValue ?? ""))
            output.print("  sha256 \(json["sha256"]?.stringValue ?? "")")
            if let rollout = json["rollout"] {
                output.print("  rolling out over revision \(rollout["stable"]?.intValue ?? 0): \(rollout["percent"]?.intValue ?? 0)% of installs first ('waymark rollout status')")
            }
            return .success
        case 422:
            let details = answer.json["error"]?["details"]
            let errors = details?["errors"]?.arrayValue ?? []
            let warnings = details?["warnings"]?.arrayValue ?? []
            let omitted = details?["omitted"]
            let errorCount = errors.count + (omitted?["errors"]?.intValue ?? 0), warningCount = warnings.count + (omitted?["warnings"]?.intValue ?? 0)
            output.error("waymark: \(what) INVALID — \(ValidateCommand.count(errorCount, "error")), \(ValidateCommand.count(warningCount, "warning")); nothing was published.")
            for problem in errors + warnings {
                output.error("  \(problem["severity"]?.stringValue ?? "error") \(problem["code"]?.stringValue ?? "") at \(problem["path"]?.stringValue ?? "")")
                output.error("      \(problem["message"]?.stringValue ?? "")")
            }
            return .invalid
        default:
            throw APIClient.refusal(answer)
        }
    }
}
