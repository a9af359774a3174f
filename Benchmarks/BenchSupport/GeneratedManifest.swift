import CivilDate
import Foundation
import RouteEngine

/// A deterministic app schema, routes document and link mix of realistic shape: shared
/// prefixes, captures, typed params, rest captures, case variants, query items, custom
/// schemes, and a share of links that fail (unknown routes, bad params, malformed).
public struct GeneratedManifest {
    public let schemaJSON: JSONValue
    public let routesJSON: JSONValue
    public let links: [String]

    public init(routeCount: Int) {
        schemaJSON = [
            "format": "waymark.schema/1", "app": "bench", "platform": "ios", "version": "1.0.0",
            "schemes": ["bench"], "hosts": ["bench.example", "www.bench.example"], "preconditions": ["auth"],
            "destinations": [
                "home": ["tab": "home"],
                "item": ["parent": "home", "params": ["id": ["type": "string", "pattern": "^p[0-9]{1,8}$"]]],
                "page": ["parent": "home"],
                "order": ["parent": "home", "preconditions": ["auth"], "params": ["n": ["type": "int", "min": 1, "max": 2_147_483_647]]],
                "doc": ["parent": "home", "params": ["path": ["type": "string", "maxLength": 200]]],
                "list": ["parent": "home", "params": ["slug": ["type": "slug"], "q": ["type": "string", "optional": true]]],
            ],
        ]
        var routes: [JSONValue] = []
        var links: [String] = []
        var random = SplitMix64(seed: 42)
        for index in 0..<routeCount {
            let id = "r\(index)"
            switch index % 10 {
            case 0, 1, 2, 3:
                routes.append(["id": .string(id), "patterns": [.string("/shop/s\(index)/item/:id"), .string("/s\(index)/:id")], "destination": "item"])
                links.append("https://bench.example/shop/s\(index)/item/p\(random.next() % 10_000_000)")
                links.append("bench://s\(index)/p\(random.next() % 1000)?utm_source=mail")
            case 4, 5, 6:
                routes.append(["id": .string(id), "patterns": [.string("/campaign/c\(index)/landing")], "destination": "page"])
                links.append("https://www.bench.example/Campaign/C\(index)/landing/")
            case 7, 8:
                routes.append(["id": .string(id), "patterns": [.string("/account/a\(index)/orders/:n")], "destination": "order"])
                links.append("https://bench.example/account/a\(index)/orders/\(1 + random.next() % 100_000)")
            default:
                if index % 20 == 9 {
                    routes.append(["id": .string(id), "patterns": [.string("/docs/d\(index)/*path")], "destination": "doc"])
                    links.append("https://bench.example/docs/d\(index)/guide/intro")
                } else {
                    routes.append(["id": .string(id), "patterns": [.string("/l/d\(index)/:slug")], "destination": "list",
                                   "params": ["q": ["query": "q"]]])
                    links.append("bench://l/d\(index)/summer-sale?q=red+shoes")
                }
            }
            // One link in ten fails: unknown route, bad param or malformed.
            switch index % 30 {
            case 3: links.append("https://bench.example/shop/s\(index)/missing/p1")
            case 13: links.append("https://bench.example/shop/s\(index - 10)/item/x\(index)")
            case 23: links.append("https://evil.example/shop/s\(index)/item/p1")
            default: break
            }
        }
        routes.insert(["id": "home", "patterns": ["/"], "destination": "home"], at: 0)
        routesJSON = ["format": "waymark.routes/1", "app": "bench", "routes": .array(routes)]
        self.links = links
    }
}

/// Deterministic pseudo-random numbers, so every run resolves the same links.
public struct SplitMix64 {
    var state: UInt64
    public init(seed: UInt64) { state = seed }
    public mutating func next() -> Int {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return Int(truncatingIfNeeded: (z ^ (z >> 31)) >> 1)
    }
}

/// A campaign calendar: `count` routes on one pattern shape (`/sale/:slug`), each live for
/// two weeks from its own hour, so every route's window overlaps hundreds of others and
/// none lies within an earlier one (the document is valid). Every fifth route is limited
/// to one host. Ends with the general route for the shape, live always, listed last.
/// `shadowEvery`: every n-th route lives one day only, within the route before it, and
/// so is shadowed.
public func campaignCalendar(count: Int, shadowEvery: Int? = nil) -> JSONValue {
    let base = 1_790_000_000  // 2026-09-21
    var routes: [JSONValue] = []
    for index in 0..<count {
        let start = base + index * 3_600
        let days = shadowEvery.map { index % $0 == $0 - 1 } == true ? 1 : 14
        var route: JSONValue = [
            "id": .string("campaign-\(index)"), "patterns": ["/sale/:slug"], "destination": "list",
            "validFrom": .string(Timestamp.format(Date(timeIntervalSince1970: TimeInterval(start)))),
            "validUntil": .string(Timestamp.format(Date(timeIntervalSince1970: TimeInterval(start + days * 86_400)))),
        ]
        if index % 5 == 4, case .object(var object) = route {
            object["hosts"] = ["www.bench.example"]
            route = .object(object)
        }
        routes.append(route)
    }
    routes.append(["id": "sale", "patterns": ["/sale/:slug"], "destination": "list"])
    return ["format": "waymark.routes/1", "app": "bench", "routes": .array(routes)]
}

/// A schema of `count` destinations besides its root: in one chain (each the parent of the
/// next) when `deep`, else all children of the root. Same bytes, give or take the names.
public func chainSchema(count: Int, deep: Bool) -> JSONValue {
    var destinations: [String: JSONValue] = ["d0": ["tab": "home", "preconditions": ["auth"]]]
    for index in 1...count { destinations["d\(index)"] = ["parent": .string(deep ? "d\(index - 1)" : "d0")] }
    return ["format": "waymark.schema/1", "app": "bench", "platform": "ios", "version": "1.0.0", "hosts": ["bench.example"],
            "preconditions": ["auth"], "destinations": .object(destinations)]
}
