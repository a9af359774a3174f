import CivilDate
import RouteEngine
import Testing
@testable import Impact

/// `DraftImpact`: last week's opens replayed against a base and a draft, one change per row.
@Suite struct DraftImpactTests {
    typealias Build = DraftImpact.Build

    static let ios52 = Build(platform: "ios", version: "5.2.0")
    static let ios53 = Build(platform: "ios", version: "5.3.0")
    /// An hour of last week, and the week's offset.
    static let hour = 1_796_000_000 / 3_600 * 3_600
    static let week = 7 * 86_400
    static let now = hour + 3 * 86_400

    static func route(_ id: String, _ patterns: [String], destination: String = "product", extra: String = "") -> String {
        let list = patterns.map { "\"\($0)\"" }.joined(separator: ",")
        return "{\"id\":\"\(id)\",\"patterns\":[\(list)],\"destination\":\"\(destination)\"\(extra)}"
    }

    static func document(_ routes: [String]) -> RoutesDocument {
        let text = "{\"format\":\"waymark.routes/1\",\"app\":\"storefront\",\"routes\":[\(routes.joined(separator: ","))]}"
        guard let json = try? JSONParser().parse(Array(text.utf8)), let document = RoutesDocument.decode(json).document else {
            fatalError("not a routes document: \(text)")
        }
        return document
    }

    static func until(_ seconds: Int) -> String { ",\"validUntil\":\"\(Timestamp.format(seconds))\"" }

    static let product = route("product", ["/product/:id", "/p/:id"])
    static let productOpens = [DraftImpact.Opens(route: "product", build: ios52, hour: hour, count: 300),
                               DraftImpact.Opens(route: "product", build: ios53, hour: hour + 3_600, count: 700)]

    struct Row: CustomTestStringConvertible, Sendable {
        var name: String
        var base: [String]
        var draft: [String]
        var opens: [DraftImpact.Opens] = DraftImpactTests.productOpens
        var served: [Build: DraftImpact.Served] = [:]
        /// route, kind, pattern, to route, count, basis
        var expected: [String]
        var testDescription: String { name }
    }

    static func line(_ route: DraftImpact.RouteImpact, _ change: DraftImpact.Change) -> String {
        "\(route.id) \(change.kind.rawValue) \(change.pattern ?? "-") \(change.toRoute ?? change.reason ?? "-") \(change.count) \(change.basis.rawValue)"
    }

    static let rows: [Row] = [
        Row(name: "nothing changed", base: [product], draft: [product], expected: []),
        Row(name: "an alias removed from a route of two patterns: up to all its opens",
            base: [product], draft: [route("product", ["/product/:id"])],
            expected: ["product patternRemoved /p/:id unknownRoute 1000 upTo"]),
        Row(name: "the only pattern replaced by another: every open, exactly",
            base: [route("product", ["/p/:id"])], draft: [route("product", ["/item/:id"])],
            expected: ["product patternRemoved /p/:id unknownRoute 1000 exact"]),
        Row(name: "a pattern narrowed to a literal: some links still open it, up to all",
            base: [route("product", ["/p/:id"])], draft: [route("product", ["/p/spring"])],
            expected: ["product patternRemoved /p/:id unknownRoute 1000 upTo"]),
        Row(name: "an alias widened to a rest: nothing changes",
            base: [route("product", ["/p/:id"])], draft: [route("product", ["/p/*rest"], extra: "")],
            expected: []),
        Row(name: "the route removed: every open, exactly",
            base: [product, route("home", ["/"], destination: "home")], draft: [route("home", ["/"], destination: "home")],
            expected: ["product routeRemoved - unknownRoute 1000 exact"]),
        Row(name: "a new route earlier with the same alias takes its links",
            base: [product], draft: [route("short", ["/p/:code"]), product],
            expected: ["product rerouted /p/:id short 1000 upTo"]),
        Row(name: "a new literal route shadows part of an alias",
            base: [product], draft: [product, route("sale", ["/p/sale"], destination: "home")],
            expected: ["product shadowed /p/:id sale 1000 upTo"]),
        Row(name: "a route moved before another with the same alias takes its links",
            base: [product, route("sale", ["/p/:code"], destination: "home")], draft: [route("sale", ["/p/:code"], destination: "home"), product],
            expected: ["product rerouted /p/:id sale 1000 upTo"]),
        Row(name: "a shadow that was already there is not new",
            base: [product, route("sale", ["/p/sale"], destination: "home")], draft: [product, route("sale", ["/p/sale"], destination: "home")],
            expected: []),
        Row(name: "a less specific new route does not shadow",
            base: [product], draft: [product, route("any", ["/:section/:id"], destination: "home")],
            expected: []),
        Row(name: "a window shrunk: the hours of the coming week past its new end, exactly",
            base: [route("product", ["/p/:id"], extra: until(hour + week + 30 * 86_400))],
            draft: [route("product", ["/p/:id"], extra: until(hour + week + 3_600))],
            expected: ["product windowShrunk - expired 700 exact"]),
        Row(name: "a window ending after the coming week changes nothing",
            base: [route("product", ["/p/:id"], extra: until(hour + week + 30 * 86_400))],
            draft: [route("product", ["/p/:id"], extra: until(hour + week + 20 * 86_400))],
            expected: []),
        Row(name: "a build whose schema cannot take the draft's route: its opens, exactly",
            base: [product], draft: [route("product", ["/product/:id", "/p/:id"], destination: "productV2")],
            served: [ios52: .init(base: ["product"], draft: []), ios53: .init(base: ["product"], draft: ["product"])],
            expected: ["product buildDropped - unknownRoute 300 exact"]),
        Row(name: "a calendar of literal routes under an alias: the first 20 named",
            base: [product], draft: [product] + (0..<25).map { route("day\($0)", ["/p/day\($0)"], destination: "home") },
            expected: (0..<20).map { "product shadowed /p/:id day\($0) 1000 upTo" }),
        Row(name: "a host-limited route with the same alias takes only some",
            base: [product], draft: [route("hosted", ["/p/:id"], extra: ",\"hosts\":[\"m.example\"]"), product],
            expected: ["product shadowed /p/:id hosted 1000 upTo"]),
    ]

