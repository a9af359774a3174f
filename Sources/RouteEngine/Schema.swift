/// How a destination appears when navigated to.
public enum Presentation: String, Hashable, Sendable, CaseIterable {
    case push, sheet, fullScreen, tab
}

/// A screen the app build can show, as its schema declares it.
public struct DestinationSpec: Hashable, Sendable {
    public var parent: String?
    public var tab: String?
    public var presentation: Presentation
    public var preconditions: [String]
    public var params: [String: ParamSpec]

    // Derived from the ancestry when the schema is decoded:
    /// Root first, this destination last: `["home", "orders", "orderDetail"]`.
    public internal(set) var path: [String] = []
    /// The nearest tab declared on this destination or an ancestor.
    public internal(set) var effectiveTab: String?
    /// Every precondition along the path, root first, without repeats; the first unsatisfied one gates.
    public internal(set) var effectivePreconditions: [String] = []

    public init(
        parent: String? = nil, tab: String? = nil, presentation: Presentation = .push,
        preconditions: [String] = [], params: [String: ParamSpec] = [:]
    ) {
        self.parent = parent
        self.tab = tab
        self.presentation = presentation
        self.preconditions = preconditions
        self.params = params
    }
}

/// The Android app an `assetlinks.json` must name.
public struct AndroidApp: Hashable, Sendable {
    public var package: String
    public var sha256CertFingerprints: [String]

    public init(package: String, sha256CertFingerprints: [String]) {
        self.package = package
        self.sha256CertFingerprints = sha256CertFingerprints
    }
}

/// One app build's routing-engine schema (`waymark.schema/1`), uploaded by app CI: the
/// destinations the build can show and the links it answers to.
public struct Schema: Hashable, Sendable {
    public static let format = "waymark.schema/1"

    public var app: String
    public var platform: String
    public var version: String
    /// Custom schemes, lowercased.
    public var schemes: [String]
    /// Universal-link hosts, lowercased.
    public var hosts: [String]
    public var appleAppIDs: [String]
    public var android: AndroidApp?
    public var preconditions: [String]
    public var destinations: [String: DestinationSpec]

    /// `ios 5.2.0`, how reports name a build.
    public var buildName: String { "\(platform) \(version)" }

    /// An app version: 1 to 64 ASCII letters, digits and `. - + _`, starting and ending
    /// with a letter or digit. It names files and URL path segments (`/v1/schemas/ios/5.3.0`),
    /// so `.`, `..` and other dot-only or edge-punctuated names are refused.
    public static func isValidVersion(_ version: String) -> Bool {
        let bytes = Array(version.utf8)
        guard (1...64).contains(bytes.count), isASCIIAlphanumeric(bytes.first!), isASCIIAlphanumeric(bytes.last!) else { return false }
        return bytes.allSatisfy { isASCIIAlphanumeric($0) || ".-+_".utf8.contains($0) }
    }

    public func declaresScheme(_ scheme: String) -> Bool { schemes.contains(scheme) }
    public func declaresHost(_ host: String) -> Bool { hosts.contains(host) }
}

/// A schema document that cannot be used, with every problem found in it.
public struct SchemaError: Error, Hashable, Sendable {
    public var problems: [ValidationProblem]
}
