import CivilDate
import RouteEngine

/// `waymark resolve URL --schema FILE --routes FILE [--satisfied auth,...] [--now T] [--json]`
enum ResolveCommand {
    static let help = """
        Usage: waymark resolve URL --schema FILE --routes FILE [--satisfied NAME,...] [--now TIME] [--json]
               waymark resolve --links FILE --schema FILE --routes FILE [--satisfied NAME,...] [--now TIME] [--shapes]

        Shows how one link resolves in one app build: proceed (with destination, params,
        navigation path, tab and presentation), gated by a precondition, or notFound with
        a reason. It resolves as that build's manifest would (docs/resolution.md, "Which
        routes a build resolves"): a route with a problem of its own (an invalid pattern,
        a duplicate id, a window that ends before it starts, a conflict or a shadowed route,
        a field that cannot be read) or one the build cannot resolve (a destination or param
        its schema lacks) is left out, each named on standard error, and the other routes
        answer. Only a routes file that cannot be used at all (not a waymark.routes/1
        document, or another app's) is refused. 'waymark validate' says which problems block
        publishing.

        Options:
          --schema FILE        The app build's waymark.schema/1 file
          --routes FILE        The waymark.routes/1 file
          --satisfied LIST     Preconditions the user satisfies, comma-separated (e.g. auth)
          --now TIME           Resolve as of this time (default: now), e.g. 2026-03-15T00:00:00Z;
                               a fraction is kept to the whole microsecond
          --json               Print {"outcome", "route", "destination", "params", ...}
          --links FILE         Resolve many links: FILE holds one JSON string (a link) per
                               line; prints one line of compact JSON per link, in order
          --shapes             With --links or --json: each result also carries "shape", the
                               link's shape as a phone would send it were the link unknown
                               (docs/link-shapes.md: only the table's words kept)
          --help               Show this help

        Exit status: 0 when the links were resolved (whatever the outcome), 1 when the routes
        file cannot be used, 2 for bad usage or unreadable input.
        """

    static func run(_ arguments: [String], output: inout Output) throws(CLIError) -> ExitCode {
        let parsed = try Arguments(arguments, command: "resolve", options: ["--schema", "--routes", "--satisfied", "--now", "--links"],
                                   booleans: ["--json", "--help", "--shapes"])
        if parsed.has("--help") {
            output.print(help)
            return .success
        }
        let batch = parsed.last("--links")
        let url = parsed.positionals.first
        if batch == nil, url == nil { throw .missingArgument("the URL to resolve") }
        if let extra = batch == nil ? parsed.positionals.dropFirst().first : parsed.positionals.first { throw .unexpectedArgument(extra) }
        guard let schemaPath = parsed.last("--schema") else { throw .missingArgument("--schema FILE") }
        guard let routesPath = parsed.last("--routes") else { throw .missingArgument("--routes FILE") }
        let now = try InputFiles.timestamp(parsed.last("--now"), option: "--now")
        let satisfied = Set(parsed.all("--satisfied").flatMap { $0.split(separator: ",").map(String.init) })
        let schema = try InputFiles.schema(at: schemaPath).schema
        let links = try batch.map { path throws(CLIError) in try InputFiles.links(at: path) }
        let json = try InputFiles.json(at: routesPath)
        let (document, decodeProblems) = RoutesDocument.decode(json)
        guard let document, document.app == schema.app else {
            output.error("waymark: \(routesPath) cannot be used:")
            for problem in decodeProblems where problem.severity == .error {
                output.error("  \(problem.code.rawValue) at \(problem.path): \(problem.message)")
            }
            if let document {
                output.error("  invalidFormat at app: These routes are for the app \"\(document.app)\", but the schema \(schema.buildName) is for \"\(schema.app)\".")
            }
            return .invalid
        }
        // As the build's manifest: a route with an error of its own is left out, as is one
        // the build cannot compile; the others answer (docs/resolution.md).
        let resolver = Resolver(schema: schema, analysis: RouteAnalysis(document: document, now: now))
        for problem in decodeProblems where problem.severity == .error {
            output.error("waymark: left out of \(schema.buildName)'s table, as its manifest leaves it out: \(problem.code.rawValue) at \(problem.path): \(problem.message)")
        }
        for problem in resolver.leftOut {
            output.error("waymark: left out of \(schema.buildName)'s table, as its manifest leaves it out: \(problem.code.rawValue) at \(problem.path): \(problem.message)")
        }
        // The instant straight from the text (whole microseconds), not through a Date.
        let context = ResolutionContext(satisfied: satisfied,
                                        nowMicroseconds: parsed.last("--now").flatMap { Timestamp.microseconds($0) } ?? Timestamp.microseconds(of: now))
        let shapes = parsed.has("--shapes")
        func result(_ link: String) -> JSONValue {
            let json = resolver.resolve(url: link, context: context).json
            guard shapes, case .object(var fields) = json else { return json }
            fields["shape"] = .string(LinkShape(link: link, vocabulary: resolver.vocabulary).description)
            return .object(fields)
        }
        if let links {
            for link in links { output.print(result(link).serialized()) }
            return .success
        }
        let resolution = resolver.resolve(url: url!, context: context)
        if parsed.has("--json") {
            output.print(result(url!).serialized(pretty: true))
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
