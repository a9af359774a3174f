import Foundation
import RouteEngine
import Testing

/// A route's `utm` (`docs/formats.md`): the campaign items a landing passes on for links that
/// carry none of their own; `source`, `medium`, `campaign`, `term`, `content`, at least one,
/// each 1 to 100 bytes of `A–Z a–z 0–9 - . _ ~`. Each problem is one error at its field,
/// nothing echoed, and the route is refused; a good one is decoded as written and left out
/// of the manifest a phone gets.
@Suite("Route UTM items")
struct UTMFieldTests {
    static let rows: [(String, JSONValue, String?)] = [
        ("all five", ["source": "qr", "medium": "print", "campaign": "box-2026", "term": "tea_green", "content": "v1.2~a"], nil),
        ("a campaign alone", ["campaign": "spring"], nil),
        ("100 bytes", ["campaign": .string(String(repeating: "c", count: 100))], nil),
        ("101 bytes", ["campaign": .string(String(repeating: "c", count: 101))], "routes[0].utm.campaign"),
        ("empty value", ["source": ""], "routes[0].utm.source"),
        ("a space", ["source": "news letter"], "routes[0].utm.source"),
        ("an escape", ["source": "news%20letter"], "routes[0].utm.source"),
        ("a plus", ["source": "a+b"], "routes[0].utm.source"),
        ("markup", ["campaign": "<script>alert(1)</script>"], "routes[0].utm.campaign"),
        ("an ampersand", ["campaign": "a&referrer=evil"], "routes[0].utm.campaign"),
        ("non-ASCII", ["campaign": "caf\u{e9}"], "routes[0].utm.campaign"),
        ("a number", ["campaign": 7], "routes[0].utm.campaign"),
        ("an unknown member", ["campaign": "x", "id": "y"], "routes[0].utm.id"),
        ("the item's own name", ["utm_source": "x"], "routes[0].utm.utm_source"),
        ("empty", [:], "routes[0].utm"),
        ("not an object", "spring", "routes[0].utm"),
    ]

    @Test(arguments: rows)
    func validates(_ label: String, _ utm: JSONValue, _ errorAt: String?) {
        let route: JSONValue = ["id": "spring", "patterns": ["/sale/spring"], "destination": "promo", "utm": utm]
        let (document, problems) = RoutesDocument.decode(["format": "waymark.routes/1", "app": "storefront", "routes": [route]])
        let errors = problems.filter { $0.severity == .error }
        #expect(!problems.contains { $0.code == .unknownField }, "\(label): utm is a known field")
        guard let errorAt else {
            #expect(errors.isEmpty && document?.routes.count == 1, "\(label): \(errors.map(\.message))")
            #expect(document?.routes.first?.utm == utm.objectValue?.mapValues { $0.stringValue! }, "\(label)")
            return
        }
        #expect(document?.routes.isEmpty != false, "\(label): the route is refused")
        #expect(errors.map(\.path.description) == [errorAt], "\(label): \(errors.map { "\($0.path): \($0.message)" })")
        #expect(!errors.contains { $0.message.contains("alert") || $0.message.contains("evil") }, "\(label)")
    }

    @Test func aPhoneGetsNoUTM() throws {
        let route: JSONValue = ["id": "spring", "patterns": ["/sale/spring"], "destination": "promo", "utm": ["campaign": "spring"]]
        #expect(ServedManifest.forPhones(route)["utm"] == nil)
        #expect(ServedManifest.forPhones(route)["id"] == "spring")
    }
}
