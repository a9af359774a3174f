import CivilDate
import Foundation
import RouteEngine

/// Test fixtures: the shipped storefront example and a "lab" app that exercises every
/// feature of the engine (precedence, rest captures, host and scheme scopes, windows).
public enum Fixtures {
    /// The repository's root, found from this file's location.
    public static let repositoryRoot: URL = URL(fileURLWithPath: #filePath)
        .deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()

    public static func path(_ relative: String) -> String {
        repositoryRoot.appendingPathComponent(relative).path
    }

    public static func json(file relative: String) -> JSONValue {
        let data = try! Data(contentsOf: URL(fileURLWithPath: path(relative)))
        return try! JSONParser().parse(data)
    }

    public static func schema(_ json: JSONValue) -> Schema {
        switch Schema.decode(json) {
        case .success(let decoded): return decoded.schema
        case .failure(let error): fatalError("fixture schema is invalid: \(error.problems.map(\.message))")
        }
    }

    public static func routes(_ json: JSONValue) -> RoutesDocument {
        guard let document = RoutesDocument.decode(json).document else { fatalError("fixture routes are invalid") }
        return document
    }

    public static let storefront52 = schema(json(file: "manifests/storefront/schema-ios-5.2.0.json"))
    public static let storefront53 = schema(json(file: "manifests/storefront/schema-ios-5.3.0.json"))
    public static let storefrontRoutesJSON = json(file: "manifests/storefront/routes.json")
    public static let storefrontRoutes = routes(storefrontRoutesJSON)

    public static func resolver(_ schema: Schema, _ routes: RoutesDocument) -> Resolver {
        Resolver(schema: schema, analysis: RouteAnalysis(document: routes, now: date("2026-03-15T00:00:00Z")))
    }

    public static let storefront = resolver(storefront53, storefrontRoutes)

    /// A date from an RFC 3339 literal.
    public static func date(_ text: String) -> Date {
        guard let date = Timestamp.parse(text) else { fatalError("bad fixture date \(text)") }
        return date
    }

    // MARK: The lab app

    /// The lab app's schema and routes, from its conformance file (`conformance/lab.json`).
    public static let labConformance = json(file: "conformance/lab.json")
    public static let labSchemaJSON = labConformance["schemas"]!.arrayValue![0]
    public static let labRoutesJSON = labConformance["routes"]!

    public static let lab = schema(labSchemaJSON)
    public static let labResolver = resolver(lab, routes(labRoutesJSON))
}

extension Fixtures {
    /// A `waymark.manifest/1` document as the server builds one: `schema` and `routes`
    /// (a list), with the digest of the routes. `digest` overrides it (to test integrity).
    public static func manifestJSON(schema: JSONValue, routes: [JSONValue], revision: Int = 1, digest: String? = nil) -> JSONValue {
        [
            "format": "waymark.manifest/1", "app": schema["app"] ?? .null, "platform": schema["platform"] ?? .null,
            "version": schema["version"] ?? .null, "revision": .int(revision), "revisionSha256": "0",
            "routesSha256": .string(digest ?? Manifest.canonicalRoutesDigest(.array(routes))),
            "schema": schema, "routes": .array(routes),
        ]
    }

    public static let storefrontSchema53JSON = json(file: "manifests/storefront/schema-ios-5.3.0.json")
    public static let storefrontBuild = AppBuild(app: "storefront", platform: "ios", version: "5.3.0")

    /// The storefront example's manifest for ios 5.3.0, as bytes.
    public static func storefrontManifest(revision: Int = 1, routes: [JSONValue]? = nil) -> [UInt8] {
        manifestJSON(schema: storefrontSchema53JSON, routes: routes ?? storefrontRoutesJSON["routes"]!.arrayValue!, revision: revision)
            .serializedBytes()
    }
}
