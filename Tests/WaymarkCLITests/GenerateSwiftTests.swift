import Foundation
import RouteEngine
import TestSupport
import Testing
@testable import WaymarkCLI

/// `waymark generate swift`: the file is generated for each example schema, compiled with
/// `swiftc` against the RouteEngine and WaymarkClient this build made, and run — every
/// destination goes to a `DestinationRequest` and a `Screen` and back unchanged, and names,
/// types and params the schema does not declare convert to nil.
// One compile at a time: eight swiftc runs at once would take both cores from every other
// suite of the run for a minute.
@Suite("waymark generate swift", .serialized)
struct GenerateSwiftTests {
    /// The schemas: the storefront's two builds and the lab app's (optional, enum and int params).
    static let schemas: [(String, String)] = [
        ("storefront ios 5.2.0", schema52), ("storefront ios 5.3.0", schema53),
        ("lab", temporaryFile(String(decoding: Fixtures.labSchemaJSON.serializedBytes(), as: UTF8.self))),
        ("every Swift keyword and colliding names", temporaryFile(String(decoding: keywordSchema.serializedBytes(), as: UTF8.self))),
    ]

    /// Names a schema allows that Swift reserves or that collide once made Swift names: every
    /// keyword, the contextual ones, the metatypes' `Type` and `Protocol`, the enum's and
    /// `Hashable`'s members and their `_` forms, `_` and `__`. Every other destination has
    /// params of keyword names.
    static let keywordNames: [String] = Array(SwiftGenerator.keywords) + [
        "get", "set", "willSet", "didSet", "some", "any", "async", "actor", "nonisolated", "isolated", "borrowing", "consuming",
        "package", "macro", "mutating", "nonmutating", "override", "required", "convenience", "dynamic", "final", "lazy", "optional",
        "indirect", "weak", "unowned", "prefix", "postfix", "infix", "none", "each", "sending", "Type_", "name_", "name__", "params_",
        "hashValue", "hash", "hash_", "_", "__", "___", "Destination",
    ]
    static let keywordSchema: JSONValue = {
        var destinations: [String: JSONValue] = [:]
        for (index, name) in Set(keywordNames).sorted().enumerated() {
            let params: [String: JSONValue] = index % 2 == 0 ? [:] : [
                keywordNames[index % keywordNames.count]: ["type": "int"],
                keywordNames[(index * 7) % keywordNames.count]: ["type": "string", "optional": true],
            ]
            destinations[name] = params.isEmpty ? [:] : ["params": .object(params)]
        }
        return ["format": "waymark.schema/1", "app": "keywords", "platform": "ios", "version": "1.0.0", "hosts": ["keywords.example"],
                "destinations": .object(destinations)]
    }()

    /// Swift expressions for a param's sample values: each optional also absent.
    static func samples(_ spec: ParamSpec) -> [String] {
        let value = spec.type == .int ? String(spec.minimum ?? 1) : SwiftGenerator.literal(spec.values?.first ?? "x")
        return spec.isOptional ? [value, "nil"] : [value]
    }

    /// The program that checks the generated enum: one round trip per destination and per
    /// optional param present or absent, then the refusals.
    static func checks(for schema: Schema) -> (source: String, count: Int) {
        let generator = SwiftGenerator(schema: schema, typeName: "Destination")
        var lines = ["import RouteEngine", "import WaymarkClient", "var checked = 0", "var failed: [String] = []",
                     // Used off the main actor: in a module whose default isolation is the main actor too.
                     "actor Offload { func key(_ value: Destination) -> String { value.name + String(value.hashValue) + (Destination(value.request) == value ? \"\" : \"!\") } }",
                     "func check(_ value: Destination, _ name: String) {",
                     "    if Destination(value.request) != value || Destination(value.screen) != value || value.name != name { failed.append(name) }",
                     "    checked += 1", "}"]
        var count = 0
        for name in schema.destinations.keys.sorted() {
            let params = schema.destinations[name]!.params.sorted { $0.key < $1.key }
            var combinations: [[String]] = [[]]
            for (param, spec) in params {
                combinations = combinations.flatMap { prefix in samples(spec).map { prefix + ["\(generator.labels[name]![param]!): \($0)"] } }
            }
            for arguments in combinations {
                let call = arguments.isEmpty ? "" : "(\(arguments.joined(separator: ", ")))"
                lines.append("check(.\(generator.caseNames[name]!)\(call), \(SwiftGenerator.literal(name)))")
                count += 1
            }
            if !params.isEmpty {
                lines.append("if Destination(name: \(SwiftGenerator.literal(name)), params: [:]) != nil && \(params.contains { !$0.value.isOptional }) { failed.append(\"missing param accepted\") }")
                let (param, spec) = params[0]
                let wrong = spec.type == .int ? ".string(\"1\")" : ".int(1)"
                lines.append("if Destination(name: \(SwiftGenerator.literal(name)), params: [\(SwiftGenerator.literal(param)): \(wrong)]) != nil { failed.append(\"wrong type accepted\") }")
            }
            lines.append("if Destination(name: \(SwiftGenerator.literal(name)), params: [\"notDeclared\": .int(1)]) != nil { failed.append(\"extra param accepted\") }")
        }
        lines += ["if Destination(name: \"noSuchDestination\", params: [:]) != nil { failed.append(\"unknown name accepted\") }",
                  "print(failed.isEmpty ? \"ok \\(checked)\" : \"failed \\(failed)\")"]
        return (lines.joined(separator: "\n") + "\n", count)
    }

