import Foundation
import RouteEngine
import LibraryTestSupport
import Testing
@testable import WaymarkClient

/// The planner's shared table, `conformance/planner.json` (`waymark.planner/1`,
/// `docs/conformance.md`): the rows the Android library's planner runs too, read from the
/// same file. Screens, stacks and operations are written in the file's small notation.
@Suite("Planner conformance vectors")
struct PlannerConformanceTests {
    static let file = Fixtures.json(file: "conformance/planner.json")
    static let text = try! String(contentsOfFile: Fixtures.path("conformance/planner.json"), encoding: .utf8)

    struct Row: Sendable, CustomTestStringConvertible {
        let json: JSONValue
        var testDescription: String { json["label"]?.stringValue ?? "?" }
    }

    static let rows = (file["rows"]?.arrayValue ?? []).map(Row.init)
    static let targets = (file["targets"]?.arrayValue ?? []).map(Row.init)

    static func modals(_ json: JSONValue?) -> [Modal] {
        (json?.arrayValue ?? []).map { pair in
            Modal(Presentation(rawValue: pair.arrayValue![0].stringValue!)!, stack: NavigationPlannerTests.screens(pair.arrayValue![1].stringValue!))
        }
    }

    static func state(_ json: JSONValue) -> NavigationState {
        var state = NavigationPlannerTests.state(json["selectedTab"]?.stringValue, json["stacks"]!.stringValue!)
        state.modals = modals(json["modals"])
        return state
    }

    static func target(_ json: JSONValue) -> NavigationTarget {
        NavigationTarget(tab: json["tab"]?.stringValue, base: NavigationPlannerTests.screens(json["base"]!.stringValue!), modals: modals(json["modals"]))
    }

    @Test(arguments: rows)
    func plans(_ row: Row) {
        let json = row.json
        let source = NavigationSource(rawValue: json["source"]!.stringValue!)!
        let plan = NavigationPlanner.plan(from: Self.state(json["state"]!), to: Self.target(json["target"]!), source: source)
        #expect(plan.operations.map(\.description) == json["expect"]!["operations"]!.arrayValue!.map { $0.stringValue! })
        #expect(plan.leaving.map(\.description) == json["expect"]!["leaving"]!.arrayValue!.map { $0.stringValue! })
    }

    @Test(arguments: targets)
    func splitsSteps(_ row: Row) {
        let json = row.json
        let steps = json["steps"]!.arrayValue!.map { step in
            PathStep(destination: step["destination"]!.stringValue!,
                     params: (step["params"]?.objectValue ?? [:]).mapValues { $0.intValue.map(ParamValue.int) ?? .string($0.stringValue!) },
                     presentation: Presentation(rawValue: step["presentation"]!.stringValue!)!)
        }
        let target = NavigationTarget(tab: json["tab"]?.stringValue, steps: steps)
        let expected = Self.target(["tab": json["tab"] ?? .null, "base": json["expect"]!["base"]!, "modals": json["expect"]!["modals"]!])
        #expect(target.base.map(\.description) == expected.base.map(\.description))
        #expect(target.modals.map(\.description) == expected.modals.map(\.description))
    }

    @Test("Every row of the planner file runs")
    func everyRowRuns() {
        #expect(Self.file["format"] == "waymark.planner/1")
        let labels = Self.text.components(separatedBy: "\"label\":").count - 1
        #expect(labels == Self.rows.count + Self.targets.count && labels > 0)
    }
}
