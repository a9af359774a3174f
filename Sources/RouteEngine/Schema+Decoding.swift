extension Schema {
    /// Decodes and checks a `waymark.schema/1` document. Warnings (unknown fields) are
    /// returned beside the schema; any error makes the whole schema unusable.
    public static func decode(_ json: JSONValue) -> Result<(schema: Schema, warnings: [ValidationProblem]), SchemaError> {
        var reader = FieldReader()
        let root = JSONPath.root
        guard let object = reader.object(json, at: root) else { return .failure(SchemaError(problems: reader.problems)) }
        _ = reader.checkFormat(object, expected: format)
        reader.warnUnknownKeys(object, known: ["format", "app", "platform", "version", "schemes", "hosts", "appleAppIDs",
                                               "android", "landing", "preconditions", "destinations"], at: root)
        let app = reader.requiredString(object, "app", at: root)
        let platform = reader.requiredString(object, "platform", at: root)
        if let platform, !["ios", "android"].contains(platform) {
            reader.report(.invalidFormat, at: root + "platform", "platform must be \"ios\" or \"android\", not \"\(platform)\".")
        }
        let version = reader.requiredString(object, "version", at: root)
        if let version, !Schema.isValidVersion(version) {
            reader.report(.invalidFormat, at: root + "version",
                "version is 1 to 64 letters, digits and . - + _, starting and ending with a letter or digit (5.3.0, 5.3.0-beta+2), not \"\(version)\".")
        }
        let schemes = (reader.strings(object, "schemes", at: root) ?? []).map { $0.lowercased() }
        for (index, scheme) in schemes.enumerated() where !isCustomScheme(scheme) {
            reader.report(.invalidFormat, at: root + "schemes" + index,
                          "\"\(scheme)\" is not a custom URL scheme (letters, digits, + - . starting with a letter; not http or https).")
        }
        let hosts = (reader.strings(object, "hosts", at: root) ?? []).map { $0.lowercased() }
        for (index, host) in hosts.enumerated() where !isHostName(host) {
            reader.report(.invalidFormat, at: root + "hosts" + index, "\"\(host)\" is not a host name such as shop.example.")
        }
        if schemes.isEmpty && hosts.isEmpty {
            reader.report(.invalidFormat, at: root + "schemes", "A schema must declare at least one scheme or host, or no link can reach the app.")
        }
        let appleAppIDs = reader.strings(object, "appleAppIDs", at: root) ?? []
        var android: AndroidApp?
        if let androidObject = reader.object(object["android"], at: root + "android"),
           let package = reader.requiredString(androidObject, "package", at: root + "android") {
            android = AndroidApp(package: package,
                                 sha256CertFingerprints: reader.strings(androidObject, "sha256CertFingerprints", at: root + "android") ?? [])
        }
        var landing: Landing?
        if let landingObject = reader.object(object["landing"], at: root + "landing") {
            reader.warnUnknownKeys(landingObject, known: Set(Landing.fields), at: root + "landing")
            var found = Landing()
            for field in Landing.fields {
                guard let address = reader.string(landingObject, field, at: root + "landing") else { continue }
                // The same rule as a route's fallback: only an https address with a host is ever a redirect's Location.
                if let problem = RouteAnalysis.checkFallback(address, at: root + "landing" + field) {
                    reader.report(.invalidFormat, at: problem.path, problem.message)
                    continue
                }
                switch field {
                case "appStoreURL": found.appStoreURL = address
                case "playStoreURL": found.playStoreURL = address
                case "webURL": found.webURL = address
                default: found.notFoundURL = address
                }
            }
            landing = found
        }
        let preconditions = reader.strings(object, "preconditions", at: root) ?? []
        var destinations: [String: DestinationSpec] = [:]
        if let destinationObjects = reader.requiredObject(object, "destinations", at: root) {
            if destinationObjects.isEmpty {
                reader.report(.invalidFormat, at: root + "destinations", "A schema must declare at least one destination.")
            }
            for name in destinationObjects.keys.sorted() {
                let path = root + "destinations" + name
                guard isIdentifier(name) else {
                    reader.report(.invalidFormat, at: path, "The destination name \"\(name)\" must be letters, digits and _ only.")
                    continue
                }
                if let destination = decodeDestination(destinationObjects[name]!, at: path, preconditions: preconditions, reader: &reader) {
                    destinations[name] = destination
                }
            }
        }
        let lineage = deriveAncestry(&destinations, reader: &reader)
        let errors = reader.problems.filter { $0.severity == .error }
        guard errors.isEmpty, let app, let platform, let version else { return .failure(SchemaError(problems: reader.problems)) }
        var schema = Schema(app: app, platform: platform, version: version, schemes: schemes, hosts: hosts,
                            appleAppIDs: appleAppIDs, android: android, preconditions: preconditions, destinations: destinations,
                            lineage: lineage)
        schema.landing = landing
        return .success((schema, reader.problems))
    }

    private static func decodeDestination(
        _ value: JSONValue, at path: JSONPath, preconditions: [String], reader: inout FieldReader
    ) -> DestinationSpec? {
        guard let object = reader.object(value, at: path) else { return nil }
        reader.warnUnknownKeys(object, known: ["parent", "tab", "presentation", "preconditions", "params"], at: path)
        var destination = DestinationSpec()
        destination.parent = reader.string(object, "parent", at: path)
        destination.tab = reader.string(object, "tab", at: path)
        if let presentation = reader.string(object, "presentation", at: path) {
            if let known = Presentation(rawValue: presentation) {
                destination.presentation = known
            } else {
                reader.report(.invalidFormat, at: path + "presentation",
                              "presentation must be one of push, sheet, fullScreen, tab; not \"\(presentation)\".")
            }
        }
        destination.preconditions = reader.strings(object, "preconditions", at: path) ?? []
        for (index, precondition) in destination.preconditions.enumerated() where !preconditions.contains(precondition) {
            reader.report(.invalidFormat, at: path + "preconditions" + index,
                          "The precondition \"\(precondition)\" is not declared in the schema's preconditions.")
        }
        if let params = reader.object(object["params"], at: path + "params") {
            for name in params.keys.sorted() {
                let paramPath = path + "params" + name
                guard isIdentifier(name) else {
                    reader.report(.invalidFormat, at: paramPath, "The param name \"\(name)\" must be letters, digits and _ only.")
                    continue
                }
                if let spec = decodeParam(params[name]!, at: paramPath, reader: &reader) { destination.params[name] = spec }
            }
        }
        return destination
    }

    private static func decodeParam(_ value: JSONValue, at path: JSONPath, reader: inout FieldReader) -> ParamSpec? {
        guard let object = reader.object(value, at: path) else { return nil }
        reader.warnUnknownKeys(object, known: ["type", "min", "max", "minLength", "maxLength", "pattern", "values", "optional"], at: path)
        guard let typeName = reader.requiredString(object, "type", at: path) else { return nil }
        guard let type = ParamType(rawValue: typeName) else {
            reader.report(.invalidFormat, at: path + "type", "type must be one of int, string, enum, uuid, slug; not \"\(typeName)\".")
            return nil
        }
        var spec = ParamSpec(type: type, isOptional: reader.bool(object, "optional", at: path) ?? false)
        let before = reader.errorCount
        func only(_ key: String, for types: [ParamType]) -> Bool {
            guard object[key] != nil else { return false }
            guard types.contains(type) else {
                reader.report(.invalidFormat, at: path + key, "\(key) does not apply to a param of type \(type.rawValue).")
                return false
            }
            return true
        }
        if only("min", for: [.int]) { spec.minimum = reader.int(object, "min", at: path) }
        if only("max", for: [.int]) { spec.maximum = reader.int(object, "max", at: path) }
        if only("minLength", for: [.string, .slug]) { spec.minimumLength = reader.int(object, "minLength", at: path) }
        if only("maxLength", for: [.string, .slug]) { spec.maximumLength = reader.int(object, "maxLength", at: path) }
        if only("values", for: [.enum]) { spec.values = reader.strings(object, "values", at: path) }
        if only("pattern", for: [.string]), let source = reader.string(object, "pattern", at: path) {
            do {
                spec.pattern = try SafeRegex(source)
            } catch {
                reader.report(.invalidPattern, at: path + "pattern", "The pattern \(source) cannot be used: \(error.message)")
            }
        }
        if let pattern = spec.pattern {
            // The longest value the pattern can be asked to match: its maxLength, and never more
            // than the longest text any param takes (a whole link, and in-app requests alike).
            let longest = min(spec.maximumLength ?? ParamSpec.longestText, ParamSpec.longestText)
            let steps = pattern.worstCaseSteps(length: longest)
            if steps > SafeRegex.matchBudget {
                let fits = SafeRegex.matchBudget / pattern.stepsPerScalar
                reader.report(.invalidPattern, at: path + "pattern",
                              "The pattern \(pattern.description) may take \(steps) steps on a value of \(longest) characters, over the budget of "
                              + "\(SafeRegex.matchBudget): " + (fits >= 1 ? "give the param a maxLength of at most \(fits), or simplify the pattern." : "simplify it."))
            }
        }
        if let minimum = spec.minimum, let maximum = spec.maximum, minimum > maximum {
            reader.report(.invalidFormat, at: path + "min", "min (\(minimum)) is greater than max (\(maximum)).")
        }
        if let minimum = spec.minimumLength, minimum < 0 {
            reader.report(.invalidFormat, at: path + "minLength", "minLength must not be negative.")
        }
        if let minimum = spec.minimumLength, let maximum = spec.maximumLength, minimum > maximum {
            reader.report(.invalidFormat, at: path + "minLength", "minLength (\(minimum)) is greater than maxLength (\(maximum)).")
        }
        if type == .enum, spec.values?.isEmpty ?? true {
            reader.report(.invalidFormat, at: path + "values", "An enum param needs a non-empty list of values.")
        }
        return reader.errorCount > before ? nil : spec
    }

    /// Fills each destination's depth and tab from its ancestry; reports unknown parents
    /// and cycles (once per cycle, on its first member by name). Each destination is
    /// visited once: a walk stops at the first ancestor already derived, and the chain it
    /// walked is derived from there down.
    /// - Complexity: O(destinations), however deep the chains.
    private static func deriveAncestry(_ destinations: inout [String: DestinationSpec], reader: inout FieldReader) -> [Schema.Lineage] {
        var lineage: [Schema.Lineage] = []
        enum State { case derived, broken }
        var states: [String: State] = [:]
        for name in destinations.keys.sorted() where states[name] == nil {
            var chain: [String] = []  // walked upward from `name`, not yet derived
            var onChain: Set<String> = []
            var cursor = name
            var below: State?  // the state of the first ancestor reached that was already decided
            while true {
                if let state = states[cursor] { below = state; break }
                guard onChain.insert(cursor).inserted else {
                    reader.report(.invalidFormat, at: JSONPath.root + "destinations" + cursor + "parent",
                                  "The parents of \"\(cursor)\" form a cycle.")
                    below = .broken
                    break
                }
                chain.append(cursor)
                guard let parent = destinations[cursor]!.parent else { break }
                guard destinations[parent] != nil else {
                    reader.report(.invalidFormat, at: JSONPath.root + "destinations" + cursor + "parent",
                                  "The parent \"\(parent)\" is not a destination of this schema.")
                    below = .broken
                    break
                }
                cursor = parent
            }
            if below == .broken {
                for member in chain { states[member] = .broken }
                continue
            }
            for member in chain.reversed() {
                var destination = destinations[member]!
                var parentIndex = -1
                destination.isGated = !destination.preconditions.isEmpty
                if let parent = destination.parent, let above = destinations[parent] {
                    destination.depth = above.depth + 1
                    destination.effectiveTab = destination.tab ?? above.effectiveTab
                    destination.isGated = destination.isGated || above.isGated
                    parentIndex = above.lineageIndex
                    if !above.keptPath.isEmpty, above.keptPath.count < Schema.keptPathLength { destination.keptPath = above.keptPath + [member] }
                } else {
                    destination.effectiveTab = destination.tab
                    destination.keptPath = [member]
                }
                destination.lineageIndex = lineage.count
                lineage.append(Schema.Lineage(name: member, parent: parentIndex, preconditions: destination.preconditions))
                destinations[member] = destination
                states[member] = .derived
            }
        }
        return lineage
    }
}

