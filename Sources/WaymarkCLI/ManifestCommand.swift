import Foundation
import RouteEngine

/// `waymark manifest --schema FILE --routes FILE [--also-schema FILE…] [--revision N] [--now TIME] [--output FILE]`:
/// the manifest the server would serve that build for those routes, offline — an app's
/// bundled manifest, made in its build phase.
enum ManifestCommand {
    static let help = """
        Usage: waymark manifest --schema FILE --routes FILE [--also-schema FILE...] [--revision N] [--now TIME] [--output FILE]

        Writes the manifest a Waymark server serves the schema's app build for the routes
        published as revision N (GET /v1/manifest), byte for byte, without a server: the
        manifest an app bundles. The routes are validated first as a publish is, against
        this schema and the other live builds' (--also-schema); a routes file with errors
        writes nothing. Routes this build cannot resolve are left out (noted on stderr).

        Options:
          --schema FILE     The app build's waymark.schema/1 file
          --routes FILE     The waymark.routes/1 file, as published (its bytes give revisionSha256)
          --also-schema FILE  Another live build's schema, for validation only; repeat
          --revision N      The revision number it stands for (default 1; the app's cache
                            takes a served manifest only when its revision is higher)
          --now TIME        The revision's time, which decides the routes whose windows are
                            open (default: now), e.g. 2026-03-15T00:00:00Z
          --output FILE     Write here (atomically) instead of standard output
          --help            Show this help

        Exit status: 0 written, 1 the routes are invalid for the schema, 2 bad usage or unreadable input.
        """

    static func run(_ arguments: [String], output: inout Output) throws(CLIError) -> ExitCode {
        let parsed = try Arguments(arguments, command: "manifest", options: ["--schema", "--routes", "--also-schema", "--revision", "--now", "--output"],
                                   booleans: ["--help"])
        if parsed.has("--help") {
            output.print(help)
            return .success
        }
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
        if let path = parsed.last("--output") {
            do {
                try Data(served.bytes).write(to: URL(fileURLWithPath: path), options: .atomic)
            } catch {
                throw .unreadableFile(path, reason: "cannot write it: \((error as NSError).localizedDescription)")
            }
        } else {
            output.write(String(decoding: served.bytes, as: UTF8.self))
        }
        for id in served.unresolvable { output.error("note: route \(id) is left out: \(schema.buildName) cannot resolve it") }
        return .success
    }
}
