import Foundation
import RouteEngine

/// The `waymark` command line. `main.swift` only forwards to `run`.
public enum CLI {
    public static let version = "0.1.0"

    static let usage = """
        waymark — server-driven deep-link routing

        Usage: waymark <command> [options]

        Commands:
          serve      Serve the manifest API from a data directory
          token      Create, list and revoke bearer tokens of a data directory or a database
          migrate    Move a store from a data directory into PostgreSQL, or back
          publish    Publish a routes file to a server (validated there first)
          route      Put or delete one route of a server's current routes, as a new revision
          revisions  List a server's revisions
          rollback   Publish an earlier revision's routes again, as a new revision
          schedule   Schedule a routes file to be published at a time
          schedules  List a server's scheduled publishes
          unschedule Cancel a pending scheduled publish
          rollout    Show, pause, resume, advance, promote or abort a staged rollout
          qr         Draw a QR code (SVG or PNG) for a link on one of the app's hosts
          health     Ask a running daemon whether it is alive or ready (container health checks)
          validate   Check a routes file against one or more app schemas
          import     Bring short links in from Firebase Dynamic Links or a CSV, as routes
          resolve    Show how one link resolves for an app build
          manifest   Write the manifest a server would serve a build, offline (an app's bundled one)
          generate   Write a schema's destinations as typed Swift (generate swift --schema FILE)
          version    Print the version

        Run 'waymark <command> --help' for a command's options.
        """

    /// Runs one command line (without the program name); everything printed goes to `output`.
    public static func run(_ arguments: [String], environment: [String: String] = ProcessInfo.processInfo.environment,
                           output: inout Output) -> ExitCode {
        guard let command = arguments.first else {
            output.error(usage)
            return .usage
        }
        let rest = Array(arguments.dropFirst())
        do {
            switch command {
            case "--help", "-h", "help":
                output.print(usage)
                return .success
            case "--version", "version":
                output.print("waymark \(version)")
                return .success
            case "validate":
                return try ValidateCommand.run(rest, output: &output)
            case "resolve":
                return try ResolveCommand.run(rest, output: &output)
            case "import":
                return try ImportCommand.run(rest, environment: environment, output: &output)
            case "manifest":
                return try ManifestCommand.run(rest, environment: environment, output: &output)
            case "generate":
                return try GenerateCommand.run(rest, output: &output)
            case "serve":
                return try ServeCommand.run(rest, output: &output)
            case "token":
                return try TokenCommand.run(rest, output: &output)
            case "migrate":
                return try MigrateCommand.run(rest, output: &output)
            case "publish":
                return try RemoteCommands.publish(rest, environment: environment, output: &output)
            case "route":
                return try RemoteCommands.route(rest, environment: environment, output: &output)
            case "revisions":
                return try RemoteCommands.revisions(rest, environment: environment, output: &output)
            case "rollback":
                return try RemoteCommands.rollback(rest, environment: environment, output: &output)
            case "schedule":
                return try ScheduleCommands.schedule(rest, environment: environment, output: &output)
            case "schedules":
                return try ScheduleCommands.list(rest, environment: environment, output: &output)
            case "unschedule":
                return try ScheduleCommands.cancel(rest, environment: environment, output: &output)
            case "rollout":
                return try RolloutCommand.run(rest, environment: environment, output: &output)
            case "qr":
                return try QRCommand.run(rest, environment: environment, output: &output)
            case "health":
                return try HealthCommand.run(rest, output: &output)
            default:
                throw CLIError.unknownCommand(command)
            }
        } catch let error as CLIError {
            output.error("waymark: " + error.message)
            return error.exitCode
        } catch {
            output.error("waymark: \(error)")
            return .usage
        }
    }
}
