import Foundation
import RouteEngine
import Testing

/// A route's `preview` (`docs/formats.md`): title ≤ 120 scalars, description ≤ 300, both
/// visible text without controls or bidi overrides; image an https address with a host,
/// ≤ 2,048 bytes; at least one of them and nothing else. Each problem is one error at its
/// field, and the route is refused; a good preview is decoded as written and left out of
/// the manifest a phone gets.
@Suite("Route previews")
struct PreviewFieldTests {
    static let rows: [(String, JSONValue, String?)] = [
        ("all three", ["title": "Spring sale", "description": "Tea for less", "image": "https://cdn.example/spring.png"], nil),
        ("a title alone", ["title": "Spring sale"], nil),
        ("an image alone", ["image": "https://cdn.example/a.png?w=1200&h=630"], nil),
        ("a title of 120 scalars, multi-byte", ["title": .string(String(repeating: "é", count: 120))], nil),
        ("a description of 300 emoji scalars", ["description": .string(String(repeating: "\u{1F375}", count: 300))], nil),
        ("markup is text: escaped where shown", ["title": "<script>alert(1)</script> & \"quotes\""], nil),
        ("a title of 121 scalars", ["title": .string(String(repeating: "t", count: 121))], "routes[0].preview.title"),
        ("a description of 301 scalars", ["description": .string(String(repeating: "d", count: 301))], "routes[0].preview.description"),
        ("a line break", ["title": "Spring\nsale"], "routes[0].preview.title"),
        ("a C1 control", ["description": "Spring\u{85}sale"], "routes[0].preview.description"),
        ("a bidi override", ["title": "Spring \u{202E}elas"], "routes[0].preview.title"),
        ("a bidi isolate", ["title": "Spring \u{2067}sale"], "routes[0].preview.title"),
        ("a right-to-left mark", ["title": "Spring \u{200F}sale"], "routes[0].preview.title"),
        ("a line separator", ["description": "Spring\u{2028}sale"], "routes[0].preview.description"),
        ("only white space", ["title": "   \u{3000}"], "routes[0].preview.title"),
        ("an http image", ["image": "http://cdn.example/a.png"], "routes[0].preview.image"),
        ("a script image", ["image": "javascript:alert(1)"], "routes[0].preview.image"),
        ("an image with a user name", ["image": "https://user@cdn.example/a.png"], "routes[0].preview.image"),
        ("an image with a quote", ["image": "https://cdn.example/a\".png"], "routes[0].preview.image"),
        ("an image of 2,049 bytes", .object(["image": .string("https://cdn.example/" + String(repeating: "a", count: 2_029))]), "routes[0].preview.image"),
        ("an unknown field", ["title": "Sale", "video": "https://cdn.example/v.mp4"], "routes[0].preview.video"),
        ("empty", [:], "routes[0].preview"),
        ("not an object", "Spring sale", "routes[0].preview"),
        ("a title that is a number", ["title": 7], "routes[0].preview.title"),
    ]

    @Test(arguments: rows)
    func validates(_ label: String, _ preview: JSONValue, _ errorAt: String?) {
        let route: JSONValue = ["id": "spring", "patterns": ["/sale/spring"], "destination": "promo", "preview": preview]
        let (document, problems) = RoutesDocument.decode(["format": "waymark.routes/1", "app": "storefront", "routes": [route]])
        let errors = problems.filter { $0.severity == .error }
        #expect(!problems.contains { $0.code == .unknownField }, "\(label): preview is a known field")
        guard let errorAt else {
            #expect(errors.isEmpty && document?.routes.count == 1, "\(label): \(errors.map(\.message))")
            #expect(document?.routes.first?.preview?.title == preview["title"]?.stringValue, "\(label)")
            #expect(document?.routes.first?.preview?.image == preview["image"]?.stringValue, "\(label)")
            return
        }
        #expect(document?.routes.isEmpty != false, "\(label): the route is refused")
        #expect(errors.map(\.path.description) == [errorAt], "\(label): \(errors.map { "\($0.path): \($0.message)" })")
        // Nothing the field held is echoed back (it may be long, or hostile).
        #expect(!errors.contains { $0.message.contains("alert") || $0.message.contains("aaaaaaaa") }, "\(label)")
    }

    @Test func aPhoneGetsNoPreview() throws {
        let route: JSONValue = ["id": "spring", "patterns": ["/sale/spring"], "destination": "promo", "preview": ["title": "Spring sale"]]
        let stripped = ServedManifest.routes(of: ["routes": [route]]).first!.json
        #expect(stripped["preview"] != nil, "the document keeps it")
        #expect(ServedManifest.forPhones(route)["preview"] == nil)
        #expect(ServedManifest.forPhones(route)["id"] == "spring")
    }
}
