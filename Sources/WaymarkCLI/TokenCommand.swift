import CivilDate
import DatabaseStore
import Foundation
import ManifestStore
import RouteEngine

/// `waymark token create|list|revoke --data-dir D`: edits the directory's tokens directly,
/// also while a daemon serves it (the daemon sees the change on its next request).
enum TokenCommand {
    static let help = """
        Usage: waymark token create --name NAME --scope SCOPE [--scope SCOPE...] [--rate N|unlimited] [--data-dir D | --database URL]
               waymark token list [--data-dir D | --database URL] [--json]
               waymark token revoke NAME|ID [--data-dir D | --database URL]

        Bearer tokens of a data directory (default ./data), or of the database nodes share
        (--database, or WAYMARK_DATABASE_URL: every node takes the change within its poll,
        2 s, and at once when notified). A created token is printed once:
        only its SHA-256 is stored. Works while 'waymark serve' runs on the directory; a
        revoked token stops working on the daemon's next request. Every change is audited.

        Scopes: \(Scope.allCases.map(\.rawValue).joined(separator: ", ")) (admin may do everything).
        Names: 1 to 100 letters, digits and - _ . @ :, starting with a letter or digit.

        --rate N   Requests per second the token may make to the routes of each scope it
                   uses (a burst of 5 s' worth), or unlimited; past it the daemon answers 429
                   with Retry-After. Without it: \(Scope.allCases.map { "\($0.rawValue) \(TokenRate.default(for: $0))" }.joined(separator: ", ")); an admin token unlimited.

        Exit status: 0 done, 1 nothing to revoke, 2 bad usage, 3 the data directory cannot be used.
        """

    static func run(_ arguments: [String], output: inout Output) throws(CLIError) -> ExitCode {
        let parsed = try Arguments(arguments, command: "token", options: ["--data-dir", "--database", "--name", "--scope", "--rate"], booleans: ["--json", "--help"])
        if parsed.has("--help") || parsed.positionals.first == "help" {
            output.print(help)
            return .success
        }
        guard let action = parsed.positionals.first else { throw .missingArgument("a token command: create, list or revoke") }
        let database = parsed.last("--database") ?? ProcessInfo.processInfo.environment["WAYMARK_DATABASE_URL"].flatMap { $0.isEmpty ? nil : $0 }
        if database != nil, parsed.last("--data-dir") != nil {
            throw .invalidValue(option: "--database", value: "…", expected: "either --data-dir or --database (a database's tokens are not in a directory)")
        }
        let directory = database != nil ? "the database" : parsed.last("--data-dir") ?? "data"
        let open = { (mustExist: Bool) throws(CLIError) -> TokenStore in
            guard let database else { return try Self.open(directory, mustExist: mustExist) }
            do throws(StoreError) {
                return try TokenStore.open(medium: DatabaseMedium(url: database))
            } catch {
                throw .store(error.message)
            }
        }
        let actor = "waymark token (\(NSUserName()))"
        if database == nil, action == "create" || action == "revoke", let primary = ManifestStore.following(dataDirectory: directory) {
            throw .refused("\(directory) is a follower's data directory (it mirrors \(primary)): create and revoke tokens on the primary; "
                + "followers copy them within their poll interval.")
        }
        switch action {
        case "create":
            if parsed.positionals.count > 1 { throw .unexpectedArgument(parsed.positionals[1]) }
            guard let name = parsed.last("--name") else { throw .missingArgument("--name NAME") }
            let texts = parsed.all("--scope").flatMap { $0.split(separator: ",").map(String.init) }
            guard !texts.isEmpty else { throw .missingArgument("--scope (one of \(Scope.allCases.map(\.rawValue).joined(separator: ", ")))") }
            var scopes: Set<Scope> = []
            for text in texts {
                guard let scope = Scope(rawValue: text) else {
                    throw .invalidValue(option: "--scope", value: text, expected: Scope.allCases.map(\.rawValue).joined(separator: ", "))
                }
                scopes.insert(scope)
            }
            var rate: TokenRate?
            if let text = parsed.last("--rate") {
                guard let parsedRate = TokenRate(text) else {
                    throw .invalidValue(option: "--rate", value: text, expected: "requests per second, 1 to \(TokenRate.maximum), or unlimited")
                }
                rate = parsedRate
            }
            let tokens = try open(false)
            let created: (record: TokenRecord, token: String)
            do throws(StoreError) {
                created = try tokens.create(name: name, scopes: scopes, rate: rate, actor: actor)
            } catch {
                throw .refused(error.message)
            }
            if parsed.has("--json") {
                var object = created.record.publicJSON.objectValue ?? [:]
                object["token"] = .string(created.token)
                output.print(JSONValue.object(object).serialized(pretty: true))
            } else {
                output.print(created.token)
                output.error("Created the token \"\(name)\" (id \(created.record.id); \(scopes.sorted().map(\.rawValue).joined(separator: ", "))). It is shown only this once.")
            }
            return .success
        case "list":
            if parsed.positionals.count > 1 { throw .unexpectedArgument(parsed.positionals[1]) }
            let records = try open(true).all
            if parsed.has("--json") {
                output.print(JSONValue.array(records.map(\.publicJSON)).serialized(pretty: true))
                return .success
            }
            if records.isEmpty {
                output.print("No tokens in \(directory).")
                return .success
            }
            let rows = [["ID", "NAME", "SCOPES", "RATE", "CREATED", "REVOKED"]] + records.map { record in
                [record.id, record.name, record.scopes.sorted().map(\.rawValue).joined(separator: ","), record.rate.map(String.init(describing:)) ?? "default",
                 Timestamp.format(record.created), record.revoked.map(Timestamp.format) ?? "-"]
            }
            output.table(rows)
            return .success
        case "revoke":
            guard parsed.positionals.count == 2 else {
                if parsed.positionals.count > 2 { throw .unexpectedArgument(parsed.positionals[2]) }
                throw .missingArgument("the NAME or ID of the token to revoke")
            }
            let target = parsed.positionals[1]
            let tokens = try open(true)
            let count: Int
            do throws(StoreError) {
                count = try tokens.revoke(target, actor: actor)
            } catch {
                throw .store(error.message)
            }
            guard count > 0 else {
                output.error("waymark: No live token is named or has the id \"\(target)\" in \(directory); nothing was revoked.")
                return .invalid
            }
            output.print("Revoked \(count) token\(count == 1 ? "" : "s") \"\(target)\".")
            return .success
        default:
            throw .invalidValue(option: "token", value: action, expected: "create, list or revoke")
        }
    }

    private static func open(_ directory: String, mustExist: Bool = false) throws(CLIError) -> TokenStore {
        var isDirectory: ObjCBool = false
        if mustExist, !(FileManager.default.fileExists(atPath: directory, isDirectory: &isDirectory) && isDirectory.boolValue) {
            throw .store("There is no data directory \(directory) (pass --data-dir).")
        }
        do {
            return try ManifestStore.openTokens(at: directory)
        } catch {
            throw .store(error.message)
        }
    }
}
