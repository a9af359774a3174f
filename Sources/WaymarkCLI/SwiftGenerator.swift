import RouteEngine

/// Writes a schema's destinations as Swift: one enum with a case per destination, its
/// params as typed associated values (`int` → `Int`, every other type → `String`; optional
/// params → optionals), and the conversions to and from `DestinationRequest` and `Screen`,
/// so a typo in a destination or a param is a compile error in the app instead of a
/// `notFound` at run time. Pure: the same schema gives the same bytes.
///
/// Every name the schema allows (`[A-Za-z_][A-Za-z0-9_]*`) becomes a Swift name that
/// compiles: keywords and `Type`/`Protocol` are quoted, the enum's own members and
/// `Hashable`'s get a `_` after them, and two names that would still be one get more `_`s
/// (in the schema's sorted order). The enum is `nonisolated` where the compiler knows it
/// (Swift 6.2), so a module whose default isolation is the main actor (a new Xcode project)
/// can use it from any task.
struct SwiftGenerator {
    let schema: Schema
    /// The enum's name.
    let typeName: String
    /// Each destination's case name, and each of its params' labels.
    let caseNames: [String: String]
    let labels: [String: [String: String]]

    init(schema: Schema, typeName: String) {
        self.schema = schema
        self.typeName = typeName
        var caseNames: [String: String] = [:], taken: Set<String> = []
        var labels: [String: [String: String]] = [:]
        for name in schema.destinations.keys.sorted() {
            caseNames[name] = Self.unique(Self.caseName(name), in: &taken)
            var used: Set<String> = []
            labels[name] = Dictionary(uniqueKeysWithValues: schema.destinations[name]!.params.keys.sorted().map {
                ($0, Self.unique(Self.identifier($0), in: &used))
            })
        }
        self.caseNames = caseNames
        self.labels = labels
    }

    /// `name`, or with `_`s added (inside any backticks) until no name in `taken` is the same.
    private static func unique(_ name: String, in taken: inout Set<String>) -> String {
        var candidate = name
        while taken.contains(candidate.replacingOccurrences(of: "`", with: "")) {
            candidate = candidate.hasSuffix("`") ? String(candidate.dropLast()) + "_`" : candidate + "_"
        }
        taken.insert(candidate.replacingOccurrences(of: "`", with: ""))
        return candidate
    }

    /// Swift's keywords, which a name must be quoted with backticks to use.
    static let keywords: Set<String> = [
        "associatedtype", "class", "deinit", "enum", "extension", "fileprivate", "func", "import", "init", "inout", "internal", "let",
        "open", "operator", "private", "precedencegroup", "protocol", "public", "rethrows", "static", "struct", "subscript", "typealias",
        "var", "break", "case", "catch", "continue", "default", "defer", "do", "else", "fallthrough", "for", "guard", "if", "in",
        "repeat", "return", "throw", "switch", "where", "while", "Any", "as", "await", "false", "is", "nil", "self", "Self", "super",
        "throws", "true", "try",
        // Not keywords, but `X.Type` and `X.Protocol` are the metatypes: a member so named must be quoted.
        "Type", "Protocol",
    ]

    /// A Swift identifier for a schema name: letters, digits and `_` kept, anything else
    /// `_`, a leading digit (or nothing) prefixed with `_`, `_` alone `__`, a keyword quoted.
    static func identifier(_ name: String) -> String {
        var text = String(name.unicodeScalars.map { scalar in
            ("a"..."z").contains(scalar) || ("A"..."Z").contains(scalar) || ("0"..."9").contains(scalar) || scalar == "_"
                ? Character(scalar) : "_"
        })
        if text.isEmpty || text.first!.isNumber { text = "_" + text }
        if text == "_" { text = "__" }  // `_` alone is no name
        return keywords.contains(text) ? "`\(text)`" : text
    }

    /// A Swift string literal of `text` (escaped).
    static func literal(_ text: String) -> String {
        var out = "\""
        for scalar in text.unicodeScalars {
            switch scalar {
            case "\\": out += "\\\\"
            case "\"": out += "\\\""
            case "\n": out += "\\n"
            case "\r": out += "\\r"
            case "\t": out += "\\t"
            default: out += scalar.value < 0x20 ? "\\u{\(String(scalar.value, radix: 16))}" : String(scalar)
            }
        }
        return out + "\""
    }

    /// The enum's own members and `Hashable`'s: a destination of one of these names gets a `_` after it.
    static let members: Set<String> = ["name", "params", "request", "screen", "init", "hashValue", "hash"]

    /// A case's identifier.
    static func caseName(_ name: String) -> String {
        let id = identifier(name)
        return members.contains(id) ? id + "_" : id
    }

    private static func swiftType(_ spec: ParamSpec) -> String {
        (spec.type == .int ? "Int" : "String") + (spec.isOptional ? "?" : "")
    }

