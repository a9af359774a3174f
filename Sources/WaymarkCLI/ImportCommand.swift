import Foundation
import Importing
import LinkChecks
import RouteEngine

/// `waymark import firebase|csv FILE --host HOST --routes FILE --schema FILE… [--output FILE] [--dry-run] [--json] [--now T]`
enum ImportCommand {
    static let help = """
        Usage: waymark import firebase EXPORT.csv --host HOST --server URL [--token T]
                              [--output FILE] [--dry-run] [--json] [--now TIME]
               waymark import firebase EXPORT.csv --host HOST --routes FILE --schema FILE [--schema FILE...] [...]
               waymark import csv LINKS.csv --host HOST (--server URL | --routes FILE --schema FILE...) [...]

        Brings another service's short links in as routes (docs/migrating.md). Each short link
        on HOST becomes a route whose pattern is its path, opening what its deep link opens
        today: the deep link is resolved against the current routes (--routes) on every build
        (--schema), and the new route takes that destination and params. Links no route
        answers, links on page.link (Google's domain), archived and duplicate links, and values
        that break a rule are reported, never imported. It never publishes: review the
        document and the report, then 'waymark publish' it.

        firebase reads Google's Takeout export of Dynamic Links (one CSV per domain: short
        link, link, apn, afl, amv, ibi, ifl, ius, ipfl, ipbi, isi, imv, efr, ofl, st, sd, si,
        utm_*, at, ct, mt, pt, archived, link name, created). csv reads any service's export
        of short link, deep link[, title, description, image], with or without a header.

        Options:
          --host HOST      The custom domain whose links move (it must be a host of the schemas)
          --server URL     Take the current routes and every registered build's schema from this
                           server (or WAYMARK_SERVER), with --token T (routes:read; or WAYMARK_TOKEN)
          --routes FILE    Or: the current routes (waymark.routes/1); the imported ones are added after them
          --schema FILE    and a live build's waymark.schema/1 file; repeat for each (at least one)
          --output FILE    Write the routes document here (atomically); without it, to standard
                           output, and the report to standard error
          --dry-run        Print the report alone; write no document
          --json           The report as JSON: {"counts", "unknownColumns", "imported", "skipped", "validation",
                           "base" (with --server: the revision the routes are; publish with --base it)}
          --now TIME       Resolve as of this time (default: now)
          --help           Show this help

        Exit status: 0 when the resulting document is valid, 1 when it is not (or the file
        cannot be imported), 2 for bad usage or unreadable input.
        """

    static func run(_ arguments: [String], environment: [String: String], output: inout Output) throws(CLIError) -> ExitCode {
        let parsed = try Arguments(arguments, command: "import", options: ["--host", "--routes", "--schema", "--output", "--now", "--server", "--token"],
                                   booleans: ["--dry-run", "--json", "--help"])
        if parsed.has("--help") {
            output.print(help)
            return .success
        }
        guard let kind = parsed.positionals.first else { throw .missingArgument("what to import from: firebase or csv") }
        guard let source = LinkImport.Source(rawValue: kind) else {
            throw .invalidValue(option: "import", value: kind, expected: "firebase (a Takeout export) or csv (short link, deep link[, title, description, image])")
        }
        guard parsed.positionals.count >= 2 else { throw .missingArgument("the file to import") }
        guard parsed.positionals.count == 2 else { throw .unexpectedArgument(parsed.positionals[2]) }
        let path = parsed.positionals[1]
        guard let host = parsed.last("--host") else { throw .missingArgument("--host HOST (the custom domain whose links move)") }
        let now = try InputFiles.timestamp(parsed.last("--now"), option: "--now")
        let (routes, schemas, base) = try current(parsed, environment: environment)
        // The file's size before any of it is read: the import holds it whole.
        if let size = (try? FileManager.default.attributesOfItem(atPath: path))?[.size] as? Int, size > LinkImport.maximumFileBytes {
            throw .refused("\(path): " + LinkImport.Failure.tooLarge(size).description)
        }
        let bytes = try InputFiles.bytes(at: path)
        let result: (document: JSONValue, report: LinkImport.Report)
        do {
            result = try LinkImport(source: source, host: host).run(bytes, routes: routes, schemas: schemas, now: now)
        } catch {
            throw .refused("\(path): \(error.description)")
        }
        var validation = Validator.validate(result.document, against: schemas, now: now)
        validation.append(FallbackAddresses.report(in: result.document))
        let dryRun = parsed.has("--dry-run")
        var report = ""
        if parsed.has("--json") {
            guard case .object(var object) = result.report.json else { return .invalid }
            object["validation"] = validation.json
            if let base { object["base"] = .int(base) }
            report = JSONValue.object(object).serialized(pretty: true)
        } else {
            report = human(result.report, validation: validation, schemas: schemas)
            // Published with this base, a change made on the server since is refused (412), never overwritten.
            if let base { report += "\nMade from revision \(base): publish it with --base \(base) ('waymark publish FILE --base \(base)'), so that a change made since is refused, not overwritten." }
        }
        if dryRun {
            output.print(report)
        } else if parsed.last("--output") != nil {
            try ManifestCommand.write(result.document.serializedBytes(pretty: true) + [0x0A], parsed, output: &output)
            output.print(report)
        } else {
            output.write(String(decoding: result.document.serializedBytes(pretty: true) + [0x0A], as: UTF8.self))
            output.error(report)
        }
        return validation.isValid ? .success : .invalid
    }

