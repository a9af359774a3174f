import Foundation

/// Hand-written argument parsing: `--name value`, `--name=value`, repeatable options,
/// boolean flags, and positionals; `--` ends options.
struct Arguments {
    private(set) var values: [String: [String]] = [:]
    private(set) var flags: Set<String> = []
    private(set) var positionals: [String] = []

    /// - Parameters:
    ///   - options: names that take a value (`--schema`).
    ///   - booleans: names that do not (`--json`).
    init(_ arguments: [String], command: String, options: Set<String>, booleans: Set<String>) throws(CLIError) {
        var index = 0
        var optionsEnded = false
        while index < arguments.count {
            let argument = arguments[index]
            index += 1
            guard !optionsEnded, argument.hasPrefix("--") else {
                positionals.append(argument)
                continue
            }
            if argument == "--" { optionsEnded = true; continue }
            var name = argument
            var inline: String?
            if let equals = argument.firstIndex(of: "=") {
                name = String(argument[..<equals])
                inline = String(argument[argument.index(after: equals)...])
            }
            if booleans.contains(name), inline == nil {
                flags.insert(name)
            } else if options.contains(name) {
                if let inline {
                    values[name, default: []].append(inline)
                } else {
                    guard index < arguments.count else { throw .missingValue(name) }
                    values[name, default: []].append(arguments[index])
                    index += 1
                }
            } else {
                throw .unknownOption(argument, command: command)
            }
        }
    }

    func all(_ name: String) -> [String] { values[name] ?? [] }
    func last(_ name: String) -> String? { values[name]?.last }
    func has(_ flag: String) -> Bool { flags.contains(flag) }

    /// The last value of `option` as a whole number in `range`; `default` when absent.
    func number(_ option: String, default: Int? = nil, in range: ClosedRange<Int>, expected: String) throws(CLIError) -> Int? {
        guard let text = last(option) else { return `default` }
        guard let value = Int(text), range.contains(value) else { throw .invalidValue(option: option, value: text, expected: expected) }
        return value
    }
}

/// One option of a command, declared once for its help and its parser (`ServeCommand.options`).
struct OptionSpec: Sendable {
    let name: String
    /// What its value is called in the help (`N`, `DIR`); nil for a flag, which takes none.
    let value: String?
    /// Its description, a line each, as the help prints it.
    let description: [String]

    init(_ name: String, _ value: String?, _ description: [String]) {
        self.name = name
        self.value = value
        self.description = description
    }

    /// The option as written, with its value's name.
    var usage: String { value.map { "\(name) \($0)" } ?? name }
}

extension [OptionSpec] {
    /// The options that take a value.
    var valued: Set<String> { Set(filter { $0.value != nil }.map(\.name)) }
    /// The flags.
    var flags: Set<String> { Set(filter { $0.value == nil }.map(\.name)) }

    /// The help's lines for these: each option in a column of 25, its description beside it
    /// and under it; an option too wide for the column has its description on the lines below.
    var help: String {
        let column = 25, indent = String(repeating: " ", count: 2 + column)
        return map { option in
            var lines: [String] = []
            var rest = option.description[...]
            if option.usage.count < column, let first = rest.first {
                lines.append("  " + option.usage.padding(toLength: column, withPad: " ", startingAt: 0) + first)
                rest = rest.dropFirst()
            } else {
                lines.append("  " + option.usage)
            }
            lines += rest.map { indent + $0 }
            return lines.joined(separator: "\n")
        }.joined(separator: "\n")
    }
}
