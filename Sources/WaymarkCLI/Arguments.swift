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
