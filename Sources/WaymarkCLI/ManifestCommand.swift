import Foundation
import RouteEngine

/// `waymark manifest --schema FILE --routes FILE [--also-schema FILE…] [--revision N] [--now TIME] [--output FILE]`:
/// the manifest the server would serve that build for those routes, offline — an app's
/// bundled manifest, made in its build phase. Or `--server URL --platform P --version V`:
/// the one a server serves now, as it serves it.
enum ManifestCommand {
    static let help = """
        Usage: waymark manifest --schema FILE --routes FILE [--also-schema FILE...] [--revision N] [--now TIME] [--output FILE]
               waymark manifest --server URL [--token T] --platform P --version V [--output FILE]

        Writes the manifest a Waymark server serves the schema's app build for the routes
        published as revision N (GET /v1/manifest), byte for byte, without a server: the
        manifest an app bundles. The routes are validated first as a publish is, against
        this schema and the other live builds' (--also-schema); a routes file with errors
        writes nothing. Routes this build cannot resolve are left out (noted on stderr).
        With --server, the manifest that server serves the build now (its stable revision,
        GET /v1/manifest with a manifest:read token), checked to be that build's.

        Options:
          --schema FILE     The app build's waymark.schema/1 file
          --routes FILE     The waymark.routes/1 file, as published (its bytes give revisionSha256)
          --also-schema FILE  Another live build's schema, for validation only; repeat
          --revision N      The revision number it stands for (default 1; the app's cache
                            takes a served manifest only when its revision is higher)
          --now TIME        The revision's time, which decides the routes whose windows are
                            open (default: now), e.g. 2026-03-15T00:00:00Z
          --server URL      Fetch from this server instead (--token T or WAYMARK_TOKEN)
          --platform P, --version V   The build to fetch, with --server
          --output FILE     Write here (atomically) instead of standard output
          --help            Show this help

        Exit status: 0 written, 1 the routes are invalid for the schema, 2 bad usage or unreadable input.
        """

    static func run(_ arguments: [String], environment: [String: String] = [:], output: inout Output) throws(CLIError) -> ExitCode {
        let parsed = try Arguments(arguments, command: "manifest", options: ["--schema", "--routes", "--also-schema", "--revision", "--now", "--output",
                                                                         "--server", "--token", "--platform", "--version"],
                                   booleans: ["--help"])
        if parsed.has("--help") {
            output.print(help)
            return .success
        }
        if parsed.last("--server") != nil { return try fetch(parsed, environment: environment, output: &output) }
        guard let schemaPath = parsed.last("--schema") else { throw .missingArgument("--schema FILE") }
        guard parsed.all("--schema").count == 1 else { throw .unexpectedArgument("a second --schema (a manifest is for one build)") }
        guard let routesPath = parsed.last("--routes") else { throw .missingArgument("--routes FILE") }
        if let extra = parsed.positionals.first { throw .unexpectedArgument(extra) }
        let revision = try parsed.number("--revision", default: 1, in: 1...Int(Int32.max), expected: "a revision number from 1") ?? 1
        let now = try InputFiles.timestamp(parsed.last("--now"), option: "--now")
        let schema = try InputFiles.schema(at: schemaPath).schema
        let schemaJSON = try InputFiles.json(at: schemaPath)
        let routesBytes = try InputFiles.bytes(at: routesPath)
        let routes = try InputFiles.json(at: routesPath)

        let others = try parsed.all("--also-schema").map { (path: String) throws(CLIError) in try InputFiles.schema(at: path).schema }
        let report = Validator.validate(routes, against: [schema] + others, now: now)
        guard report.isValid, let document = RoutesDocument.decode(routes).document else {
            ValidateCommand.printHuman(report, routesPath: routesPath, schemas: [schema] + others, output: &output)
            return .invalid
        }
        let resolver = Resolver(schema: schema, analysis: RouteAnalysis(document: document, now: now))
        let served = ServedManifest(resolver: resolver, schemaJSON: schemaJSON, revision: revision,
                                    revisionSha256: SHA256.hex(routesBytes), routes: ServedManifest.routes(of: routes))
        try write(served.bytes, parsed, output: &output)
        for id in served.unresolvable { output.error("note: route \(id) is left out: \(schema.buildName) cannot resolve it") }
        return .success
    }

    /// The manifest a server serves the build now, byte for byte, once it is checked to be
    /// a good manifest of that build (a proxy's error page is not bundled).
    static func fetch(_ parsed: Arguments, environment: [String: String], output: inout Output) throws(CLIError) -> ExitCode {
        for offline in ["--schema", "--routes", "--also-schema", "--revision", "--now"] where parsed.last(offline) != nil {
            throw .unexpectedArgument("\(offline) with --server (the server's manifest is what it is)")
        }
        guard let platform = parsed.last("--platform") else { throw .missingArgument("--platform P (with --server)") }
        guard let version = parsed.last("--version") else { throw .missingArgument("--version V (with --server)") }
        if let extra = parsed.positionals.first { throw .unexpectedArgument(extra) }
        let client = try APIClient(parsed, environment: environment)
        var query = URLComponents()
        query.queryItems = [URLQueryItem(name: "platform", value: platform), URLQueryItem(name: "version", value: version)]
        let answer = try client.send("GET", "/v1/manifest?" + (query.percentEncodedQuery ?? ""))
        guard answer.status == 200 else { throw APIClient.refusal(answer) }
        let app = answer.json["app"]?.stringValue ?? ""
        if case .failure(let error) = Manifest.decode(answer.body, for: AppBuild(app: app, platform: platform, version: version)) {
            throw .unavailable("The server's answer is not a good manifest of \(platform) \(version): \(error.message)")
        }
        try write(answer.body, parsed, output: &output)
        return .success
    }

    /// To `--output` atomically, or to standard output as is.
    static func write(_ bytes: [UInt8], _ parsed: Arguments, output: inout Output) throws(CLIError) {
        guard let path = parsed.last("--output") else {
            output.write(String(decoding: bytes, as: UTF8.self))
            return
        }
        do {
            try Data(bytes).write(to: URL(fileURLWithPath: path), options: .atomic)
        } catch {
            throw .unreadableFile(path, reason: "cannot write it: \((error as NSError).localizedDescription)")
        }
    }
}
