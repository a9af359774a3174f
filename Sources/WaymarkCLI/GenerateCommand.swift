import Foundation
import RouteEngine

/// `waymark generate swift --schema FILE [--type NAME] [--output FILE]`: the schema's
/// destinations as a Swift enum with typed params (`SwiftGenerator`).
enum GenerateCommand {
    static let help = """
        Usage: waymark generate swift --schema FILE [--type NAME] [--output FILE]

        Writes the schema's destinations as a Swift enum (default name Destination): a case
        per destination with its params typed (int → Int, the others → String, optional ones
        optional), and conversions to and from DestinationRequest and Screen. An app adds
        the file to its target (it imports RouteEngine and WaymarkClient) and dispatches
        .request(Destination.orderDetail(orderId: 42).request): a typo no longer compiles.

        Options:
          --schema FILE     The app build's waymark.schema/1 file
          --type NAME       The enum's name (a Swift identifier; default Destination)
          --output FILE     Write here (atomically) instead of standard output
          --help            Show this help

        Exit status: 0 written, 2 bad usage or unreadable input.
        """

    static func run(_ arguments: [String], output: inout Output) throws(CLIError) -> ExitCode {
        guard arguments.first == "swift" || arguments.first == "--help" else {
            throw arguments.first.map { .unexpectedArgument($0) } ?? .missingArgument("the language: waymark generate swift …")
        }
        let parsed = try Arguments(Array(arguments.dropFirst()), command: "generate", options: ["--schema", "--type", "--output"],
                                   booleans: ["--help"])
        if parsed.has("--help") || arguments.first == "--help" {
            output.print(help)
            return .success
        }
        guard let schemaPath = parsed.last("--schema") else { throw .missingArgument("--schema FILE") }
        if let extra = parsed.positionals.first { throw .unexpectedArgument(extra) }
        let typeName = parsed.last("--type") ?? "Destination"
        guard SwiftGenerator.identifier(typeName) == typeName, !SwiftGenerator.members.contains(typeName) else {
            throw .invalidValue(option: "--type", value: typeName, expected: "a Swift identifier (letters, digits, _), not a keyword")
        }
        let schema = try InputFiles.schema(at: schemaPath).schema
        let source = SwiftGenerator(schema: schema, typeName: typeName).source()
        if let path = parsed.last("--output") {
            do {
                try Data(source.utf8).write(to: URL(fileURLWithPath: path), options: .atomic)
            } catch {
                throw .unreadableFile(path, reason: "cannot write it: \((error as NSError).localizedDescription)")
            }
        } else {
            output.write(source)
        }
        return .success
    }
}
