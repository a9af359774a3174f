import CivilDate
import Foundation
import RouteEngine

/// Reading the documents a command is given, with errors that name the file.
enum InputFiles {
    static func bytes(at path: String) throws(CLIError) -> [UInt8] {
        do {
            return [UInt8](try Data(contentsOf: URL(fileURLWithPath: path)))
        } catch {
            throw .unreadableFile(path, reason: (error as NSError).localizedDescription)
        }
    }

    static func json(at path: String) throws(CLIError) -> JSONValue {
        let data = try bytes(at: path)
        do {
            return try JSONParser().parse(data)
        } catch {
            throw .invalidJSON(path, reason: error.message)
        }
    }

    static func schema(at path: String) throws(CLIError) -> (schema: Schema, warnings: [ValidationProblem]) {
        switch Schema.decode(try json(at: path)) {
        case .success(let decoded): return decoded
        case .failure(let error):
            throw .invalidSchema(path, problems: error.problems.filter { $0.severity == .error }.map { "\($0.path): \($0.message)" })
        }
    }

    static func timestamp(_ text: String?, option: String) throws(CLIError) -> Date {
        guard let text else { return Date() }
        guard let date = Timestamp.parse(text) else {
            throw .invalidValue(option: option, value: text, expected: "a time like 2026-03-15T00:00:00Z")
        }
        return date
    }
}
