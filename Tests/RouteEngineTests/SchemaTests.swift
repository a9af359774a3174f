import RouteEngine
import LibraryTestSupport
import Testing

@Suite("Schema documents")
struct SchemaTests {
    /// The lab schema with one field replaced (or removed when the value is nil).
    static func lab(_ key: String, _ value: JSONValue?) -> JSONValue {
        var object = Fixtures.labSchemaJSON.objectValue!
        object[key] = value
        return .object(object)
    }

    static func labDestination(_ name: String, _ destination: JSONValue) -> JSONValue {
        var destinations = Fixtures.labSchemaJSON["destinations"]!.objectValue!
        destinations[name] = destination
        return lab("destinations", .object(destinations))
    }

    static let rejected: [(JSONValue, String, String)] = [
        (lab("format", "waymark.schema/9"), "format", "wrong format"),
        (lab("app", nil), "app", "missing app"),
        (lab("platform", "web"), "platform", "unknown platform"),
        (lab("version", "1.0 beta"), "version", "space in version"),
        (lab("version", "."), "version", "a dot-only version (a dot segment in every URL naming the build)"),
        (lab("version", ".."), "version", "two dots"),
        (lab("version", ".5"), "version", "a version starting with a dot"),
        (lab("version", "5."), "version", "a version ending with a dot"),
        (lab("version", "-1"), "version", "a version starting with a dash"),
        (lab("version", ""), "version", "an empty version"),
        (lab("version", .string(String(repeating: "1", count: 65))), "version", "a version of 65 characters"),
        (lab("version", "5/3"), "version", "a slash in a version"),
        (lab("version", "5%2E3"), "version", "a percent escape in a version"),
        (lab("schemes", ["https"]), "schemes[0]", "https as a custom scheme"),
        (lab("schemes", ["9lab"]), "schemes[0]", "scheme starting with a digit"),
        (lab("hosts", ["localhost"]), "hosts[0]", "single-label host"),
        (lab("hosts", ["lab_example.com"]), "hosts[0]", "underscore in host"),
        (lab("hosts", ["10.0.0.1"]), "hosts[0]", "an IPv4 literal"),
        (lab("hosts", ["lab.example", "127.0.0.1"]), "hosts[1]", "a loopback literal beside a name"),
        (lab("hosts", ["[::1]"]), "hosts[0]", "an IPv6 literal"),
        (lab("landing", ["webURL": "http://lab.example/"]), "landing.webURL", "a landing address over http"),
        (lab("landing", ["appStoreURL": "https://user@apps.example/app"]), "landing.appStoreURL", "a landing address with user information"),
        (lab("landing", ["notFoundURL": "javascript:alert(1)"]), "landing.notFoundURL", "a script as the not-found page"),
        (lab("landing", ["playStoreURL": 7]), "landing.playStoreURL", "a landing address that is not a string"),
        (lab("landing", "https://lab.example/"), "landing", "landing that is not an object"),
        (lab("hosts", ["shop.123"]), "hosts[0]", "an all-digit top-level label"),
        (lab("destinations", [:]), "destinations", "no destinations"),
        (labDestination("x", ["parent": "nowhere"]), "destinations.x.parent", "unknown parent"),
        (labDestination("x", ["parent": "x"]), "destinations.x.parent", "own parent"),
        (labDestination("x", ["presentation": "modal"]), "destinations.x.presentation", "unknown presentation"),
        (labDestination("x", ["preconditions": ["vip"]]), "destinations.x.preconditions[0]", "undeclared precondition"),
        (labDestination("x", ["params": ["n": ["type": "float"]]]), "destinations.x.params.n.type", "unknown param type"),
        (labDestination("x", ["params": ["n": ["type": "int", "min": 5, "max": 1]]]), "destinations.x.params.n.min", "min above max"),
        (labDestination("x", ["params": ["n": ["type": "string", "min": 1]]]), "destinations.x.params.n.min", "min on a string"),
        (labDestination("x", ["params": ["n": ["type": "enum"]]]), "destinations.x.params.n.values", "enum without values"),
        (labDestination("x", ["params": ["n": ["type": "string", "pattern": "(a"]]]), "destinations.x.params.n.pattern", "bad pattern"),
        (labDestination("x", ["params": ["n": ["type": "string", "pattern": "^[a-z0-9-]{1,1000}$"]]]), "destinations.x.params.n.pattern",
         "a pattern whose worst case on a 2,048-character value is over the match budget"),
        (labDestination("x", ["params": ["n": ["type": "string", "maxLength": 2000, "pattern": "(a|b|c|d|e|f|g|h)*x(y|z)*[a-f0-9]{1,200}"]]]),
         "destinations.x.params.n.pattern", "a costly pattern a large maxLength does not save"),
        (labDestination("x", ["params": ["n-m": ["type": "string"]]]), "destinations.x.params[\"n-m\"]", "param name with hyphen"),
        (labDestination("x-y", [:]), "destinations[\"x-y\"]", "destination name with hyphen"),
    ]

