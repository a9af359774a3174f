import RouteEngine

/// An `apple-app-site-association` file's `applinks` section: per app, the ordered rules
/// deciding which paths open the app. Both forms are read: `components` (iOS 13+, used
/// when present) and the legacy `paths` with `NOT ` exclusions.
///
/// Links are judged as published, without a query or fragment: a component that demands
/// a query item or fragment never matches them, and one that only accepts their absence
/// does. Substitution variables (`$(lang)`) are not expanded.
public struct AppleAppSiteAssociation: Hashable, Sendable {
    public struct Detail: Hashable, Sendable {
        public var appIDs: [String]
        public var rules: [PathRule]
    }

    public var details: [Detail]

    /// The rules for `appID`: those of every detail listing it, in file order (nil when
    /// no detail lists it).
    public func rules(for appID: String) -> [PathRule]? {
        let listing = details.filter { $0.appIDs.contains(appID) }
        return listing.isEmpty ? nil : listing.flatMap(\.rules)
    }

    public var appIDs: [String] { details.flatMap(\.appIDs) }

    /// Why the file cannot be used, in words that complete "The file …".
    public static func parse(_ bytes: [UInt8]) -> Result<Self, AssociationError> {
        guard let json = try? JSONParser().parse(bytes) else { return .failure(.init("is not valid JSON")) }
        guard let applinks = json["applinks"]?.objectValue else { return .failure(.init("has no \"applinks\" object")) }
        guard let details = applinks["details"]?.arrayValue else { return .failure(.init("has no \"applinks.details\" list")) }
        let defaultCaseSensitive = applinks["defaults"]?["caseSensitive"]?.boolValue ?? true
        var parsed: [Detail] = []
        for (index, detail) in details.enumerated() {
            let place = "applinks.details[\(index)]"
            guard let object = detail.objectValue else { return .failure(.init("has \(place) that is not an object")) }
            var appIDs = object["appIDs"]?.arrayValue?.compactMap(\.stringValue) ?? []
            if let single = object["appID"]?.stringValue { appIDs.append(single) }
            guard !appIDs.isEmpty else { return .failure(.init("has \(place) without appIDs or appID")) }
            var rules: [PathRule] = []
            if let components = object["components"] {
                guard let list = components.arrayValue else { return .failure(.init("has \(place).components that is not a list")) }
                let caseSensitive = object["defaults"]?["caseSensitive"]?.boolValue ?? defaultCaseSensitive
                for (position, component) in list.enumerated() {
                    switch Self.rule(component, caseSensitive: caseSensitive) {
                    case .failure(let error): return .failure(.init("has \(place).components[\(position)] that \(error.reason)"))
                    case .success(let rule?): rules.append(rule)
                    case .success(nil): break
                    }
                }
            } else if let paths = object["paths"] {
                guard let list = paths.arrayValue?.compactMap(\.stringValue), list.count == paths.arrayValue?.count else {
                    return .failure(.init("has \(place).paths that is not a list of strings"))
                }
                for path in list {
                    let exclude = path.hasPrefix("NOT ")
                    rules.append(PathRule("\"\(path)\"", pattern: exclude ? String(path.dropFirst(4)) : path, exclude: exclude))
                }
            }
            parsed.append(Detail(appIDs: appIDs, rules: rules))
        }
        return .success(Self(details: parsed))
    }

    /// A component as a rule for query- and fragment-less links (nil: it never matches them).
    private static func rule(_ component: JSONValue, caseSensitive: Bool) -> Result<PathRule?, AssociationError> {
        guard let object = component.objectValue else { return .failure(.init("is not an object")) }
        if let path = object["/"], path.stringValue == nil { return .failure(.init("has a \"/\" that is not a string")) }
        let pattern = object["/"]?.stringValue ?? "*"
        let exclude = object["exclude"]?.boolValue ?? false
        let sensitive = object["caseSensitive"]?.boolValue ?? caseSensitive
        func acceptsAbsence(_ value: String) -> Bool { PathAutomaton(wildcard: value, caseSensitive: true).matches("") }
        switch object["?"] {
        case nil: break
        case .string(let query)?: if !acceptsAbsence(query) { return .success(nil) }
        case .object(let items)?:
            for value in items.values {
                guard let text = value.stringValue else { return .failure(.init("has a \"?\" item that is not a string")) }
                if !acceptsAbsence(text) { return .success(nil) }
            }
        default: return .failure(.init("has a \"?\" that is neither a string nor an object"))
        }
        if let fragment = object["#"] {
            guard let text = fragment.stringValue else { return .failure(.init("has a \"#\" that is not a string")) }
            if !acceptsAbsence(text) { return .success(nil) }
        }
        return .success(PathRule(component.serialized(pretty: false), pattern: pattern, exclude: exclude, caseSensitive: sensitive))
    }
}

/// Why an associated-domain file cannot be used.
public struct AssociationError: Error, Hashable, Sendable {
    public var reason: String
    init(_ reason: String) { self.reason = reason }
}

/// A Digital Asset Links file (`assetlinks.json`): which Android apps may open the site's
/// links (`delegate_permission/common.handle_all_urls`), by package and signing certificate.
public struct AssetLinks: Hashable, Sendable {
    public struct Statement: Hashable, Sendable {
        public var package: String
        /// Uppercase hex pairs joined by colons.
        public var fingerprints: [String]
    }

    public static let handleAllURLs = "delegate_permission/common.handle_all_urls"
    public var statements: [Statement]

    public static func parse(_ bytes: [UInt8]) -> Result<Self, AssociationError> {
        guard let json = try? JSONParser().parse(bytes) else { return .failure(.init("is not valid JSON")) }
        guard let list = json.arrayValue else { return .failure(.init("is not a list of statements")) }
        var statements: [Statement] = []
        for (index, statement) in list.enumerated() {
            guard let object = statement.objectValue else { return .failure(.init("has statement [\(index)] that is not an object")) }
            guard let relations = object["relation"]?.arrayValue?.compactMap(\.stringValue) else {
                return .failure(.init("has statement [\(index)] without a \"relation\" list"))
            }
            guard relations.contains(handleAllURLs), let target = object["target"]?.objectValue,
                  target["namespace"]?.stringValue == "android_app" else { continue }
            guard let package = target["package_name"]?.stringValue,
                  let prints = target["sha256_cert_fingerprints"]?.arrayValue?.compactMap(\.stringValue) else {
                return .failure(.init("has statement [\(index)] without package_name or sha256_cert_fingerprints"))
            }
            statements.append(Statement(package: package, fingerprints: prints.map(normalizedFingerprint)))
        }
        return .success(Self(statements: statements))
    }

    /// Whether `package` signed with one of `fingerprints` may open the site's links.
    public func allows(package: String, fingerprints: [String]) -> Bool {
        let wanted = Set(fingerprints.map(normalizedFingerprint))
        return statements.contains { $0.package == package && !wanted.isDisjoint(with: $0.fingerprints) }
    }

    public func lists(package: String) -> Bool { statements.contains { $0.package == package } }
}

func normalizedFingerprint(_ text: String) -> String { text.uppercased() }
