import Foundation
import RouteEngine
import LibraryTestSupport
import Testing

/// A routes document built from route objects, for the storefront app.
func routesDocument(_ routes: [JSONValue], app: String = "storefront") -> JSONValue {
    ["format": "waymark.routes/1", "app": .string(app), "routes": .array(routes)]
}

struct ValidatorRow: Sendable, CustomTestStringConvertible {
    var document: JSONValue
    var schemas: [Schema]
    /// `code@path` of every expected problem (order-insensitive); empty for a clean document.
    var expected: Set<String>
    var label: String
    var workLimit = RouteAnalysis.defaultWorkLimit
    var testDescription: String { label }

    init(_ routes: [JSONValue], _ expected: Set<String>, schemas: [Schema] = [Fixtures.storefront53], workLimit: Int? = nil, _ label: String) {
        document = routesDocument(routes)
        self.schemas = schemas
        self.workLimit = workLimit ?? self.workLimit
        self.expected = expected
        self.label = label
    }

    init(document: JSONValue, _ expected: Set<String>, _ label: String) {
        self.document = document
        schemas = [Fixtures.storefront53]
        self.expected = expected
        self.label = label
    }
}

private let product: JSONValue = ["id": "product", "patterns": ["/product/:id"], "destination": "product"]
private let both = [Fixtures.storefront52, Fixtures.storefront53]

