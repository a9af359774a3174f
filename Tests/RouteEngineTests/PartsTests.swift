import CivilDate
import Foundation
import RouteEngine
import LibraryTestSupport
import Testing

@Suite("URL patterns")
struct URLPatternTests {
    static let accepted: [(String, [PatternSegment])] = [
        ("/", []),
        ("/product/:id", [.literal("product"), .parameter("id")]),
        ("/Product/:id/", [.literal("product"), .parameter("id")]),
        ("/help/*topic", [.literal("help"), .rest("topic")]),
        ("/a-b/c.d/e_f/~g", [.literal("a-b"), .literal("c.d"), .literal("e_f"), .literal("~g")]),
        ("/:a/:b", [.parameter("a"), .parameter("b")]),
    ]

    @Test(arguments: accepted)
    func parses(_ text: String, _ segments: [PatternSegment]) throws {
        #expect(try URLPattern(text).segments == segments)
    }

    static let rejected: [(String, URLPatternError)] = [
        ("product", .mustStartWithSlash),
        ("", .mustStartWithSlash),
        ("/a?x=1", .containsQueryOrFragment),
        ("/a#x", .containsQueryOrFragment),
        ("/a//b", .emptySegment),
        ("/a/./b", .dotSegment),
        ("/..", .dotSegment),
        ("/a b", .invalidLiteral("a b")),
        ("/%2F", .invalidLiteral("%2F")),
        ("/é", .invalidLiteral("é")),
        ("/:", .invalidCaptureName(":")),
        ("/:1a", .invalidCaptureName(":1a")),
        ("/:a-b", .invalidCaptureName(":a-b")),
        ("/:a/:a", .duplicateCapture("a")),
        ("/*a/b", .restNotLast("*a")),
        ("/" + Array(repeating: "x", count: 33).joined(separator: "/"), .tooManySegments(limit: 32)),
    ]

    @Test(arguments: rejected)
    func rejects(_ text: String, _ error: URLPatternError) {
        #expect(throws: error) { try URLPattern(text) }
    }
}

@Suite("Timestamps")
struct TimestampTests {
    static let parsed: [(String, Double?)] = [
        ("1970-01-01T00:00:00Z", 0),
        ("2026-03-01T00:00:00Z", 1_772_323_200),
        ("2026-03-01T01:00:00+01:00", 1_772_323_200),
        ("2026-02-28T19:00:00-05:00", 1_772_323_200),
        ("2024-02-29T12:00:00Z", 1_709_208_000),
        ("2026-03-01T00:00:00.5Z", 1_772_323_200.5),
        ("2026-03-01t00:00:00z", 1_772_323_200),
        ("2026-02-29T00:00:00Z", nil),
        ("2026-13-01T00:00:00Z", nil),
        ("2026-03-01T24:00:00Z", nil),
        // The one leap-second rule (CivilDate.Timestamp): :60 is the minute's last second.
        ("2026-03-01T00:00:60Z", 1_772_323_259),
        ("2016-12-31T23:59:60Z", 1_483_228_799),
        ("2026-03-01T00:00:61Z", nil),
        ("2026-03-01T00:60:00Z", nil),
        ("2026-03-01T00:00:00.25+00:00", 1_772_323_200.25),
        ("2026-03-01T00:00:00+24:00", nil),
        ("2026-03-01T00:00:00", nil),
        ("2026-03-01 00:00:00Z", nil),
        ("2026-03-01", nil),
        ("2026-03-01T00:00:00+0100", nil),
        ("2026-03-01T00:00:00.Z", nil),
        ("2026-03-01T00:00:00Zjunk", nil),
    ]

    @Test(arguments: parsed)
    func parses(_ text: String, _ seconds: Double?) {
        #expect(Timestamp.parse(text)?.timeIntervalSince1970 == seconds)
    }

    @Test(arguments: ["1970-01-01T00:00:00Z", "2026-03-01T00:00:00Z", "2000-02-29T23:59:59Z", "1969-12-31T23:59:59Z"])
    func roundTrips(_ text: String) {
        #expect(Timestamp.format(Timestamp.parse(text)!) == text)
    }

