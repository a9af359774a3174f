import Foundation
import RouteEngine

/// The route table an app resolves with, and where it came from.
public struct RouteTable: Sendable {
    public enum Origin: String, Hashable, Sendable {
        /// Fetched from the server in this run.
        case server
        /// The last good manifest, read from the cache directory at launch.
        case cache
        /// The manifest the app ships with.
        case bundled
        /// No manifest at all: nothing resolves, nothing crashes.
        case empty
    }

    /// nil for the empty table.
    public let manifest: Manifest?
    public let origin: Origin

    public init(manifest: Manifest, origin: Origin) {
        self.manifest = manifest
        self.origin = origin
    }

    /// The table of an app with no manifest yet.
    public static let empty = RouteTable()

    private init() {
        manifest = nil
        origin = .empty
    }

    /// The revision the table is from; 0 for the empty table.
    public var revision: Int { manifest?.revision ?? 0 }

    public func resolve(_ request: ResolutionRequest, context: ResolutionContext) -> Resolution {
        guard let resolver = manifest?.resolver else {
            return .notFound(NotFound(.unknownRoute, detail: "There is no route table yet."))
        }
        return resolver.resolve(request, context: context)
    }

    /// Where to send the user when a link ended `notFound` for a route that has a fallback
    /// (`expired`, `validationFailed`: the route is known): its `fallbackURL`, an https
    /// address (checked at publish, and again here). nil for an unknown route — open the link
    /// itself in the browser, where the server's link landing answers it.
    public func fallbackURL(for notFound: NotFound) -> URL? {
        guard let id = notFound.routeID, let text = manifest?.fallbacks[id], let url = URL(string: text),
              url.scheme?.lowercased() == "https", url.host?.isEmpty == false else { return nil }
        return url
    }

    /// Where a `proceed` of this table goes, screen by screen.
    public func target(for proceed: Proceed) -> NavigationTarget {
        guard let schema = manifest?.resolver.schema else {
            return NavigationTarget(tab: proceed.tab, base: [Screen(proceed.destination, params: proceed.params)])
        }
        return NavigationTarget(proceed, schema: schema)
    }
}

/// Whatever holds the table in use (`ManifestClient`, or a fixed table in tests).
public protocol RouteTableSource: Sendable {
    func currentTable() async -> RouteTable
    /// The table once the first refresh of this run has ended, waiting at most `seconds`
    /// (`RouteDispatcher.ready(waitingForManifest:)`). A fixed table: at once.
    func tableAfterFirstRefresh(within seconds: TimeInterval) async -> RouteTable
    /// A table newer than `revision`, if one is in use or a refresh in flight brings one
    /// within `seconds`; nil otherwise. A fixed table: nil.
    func newerTable(than revision: Int, within seconds: TimeInterval) async -> RouteTable?
}

extension RouteTableSource {
    public func tableAfterFirstRefresh(within seconds: TimeInterval) async -> RouteTable { await currentTable() }
    public func newerTable(than revision: Int, within seconds: TimeInterval) async -> RouteTable? { nil }
}

/// A table that never changes.
public struct FixedRouteTable: RouteTableSource {
    public let table: RouteTable

    public init(_ table: RouteTable) {
        self.table = table
    }

    public func currentTable() async -> RouteTable { table }
}
