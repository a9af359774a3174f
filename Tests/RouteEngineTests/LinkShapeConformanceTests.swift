import Foundation
import LibraryTestSupport
import RouteEngine
import Testing

/// Unknown links' shapes, `conformance/shapes.json` (`waymark.shapes/1`,
/// `docs/conformance.md`): the shape of each link, with the vocabulary a phone gives or
/// none, byte for byte; the Android library runs the same file.
@Suite("Link shape conformance vectors")
struct LinkShapeConformanceTests {
    static let file = Fixtures.json(file: "conformance/shapes.json")
    static let text = try! String(contentsOfFile: Fixtures.path("conformance/shapes.json"), encoding: .utf8)

    struct Row: Sendable, CustomTestStringConvertible {
        let json: JSONValue
        var testDescription: String { json["label"]?.stringValue ?? "?" }
    }

    static let rows = (file["rows"]?.arrayValue ?? []).map(Row.init)

    @Test("Every row of the file runs")
    func everyRow() {
        #expect(Self.file["format"] == "waymark.shapes/1")
        #expect(Self.rows.count == Self.text.components(separatedBy: "\"label\"").count - 1)
        #expect(Self.rows.count >= 80)
    }

    @Test(arguments: rows)
    func shape(_ row: Row) throws {
        let link = try #require(row.json["link"]?.stringValue)
        let vocabulary = row.json["vocabulary"]?.arrayValue.map { Set($0.compactMap(\.stringValue)) }
        let shape = LinkShape(link: link, vocabulary: vocabulary).description
        #expect(shape == row.json["shape"]?.stringValue, "\(link)")
        if let absent = row.json["absent"]?.stringValue {
            #expect(!shape.lowercased().contains(absent.lowercased()), "\(link) → \(shape)")
        }
        // Shaping a shape changes nothing (the server shapes what a phone sends again).
        #expect(LinkShape(link: shape, vocabulary: vocabulary).description == shape, "\(shape) is not stable")
    }
}
