import DatabaseStore
import Foundation
import ManifestStore
import SystemIO

/// `waymark migrate --from SOURCE --to TARGET`: a data directory into an empty database, or a
/// database into a new data directory (`docs/postgres.md`, "Moving").
enum MigrateCommand {
    static let help = """
        Usage: waymark migrate --from DIR --to postgres://…
               waymark migrate --from postgres://… --to DIR

        Copies a store from a data directory into an empty PostgreSQL database, or from one
        back into a new (or empty) data directory: every revision, schema, schedule, the
        rollout's state, the tokens and the audit log, byte for byte. Then opens the copy and
        checks it against the source: every revision's SHA-256 (each document read back),
        the schemas', the schedules', the rollout's state, the tokens, the audit log's length.
        Stop the daemons on the source first (a data directory is refused while one runs).
        Telemetry counts stay in the data directory (they are not in the database yet).
        A URL may also come from WAYMARK_DATABASE_URL: pass --from or --to as "database".

        Exit status: 0 copied and checked, 1 the copy differs from the source, 2 bad usage,
        3 the source or target cannot be used (not empty, damaged, unreachable).
        """

    static func run(_ arguments: [String], output: inout Output) throws(CLIError) -> ExitCode {
        let parsed = try Arguments(arguments, command: "migrate", options: ["--from", "--to"], booleans: ["--help"])
        if parsed.has("--help") {
            output.print(help)
            return .success
        }
        if let extra = parsed.positionals.first { throw .unexpectedArgument(extra) }
        guard let from = parsed.last("--from") else { throw .missingArgument("--from DIR or --from postgres://…") }
        guard let to = parsed.last("--to") else { throw .missingArgument("--to postgres://… or --to DIR") }
        let source = try place(from, option: "--from"), target = try place(to, option: "--to")
        guard source.isDatabase != target.isDatabase else {
            throw .invalidValue(option: "--to", value: to, expected: "a database when --from is a directory, a directory when --from is a database")
        }
        do throws(StoreError) {
            let scratch = try readingIOErrors(as: StoreError.init) { () throws(IOError) in
                try DataDirectory(path: NSTemporaryDirectory() + "waymark-migrate-\(getpid())", subdirectories: [])
            }
            defer { try? FileManager.default.removeItem(atPath: scratch.path) }
            // The source opened as a store: checked as a daemon checks it (a directory locked, repaired).
            let original: ManifestStore = source.isDatabase
                ? try ManifestStore.open(directory: scratch, medium: DatabaseMedium(url: source.text))
                : try ManifestStore.open(at: source.text).store
            let medium: any StoreMedium
            let local: DataDirectory
            if target.isDatabase {
                medium = try DatabaseMedium(url: target.text)
                local = scratch
            } else {
                local = try readingIOErrors(as: StoreError.init) { () throws(IOError) in
                    try DataDirectory(path: target.text, subdirectories: ["revisions", "schemas", "schedules"])
                }
                medium = DirectoryMedium(local, auditRotationBytes: DataDirectory.defaultAuditRotationBytes)
            }
            guard try StoreCopy.isEmpty(medium) else {
                throw StoreError.refusedMirror("\(target.name) is not empty: a store is moved only into an empty directory or database.")
            }
            let summary = try StoreCopy.copy(from: original.medium, to: medium)
            let copy = try ManifestStore.open(directory: local, medium: medium)
            let differences = try StoreCopy.differences(original, copy)
            guard differences.isEmpty else {
                output.error("waymark: The copy in \(target.name) differs from \(source.name): " + differences.joined(separator: "; ") + ".")
                return .invalid
            }
            output.print("Copied \(summary.revisions) revision(s) (every SHA-256 checked, each document read back), \(summary.schemas) schema(s), "
                + "\(summary.schedules) schedule(s), \(summary.rollout ? "the rollout's state" : "no rollout"), \(copy.tokens.all.count) token(s) "
                + "and \(summary.auditEntries) audit entr\(summary.auditEntries == 1 ? "y" : "ies") from \(source.name) to \(target.name). "
                + (target.isDatabase ? "Start the nodes with --database." : "Start waymark serve --data-dir \(target.text).")
                + (source.isDatabase ? "" : " Telemetry counts stay in \(source.text)."))
            return .success
        } catch {
            throw .store(error.message)
        }
    }

    private struct Place {
        let text: String
        let isDatabase: Bool
        /// As messages name it: a directory's path, never a database URL (it may hold a password).
        var name: String { isDatabase ? "the database" : text }
    }

    private static func place(_ text: String, option: String) throws(CLIError) -> Place {
        if text == "database" {
            guard let url = ProcessInfo.processInfo.environment["WAYMARK_DATABASE_URL"], !url.isEmpty else {
                throw .invalidValue(option: option, value: text, expected: "a URL, or WAYMARK_DATABASE_URL set")
            }
            return Place(text: url, isDatabase: true)
        }
        let isDatabase = text.hasPrefix("postgres://") || text.hasPrefix("postgresql://")
        guard !text.isEmpty else { throw .invalidValue(option: option, value: text, expected: "a directory or a postgres:// URL") }
        return Place(text: text, isDatabase: isDatabase)
    }
}