let validatorRows: [ValidatorRow] = [
    // Clean documents.
    .init([product], [], "one good route"),
    .init([["id": "s", "patterns": ["/s"], "destination": "search", "params": ["q": ["query": "q"]]]], [], "query mapping"),
    .init([["id": "p", "patterns": ["/x/:sku"], "destination": "product", "params": ["id": ["capture": "sku"]]]], [], "renamed capture"),
    .init([["id": "p", "patterns": ["/promo"], "destination": "promo", "params": ["code": ["const": "ABCD"]]]], [], "constant"),
    .init([["id": "a", "patterns": ["/a"], "destination": "home", "hosts": ["storefront.example"]],
           ["id": "b", "patterns": ["/a"], "destination": "home", "hosts": ["www.storefront.example"]]], [], "disjoint hosts share a pattern"),
    .init([["id": "a", "patterns": ["/a"], "destination": "home", "validFrom": "2027-01-01T00:00:00Z", "validUntil": "2027-02-01T00:00:00Z"],
           ["id": "b", "patterns": ["/a"], "destination": "home", "validFrom": "2027-02-01T00:00:00Z"]], [], "back-to-back windows"),
    .init([["id": "a", "patterns": ["/a"], "destination": "home", "hosts": ["storefront.example"]],
           ["id": "b", "patterns": ["/a"], "destination": "home"]], [], "narrow route before a general one"),

    // invalidFormat
    .init(document: "not an object", ["invalidFormat@$"], "document is not an object"),
    .init(document: ["format": "waymark.routes/2", "app": "storefront", "routes": []], ["invalidFormat@format"], "wrong format"),
    .init(document: ["format": "waymark.routes/1", "routes": []], ["invalidFormat@app"], "missing app"),
    .init(document: ["format": "waymark.routes/1", "app": "storefront", "routes": "x"], ["invalidFormat@routes"], "routes not a list"),
    .init([["patterns": ["/x"], "destination": "home"]], ["invalidFormat@routes[0].id"], "route without id"),
    .init([["id": "", "patterns": ["/x"], "destination": "home"]], ["invalidFormat@routes[0].id"], "an empty id"),
    .init([["id": "spring\u{0}sale", "patterns": ["/x"], "destination": "home"]], ["invalidFormat@routes[0].id"], "a NUL in an id"),
    .init([["id": "sale\u{202E}lapyap", "patterns": ["/x"], "destination": "home"]], ["invalidFormat@routes[0].id"], "a bidi override in an id"),
    .init([["id": .string(String(repeating: "a", count: 129)), "patterns": ["/x"], "destination": "home"]], ["invalidFormat@routes[0].id"], "an id of 129 characters"),
    .init([["id": "spring sale", "patterns": ["/x"], "destination": "home"]], ["invalidFormat@routes[0].id"], "a space in an id"),
    .init([["id": "-sale", "patterns": ["/x"], "destination": "home"]], ["invalidFormat@routes[0].id"], "an id starting with a dash"),
    .init([["id": "Spring_Sale.2026-v2", "patterns": ["/x"], "destination": "home"]], [], "an id of every allowed kind of character"),
    .init([["id": .string(String(repeating: "a", count: 128)), "patterns": ["/x"], "destination": "home"]], [], "an id of 128 characters"),
    .init([["id": 7, "patterns": ["/x"], "destination": "home"]], ["invalidFormat@routes[0].id"], "id not a string"),
    .init([["id": "x", "patterns": "/x", "destination": "home"]], ["invalidFormat@routes[0].patterns"], "patterns not a list"),
    .init([["id": "x", "patterns": [], "destination": "home"]], ["invalidFormat@routes[0].patterns"], "no patterns"),
    .init([["id": "x", "patterns": ["/x", 3], "destination": "home"]], ["invalidFormat@routes[0].patterns[1]"], "pattern not a string"),
    .init([["id": "x", "patterns": ["/x"]]], ["invalidFormat@routes[0].destination"], "no destination"),
    .init([["id": "x", "patterns": ["/x/:id"], "destination": "product", "params": ["id": ["capture": "id", "query": "id"]]]],
          ["invalidFormat@routes[0].params.id"], "two sources for one param"),
    .init([["id": "x", "patterns": ["/x"], "destination": "promo", "params": ["code": ["const": true]]]],
          ["invalidFormat@routes[0].params.code.const"], "boolean constant"),
    .init([["id": "x", "patterns": ["/x"], "destination": "home", "validFrom": "March 1st"]],
          ["invalidFormat@routes[0].validFrom"], "unparsable date"),
    .init([["id": "x", "patterns": ["/x"], "destination": "home", "validUntil": "2026-02-30T00:00:00Z"]],
          ["invalidFormat@routes[0].validUntil"], "impossible date"),
    .init(document: ["format": "waymark.routes/1", "app": "other", "routes": []], ["invalidFormat@app"], "routes for another app"),

    // unknownField (warning)
    .init([["id": "x", "patterns": ["/x"], "destination": "home", "validUntill": "2027-01-01T00:00:00Z"]],
          ["unknownField@routes[0].validUntill"], "misspelled field"),

    // invalidPattern
    .init([["id": "x", "patterns": ["x"], "destination": "home"]], ["invalidPattern@routes[0].patterns[0]"], "no leading slash"),
    .init([["id": "x", "patterns": ["/a//b"], "destination": "home"]], ["invalidPattern@routes[0].patterns[0]"], "empty segment"),
    .init([["id": "x", "patterns": ["/a/*rest/b"], "destination": "home"]], ["invalidPattern@routes[0].patterns[0]"], "rest not last"),
    .init([["id": "x", "patterns": ["/a/:"], "destination": "home"]], ["invalidPattern@routes[0].patterns[0]"], "unnamed capture"),
    .init([["id": "x", "patterns": ["/a/:id/:id"], "destination": "product"]], ["invalidPattern@routes[0].patterns[0]"], "capture twice"),
    .init([["id": "x", "patterns": ["/a?b=1"], "destination": "home"]], ["invalidPattern@routes[0].patterns[0]"], "query in pattern"),
    .init([["id": "x", "patterns": ["/a/../b"], "destination": "home"]], ["invalidPattern@routes[0].patterns[0]"], "dot segment"),
    .init([["id": "x", "patterns": ["/a b"], "destination": "home"]], ["invalidPattern@routes[0].patterns[0]"], "space in literal"),
    .init([["id": "x", "patterns": ["/%41"], "destination": "home"]], ["invalidPattern@routes[0].patterns[0]"], "percent in literal"),

    // duplicateRouteId, duplicatePattern
    .init([product, ["id": "product", "patterns": ["/p/:id"], "destination": "product"]],
          ["duplicateRouteId@routes[1].id"], "same id twice"),
    .init([["id": "p", "patterns": ["/p/:id", "/P/:id"], "destination": "product"]],
          ["duplicatePattern@routes[0].patterns[1]"], "same pattern twice in a route"),

    // unknownDestination
    .init([["id": "w", "patterns": ["/wishlist"], "destination": "wishlist"]],
          ["unknownDestination@routes[0].destination"], "destination the app lacks"),

    // missingParam
    .init([["id": "p", "patterns": ["/p"], "destination": "product"]], ["missingParam@routes[0].params.id"], "required param not provided"),
    .init([["id": "p", "patterns": ["/p/:id", "/product"], "destination": "product"]],
          ["missingParam@routes[0].params.id"], "required param missing in one pattern"),
    .init([["id": "p", "patterns": ["/p/:sku"], "destination": "product", "params": ["id": ["capture": "ref"]]]],
          ["missingParam@routes[0].patterns[0]", "unknownParam@routes[0].patterns[0]"], "mapping names an absent capture"),

    // unknownParam
    .init([["id": "p", "patterns": ["/p/:id"], "destination": "product", "params": ["color": ["query": "c"]]]],
          ["unknownParam@routes[0].params.color"], "param the destination lacks"),
    .init([["id": "p", "patterns": ["/p/:id/:extra"], "destination": "product"]],
          ["unknownParam@routes[0].patterns[0]"], "capture that fills nothing"),

    // paramTypeMismatch
    .init([["id": "o", "patterns": ["/o"], "destination": "orderDetail", "params": ["orderId": ["const": "42"]]]],
          ["paramTypeMismatch@routes[0].params.orderId.const"], "text constant for an int"),
    .init([["id": "o", "patterns": ["/o"], "destination": "orderDetail", "params": ["orderId": ["const": 0]]]],
          ["paramTypeMismatch@routes[0].params.orderId.const"], "int constant below min"),
    .init([["id": "x", "patterns": ["/x"], "destination": "promo", "params": ["code": ["const": "spring"]]]],
          ["paramTypeMismatch@routes[0].params.code.const"], "constant failing its pattern"),
    .init([["id": "o", "patterns": ["/o/*orderId"], "destination": "orderDetail"]],
          ["paramTypeMismatch@routes[0].patterns[0]"], "rest capture into an int"),

    // conflict, shadowed
    .init([product, ["id": "product-2", "patterns": ["/Product/:sku"], "destination": "product", "params": ["id": ["capture": "sku"]]]],
          ["conflict@routes[1].patterns[0]"], "same links, different capture names"),
    .init([["id": "a", "patterns": ["/a"], "destination": "home"],
           ["id": "b", "patterns": ["/a"], "destination": "settings", "hosts": ["storefront.example"]]],
          ["shadowed@routes[1].patterns[0]"], "narrow route after a general one"),
    .init([["id": "a", "patterns": ["/a"], "destination": "home"],
           ["id": "b", "patterns": ["/a"], "destination": "home", "validFrom": "2027-01-01T00:00:00Z", "validUntil": "2027-02-01T00:00:00Z"]],
          ["shadowed@routes[1].patterns[0]"], "campaign after the general route"),
    .init([["id": "a", "patterns": ["/a"], "destination": "home", "validFrom": "2027-01-01T00:00:00Z", "validUntil": "2027-02-01T00:00:00Z"],
           ["id": "b", "patterns": ["/a"], "destination": "home", "validFrom": "2027-01-15T00:00:00Z", "validUntil": "2027-03-01T00:00:00Z"],
           ["id": "c", "patterns": ["/a"], "destination": "home", "validFrom": "2027-01-20T00:00:00Z", "validUntil": "2027-02-20T00:00:00Z"]],
          ["shadowed@routes[2].patterns[0]"], "within the later of two overlapping campaigns"),
    .init([["id": "a", "patterns": ["/a"], "destination": "home", "validFrom": "2027-01-01T00:00:00Z", "validUntil": "2027-02-01T00:00:00Z"],
           ["id": "b", "patterns": ["/a"], "destination": "home", "validFrom": "2027-01-15T00:00:00Z", "validUntil": "2027-03-01T00:00:00Z"],
           ["id": "c", "patterns": ["/a"], "destination": "home", "validFrom": "2026-12-20T00:00:00Z", "validUntil": "2027-02-20T00:00:00Z"]],
          [], "overlapping campaign windows, none within an earlier one"),
    .init([["id": "a", "patterns": ["/a"], "destination": "home", "hosts": ["storefront.example"]],
           ["id": "b", "patterns": ["/a"], "destination": "home", "schemes": ["storefront"]],
           ["id": "c", "patterns": ["/a"], "destination": "home", "hosts": ["storefront.example"], "validFrom": "2027-01-15T00:00:00Z"]],
          ["shadowed@routes[2].patterns[0]"], "within an earlier route of the same hosts, past one of other links"),
    .init([["id": "a", "patterns": ["/a"], "destination": "home", "hosts": ["storefront.example"], "schemes": ["storefront"]],
           ["id": "b", "patterns": ["/a"], "destination": "home", "validUntil": "2027-01-15T00:00:00Z"],
           ["id": "c", "patterns": ["/a"], "destination": "home", "validFrom": "2027-01-15T00:00:00Z"]],
          [], "back to back after a narrower route"),

    // tooComplex: the conflict analysis stops at its work limit (tiny here)
    .init([["id": "a", "patterns": ["/a"], "destination": "home", "hosts": ["storefront.example"]],
           ["id": "b", "patterns": ["/a"], "destination": "home", "schemes": ["storefront"]],
           ["id": "c", "patterns": ["/a"], "destination": "home", "validFrom": "2027-01-15T00:00:00Z"]],
          ["tooComplex@routes[0].patterns[0]"], workLimit: 2, "more scope comparisons than the limit"),
    .init([["id": "a", "patterns": ["/a"], "destination": "home", "hosts": ["storefront.example"]],
           ["id": "b", "patterns": ["/a"], "destination": "home", "schemes": ["storefront"]],
           ["id": "c", "patterns": ["/a"], "destination": "home", "validFrom": "2027-01-15T00:00:00Z"]],
          [], workLimit: 3, "three routes with three lists cost 0 + 1 + 2: exactly the limit"),

    // undeclaredHost, undeclaredScheme
    .init([["id": "x", "patterns": ["/x"], "destination": "home", "hosts": ["shop.example"]]],
          ["undeclaredHost@routes[0].hosts[0]"], "host the app does not declare"),
    .init([["id": "x", "patterns": ["/x"], "destination": "home", "schemes": ["shop"]]],
          ["undeclaredScheme@routes[0].schemes[0]"], "scheme the app does not declare"),
    .init([["id": "x", "patterns": ["/x"], "destination": "home", "schemes": ["https"]]],
          ["undeclaredScheme@routes[0].schemes[0]"], "https listed as a custom scheme"),

    // invalidWindow, expired
    .init([["id": "x", "patterns": ["/x"], "destination": "home", "validFrom": "2027-02-01T00:00:00Z", "validUntil": "2027-01-01T00:00:00Z"]],
          ["invalidWindow@routes[0].validUntil"], "ends before it starts"),
    .init([["id": "x", "patterns": ["/x"], "destination": "home", "validFrom": "2027-01-01T00:00:00Z", "validUntil": "2027-01-01T00:00:00Z"]],
          ["invalidWindow@routes[0].validUntil"], "empty window"),
    .init([["id": "x", "patterns": ["/x"], "destination": "home", "validUntil": "2026-01-01T00:00:00Z"]],
          ["expired@routes[0].validUntil"], "already ended"),

    // insecureFallback
    .init([["id": "x", "patterns": ["/x"], "destination": "home", "fallbackURL": "http://storefront.example/x"]],
          ["insecureFallback@routes[0].fallbackURL"], "http fallback"),
    .init([["id": "x", "patterns": ["/x"], "destination": "home", "fallbackURL": "javascript:alert(1)"]],
          ["insecureFallback@routes[0].fallbackURL"], "javascript fallback"),
    .init([["id": "x", "patterns": ["/x"], "destination": "home", "fallbackURL": "https://user@evil.example/"]],
          ["insecureFallback@routes[0].fallbackURL"], "fallback with userinfo"),
    .init([["id": "x", "patterns": ["/x"], "destination": "home", "fallbackURL": "https:///x"]],
          ["insecureFallback@routes[0].fallbackURL"], "fallback without host"),

    // unsupportedByVersion (warning), unsupportedByAllVersions
    .init([["id": "n", "patterns": ["/new"], "destination": "newArrivals"]], ["unsupportedByVersion@routes[0].destination"],
          schemas: both, "destination only in 5.3.0"),
    .init([["id": "n", "patterns": ["/new/:slug"], "destination": "newArrivals"]],
          ["unsupportedByAllVersions@routes[0]"], schemas: both, "each version fails differently"),
    .init([["id": "w", "patterns": ["/w"], "destination": "wishlist"]], ["unknownDestination@routes[0].destination"],
          schemas: both, "a problem common to all versions is reported as itself"),
]

