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

/// Every problem found in a document, errors and warnings apart.
public struct ValidationReport: Hashable, Sendable {
    public private(set) var errors: [ValidationProblem]
    public private(set) var warnings: [ValidationProblem]

    public init(_ problems: [ValidationProblem] = []) {
        errors = []
        warnings = []
        append(contentsOf: problems)
    }

    /// True when nothing blocks publishing.
    public var isValid: Bool { errors.isEmpty }

    public var problems: [ValidationProblem] { errors + warnings }

    public mutating func append(_ problem: ValidationProblem) {
        switch problem.severity {
        case .error: errors.append(problem)
        case .warning: warnings.append(problem)
        }
    }

    public mutating func append(contentsOf problems: some Sequence<ValidationProblem>) {
        for problem in problems { append(problem) }
    }

    /// The report as the API and `waymark validate --json` give it.
    public var json: JSONValue {
        ["valid": .bool(isValid), "errors": .array(errors.map(\.json)), "warnings": .array(warnings.map(\.json))]
    }
}