    /// Instants in whole microseconds (docs/formats.md): digits past the sixth dropped, never rounded.
    static let instants: [(String, Int?)] = [
        ("2026-03-31T23:59:59.9999999Z", 1_775_001_599_999_999),
        ("2026-03-31T23:59:59.999999Z", 1_775_001_599_999_999),
        ("2026-03-31T23:59:59.999999999999Z", 1_775_001_599_999_999),
        ("2026-04-01T00:00:00Z", 1_775_001_600_000_000),
        ("2026-04-01T00:00:00.0000009Z", 1_775_001_600_000_000),
        ("2026-04-01T00:00:00.000001Z", 1_775_001_600_000_001),
        ("2026-04-01T00:00:00.5Z", 1_775_001_600_500_000),
        ("2026-04-01T02:00:00.0000019+02:00", 1_775_001_600_000_001),
        ("1969-12-31T23:59:59.9999999Z", -1),
        ("2026-03-31T23:59:60.9999999Z", 1_775_001_599_999_999),
        ("2026-04-01T00:00:00.1234567xZ", nil),
        ("2026-04-01T00:00:00.Z", nil),
    ]

    @Test(arguments: instants)
    func microseconds(_ text: String, _ expected: Int?) {
        #expect(Timestamp.microseconds(text) == expected)
    }

    /// A Date made from microseconds reads back as exactly those microseconds (nearest, not
    /// truncated), from 1716 to 2286: where a double still holds every microsecond.
    @Test(arguments: [0, 1, -1, 999_999, 1_775_001_599_999_999, 1_775_001_600_000_001, 9_000_000_000_000_001, -7_000_000_000_000_001])
    func datesKeepTheirMicroseconds(_ microseconds: Int) {
        #expect(Timestamp.microseconds(of: Timestamp.date(microseconds: microseconds)) == microseconds)
        #expect(ResolutionContext(now: Timestamp.date(microseconds: microseconds)).nowMicroseconds == microseconds)
    }
}

@Suite("Param types")
struct ParamSpecTests {
    static let rows: [(ParamSpec, String, ParamValue?)] = [
        (ParamSpec(type: .int), "0", .int(0)),
        (ParamSpec(type: .int), "-9007199254740991", .int(-9_007_199_254_740_991)),
        (ParamSpec(type: .int), "9007199254740991", .int(9_007_199_254_740_991)),
        (ParamSpec(type: .int), "9007199254740992", nil),
        (ParamSpec(type: .int, maximum: Int.max), "9007199254740992", nil),
        (ParamSpec(type: .int), "-9223372036854775808", nil),
        (ParamSpec(type: .int), "9223372036854775807", nil),
        (ParamSpec(type: .int), "9223372036854775808", nil),
        (ParamSpec(type: .int), "", nil),
        (ParamSpec(type: .int), "-", nil),
        (ParamSpec(type: .int), "00", nil),
        (ParamSpec(type: .int, minimum: 1, maximum: 3), "3", .int(3)),
        (ParamSpec(type: .int, minimum: 1, maximum: 3), "4", nil),
        (ParamSpec(type: .string, minimumLength: 2, maximumLength: 3), "éé", .string("éé")),
        (ParamSpec(type: .string, minimumLength: 2, maximumLength: 3), "é", nil),
        (ParamSpec(type: .string, minimumLength: 2, maximumLength: 3), "abcd", nil),
        (ParamSpec(type: .enum, values: ["a", "b"]), "b", .string("b")),
        (ParamSpec(type: .enum, values: ["a", "b"]), "", nil),
        (ParamSpec(type: .uuid), "00000000-0000-0000-0000-000000000000", .string("00000000-0000-0000-0000-000000000000")),
        (ParamSpec(type: .uuid), "00000000-0000-0000-0000-00000000000", nil),
        (ParamSpec(type: .uuid), "00000000_0000-0000-0000-000000000000", nil),
        (ParamSpec(type: .slug), "a", .string("a")),
        (ParamSpec(type: .slug), "a-1-b", .string("a-1-b")),
        (ParamSpec(type: .slug), "", nil),
        (ParamSpec(type: .slug, maximumLength: 3), "abcd", nil),
        (ParamSpec(type: .slug), "é", nil),
    ]