    private var destinations: [(name: String, params: [(name: String, spec: ParamSpec)])] {
        schema.destinations.keys.sorted().map { name in
            let params = schema.destinations[name]!.params
            return (name, params.keys.sorted().map { ($0, params[$0]!) })
        }
    }

    /// The file.
    /// - Complexity: O(destinations × params).
    func source() -> String {
        let header = [
            "// Generated by `waymark generate swift` from the schema of \(schema.app) \(schema.buildName). Do not edit:",
            "// generate it again when the schema changes.",
            "import RouteEngine",
            "import WaymarkClient",
            "",
        ]
        var lines: [String] = ["public enum \(typeName): Hashable, Sendable {"]
        for (name, params) in destinations {
            let values = params.map { "\(labels[name]![$0.name]!): \(Self.swiftType($0.spec))" }
            let doc = params.compactMap { param in param.spec.values.map { "\(Self.literal(param.name)): \($0.map(Self.literal).joined(separator: ", "))" } }
            if !doc.isEmpty { lines.append("    /// \(doc.joined(separator: "; "))") }
            lines.append("    case \(caseNames[name]!)" + (values.isEmpty ? "" : "(\(values.joined(separator: ", ")))"))
        }
        lines += ["", "    /// The destination's name in the schema.", "    public var name: String {", "        switch self {"]
        for (name, params) in destinations {
            lines.append("        case .\(caseNames[name]!)\(params.isEmpty ? "" : "(\(params.map { _ in "_" }.joined(separator: ", ")))"): \(Self.literal(name))")
        }
        lines += ["        }", "    }", "", "    /// Its params as the engine takes them (an absent optional is left out).",
                  "    public var params: [String: ParamValue] {", "        switch self {"]
        for (name, params) in destinations {
            guard !params.isEmpty else { lines.append("        case .\(caseNames[name]!): return [:]"); continue }
            // Bound as p0, p1…: a param may be called `params` or `name`.
            let bound = params.indices.map { "let p\($0)" }.joined(separator: ", ")
            lines.append("        case .\(caseNames[name]!)(\(bound)):")
            lines.append("            var result: [String: ParamValue] = [:]")
            for (index, (param, spec)) in params.enumerated() {
                let wrap = spec.type == .int ? ".int" : ".string"
                lines.append(spec.isOptional ? "            if let p\(index) { result[\(Self.literal(param))] = \(wrap)(p\(index)) }"
                                             : "            result[\(Self.literal(param))] = \(wrap)(p\(index))")
            }
            lines.append("            return result")
        }
        lines += ["        }", "    }", "",
                  "    /// The in-app request for it (`RouteDispatcher.dispatch(.request(…))`).",
                  "    public var request: DestinationRequest { DestinationRequest(destination: name, params: params) }", "",
                  "    /// The screen it is, as a navigator's state holds it.",
                  "    public var screen: Screen { Screen(name, params: params) }", "",
                  "    public init?(_ request: DestinationRequest) { self.init(name: request.destination, params: request.params) }", "",
                  "    public init?(_ screen: Screen) { self.init(name: screen.destination, params: screen.params) }", "",
                  "    /// nil for a name the schema does not declare, a missing required param, a param",
                  "    /// of the wrong type or one the destination does not declare.",
                  "    public init?(name: String, params: [String: ParamValue]) {", "        switch name {"]
        for (name, params) in destinations {
            lines.append("        case \(Self.literal(name)):")
            if params.isEmpty {
                lines.append("            guard params.isEmpty else { return nil }")
            } else {
                let declared = params.map { Self.literal($0.name) }.joined(separator: ", ")
                lines.append("            guard params.keys.allSatisfy({ [\(declared)].contains($0) }) else { return nil }")
            }
            for (index, (param, spec)) in params.enumerated() {
                let kind = spec.type == .int ? "int" : "string", key = Self.literal(param)
                if spec.isOptional {
                    lines.append("            let p\(index): \(Self.swiftType(spec))")
                    lines.append("            switch params[\(key)] {")
                    lines.append("            case nil: p\(index) = nil")
                    lines.append("            case .\(kind)(let value)?: p\(index) = value")
                    lines.append("            default: return nil")
                    lines.append("            }")
                } else {
                    lines.append("            guard case .\(kind)(let p\(index))? = params[\(key)] else { return nil }")
                }
            }
            let arguments = params.enumerated().map { "\(labels[name]![$1.name]!): p\($0)" }.joined(separator: ", ")
            lines.append("            self = .\(caseNames[name]!)\(params.isEmpty ? "" : "(\(arguments))")")
        }
        lines += ["        default: return nil", "        }", "    }", "}"]
        // `nonisolated` on a type is Swift 6.2's; an older compiler has no default isolation to opt out of.
        let doc = "/// The destinations of \(schema.app) \(schema.buildName), with their params typed; usable from any task."
        return (header + ["#if compiler(>=6.2)", doc, "nonisolated " + lines[0]] + lines.dropFirst()
                + ["#else", doc] + lines + ["#endif", ""]).joined(separator: "\n")
    }
}
