import Foundation
import LinkLanding
import ManifestStore
import RouteEngine
import Synchronization
import Telemetry

/// What link landing needs of one store generation: the link hosts, and for each kind of
/// visitor the engine of the newest build of its platform with that schema's `landing`
/// addresses, the routes by id, and when the answers may next change by themselves. Built
/// once per generation off the loop (`LandingCache`), then read by every landing on it.
final class LandingTable: Sendable {
    /// The engine a kind of visitor's links resolve with, and whose addresses it lands on.
    struct Side: Sendable {
        let resolver: Resolver
        /// The build, for telemetry: its version is counted only for a visitor of its platform.
        let key: SchemaKey
        let landing: Landing?
    }

    let generation: Int
    /// Every schema's universal-link hosts, lowercased.
    let hosts: Set<String>
    /// The stable revision (a rollout's candidate is for cohorts, and a browser has none).
    let revision: Int
    let sides: [Visitor: Side]
    let routes: [String: RouteSpec]
    /// The next route window edge or scheduled publish after the table was made: a cached
    /// landing must not outlive it.
    let nextChange: Date?

    /// The hosts links land on in `snapshot`, without building anything.
    static func hosts(of snapshot: StoreSnapshot) -> Set<String> {
        Set(snapshot.schemas.values.flatMap(\.schema.hosts))
    }

    init(generation: Int, snapshot: StoreSnapshot, now: Date, resolver: (Revision, StoredSchema) -> Resolver,
         document: (Revision) -> RoutesDocument?) {
        self.generation = generation
        hosts = Self.hosts(of: snapshot)
        revision = snapshot.current?.number ?? 0
        var newest: [String: StoredSchema] = [:]
        for stored in snapshot.schemas.values where newest[stored.schema.platform].map({ VersionOrder.precedes($0.schema.version, stored.schema.version) }) ?? true {
            newest[stored.schema.platform] = stored
        }
        var sides: [Visitor: Side] = [:]
        var routes: [String: RouteSpec] = [:]
        var edges: [Date] = snapshot.schedules.filter { $0.status == .pending }.map(\.at)
        if let current = snapshot.current {
            for visitor in Visitor.allCases {
                // A platform without a schema lands as the other's newest build would (desktops: iOS's, else Android's).
                let order = visitor == .android ? ["android", "ios"] : ["ios", "android"]
                guard let stored = order.lazy.compactMap({ newest[$0] }).first else { continue }
                sides[visitor] = Side(resolver: resolver(current, stored), key: stored.key, landing: stored.schema.landing)
            }
            for route in document(current)?.routes ?? [] {
                routes[route.id] = route
                edges += [route.window.start, route.window.end].compactMap { $0 }
            }
        }
        self.sides = sides
        self.routes = routes
        nextChange = edges.filter { $0 > now }.min()
    }
}

/// The landing table of the store's generation, made on first use after each change.
final class LandingCache: Sendable {
    private let table = Mutex<LandingTable?>(nil)

    func table(generation: Int) -> LandingTable? {
        table.withLock { $0?.generation == generation ? $0 : nil }
    }

    func remember(_ made: LandingTable) {
        table.withLock { kept in if kept.map({ $0.generation < made.generation }) ?? true { kept = made } }
    }
}

