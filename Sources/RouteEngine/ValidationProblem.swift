/// How much a problem matters: errors block publishing, warnings do not.
public enum Severity: String, Hashable, Sendable, Comparable {
    case error
    case warning

    public static func < (lhs: Severity, rhs: Severity) -> Bool { lhs == .error && rhs == .warning }
}

/// What kind of problem a validation item is; the raw value is the report's `code`.
public enum ProblemCode: String, Hashable, Sendable, CaseIterable {
    case invalidFormat
    case invalidPattern
    case duplicateRouteId
    case duplicatePattern
    case unknownDestination
    case missingParam
    case unknownParam
    case paramTypeMismatch
    case conflict
    case shadowed
    case undeclaredHost
    case undeclaredScheme
    case invalidWindow
    case expired
    case insecureFallback
    case unsupportedByAllVersions
    case unsupportedByVersion
    case unknownField
    case tooComplex
    // Found by the outbound link checks (LinkChecks), when they are on:
    case unreachableFallback
    case associatedDomainMissing
    case associatedDomainWrongApp
    case associatedDomainNotCovering
    case linksNotChecked

    /// Whether the outbound link checks find it, rather than the validator.
    public var isFoundByLinkChecks: Bool {
        switch self {
        case .unreachableFallback, .associatedDomainMissing, .associatedDomainWrongApp, .associatedDomainNotCovering, .linksNotChecked: true
        default: false
        }
    }

    /// The severity a problem of this kind has unless configured otherwise.
    public var defaultSeverity: Severity {
        switch self {
        case .expired, .unsupportedByVersion, .unknownField, .duplicatePattern: .warning
        case .unreachableFallback, .associatedDomainMissing, .associatedDomainWrongApp, .associatedDomainNotCovering, .linksNotChecked: .warning
        default: .error
        }
    }
}

/// One item of a validation report: what is wrong, where, and in words a non-engineer understands.
public struct ValidationProblem: Hashable, Sendable {
    public var code: ProblemCode
    public var severity: Severity
    public var path: JSONPath
    public var message: String

    public init(_ code: ProblemCode, at path: JSONPath, _ message: String, severity: Severity? = nil) {
        self.code = code
        self.severity = severity ?? code.defaultSeverity
        self.path = path
        self.message = message
    }

    public var json: JSONValue {
        ["code": .string(code.rawValue), "severity": .string(severity.rawValue),
         "path": .string(path.description), "message": .string(message)]
    }
}

/// Every problem found in a document, errors and warnings apart: at most `listLimit` of
/// each are kept, and past that they are only counted, so a document of millions of small
/// mistakes (a 16 MiB list of `{"a":0}`) costs a report of a bounded size, not hundreds of
/// times the document's (a report of every one of them took a daemon past 5 GB).
public struct ValidationReport: Hashable, Sendable {
    /// How many errors, and how many warnings, a report lists.
    public static let listLimit = 1_000

    public private(set) var errors: [ValidationProblem]
    public private(set) var warnings: [ValidationProblem]
    /// Found past `listLimit`: counted, not listed.
    public private(set) var omittedErrors = 0
    public private(set) var omittedWarnings = 0

    public init(_ problems: [ValidationProblem] = []) {
        errors = []
        warnings = []
        append(contentsOf: problems)
    }

    /// True when nothing blocks publishing.
    public var isValid: Bool { errors.isEmpty }

    /// Every error found, listed or not.
    public var errorCount: Int { errors.count + omittedErrors }

    /// The listed problems, errors first.
    public var problems: [ValidationProblem] { errors + warnings }

    public mutating func append(_ problem: ValidationProblem) {
        switch problem.severity {
        case .error: if errors.count < Self.listLimit { errors.append(problem) } else { omittedErrors += 1 }
        case .warning: if warnings.count < Self.listLimit { warnings.append(problem) } else { omittedWarnings += 1 }
        }
    }

    public mutating func append(contentsOf problems: some Sequence<ValidationProblem>) {
        for problem in problems { append(problem) }
    }

    /// Another report's problems after this one's, and what it counted without listing.
    public mutating func append(_ other: ValidationReport) {
        append(contentsOf: other.errors)
        append(contentsOf: other.warnings)
        omittedErrors += other.omittedErrors
        omittedWarnings += other.omittedWarnings
    }

    /// The report as the API and `waymark validate --json` give it; `omitted` only when
    /// more were found than are listed.
    public var json: JSONValue {
        var object: [String: JSONValue] = ["valid": .bool(isValid), "errors": .array(errors.map(\.json)), "warnings": .array(warnings.map(\.json))]
        if omittedErrors > 0 || omittedWarnings > 0 {
            object["omitted"] = ["errors": .int(omittedErrors), "warnings": .int(omittedWarnings)]
        }
        return .object(object)
    }
}