/// `[A-Za-z_][A-Za-z0-9_]*`
func isIdentifier(_ text: String) -> Bool {
    guard let first = text.utf8.first, !isDigit(first) else { return false }
    return text.utf8.allSatisfy { isASCIIAlphanumeric($0) || $0 == UInt8(ascii: "_") }
}

/// RFC 3986 §3.1 scheme syntax, excluding the web schemes that go through `hosts`.
func isCustomScheme(_ scheme: String) -> Bool {
    guard let first = scheme.utf8.first, isASCIIAlphanumeric(first), !isDigit(first) else { return false }
    guard scheme.utf8.allSatisfy({ isASCIIAlphanumeric($0) || "+-.".utf8.contains($0) }) else { return false }
    return scheme != "http" && scheme != "https"
}

/// Lowercase DNS names: labels of letters, digits and inner hyphens, at least two labels,
/// the last not all digits (RFC 3696 §2: no top-level domain is), which refuses IPv4
/// literals such as `10.0.0.1`; IPv6 literals have no place in the grammar at all. A host
/// is where links are answered, and an address is no such place.
func isHostName(_ host: String) -> Bool {
    let labels = host.split(separator: ".", omittingEmptySubsequences: false)
    guard labels.count >= 2, host.utf8.count <= 253, let last = labels.last, !last.utf8.allSatisfy(isDigit) else { return false }
    return labels.allSatisfy { label in
        !label.isEmpty && label.utf8.count <= 63 && label.first != "-" && label.last != "-"
            && label.utf8.allSatisfy { isDigit($0) || ($0 >= UInt8(ascii: "a") && $0 <= UInt8(ascii: "z")) || $0 == UInt8(ascii: "-") }
    }
}
