import CivilDate
import Foundation
import RouteEngine
import LibraryTestSupport
import Testing

/// The conformance vectors (`conformance/*.json`, `docs/conformance.md`) drive the engine's
/// resolution tables: every row of every file, resolved by the table its build's manifest
/// would give, must give exactly the expected result. The same files are what a port of
/// the resolver runs to prove it agrees with this one.
@Suite("Conformance vectors")
struct ConformanceTests {
    struct Row: Sendable, CustomTestStringConvertible {
        let file: String
        let label: String
        let build: String
        let request: ResolutionRequest
        let context: ResolutionContext
        let expect: JSONValue
        var testDescription: String { "\(file): \(label)" }
    }

    /// One file's tables, by build: what each build's manifest would resolve with.
    static func resolvers(_ file: JSONValue) -> [String: Resolver] {
        let (document, _) = RoutesDocument.decode(file["routes"]!)
        var resolvers: [String: Resolver] = [:]
        for schemaJSON in file["schemas"]!.arrayValue! {
            let schema = Fixtures.schema(schemaJSON)
            resolvers[schema.buildName] = Resolver(schema: schema, analysis: RouteAnalysis(document: document!, now: Date(timeIntervalSince1970: 0)))
        }
        return resolvers
    }

    static let files: [(name: String, json: JSONValue)] = {
        let directory = Fixtures.path("conformance")
        let names = (try? FileManager.default.contentsOfDirectory(atPath: directory))?.filter { $0.hasSuffix(".json") }.sorted() ?? []
        // The planner's and the dispatcher's files (`waymark.planner/1`, `waymark.dispatcher/1`) are run by the WaymarkClient suites.
        return names.map { ($0, Fixtures.json(file: "conformance/" + $0)) }.filter { $0.1["format"] == "waymark.conformance/1" }
    }()

    /// Every file's format: each is run by this suite, the planner's or the dispatcher's; none by no runner.
    static let knownFormats: Set<String> = ["waymark.conformance/1", "waymark.planner/1", "waymark.dispatcher/1", "waymark.shapes/1"]

    static func request(_ row: JSONValue) -> ResolutionRequest {
        if let link = row["link"]?.stringValue { return .url(link) }
        let request = row["request"]!
        var params: [String: ParamValue] = [:]
        for (name, value) in request["params"]?.objectValue ?? [:] {
            params[name] = value.intValue.map(ParamValue.int) ?? .string(value.stringValue ?? "")
        }
        return .destination(DestinationRequest(destination: request["destination"]!.stringValue!, params: params))
    }

    static let rows: [Row] = files.flatMap { file in
        file.json["rows"]!.arrayValue!.map { row in
            let context = row["context"]!
            return Row(file: file.name, label: row["label"]!.stringValue!, build: row["build"]!.stringValue!, request: request(row),
                       context: ResolutionContext(satisfied: Set((context["satisfied"]?.arrayValue ?? []).compactMap(\.stringValue)),
                                                  nowMicroseconds: Timestamp.microseconds(context["now"]!.stringValue!)!),
                       expect: row["expect"]!)
        }
    }

    static let tables: [String: [String: Resolver]] = Dictionary(uniqueKeysWithValues: files.map { ($0.name, resolvers($0.json)) })

    /// The result contract: `Resolution.json` without `detail` (a sentence for people, not part of the result's identity).
    static func contract(_ resolution: Resolution) -> JSONValue {
        guard case .object(var object) = resolution.json else { return resolution.json }
        object["detail"] = nil
        return .object(object)
    }

    @Test(arguments: rows)
    func resolves(_ row: Row) throws {
        let resolver = try #require(Self.tables[row.file]?[row.build], "no schema for \(row.build) in \(row.file)")
        #expect(Self.contract(resolver.resolve(row.request, context: row.context)) == row.expect)
    }

    struct PatternRow: Sendable, CustomTestStringConvertible {
        let file: String
        let label: String
        let pattern: String
        let value: String?
        let matches: Bool?
        let refused: Bool
        /// A budget row's param (`{"maxLength"?}`): the pattern is checked as a schema declares it.
        let budget: JSONValue?
        var testDescription: String { "\(file): \(label)" }
    }

    static let patternRows: [PatternRow] = files.flatMap { file in
        (file.json["patterns"]?.arrayValue ?? []).map { row in
            PatternRow(file: file.name, label: row["label"]!.stringValue!, pattern: row["pattern"]!.stringValue!,
                       value: row["value"]?.stringValue, matches: row["matches"]?.boolValue, refused: row["refused"]?.boolValue ?? false,
                       budget: row["budget"])
        }
    }

    /// A schema whose one destination takes the budget row's pattern as a `string` param.
    static func budgetSchema(_ row: PatternRow) -> JSONValue {
        var param: [String: JSONValue] = ["type": "string", "pattern": .string(row.pattern)]
        if let maximum = row.budget?["maxLength"] { param["maxLength"] = maximum }
        return [
            "format": "waymark.schema/1", "app": "budget", "platform": "ios", "version": "1.0.0", "schemes": ["budget"],
            "destinations": ["d": ["params": ["p": .object(param)]]],
        ]
    }

    @Test(arguments: patternRows)
    func pattern(_ row: PatternRow) throws {
        if row.budget != nil {
            switch Schema.decode(Self.budgetSchema(row)) {
            case .success: #expect(!row.refused, "accepted")
            case .failure(let error):
                #expect(row.refused, "refused: \(error.problems.map(\.message))")
                #expect(error.problems.allSatisfy { $0.code == .invalidPattern }, "\(error.problems.map(\.message))")
            }
            return
        }
        let compiled: SafeRegex
        do {
            compiled = try SafeRegex(row.pattern)
        } catch {
            #expect(row.refused, "refused: \(error)")
            return
        }
        #expect(!row.refused, "accepted")
        if let value = row.value, let matches = row.matches { #expect(compiled.matches(value) == matches) }
    }

    /// Every file of `conformance/` is read and every row of it runs: the rows counted
    /// straight from each file's text must be the rows the tests above were given.
    @Test("Every file is read and no row is skipped")
    func everyRowRuns() throws {
        let directory = Fixtures.path("conformance")
        let onDisk = try FileManager.default.contentsOfDirectory(atPath: directory).filter { $0.hasSuffix(".json") }.sorted()
        let resolverFiles = try onDisk.filter { name in
            let format = Fixtures.json(file: "conformance/" + name)["format"]?.stringValue ?? ""
            #expect(Self.knownFormats.contains(format), "\(name) has the format \(format), which no runner reads")
            return format == "waymark.conformance/1"
        }
        #expect(Self.files.map(\.name) == resolverFiles)
        for name in resolverFiles {
            let text = try String(contentsOfFile: directory + "/" + name, encoding: .utf8)
            // Each row of either table carries exactly one "label" key; nothing else in a file does.
            let labels = text.components(separatedBy: "\"label\":").count - 1
            let ran = Self.rows.filter { $0.file == name }.count + Self.patternRows.filter { $0.file == name }.count
            #expect(ran == labels, "\(name): \(labels) rows in the file, \(ran) run")
            #expect(ran > 0, "\(name) has no rows")
        }
    }

    @Test("The vectors are many, and a third of them hostile")
    func coverage() {
        #expect(Self.files.count >= 2)
        #expect(Self.rows.count >= 266)
        #expect(Self.patternRows.count >= 20)
        let hostile = Self.rows.filter { ["malformed", "validationFailed"].contains($0.expect["reason"]?.stringValue ?? "") }
        #expect(hostile.count * 3 >= Self.rows.count)
    }
}
