import Foundation

/// The manifest one app build is served for one revision (`GET /v1/manifest`,
/// docs/formats.md "Manifest"): the revision's routes that build can resolve, its schema,
/// the digests. One builder for the server's build views and `waymark manifest`, so an
/// app's bundled manifest is byte for byte what the server would serve.
public struct ServedManifest: Sendable {
    /// The body, exactly as served.
    public let bytes: [UInt8]
    /// Ids of the revision's routes this build cannot resolve (left out).
    public let unresolvable: [String]

    /// - Parameters:
    ///   - resolver: the engine for the build on the revision (its schema, the routes as of the revision's time).
    ///   - schemaJSON: the build's schema document as registered.
    ///   - routes: every route of the revision, its id and JSON, in document order.
    /// - Complexity: O(size of the manifest).
    public init(resolver: Resolver, schemaJSON: JSONValue, revision: Int, revisionSha256: String, routes: [(id: String, json: JSONValue)]) {
        let resolvable = Set(resolver.routeIDs)
        let kept = routes.filter { resolvable.contains($0.id) }.map { Self.forPhones($0.json) }
        unresolvable = routes.map(\.id).filter { !resolvable.contains($0) }
        let schema = resolver.schema
        let body: JSONValue = [
            "format": "waymark.manifest/1",
            "app": .string(schema.app),
            "platform": .string(schema.platform),
            "version": .string(schema.version),
            "revision": .int(revision),
            "revisionSha256": .string(revisionSha256),
            "routesSha256": .string(Manifest.canonicalRoutesDigest(.array(kept))),
            "schema": schemaJSON,
            "routes": .array(kept),
        ]
        // Copied to an array of exactly its size: the serializer's buffer grew by doubling,
        // and a quarter of it would stay allocated in every cached view.
        bytes = body.serializedBytes().withUnsafeBufferPointer { Array($0) }
    }

    /// A route as a phone gets it: without `preview` and `utm`, which only the server's
    /// landing pages use (an app of a release before them would also warn of them as
    /// unknown fields).
    public static func forPhones(_ route: JSONValue) -> JSONValue {
        guard case .object(var members) = route, members["preview"] != nil || members["utm"] != nil else { return route }
        members["preview"] = nil
        members["utm"] = nil
        return .object(members)
    }

    /// Each route's id with its JSON, in document order, from a routes document's JSON.
    public static func routes(of document: JSONValue) -> [(id: String, json: JSONValue)] {
        (document["routes"]?.arrayValue ?? []).compactMap { route in route["id"]?.stringValue.map { ($0, route) } }
    }
}