    @Test(arguments: rejected)
    func rejects(_ json: JSONValue, _ path: String, _ label: String) {
        guard case .failure(let error) = Schema.decode(json) else {
            Issue.record("\(label): accepted")
            return
        }
        #expect(error.problems.contains { $0.path.description == path && $0.severity == .error },
                "\(label): \(error.problems.map { "\($0.path): \($0.message)" })")
    }

    /// The match budget counts the value's longest length: a pattern too costly for a whole
    /// link is accepted once a maxLength bounds what it is asked to match.
    @Test func aMaxLengthBringsACostlyPatternWithinTheBudget() throws {
        let pattern = "^[a-z0-9-]{1,1000}$"
        let regex = try SafeRegex(pattern)
        #expect(regex.worstCaseSteps(length: 2_048) > SafeRegex.matchBudget)
        let fits = SafeRegex.matchBudget / regex.stepsPerScalar
        guard case .success = Schema.decode(Self.labDestination("x", ["params": ["n": ["type": "string", "maxLength": .int(fits), "pattern": .string(pattern)]]])) else {
            Issue.record("maxLength \(fits) should bring \(pattern) within the budget")
            return
        }
        guard case .failure(let error) = Schema.decode(Self.labDestination("x", ["params": ["n": ["type": "string", "maxLength": .int(fits + 1), "pattern": .string(pattern)]]])) else {
            Issue.record("maxLength \(fits + 1) is over the budget")
            return
        }
        #expect(error.problems.first?.message.contains("maxLength of at most \(fits)") == true, "\(error.problems)")
        #expect(try SafeRegex("^p[0-9]{1,8}$").worstCaseSteps(length: 2_048) < SafeRegex.matchBudget / 10, "the example's patterns are far inside it")
    }

    @Test(arguments: ["5.3.0", "5.3.0-beta+2", "2026_11", "7", "a", String(repeating: "9", count: 64), "1..2"])
    func acceptsVersion(_ version: String) {
        guard case .success = Schema.decode(Self.lab("version", .string(version))) else {
            Issue.record("\(version) refused")
            return
        }
        #expect(Schema.isValidVersion(version))
    }

    @Test func cyclesAreFound() {
        let json = Self.labDestination("x", ["parent": "y"])
        var destinations = json["destinations"]!.objectValue!
        destinations["y"] = ["parent": "x"]
        guard case .failure(let error) = Schema.decode(Self.lab("destinations", .object(destinations))) else {
            Issue.record("cycle accepted")
            return
        }
        #expect(error.problems.contains { $0.message.contains("cycle") })
    }

    /// A chain leading into a cycle, and one onto a missing parent: each fault reported
    /// once, and nothing derived past it.
    @Test func brokenChainsAreReportedOnce() {
        var destinations = Self.labDestination("a", ["parent": "b"])["destinations"]!.objectValue!
        destinations["b"] = ["parent": "c"]
        destinations["c"] = ["parent": "b"]
        destinations["d"] = ["parent": "b"]
        destinations["e"] = ["parent": "ghost"]
        destinations["f"] = ["parent": "e"]
        guard case .failure(let error) = Schema.decode(Self.lab("destinations", .object(destinations))) else {
            Issue.record("broken chains accepted")
            return
        }
        #expect(error.problems.filter { $0.message.contains("cycle") }.count == 1)
        #expect(error.problems.filter { $0.message.contains("\"ghost\" is not a destination") }.count == 1)
    }

    /// 3,000 destinations in one chain under a root with a tab and a precondition: each
    /// destination knows its depth and tab, and the path is walked only when asked for.
    @Test func deepChainsAreDerivedInOnePass() throws {
        var destinations: [String: JSONValue] = ["d0": ["tab": "main", "preconditions": ["auth"]]]
        for index in 1..<3_000 { destinations["d\(index)"] = ["parent": .string("d\(index - 1)")] }
        destinations["side"] = ["parent": "d10", "tab": "other", "preconditions": ["adult"]]
        guard case .success(let decoded) = Schema.decode(Self.lab("destinations", .object(destinations))) else {
            Issue.record("the deep chain was refused")
            return
        }
        let schema = decoded.schema
        #expect(schema.destinations["d2999"]!.depth == 2_999)
        #expect(schema.destinations["d2999"]!.effectiveTab == "main")
        #expect(schema.destinations["side"]!.effectiveTab == "other")
        #expect(schema.path(to: "d2999") == (0..<3_000).map { "d\($0)" })
        #expect(schema.path(to: "side") == (0...10).map { "d\($0)" } + ["side"])
        #expect(schema.preconditions(along: "side") == ["auth", "adult"])
    }

    @Test func derivesPathTabAndPreconditions() {
        let schema = Fixtures.storefront53
        #expect(schema.path(to: "orderDetail") == ["home", "orders", "orderDetail"])
        #expect(schema.destinations["orderDetail"]!.depth == 2)
        #expect(schema.destinations["orderDetail"]!.effectiveTab == "account")
        #expect(schema.preconditions(along: "orderDetail") == ["auth"])
        #expect(Fixtures.lab.preconditions(along: "vaultItem") == ["auth", "adult"])
        #expect(schema.path(to: "noSuchDestination") == [])
        #expect(Fixtures.storefront53.hosts == ["storefront.example", "www.storefront.example"])
    }

    @Test func unknownFieldsAreWarningsNotErrors() throws {
        guard case .success(let decoded) = Schema.decode(Self.lab("futureField", 1)) else {
            Issue.record("rejected a schema with an added field")
            return
        }
        #expect(decoded.warnings.map(\.code) == [.unknownField])
    }

    @Test("Landing addresses: each optional, each kept as written; an unknown one is a warning")
    func landing() throws {
        let json = Self.lab("landing", ["appStoreURL": "https://apps.apple.example/app/id1", "webURL": "https://lab.example/",
                                        "notFoundURL": "https://lab.example/missing", "tvURL": "https://tv.example/"])
        let (schema, warnings) = try Schema.decode(json).get()
        #expect(schema.landing == Landing(appStoreURL: "https://apps.apple.example/app/id1", webURL: "https://lab.example/",
                                          notFoundURL: "https://lab.example/missing"))
        #expect(warnings.map(\.path.description) == ["landing.tvURL"])
        #expect(try Schema.decode(Fixtures.labSchemaJSON).get().schema.landing == nil)
    }
}
