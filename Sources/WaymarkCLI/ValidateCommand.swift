import LinkChecks
import RouteEngine

/// `waymark validate --schema FILE [--schema FILE...] ROUTES [--json] [--now T] [--check-links …]`
enum ValidateCommand {
    static let help = """
        Usage: waymark validate --schema FILE [--schema FILE...] ROUTES [--json] [--now TIME] [--check-links]

        Checks a routes file (waymark.routes/1) against the schema of every app version
        it must serve, and reports every problem: errors block publishing, warnings don't.

        Options:
          --schema FILE            A waymark.schema/1 file; repeat for each app version (at least one)
          --json                   Print the report as JSON: {"valid", "errors", "warnings"}
          --now TIME               Judge windows as of this time (default: now), e.g. 2026-03-15T00:00:00Z
        \(LinkCheckArguments.help)
          --help                   Show this help

        Exit status: 0 valid, 1 invalid, 2 bad usage or unreadable input.
        """

    static func run(_ arguments: [String], output: inout Output) throws(CLIError) -> ExitCode {
        let parsed = try Arguments(arguments, command: "validate", options: Set(["--schema", "--now"]).union(LinkCheckArguments.options),
                                   booleans: ["--json", "--help", "--check-links"])
        if parsed.has("--help") {
            output.print(help)
            return .success
        }
        guard !parsed.all("--schema").isEmpty else { throw .missingArgument("--schema FILE (at least one)") }
        guard let routesPath = parsed.positionals.first else { throw .missingArgument("the ROUTES file") }
        guard parsed.positionals.count == 1 else { throw .unexpectedArgument(parsed.positionals[1]) }
        let now = try InputFiles.timestamp(parsed.last("--now"), option: "--now")
        let schemas = try parsed.all("--schema").map { (path: String) throws(CLIError) in try InputFiles.schema(at: path).schema }
        let linkChecks = try LinkCheckArguments.parse(parsed, cache: false)
        let routes = try InputFiles.json(at: routesPath)
        var report = Validator.validate(routes, against: schemas, now: now)
        // As the server refuses them (`serve --allow-private-fallbacks` aside).
        report.append(FallbackAddresses.report(in: routes))
        if let linkChecks { report.append(contentsOf: LinkChecker(options: linkChecks).check(routes, against: schemas)) }
        if parsed.has("--json") {
            output.print(report.json.serialized(pretty: true))
        } else {
            printHuman(report, routesPath: routesPath, schemas: schemas, output: &output)
        }
        return report.isValid ? .success : .invalid
    }

    static func printHuman(_ report: ValidationReport, routesPath: String, schemas: [Schema], output: inout Output) {
        let verdict = report.isValid ? "valid" : "INVALID"
        let builds = schemas.map(\.buildName).joined(separator: ", ")
        output.print("\(routesPath): \(verdict) against \(builds) — \(count(report.errorCount, "error")), "
            + "\(count(report.warnings.count + report.omittedWarnings, "warning"))")
        for problem in report.problems {
            output.print("  \(problem.severity.rawValue) \(problem.code.rawValue) at \(problem.path)")
            output.print("      \(problem.message)")
        }
        if report.omittedErrors + report.omittedWarnings > 0 {
            output.print("  … and \(count(report.omittedErrors, "more error")), \(count(report.omittedWarnings, "more warning")) not listed "
                + "(a report lists the first \(ValidationReport.listLimit) of each)")
        }
    }

    static func count(_ number: Int, _ noun: String) -> String {
        "\(number) \(noun)\(number == 1 ? "" : "s")"
    }
}
