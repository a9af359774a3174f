/// The two files a universal-link host serves under `/.well-known/` so that phones open
/// its links in the app: Apple's `apple-app-site-association` and Google's Digital Asset
/// Links `assetlinks.json`. Pure: built from the app builds' schemas and the routes' parsed
/// patterns, never by splitting pattern strings again.
public struct AssociatedDomainFiles: Hashable, Sendable {
    /// `apple-app-site-association`: every iOS build's app IDs with one component per
    /// distinct path the routes match.
    public let apple: [UInt8]
    /// `assetlinks.json`: one statement per distinct Android package and set of signing
    /// certificates.
    public let google: [UInt8]

    /// Apple's CDN fetches at most this many bytes of the file.
    public static let appleLimit = 128 * 1024

    /// - Parameters:
    ///   - schemas: the registered app builds, in registration order.
    ///   - patterns: the path patterns of the routes served.
    public init(schemas: [Schema], patterns: [URLPattern]) {
        let appIDs = Array(Set(schemas.filter { $0.platform == "ios" }.flatMap(\.appleAppIDs))).sorted()
        apple = Self.appleAppSiteAssociation(appIDs: appIDs, paths: Self.applePaths(patterns))
        google = Self.assetLinks(schemas.compactMap(\.android))
    }

    /// The files one host serves: the patterns of the routes that answer links on `host`
    /// (a route restricted to other hosts, or to custom schemes only, is left out), and the
    /// apps of the builds that declare `host`. With `host` nil (a host no schema declares):
    /// every route that answers some web link, and every build's apps.
    public init(schemas: [Schema], routes: [RouteSpec], host: String?) {
        let builds = host.map { host in schemas.filter { $0.declaresHost(host) } } ?? schemas
        let served = routes.filter { route in
            guard let host else { return route.scope.hosts.map { !$0.isEmpty } ?? true }
            return route.scope.admits(.web(host: host))
        }
        self.init(schemas: builds, patterns: served.flatMap { $0.patterns.compactMap { try? URLPattern($0) } })
    }

    /// Each pattern as an Apple component path, sorted and without repeats: literals as
    /// parsed (lowercased, which is why the file says `caseSensitive: false`: the engine
    /// compares literals without case), each `:param` and `*rest` as `*`, the root as `/`.
    public static func applePaths(_ patterns: [URLPattern]) -> [String] {
        Array(Set(patterns.map { pattern in
            "/" + pattern.segments.map { segment in
                switch segment {
                case .literal(let text): text
                case .parameter, .rest: "*"
                }
            }.joined(separator: "/")
        })).sorted()
    }

    /// The file for `paths`, collapsed when it would pass `appleLimit`: first to each
    /// path's first segment (`/p/*`; a path starting with a capture to `/*`), then to `/*`.
    static func appleAppSiteAssociation(appIDs: [String], paths: [String]) -> [UInt8] {
        func body(_ paths: [String]) -> [UInt8] {
            let components: [JSONValue] = paths.map { ["/": .string($0)] }
            let details: JSONValue = appIDs.isEmpty ? [] : [["appIDs": .array(appIDs.map(JSONValue.string)), "components": .array(components)]]
            return JSONValue.object(["applinks": ["defaults": ["caseSensitive": false], "details": details]]).serializedBytes()
        }
        var bytes = body(paths)
        guard bytes.count > appleLimit else { return bytes }
        let firstSegments = Array(Set(paths.map { path -> String in
            let first = path.dropFirst().prefix { $0 != "/" }
            return first.isEmpty || first == "*" ? "/*" : "/\(first)/*"
        })).sorted()
        bytes = body(firstSegments)
        return bytes.count > appleLimit ? body(["/*"]) : bytes
    }

    /// Statements for the Android builds, in order, each package and certificate set once.
    static func assetLinks(_ apps: [AndroidApp]) -> [UInt8] {
        var seen: Set<String> = []
        var statements: [JSONValue] = []
        for android in apps {
            let fingerprints = android.sha256CertFingerprints.sorted()
            guard seen.insert(android.package + fingerprints.joined(separator: ",")).inserted else { continue }
            statements.append(["relation": ["delegate_permission/common.handle_all_urls"],
                               "target": ["namespace": "android_app", "package_name": .string(android.package),
                                          "sha256_cert_fingerprints": .array(fingerprints.map(JSONValue.string))]])
        }
        return JSONValue.array(statements).serializedBytes()
    }
}