    @Test("Generated, compiled and run: every destination round-trips, with the default isolation and with the main actor's",
          arguments: schemas, [false, true])
    func compilesAndRoundTrips(_ schema: (label: String, path: String), mainActorByDefault: Bool) async throws {
        let (label, path) = schema
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("generated-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        let generated = directory.appendingPathComponent("Destination.swift").path
        let result = waymark("generate", "swift", "--schema", path, "--output", generated)
        #expect(result.code == .success, "\(label): \(result.err)")
        let schema = try InputFiles.schema(at: path).schema
        let (program, count) = Self.checks(for: schema)
        #expect(count >= schema.destinations.count)
        try Data(program.utf8).write(to: directory.appendingPathComponent("main.swift"))

        // The objects and modules of this very build: the test binary sits in the debug directory.
        let build = URL(fileURLWithPath: CommandLine.arguments[0]).deletingLastPathComponent()
        var objects: [String] = []
        for target in ["CivilDate", "RouteEngine", "WaymarkClient"] {
            let folder = build.appendingPathComponent("\(target).build")
            objects += try FileManager.default.contentsOfDirectory(atPath: folder.path).filter { $0.hasSuffix(".swift.o") }
                .map { folder.appendingPathComponent($0).path }
        }
        let executable = directory.appendingPathComponent("check").path
        let isolation = mainActorByDefault ? ["-swift-version", "6", "-default-isolation", "MainActor"] : []
        let compile = try await run("swiftc", ["-module-name", "GeneratedCheck", "-I", build.appendingPathComponent("Modules").path] + isolation
                              + [generated, directory.appendingPathComponent("main.swift").path] + objects + ["-o", executable])
        #expect(compile.status == 0, "\(label): swiftc failed:\n\(compile.output)")
        guard compile.status == 0 else { return }
        let ran = try await run(executable, [])
        #expect(ran.output == "ok \(count)\n", "\(label)")
    }

    /// (label, arguments after `generate`)
    static let refused: [(String, [String])] = [
        ("no language", []),
        ("another language", ["kotlin", "--schema", schema53]),
        ("no schema", ["swift"]),
        ("a type name that is not an identifier", ["swift", "--schema", schema53, "--type", "My-Type"]),
        ("a keyword as type name", ["swift", "--schema", schema53, "--type", "class"]),
        ("a schema that is not there", ["swift", "--schema", "/nonexistent.json"]),
    ]

    @Test(arguments: refused)
    func refusedUsage(_ label: String, _ arguments: [String]) {
        let result = waymark(["generate"] + arguments)
        #expect(result.code == .usage, "\(label)")
        #expect(result.out.isEmpty, "\(label): nothing written")
    }

    /// (name in a schema, the Swift identifier)
    static let identifiers: [(String, String)] = [
        ("orderDetail", "orderDetail"), ("default", "`default`"), ("2fa", "_2fa"), ("gift-card", "gift_card"), ("café", "caf_"), ("", "__"), ("_", "__"),
    ]

    @Test(arguments: identifiers)
    func identifier(_ name: String, _ expected: String) {
        #expect(SwiftGenerator.identifier(name) == expected)
    }

    /// Runs a tool and waits for it off the cooperative pool: `swiftc` takes seconds, and a
    /// pool thread blocked that long (two on two cores) stalls every other test of the run,
    /// deadlines and all.
    func run(_ tool: String, _ arguments: [String]) async throws -> (status: Int32, output: String) {
        final class Running: @unchecked Sendable {
            let process = Process()
            let pipe = Pipe()
        }
        let running = Running()
        running.process.executableURL = URL(fileURLWithPath: tool.hasPrefix("/") ? tool : "/usr/bin/env")
        running.process.arguments = tool.hasPrefix("/") ? arguments : [tool] + arguments
        running.process.standardOutput = running.pipe
        running.process.standardError = running.pipe
        try running.process.run()
        return await withCheckedContinuation { continuation in
            Thread {
                let data = running.pipe.fileHandleForReading.readDataToEndOfFile()
                running.process.waitUntilExit()
                continuation.resume(returning: (running.process.terminationStatus, String(decoding: data, as: UTF8.self)))
            }.start()
        }
    }
}
