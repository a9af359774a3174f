import Foundation
import RouteEngine
import TestSupport
import Testing
import WaymarkCLI

/// `waymark manifest`: offline, byte for byte what the server serves the same build for the
/// same routes; bad input writes nothing.
@Suite("waymark manifest")
struct ManifestCommandTests {
    @Test("Byte for byte the server's manifest, for each build of the example", arguments: ["5.2.0", "5.3.0"])
    func sameAsServer(_ version: String) throws {
        let service = try LiveService()  // seeded: the example's schemas, its routes.json as revision 1
        let served = service.call("GET", "/v1/manifest?platform=ios&version=\(version)", token: service.tokens[.manifestRead])
        #expect(served.status == 200)
        let time = try #require(service.call("GET", "/v1/revisions/1", token: service.tokens[.routesRead]).json["time"]?.stringValue)
        let output = FileManager.default.temporaryDirectory.appendingPathComponent("manifest-\(UUID().uuidString).json").path
        let schema = example + "/schema-ios-\(version).json"
        let other = version == "5.2.0" ? schema53 : schema52  // the other live build, as the server validated the publish
        let result = waymark("manifest", "--schema", schema, "--routes", routes, "--also-schema", other, "--revision", "1", "--now", time,
                             "--output", output)
        #expect(result.code == .success, "\(result.err)")
        let written = try [UInt8](Data(contentsOf: URL(fileURLWithPath: output)))
        #expect(written == served.body, "the file differs from GET /v1/manifest")
        let printed = waymark("manifest", "--schema", schema, "--routes", routes, "--also-schema", other, "--revision", "1", "--now", time)
        #expect(Array(printed.out.utf8) == served.body, "standard output, no newline added")
        guard case .success(let manifest) = Manifest.decode(written, for: AppBuild(app: "storefront", platform: "ios", version: version)) else {
            Issue.record("the app would refuse it"); return
        }
        #expect(manifest.revision == 1)
    }

    @Test("From a server: what it serves the build, byte for byte; an unknown build is refused and writes nothing")
    func fromServer() throws {
        let service = try LiveService()
        let token = try #require(service.tokens[.manifestRead])
        let served = service.call("GET", "/v1/manifest?platform=ios&version=5.3.0", token: token)
        let output = FileManager.default.temporaryDirectory.appendingPathComponent("manifest-\(UUID().uuidString).json").path
        let result = waymark("manifest", "--server", service.url, "--token", token, "--platform", "ios", "--version", "5.3.0", "--output", output)
        #expect(result.code == .success, "\(result.err)")
        #expect(try [UInt8](Data(contentsOf: URL(fileURLWithPath: output))) == served.body)
        for (label, arguments) in [("an unknown build", ["--platform", "ios", "--version", "9.9.9"]),
                                   ("no version", ["--platform", "ios"]),
                                   ("routes with a server", ["--platform", "ios", "--version", "5.3.0", "--routes", routes])] {
            let missing = FileManager.default.temporaryDirectory.appendingPathComponent("manifest-\(UUID().uuidString).json").path
            let refused = waymark(["manifest", "--server", service.url, "--token", token, "--output", missing] + arguments)
            #expect(refused.code != .success, "\(label)")
            #expect(!FileManager.default.fileExists(atPath: missing), "\(label)")
        }
    }

    @Test("--revision is what the manifest says; the default is 1")
    func revisionNumber() throws {
        for (arguments, expected) in [([String](), 1), (["--revision", "42"], 42)] {
            let result = waymark(["manifest", "--schema", schema53, "--routes", routes, "--now", "2026-03-15T00:00:00Z"] + arguments)
            #expect(result.code == .success)
            #expect(try JSONParser().parse(Array(result.out.utf8))["revision"] == .int(expected))
        }
    }

    static let invalidRoutes = temporaryFile(#"{"format": "waymark.routes/1", "app": "storefront", "routes": [{"id": "x", "patterns": ["/x"], "destination": "noSuchScreen"}]}"#)

    /// (label, arguments after `manifest`, exit code)
    static let refused: [(String, [String], ExitCode)] = [
        ("no --schema", ["--routes", routes], .usage),
        ("no --routes", ["--schema", schema53], .usage),
        ("two schemas", ["--schema", schema52, "--schema", schema53, "--routes", routes], .usage),
        ("revision 0", ["--schema", schema53, "--routes", routes, "--revision", "0"], .usage),
        ("a revision that is not a number", ["--schema", schema53, "--routes", routes, "--revision", "two"], .usage),
        ("a routes file that is not there", ["--schema", schema53, "--routes", "/nonexistent/routes.json"], .usage),
        ("a stray argument", ["--schema", schema53, "--routes", routes, "extra"], .usage),
        ("routes with an error for the schema", ["--schema", schema53, "--routes", invalidRoutes], .invalid),
        ("a route only another build has, that build not given", ["--schema", schema52, "--routes", routes], .invalid),
    ]

    @Test(arguments: refused)
    func writesNothing(_ label: String, _ arguments: [String], _ code: ExitCode) {
        let output = FileManager.default.temporaryDirectory.appendingPathComponent("manifest-\(UUID().uuidString).json").path
        let result = waymark(["manifest"] + arguments + ["--output", output])
        #expect(result.code == code, "\(label): \(result.err)\(result.out)")
        #expect(!FileManager.default.fileExists(atPath: output), "\(label)")
    }
}

/// Runs `waymark` in-process with an argument array.
func waymark(_ arguments: [String]) -> (code: ExitCode, out: String, err: String) {
    var output = Output()
    let code = CLI.run(arguments, output: &output)
    return (code, output.standardOutput, output.standardError)
}
