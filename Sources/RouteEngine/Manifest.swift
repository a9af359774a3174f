import Foundation

/// The app build a manifest must be for: what the app knows about itself.
public struct AppBuild: Hashable, Sendable, CustomStringConvertible {
    public var app: String
    public var platform: String
    public var version: String

    public init(app: String, platform: String, version: String) {
        self.app = app
        self.platform = platform
        self.version = version
    }

    public var description: String { "\(app) \(platform) \(version)" }
}

/// Why a manifest was refused as a whole. The table in use stays as it was.
public struct ManifestError: Error, Hashable, Sendable, CustomStringConvertible {
    public enum Kind: String, Hashable, Sendable {
        /// Not JSON (a truncated body lands here), or not an object.
        case notJSON
        /// `format` is missing or not `waymark.manifest/1`; a required field is missing or mistyped.
        case wrongFormat
        /// The manifest is for another app, platform or version.
        case wrongBuild
        /// `routesSha256` does not match the routes it came with.
        case integrity
        /// The schema it carries cannot be used (or is for another build than the manifest says).
        case invalidSchema
    }

    public var kind: Kind
    public var message: String

    public init(_ kind: Kind, _ message: String) {
        self.kind = kind
        self.message = message
    }

    public var description: String { "\(kind.rawValue): \(message)" }
}

/// A served manifest (`waymark.manifest/1`) decoded into the route table of one app build:
/// what `GET /v1/manifest` answers, checked before anything replaces the table in use.
///
/// Tolerant where a newer server may say more, strict where a wrong answer would be
/// trusted: unknown fields are ignored; a route this engine cannot read or this build
/// cannot resolve is left out and named in `leftOut`; a document for another build or app,
/// or whose routes do not hash to its `routesSha256`, is refused whole.
public struct Manifest: Sendable {
    public static let format = "waymark.manifest/1"

    public let build: AppBuild
    /// The revision the routes are from. Revisions only grow: a rollback is a newer revision.
    public let revision: Int
    /// SHA-256 of the canonical form of `routes` (see `canonicalRoutesDigest`).
    public let routesSha256: String
    /// The table: resolves links and in-app requests for this build.
    public let resolver: Resolver
    /// Routes of the manifest that are not in the table, and why (a route a newer server
    /// sent in a form this engine does not know, or one this build cannot compile).
    public let leftOut: [ValidationProblem]
    /// Each route's `fallbackURL` by route id, for the routes that have one: where an app
    /// sends the user when a link of that route cannot be shown (expired, a bad param).
    public private(set) var fallbacks: [String: String] = [:]

    /// Decodes and checks `bytes` for `build`. `now` only affects which warnings the
    /// analysis gives; resolution reads the time from its context.
    /// - Complexity: O(bytes + routes log routes).
    public static func decode(_ bytes: some Collection<UInt8>, for build: AppBuild, now: Date = Date()) -> Result<Manifest, ManifestError> {
        let json: JSONValue
        do {
            json = try JSONParser().parse(bytes)
        } catch {
            return .failure(ManifestError(.notJSON, "The manifest is not JSON: \(error.message)"))
        }
        return decode(json, for: build, now: now)
    }

    /// Decodes and checks an already parsed manifest (see `decode(_:for:now:)`).
    public static func decode(_ json: JSONValue, for build: AppBuild, now: Date = Date()) -> Result<Manifest, ManifestError> {
        guard case .object(let object) = json else {
            return .failure(ManifestError(.notJSON, "The manifest is \(json.typeName), not an object."))
        }
        guard object["format"]?.stringValue == format else {
            return .failure(ManifestError(.wrongFormat, "The document's format is not \(format)."))
        }
        func string(_ key: String) -> Result<String, ManifestError> {
            guard let value = object[key]?.stringValue else {
                return .failure(ManifestError(.wrongFormat, "The manifest has no \(key) string."))
            }
            return .success(value)
        }
        let app: String, platform: String, version: String, digest: String
        switch (string("app"), string("platform"), string("version"), string("routesSha256")) {
        case (.success(let a), .success(let p), .success(let v), .success(let d)): (app, platform, version, digest) = (a, p, v, d)
        case (.failure(let error), _, _, _), (_, .failure(let error), _, _), (_, _, .failure(let error), _), (_, _, _, .failure(let error)):
            return .failure(error)
        }
        let served = AppBuild(app: app, platform: platform, version: version)
        guard served == build else {
            return .failure(ManifestError(.wrongBuild, "The manifest is for \(served), not \(build)."))
        }
        guard let revision = object["revision"]?.intValue, revision > 0 else {
            return .failure(ManifestError(.wrongFormat, "The manifest's revision is not a positive whole number."))
        }
        guard case .array(let routes)? = object["routes"] else {
            return .failure(ManifestError(.wrongFormat, "The manifest has no routes list."))
        }
        let actual = canonicalRoutesDigest(.array(routes))
        guard digest == actual else {
            return .failure(ManifestError(.integrity, "The routes hash to \(actual), the manifest says \(digest)."))
        }
        guard let schemaJSON = object["schema"] else {
            return .failure(ManifestError(.wrongFormat, "The manifest has no schema."))
        }
        let schema: Schema
        switch Schema.decode(schemaJSON) {
        case .success(let decoded): schema = decoded.schema
        case .failure(let error):
            let first = error.problems.first.map { " \($0.path): \($0.message)" } ?? ""
            return .failure(ManifestError(.invalidSchema, "The manifest's schema cannot be used.\(first)"))
        }
        guard AppBuild(app: schema.app, platform: schema.platform, version: schema.version) == build else {
            return .failure(ManifestError(.invalidSchema, "The manifest carries the schema of \(schema.app) \(schema.buildName), not \(build)."))
        }
        let (document, problems) = RoutesDocument.decode(["format": .string(RoutesDocument.format), "app": .string(app), "routes": .array(routes)])
        // The wrapper is ours and well-formed, so the document exists; its per-route errors name what was left out.
        let resolver = Resolver(schema: schema, analysis: RouteAnalysis(document: document!, now: now))
        let leftOut = problems.filter { $0.severity == .error } + resolver.leftOut
        var manifest = Manifest(build: build, revision: revision, routesSha256: digest, resolver: resolver, leftOut: leftOut)
        for route in document!.routes {
            if let fallback = route.fallbackURL { manifest.fallbacks[route.id] = fallback }
        }
        return .success(manifest)
    }

    /// The digest `routesSha256` holds: SHA-256, in lowercase hex, of the routes list in
    /// Waymark's canonical JSON (`docs/formats.md`): no insignificant whitespace; object
    /// members sorted by key; strings with `"`, `\` and the controls U+0000–U+001F and
    /// U+007F escaped (`\n`, `\r`, `\t` short, the others `\u00xx`), everything else as its
    /// UTF-8 bytes; whole numbers in plain decimal.
    public static func canonicalRoutesDigest(_ routes: JSONValue) -> String {
        SHA256.hex(routes.serializedBytes())
    }
}