    @Test(arguments: rows)
    func replay(_ row: Row) {
        let impact = DraftImpact.compute(base: Self.document(row.base), draft: Self.document(row.draft), opens: row.opens, shapes: [],
                                         served: row.served, offset: Self.week, now: Self.now)
        let lines = impact.routes.flatMap { route in route.changes.map { Self.line(route, $0) } }
        #expect(lines == row.expected)
        for route in impact.routes { #expect(route.opens == 1_000) }
        // Reading only the opens of the routes `affected` names changes nothing.
        let affected = DraftImpact.affected(base: Self.document(row.base), draft: Self.document(row.draft))
        let narrowed = DraftImpact.compute(base: Self.document(row.base), draft: Self.document(row.draft),
                                           opens: row.opens.filter { affected.contains($0.route) }, shapes: [],
                                           served: row.served, offset: Self.week, now: Self.now)
        #expect(narrowed == impact)

    }

    /// A replay's lookups share one `Work`: a `:param` looked up under thousands of
    /// literals passes them all, so a draft of many literals beside a base of many `:param`
    /// patterns with opens runs it out and says so (the answer is refused), while the same
    /// replay without a bound gives the same changes as a replay of a smaller draft.
    @Test func aReplayIsHeldToItsWork() {
        let base = Self.document([Self.route("product", (0..<200).map { "/:id/v\($0)" })])
        let draft = Self.document([Self.route("product", (0..<200).map { "/:id/v\($0)" }), Self.route("wide", (0..<2_000).map { "/w\($0)/v0" }, destination: "home")])
        let opens = [DraftImpact.Opens(route: "product", build: Self.ios52, hour: Self.hour, count: 10)]
        let bounded = DraftImpact.Work(steps: 64 * 2_400)
        let tables = DraftImpact.Tables(base: base, draft: draft, work: bounded)
        _ = DraftImpact.compute(tables, opens: opens, shapes: [], served: [:], offset: Self.week, now: Self.now)
        #expect(bounded.exhausted, "200 lookups passing 2,000 literals each is more than 64 steps a pattern of either document")
        let whole = DraftImpact.compute(base: base, draft: draft, opens: opens, shapes: [], served: [:], offset: Self.week, now: Self.now)
        // Each /wN/v0 takes some of /:id/v0's links: shadows of that pattern only, the first
        // 20 in document order.
        #expect(whole.routes.count == 1)
        #expect(whole.routes.first?.changes.map(\.kind) == Array(repeating: .shadowed, count: DraftImpact.Table.maximumShadows))
        #expect(whole.routes.first?.changes.map { $0.toPattern ?? "" } == (0..<20).map { "/w\($0)/v0" })
        #expect(Set(whole.routes.first?.changes.map { $0.pattern ?? "" } ?? []) == ["/:id/v0"])
        // Enough work, the same answer.
        let enough = DraftImpact.Work(steps: 10_000_000)
        #expect(DraftImpact.compute(DraftImpact.Tables(base: base, draft: draft, work: enough), opens: opens, shapes: [], served: [:], offset: Self.week, now: Self.now) == whole)
        #expect(!enough.exhausted)
    }

    @Test func buildsAreCountedPerChange() {
        let impact = DraftImpact.compute(base: Self.document([Self.product]), draft: Self.document([Self.route("product", ["/product/:id"])]),
                                         opens: Self.productOpens, shapes: [], served: [:], offset: Self.week, now: Self.now)
        #expect(impact.routes.first?.changes.first?.builds == [Self.ios52: 300, Self.ios53: 700])
        #expect(DraftImpact.share(impact.routes[0].changes[0], of: impact.routes[0]) == 1)
    }

    static let cart = route("cart", ["/cart"], destination: "cart")

    @Test(arguments: [
        ([product, cart], [product, cart], Set<String>()),
        ([product, cart], [route("product", ["/product/:id"]), cart], ["product"]),
        ([product, cart], [cart], ["product"]),
        ([product, cart], [product, cart, route("sale", ["/p/sale"], destination: "home")], ["product"]),
        ([product, cart], [route("sale", ["/cart"], destination: "home"), cart, product], ["cart"]),
        ([product, cart], [product, cart, route("coats", ["/winter/coats"], destination: "home")], []),
        ([product, cart], [product, route("cart", ["/cart"], destination: "cart", extra: until(now))], ["cart"]),
        ([product, cart, route("sale", ["/p/:code"], destination: "home")], [route("sale", ["/p/:code"], destination: "home"), product, cart],
         ["sale", "product"]),
    ] as [([String], [String], Set<String>)])
    func affectedRoutes(base: [String], draft: [String], expected: Set<String>) {
        #expect(DraftImpact.affected(base: Self.document(base), draft: Self.document(draft)) == expected)
    }

    struct ShapeRow: CustomTestStringConvertible, Sendable {
        var name: String
        var shape: String
        var draft: [String]
        /// "route pattern", or nil: not gained.
        var gained: String?
        var testDescription: String { name }
    }

    static let shapeRows: [ShapeRow] = [
        ShapeRow(name: "a new route for the shape", shape: "/winter/:param", draft: [product, route("winter", ["/winter/:code"])],
                 gained: "winter /winter/:code"),
        ShapeRow(name: "a word the new literal names", shape: "/sale/spring?utm_source", draft: [product, route("spring", ["/sale/spring"])],
                 gained: "spring /sale/spring"),
        ShapeRow(name: "a literal does not answer every value of a :param", shape: "/winter/:param",
                 draft: [product, route("winter", ["/winter/coats"])], gained: nil),
        ShapeRow(name: "a rest answers a shape cut short", shape: "/a/b/c/d/e/f/g/h/*", draft: [product, route("deep", ["/a/*rest"])],
                 gained: "deep /a/*rest"),
        ShapeRow(name: "already answered by the base", shape: "/p/:param", draft: [product], gained: nil),
        ShapeRow(name: "a new route that has ended answers nothing", shape: "/winter/:param",
                 draft: [product, route("winter", ["/winter/:code"], extra: until(now - 60))], gained: nil),
        ShapeRow(name: "the more specific of two new routes", shape: "/winter/coats",
                 draft: [product, route("winter", ["/winter/:code"]), route("coats", ["/winter/coats"])], gained: "coats /winter/coats"),
    ]

    @Test(arguments: shapeRows)
    func gainedShapes(_ row: ShapeRow) {
        let shape = DraftImpact.Shape(shape: row.shape, count: 40, lowerBound: 38)
        let impact = DraftImpact.compute(base: Self.document([Self.product]), draft: Self.document(row.draft), opens: [], shapes: [shape],
                                         served: [:], offset: Self.week, now: Self.now)
        #expect(impact.gained.map { "\($0.route) \($0.pattern)" } == (row.gained.map { [$0] } ?? []))
        #expect(impact.gained.allSatisfy { $0.shape == shape })
    }
}
