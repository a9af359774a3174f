import Foundation
import RouteEngine
import LibraryTestSupport
import Testing

/// What a client's document may cost the validator is bounded: a report lists at most
/// `ValidationReport.listLimit` errors and as many warnings and counts the rest, and a
/// parse for a client (`JSONParser.requests`) stops at 250,000 objects and arrays or
/// 1,000,000 values.
@Suite("Bounded reports and parses")
struct BoundedReportTests {
    static let now = Fixtures.date("2026-03-15T00:00:00Z")

    static func document(_ routes: [JSONValue]) -> JSONValue {
        ["format": "waymark.routes/1", "app": "storefront", "routes": .array(routes)]
    }

    @Test("a report of more problems than it lists counts the rest, and says so")
    func reportCountsWhatItDoesNotList() {
        let limit = ValidationReport.listLimit
        // Each `{"a":0}` is one unknown field (a warning) and three missing fields (errors).
        let tiny: [JSONValue] = Array(repeating: ["a": 0], count: limit)
        let report = Validator.validate(Self.document(tiny), against: [Fixtures.storefront53], now: Self.now)
        #expect(report.errors.count == limit && report.warnings.count == limit)
        #expect(report.errorCount == 3 * limit && report.omittedErrors == 2 * limit && report.omittedWarnings == 0)
        #expect(!report.isValid)
        #expect(report.json["omitted"] == ["errors": .int(2 * limit), "warnings": 0])
        // A report that lists everything has no `omitted`.
        let small = Validator.validate(Self.document([["a": 0]]), against: [Fixtures.storefront53], now: Self.now)
        #expect(small.json["omitted"] == nil && small.errorCount == 3)
    }

    @Test("a document of more patterns or segments than the bound is refused before it is decoded")
    func patternsAndSegmentsAreBounded() {
        func routes(_ patterns: Int, _ pattern: String) -> JSONValue {
            Self.document([["id": "wide", "patterns": .array(Array(repeating: .string(pattern), count: patterns)), "destination": "home"]])
        }
        for (document, allowed) in [(routes(RoutesDocument.maximumPatterns, "/a"), true), (routes(RoutesDocument.maximumPatterns + 1, "/a"), false),
                                    (routes(RoutesDocument.maximumSegments / 4, "/a/b/c/d"), true),
                                    (routes(RoutesDocument.maximumSegments / 4 + 1, "/a/b/c/d"), false)] {
            let (decoded, report) = RoutesDocument.decodeReporting(document)
            let refused = report.errors.contains { $0.code == .tooComplex && $0.path == JSONPath.root + "routes" }
            #expect(refused != allowed && (decoded == nil) == refused)
        }
    }

    @Test("a well-formed route after the list is full is kept; a broken one is still left out")
    func decodingJudgesEveryRoutePastTheLimit() {
        let limit = ValidationReport.listLimit
        var routes: [JSONValue] = Array(repeating: ["a": 0], count: limit)
        routes.append(["id": "good", "patterns": ["/good"], "destination": "home"])
        // Every field it needs is there; only its notes are too long, an error of its own.
        routes.append(["id": "bad", "patterns": ["/bad"], "destination": "home", "notes": .string(String(repeating: "n", count: 5_000))])
        let (document, report) = RoutesDocument.decodeReporting(Self.document(routes))
        #expect(document?.routes.map(\.id) == ["good"])
        #expect(report.errors.count == limit && report.omittedErrors == 2 * limit + 1)
    }

    @Test("a route naming thousands of unknown params costs a bounded report")
    func manyParamsOnOneRoute() {
        var params: [String: JSONValue] = [:]
        for index in 0..<20_000 { params["p\(index)"] = ["const": "x"] }
        let route: JSONValue = ["id": "many", "patterns": ["/many"], "destination": "home", "params": .object(params)]
        // Two builds: what they have in common is looked up, not compared pair by pair.
        let report = Validator.validate(Self.document([route]), against: [Fixtures.storefront53, Fixtures.storefront53], now: Self.now)
        #expect(report.errors.count == ValidationReport.listLimit && !report.isValid)
        #expect(report.errors.allSatisfy { $0.code == .unknownParam })
    }

    static let parses: [(String, String, String?)] = [
        ("objects at the limit", "[" + Array(repeating: "{}", count: 249_999).joined(separator: ",") + "]", nil),
        ("objects one over", "[" + Array(repeating: "{}", count: 250_000).joined(separator: ",") + "]",
         "more than 250000 objects and lists"),
        ("values at the limit", "[" + Array(repeating: "0", count: 999_999).joined(separator: ",") + "]", nil),
        ("values one over", "[" + Array(repeating: "0", count: 1_000_000).joined(separator: ",") + "]", "more than 1000000 values"),
    ]

    @Test(arguments: parses)
    func requestParserLimits(_ label: String, _ text: String, _ refusal: String?) throws {
        let bytes = Array(text.utf8)
        // Documents the server reads back from its own disk are not limited.
        #expect(throws: Never.self) { try JSONParser().parse(bytes) }
        guard let refusal else {
            #expect(throws: Never.self, "\(label)") { try JSONParser.requests.parse(bytes) }
            return
        }
        do {
            _ = try JSONParser.requests.parse(bytes)
            Issue.record("\(label): parsed")
        } catch {
            #expect(error.message.contains(refusal), "\(label): \(error.message)")
        }
    }
}