@Suite("Validator")
struct ValidatorTests {
    @Test(arguments: validatorRows)
    func reports(_ row: ValidatorRow) {
        let report = Validator.validate(row.document, against: row.schemas, now: Fixtures.date("2026-03-15T00:00:00Z"), workLimit: row.workLimit)
        let found = Set(report.problems.map { "\($0.code.rawValue)@\($0.path)" })
        #expect(found == row.expected, "\(report.problems.map(\.message))")
        let blocking = row.expected.contains { entry in
            let code = ProblemCode(rawValue: String(entry.prefix { $0 != "@" }))!
            return code.defaultSeverity == .error
        }
        #expect(report.isValid == !blocking)
    }

    @Test func everyCodeHasAFailingFixture() {
        let covered = Set(validatorRows.flatMap { $0.expected.map { String($0.prefix { $0 != "@" }) } })
        // The link checks' codes have theirs in LinkChecksTests.
        let missing = ProblemCode.allCases.filter { !$0.isFoundByLinkChecks }.map(\.rawValue).filter { !covered.contains($0) }
        #expect(missing.isEmpty, "codes without a failing fixture: \(missing)")
    }

    @Test func storefrontExampleIsValidWithOneVersionWarning() {
        let report = Validator.validate(Fixtures.storefrontRoutesJSON, against: [Fixtures.storefront52, Fixtures.storefront53],
                                        now: Fixtures.date("2026-03-15T00:00:00Z"))
        #expect(report.isValid)
        #expect(report.warnings.map(\.code) == [.unsupportedByVersion])
        #expect(report.warnings.first?.message.contains("5.2.0") == true)
    }

