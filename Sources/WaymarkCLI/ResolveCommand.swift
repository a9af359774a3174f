import RouteEngine

/// `waymark resolve URL --schema FILE --routes FILE [--satisfied auth,...] [--now T] [--json]`
enum ResolveCommand {
    static let help = """
        Usage: waymark resolve URL --schema FILE --routes FILE [--satisfied NAME,...] [--now TIME] [--json]

        Shows how one link resolves in one app build: proceed (with destination, params,
        navigation path, tab and presentation), gated by a precondition, or notFound with
        a reason. It resolves as that build's manifest would: routes the build cannot
        resolve (a destination or param its schema lacks) are left out, each named on
        standard error. A document with errors that block publishing (see 'waymark
        validate') is refused.

        Options:
          --schema FILE        The app build's waymark.schema/1 file
          --routes FILE        The waymark.routes/1 file
          --satisfied LIST     Preconditions the user satisfies, comma-separated (e.g. auth)
          --now TIME           Resolve as of this time (default: now), e.g. 2026-03-15T00:00:00Z
          --json               Print {"outcome", "route", "destination", "params", ...}
          --help               Show this help

        Exit status: 0 when the link was resolved (whatever the outcome), 1 when the routes
        are invalid, 2 for bad usage or unreadable input.
        """

    static func run(_ arguments: [String], output: inout Output) throws(CLIError) -> ExitCode {
        let parsed = try Arguments(arguments, command: "resolve", options: ["--schema", "--routes", "--satisfied", "--now"],
                                   booleans: ["--json", "--help"])
        if parsed.has("--help") {
            output.print(help)
            return .success
        }
        guard let url = parsed.positionals.first else { throw .missingArgument("the URL to resolve") }
        guard parsed.positionals.count == 1 else { throw .unexpectedArgument(parsed.positionals[1]) }
        guard let schemaPath = parsed.last("--schema") else { throw .missingArgument("--schema FILE") }
        guard let routesPath = parsed.last("--routes") else { throw .missingArgument("--routes FILE") }
        let now = try InputFiles.timestamp(parsed.last("--now"), option: "--now")
        let satisfied = Set(parsed.all("--satisfied").flatMap { $0.split(separator: ",").map(String.init) })
        let schema = try InputFiles.schema(at: schemaPath).schema
        let json = try InputFiles.json(at: routesPath)
        let (document, decodeProblems) = RoutesDocument.decode(json)
        var report = ValidationReport(decodeProblems)
        var analysis: RouteAnalysis?
        if let document {
            // The document's own errors block it as they block a publish; what depends on
            // the build does not: the build's manifest simply leaves those routes out.
            let analysed = RouteAnalysis(document: document, now: now)
            report.append(contentsOf: analysed.problems)
            if document.app != schema.app {
                report.append(ValidationProblem(.invalidFormat, at: JSONPath.root + "app",
                    "These routes are for the app \"\(document.app)\", but the schema \(schema.buildName) is for \"\(schema.app)\"."))
            }
            analysis = analysed
        }
        guard report.isValid, let analysis else {
            output.error("waymark: \(routesPath) has errors; fix them first (waymark validate):")
            for problem in report.errors { output.error("  \(problem.code.rawValue) at \(problem.path): \(problem.message)") }
            return .invalid
        }
        let resolver = Resolver(schema: schema, analysis: analysis)
        for problem in resolver.leftOut {
            output.error("waymark: left out of \(schema.buildName)'s table, as its manifest leaves it out: \(problem.path): \(problem.message)")
        }
        let resolution = resolver.resolve(url: url, context: ResolutionContext(satisfied: satisfied, now: now))
        if parsed.has("--json") {
            output.print(resolution.json.serialized(pretty: true))
        } else {
            printHuman(resolution, output: &output)
        }
        return .success
    }

    static func printHuman(_ resolution: Resolution, output: inout Output) {
        switch resolution {
        case .proceed(let proceed):
            output.print("proceed → \(proceed.destination)" + (proceed.routeID.map { " (route \($0))" } ?? ""))
            for name in proceed.params.keys.sorted() { output.print("  \(name) = \(proceed.params[name]!.json.serialized())") }
            output.print("  path: \(proceed.path.joined(separator: " › "))")
            output.print("  tab: \(proceed.tab ?? "none"), presentation: \(proceed.presentation.rawValue)")
        case .gated(let gate):
            output.print("gated by \(gate.precondition) → \(gate.destination)" + (gate.routeID.map { " (route \($0))" } ?? ""))
            output.print("  resolves again once \(gate.precondition) is satisfied")
        case .notFound(let notFound):
            output.print("notFound: \(notFound.reason.rawValue)" + (notFound.routeID.map { " (route \($0))" } ?? ""))
            if let detail = notFound.detail { output.print("  \(detail)") }
        }
    }
}
