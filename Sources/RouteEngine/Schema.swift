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

    // Derived from the ancestry when the schema is decoded (`Schema.path(to:)` and
    // `Schema.preconditions(along:)` walk it; nothing here grows with the depth):
    /// How many ancestors: 0 for a root.
    public internal(set) var depth = 0
    /// Position in the schema's `lineage`.
    var lineageIndex = -1
    /// Whether this destination or an ancestor declares a precondition.
    var isGated = false
    /// The path, kept when shorter than `Schema.keptPathLength` (every real app), so that
    /// resolving costs no allocation; empty for deeper ones, whose path is walked.
    var keptPath: [String] = []
    /// The nearest tab declared on this destination or an ancestor.
    public internal(set) var effectiveTab: String?

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

/// Where a link lands when the app does not open it (`"landing"` in a schema, all optional,
/// each an https address with a host): the app's store page per platform, the web for
/// desktops, and a page for links that resolve to nothing.
public struct Landing: Hashable, Sendable {
    public var appStoreURL: String?
    public var playStoreURL: String?
    public var webURL: String?
    public var notFoundURL: String?

    public init(appStoreURL: String? = nil, playStoreURL: String? = nil, webURL: String? = nil, notFoundURL: String? = nil) {
        self.appStoreURL = appStoreURL
        self.playStoreURL = playStoreURL
        self.webURL = webURL
        self.notFoundURL = notFoundURL
    }

    static let fields = ["appStoreURL", "playStoreURL", "webURL", "notFoundURL"]
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
    /// Where links land without the app; nil when the schema declares none.
    public var landing: Landing? = nil
    public var preconditions: [String]
    public var destinations: [String: DestinationSpec]
    /// Every destination once, with its parent's position: the ancestry walked without
    /// hashing names (`path(to:)`, and the resolver's gate on each resolution).
    var lineage: [Lineage] = []

    struct Lineage: Hashable, Sendable {
        var name: String
        var parent: Int
        var preconditions: [String]
    }

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

    /// Root first, `name` last: `["home", "orders", "orderDetail"]`; empty for an unknown
    /// name. Walked from `name` up, so it costs the path's length.
    public func path(to name: String) -> [String] {
        guard let destination = destinations[name] else { return [] }
        return destination.keptPath.isEmpty ? walkPath(from: destination.lineageIndex, depth: destination.depth) : destination.keptPath
    }

    /// Paths up to this long are kept with their destination (at most this many names per
    /// destination); longer ones are walked when asked for.
    static let keptPathLength = 32

    /// The path to the destination at `lineage[index]`, `depth` deep, walked up from it.
    func walkPath(from index: Int, depth: Int) -> [String] {
        var path = [String](repeating: "", count: depth + 1)
        var (position, cursor) = (depth, index)
        while position >= 0 {
            path[position] = lineage[cursor].name
            cursor = lineage[cursor].parent
            position -= 1
        }
        return path
    }

    /// The first precondition along the path to the destination at `lineage[index]`, root
    /// first, that is not in `satisfied`: the one that gates it.
    func firstUnsatisfiedPrecondition(from index: Int, satisfied: Set<String>) -> String? {
        var found: String?
        var cursor = index
        while cursor >= 0 {  // the one nearest the root wins, so keep walking
            var position = lineage[cursor].preconditions.count - 1
            while position >= 0 {
                let precondition = lineage[cursor].preconditions[position]
                if !satisfied.contains(precondition) { found = precondition }
                position -= 1
            }
            cursor = lineage[cursor].parent
        }
        return found
    }

    /// Every precondition along the path to `name`, root first, without repeats: the first
    /// one a session has not satisfied gates it.
    public func preconditions(along name: String) -> [String] {
        var preconditions: [String] = []
        for ancestor in path(to: name) {
            for precondition in destinations[ancestor]!.preconditions where !preconditions.contains(precondition) {
                preconditions.append(precondition)
            }
        }
        return preconditions
    }

    public func declaresScheme(_ scheme: String) -> Bool { schemes.contains(scheme) }
    public func declaresHost(_ host: String) -> Bool { hosts.contains(host) }
}

/// A schema document that cannot be used, with every problem found in it.
public struct SchemaError: Error, Hashable, Sendable {
    public var problems: [ValidationProblem]

    public init(problems: [ValidationProblem]) {
        self.problems = problems
    }
}