    @Test func conflictAndShadowMessagesNameBothRoutes() {
        for row in validatorRows where row.label.hasPrefix("same links") || row.label.hasPrefix("narrow route after") {
            let report = Validator.validate(row.document, against: row.schemas, now: Fixtures.date("2026-03-15T00:00:00Z"), workLimit: row.workLimit)
            let message = report.errors.first?.message ?? ""
            let ids = row.document["routes"]!.arrayValue!.compactMap { $0["id"]?.stringValue }
            #expect(ids.allSatisfy { message.contains("\"\($0)\"") }, "\(message)")
        }
    }

    @Test func reportJSONHasTheContractFields() {
        let report = Validator.validate(routesDocument([["id": "w", "patterns": ["/w"], "destination": "wishlist"]]),
                                        against: [Fixtures.storefront53])
        let json = report.json
        #expect(json["valid"] == false)
        let item = json["errors"]?.arrayValue?.first
        #expect(item?["code"] == "unknownDestination")
        #expect(item?["severity"] == "error")
        #expect(item?["path"] == "routes[0].destination")
        #expect(item?["message"]?.stringValue?.isEmpty == false)
    }

    @Test func excludedRoutesAreNotServed() {
        let document = Fixtures.routes(routesDocument([product, ["id": "product-2", "patterns": ["/product/:id"], "destination": "product"]]))
        let resolver = Resolver(schema: Fixtures.storefront53, routes: document)
        #expect(resolver.routeIDs == ["product"])
    }
}
