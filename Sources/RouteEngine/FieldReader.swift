/// Reads typed fields out of a `JSONValue`, recording an `invalidFormat` problem with the
/// field's path for each one that is missing or of the wrong type, so a document's format
/// problems are reported all at once rather than one per attempt.
/// Held as a `ValidationReport`, so what it keeps is bounded however many it finds.
struct FieldReader {
    private(set) var found = ValidationReport()

    /// The problems it keeps, errors first.
    var problems: [ValidationProblem] { found.problems }

    /// Every error found so far, kept or only counted: a decoder compares it before and
    /// after a part to know whether that part had one.
    var errorCount: Int { found.errorCount }

    mutating func report(_ code: ProblemCode, at path: JSONPath, _ message: String) {
        found.append(ValidationProblem(code, at: path, message))
    }

    private mutating func wrongType(_ value: JSONValue, at path: JSONPath, expected: String) {
        report(.invalidFormat, at: path, "\(path) must be \(expected), but it is \(value.typeName).")
    }

    mutating func object(_ value: JSONValue?, at path: JSONPath) -> [String: JSONValue]? {
        guard let value else { return nil }
        guard case .object(let members) = value else { wrongType(value, at: path, expected: "an object"); return nil }
        return members
    }

    mutating func requiredObject(_ object: [String: JSONValue], _ key: String, at path: JSONPath) -> [String: JSONValue]? {
        guard let value = object[key] else { missing(key, at: path); return nil }
        return self.object(value, at: path + key)
    }

    mutating func string(_ object: [String: JSONValue], _ key: String, at path: JSONPath) -> String? {
        guard let value = object[key] else { return nil }
        guard case .string(let string) = value else {
            wrongType(value, at: path + key, expected: "a string")
            return nil
        }
        return string
    }

    mutating func requiredString(_ object: [String: JSONValue], _ key: String, at path: JSONPath) -> String? {
        guard object[key] != nil else { missing(key, at: path); return nil }
        guard let string = string(object, key, at: path) else { return nil }
        guard !string.isEmpty else {
            report(.invalidFormat, at: path + key, "\(path + key) must not be empty.")
            return nil
        }
        return string
    }

    mutating func int(_ object: [String: JSONValue], _ key: String, at path: JSONPath) -> Int? {
        guard let value = object[key] else { return nil }
        guard case .int(let int) = value else { wrongType(value, at: path + key, expected: "a whole number"); return nil }
        return int
    }

    mutating func bool(_ object: [String: JSONValue], _ key: String, at path: JSONPath) -> Bool? {
        guard let value = object[key] else { return nil }
        guard case .bool(let bool) = value else { wrongType(value, at: path + key, expected: "true or false"); return nil }
        return bool
    }

    /// A list of non-empty strings; nil (with a problem) if any element is not one.
    mutating func strings(_ object: [String: JSONValue], _ key: String, at path: JSONPath) -> [String]? {
        guard let value = object[key] else { return nil }
        guard case .array(let elements) = value else { wrongType(value, at: path + key, expected: "a list of strings"); return nil }
        var strings: [String] = []
        var isValid = true
        for (index, element) in elements.enumerated() {
            guard case .string(let string) = element, !string.isEmpty else {
                report(.invalidFormat, at: path + key + index, "\(path + key + index) must be a non-empty string.")
                isValid = false
                continue
            }
            strings.append(string)
        }
        return isValid ? strings : nil
    }

    mutating func missing(_ key: String, at path: JSONPath) {
        report(.invalidFormat, at: path + key, "\(path + key) is required but missing.")
    }

    /// Fields a newer format may add are tolerated, but one that is probably a typo is worth a warning.
    mutating func warnUnknownKeys(_ object: [String: JSONValue], known: Set<String>, at path: JSONPath) {
        for key in object.keys.sorted() where !known.contains(key) {
            report(.unknownField, at: path + key, "\(path + key) is not a field Waymark knows; it is ignored. Check its spelling.")
        }
    }

    /// The format tag every Waymark document carries, e.g. `waymark.routes/1`.
    mutating func checkFormat(_ object: [String: JSONValue], expected: String) -> Bool {
        guard let format = requiredString(object, "format", at: .root) else { return false }
        guard format == expected else {
            report(.invalidFormat, at: JSONPath.root + "format", "format is \"\(format)\", but this must be a \"\(expected)\" document.")
            return false
        }
        return true
    }
}