    /// The current routes and every build's schema: from files (`--routes`, `--schema`…), or
    /// from a server (`--server`, `--token` with `routes:read`): its current revision's
    /// routes and every registered schema.
    /// `base`: the server's revision the routes are, when they came from one.
    static func current(_ parsed: Arguments, environment: [String: String]) throws(CLIError) -> (routes: JSONValue, schemas: [Schema], base: Int?) {
        if parsed.last("--server") != nil || (parsed.last("--routes") == nil && environment["WAYMARK_SERVER"] != nil) {
            guard parsed.last("--routes") == nil, parsed.all("--schema").isEmpty else {
                throw .invalidValue(option: "--server", value: parsed.last("--server") ?? "", expected: "either --server or --routes and --schema, not both")
            }
            let client = try APIClient(parsed, environment: environment)
            let listing = try client.send("GET", "/v1/revisions")
            guard listing.status == 200 else { throw APIClient.refusal(listing) }
            let routes: JSONValue
            let number = listing.json["current"]?.intValue
            if let number {
                let revision = try client.send("GET", "/v1/revisions/\(number)")
                guard revision.status == 200, let document = revision.json["routes"] else { throw APIClient.refusal(revision) }
                routes = document
            } else {
                throw .refused("The server has no routes yet: publish a first revision, then import into it.")
            }
            let list = try client.send("GET", "/v1/schemas")
            guard list.status == 200 else { throw APIClient.refusal(list) }
            var schemas: [Schema] = []
            for item in list.json["schemas"]?.arrayValue ?? [] {
                guard let platform = item["platform"]?.stringValue, let version = item["version"]?.stringValue,
                      let platformPart = platform.addingPercentEncoding(withAllowedCharacters: .urlPathAllowed.subtracting(["/"])),
                      let versionPart = version.addingPercentEncoding(withAllowedCharacters: .urlPathAllowed.subtracting(["/"])) else { continue }
                let answer = try client.send("GET", "/v1/schemas/\(platformPart)/\(versionPart)")
                guard answer.status == 200 else { throw APIClient.refusal(answer) }
                switch Schema.decode(answer.json) {
                case .success(let decoded): schemas.append(decoded.schema)
                case .failure: throw .refused("The server's schema for \(platform) \(version) cannot be read.")
                }
            }
            return (routes, schemas, number)
        }
        guard let routesPath = parsed.last("--routes") else { throw .missingArgument("--routes FILE (the current routes), or --server URL") }
        guard !parsed.all("--schema").isEmpty else { throw .missingArgument("--schema FILE (each live build's, at least one)") }
        let schemas = try parsed.all("--schema").map { (path: String) throws(CLIError) in try InputFiles.schema(at: path).schema }
        return (try InputFiles.json(at: routesPath), schemas, nil)
    }

    /// The report for people: the counts, then each link not imported with its reason.
    static func human(_ report: LinkImport.Report, validation: ValidationReport, schemas: [Schema]) -> String {
        var lines: [String] = []
        let unchanged = report.imported.filter(\.unchanged).count
        lines.append("\(report.rows) link(s) read: \(report.imported.count - unchanged) imported, \(unchanged) already imported (unchanged), \(report.skipped.count) not imported.")
        for reason in LinkImport.Reason.allCases where report.count(reason) > 0 {
            lines.append("  \(reason.rawValue): \(report.count(reason))")
        }
        if !report.unknownColumns.isEmpty { lines.append("Columns not read: \(report.unknownColumns.joined(separator: ", ")).") }
        for item in report.skipped {
            lines.append("row \(item.row) \(item.reason.rawValue) \(item.shortLink)")
            lines.append("    \(item.detail)\(item.shape.map { " Shape: \($0)" } ?? "")")
        }
        for item in report.imported where !item.notes.isEmpty {
            lines.append("row \(item.row) imported as \(item.routeID) (\(item.destination))")
            for note in item.notes { lines.append("    \(note)") }
        }
        let builds = schemas.map(\.buildName).joined(separator: ", ")
        lines.append("The routes document is \(validation.isValid ? "valid" : "INVALID") against \(builds): \(validation.errorCount) error(s), \(validation.warnings.count + validation.omittedWarnings) warning(s).")
        for problem in validation.errors.prefix(20) {
            lines.append("  error \(problem.code.rawValue) at \(problem.path): \(problem.message)")
        }
        return lines.joined(separator: "\n")
    }
}
