import Foundation
import RouteEngine
import Testing

/// A route's free text is bounded (`owner` 256 bytes, `notes` 4,096, UTF-8): past it the
/// document is refused with an error at the field's path naming the route and the field.
@Suite("Free-text limits")
struct FreeTextLimitTests {
    /// Each row: the route's extra fields; nil (accepted) or the path of the error and what
    /// its message must say.
    static let rows: [(String, [String: JSONValue], (path: String, says: [String])?)] = [
        ("notes at the limit", ["notes": .string(String(repeating: "n", count: 4_096))], nil),
        ("owner at the limit", ["owner": .string(String(repeating: "o", count: 256))], nil),
        ("notes of multi-byte characters within it", ["notes": .string(String(repeating: "é", count: 2_048))], nil),
        ("no notes, no owner", [:], nil),
        ("notes one byte over", ["notes": .string(String(repeating: "n", count: 4_097))],
         ("routes[0].notes", ["Route \"spring\"", "notes is 4097 bytes", "at most 4096"])),
        ("owner one byte over", ["owner": .string(String(repeating: "o", count: 257))],
         ("routes[0].owner", ["Route \"spring\"", "owner is 257 bytes", "at most 256"])),
        ("notes over in multi-byte characters", ["notes": .string(String(repeating: "é", count: 2_049))],
         ("routes[0].notes", ["notes is 4098 bytes"])),
        ("a ten-million-byte note", ["notes": .string(String(repeating: "x", count: 10_000_000))],
         ("routes[0].notes", ["notes is 10000000 bytes"])),
    ]

    @Test(arguments: rows)
    func limits(_ label: String, _ extra: [String: JSONValue], _ expected: (path: String, says: [String])?) {
        var route: [String: JSONValue] = ["id": "spring", "patterns": ["/sale/spring"], "destination": "promo"]
        for (key, value) in extra { route[key] = value }
        let (document, problems) = RoutesDocument.decode(["format": "waymark.routes/1", "app": "storefront", "routes": [.object(route)]])
        let errors = problems.filter { $0.severity == .error }
        guard let expected else {
            #expect(document?.routes.count == 1 && errors.isEmpty, "\(label): \(errors.map(\.message))")
            return
        }
        #expect(document?.routes.isEmpty != false, "\(label): the route is refused")
        #expect(errors.count == 1 && errors.first?.path.description == expected.path, "\(label): \(errors.map(\.path.description))")
        let message = errors.first?.message ?? ""
        #expect(expected.says.allSatisfy(message.contains), "\(label): \(message.prefix(200))")
    }
}