    @Test(arguments: rows)
    func checks(_ spec: ParamSpec, _ text: String, _ expected: ParamValue?) {
        #expect((try? spec.value(fromText: text).get()) == expected)
    }
}

@Suite("Typed in-app requests and gates")
struct TypedRequestTests {
    let context = ResolutionContext(now: Fixtures.date("2026-03-15T00:00:00Z"))

    static let rows: [(DestinationRequest, String)] = [
        (DestinationRequest(destination: "product", params: ["id": .string("p1")]), "proceed - product id=p1"),
        (DestinationRequest(destination: "home"), "proceed - home"),
        (DestinationRequest(destination: "search"), "proceed - search"),
        (DestinationRequest(destination: "orderDetail", params: ["orderId": .int(42)]), "gated auth -"),
        (DestinationRequest(destination: "orderDetail", params: ["orderId": .int(0)]), "notFound validationFailed"),
        (DestinationRequest(destination: "orderDetail", params: ["orderId": .string("42")]), "notFound validationFailed"),
        (DestinationRequest(destination: "orderDetail"), "notFound validationFailed"),
        (DestinationRequest(destination: "product", params: ["id": .string("p1"), "x": .int(1)]), "notFound validationFailed"),
        (DestinationRequest(destination: "product", params: ["id": .int(1)]), "notFound validationFailed"),
        (DestinationRequest(destination: "wishlist"), "notFound unknownRoute"),
    ]

    @Test(arguments: rows)
    func resolves(_ request: DestinationRequest, _ expected: String) {
        #expect(Fixtures.storefront.resolve(request: request, context: context).summary == expected)
    }

    @Test func gateCarriesTheLinkAndResolvesAgainOnceSatisfied() throws {
        let link = "https://storefront.example/orders/42?utm_source=push"
        guard case .gated(let gate) = Fixtures.storefront.resolve(url: link, context: context) else {
            Issue.record("expected a gate")
            return
        }
        #expect(gate.precondition == "auth")
        #expect(gate.destination == "orderDetail")
        #expect(gate.resume == .url(link))
        var loggedIn = context
        loggedIn.satisfied = ["auth"]
        let resumed = Fixtures.storefront.resolve(gate.resume, context: loggedIn)
        guard case .proceed(let proceed) = resumed else {
            Issue.record("expected proceed, got \(resumed.summary)")
            return
        }
        #expect(proceed.path == ["home", "orders", "orderDetail"])
        #expect(proceed.tab == "account")
        #expect(proceed.params == ["orderId": .int(42)])
    }

    @Test func typedGateResumesTheTypedRequest() {
        let request = DestinationRequest(destination: "cart")
        guard case .gated(let gate) = Fixtures.storefront.resolve(request: request, context: context) else {
            Issue.record("expected a gate")
            return
        }
        #expect(gate.resume == .destination(request))
        let resumed = Fixtures.storefront.resolve(gate.resume, context: ResolutionContext(satisfied: ["auth"], now: context.now))
        #expect(resumed.summary == "proceed - cart")
    }

    @Test func proceedCarriesPathTabAndPresentation() {
        let resolution = Fixtures.labResolver.resolve(url: "lab://vault/7", context: ResolutionContext(satisfied: ["auth", "adult"]))
        #expect(resolution.json == [
            "outcome": "proceed", "route": "vault", "destination": "vaultItem", "params": ["n": 7],
            "path": ["root", "vault", "vaultItem"], "tab": "main", "presentation": "push",
        ])
        let settings = Fixtures.storefront.resolve(url: "storefront://settings", context: context)
        #expect(settings.json["presentation"] == "sheet")
        #expect(settings.json["tab"] == nil)
    }
}
