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

    /// A JSON document read from standard input (`-`), at most 16 MB.
    static func standardInputJSON() throws(CLIError) -> JSONValue {
        let data = FileHandle.standardInput.readDataToEndOfFile()
        guard data.count <= 16 << 20 else { throw .unreadableFile("standard input", reason: "more than 16 MB") }
        do {
            return try JSONParser().parse([UInt8](data))
        } catch {
            throw .invalidJSON("standard input", reason: error.message)
        }
    }

    static func schema(at path: String) throws(CLIError) -> (schema: Schema, warnings: [ValidationProblem]) {
        switch Schema.decode(try json(at: path)) {
        case .success(let decoded): return decoded
        case .failure(let error):
            throw .invalidSchema(path, problems: error.problems.filter { $0.severity == .error }.map { "\($0.path): \($0.message)" })
        }
    }

    /// A file of links, one JSON string per line (so a link may hold any character,
    /// controls and line breaks included, exactly as delivered). Empty lines are skipped.
    static func links(at path: String) throws(CLIError) -> [String] {
        let data: Data
        do {
            data = try Data(contentsOf: URL(fileURLWithPath: path))
        } catch {
            throw .unreadableFile(path, reason: (error as NSError).localizedDescription)
        }
        var links: [String] = []
        for (number, line) in data.split(separator: UInt8(ascii: "\n")).enumerated() where !line.isEmpty {
            guard let value = try? JSONParser().parse(Data(line)), let link = value.stringValue else {
                throw .invalidJSON(path, reason: "line \(number + 1) is not a JSON string")
            }
            links.append(link)
        }
        return links
    }

    static func timestamp(_ text: String?, option: String) throws(CLIError) -> Date {
        guard let text else { return Date() }
        guard let date = Timestamp.parse(text) else {
            throw .invalidValue(option: option, value: text, expected: "a time like 2026-03-15T00:00:00Z")
        }
        return date
    }
}
