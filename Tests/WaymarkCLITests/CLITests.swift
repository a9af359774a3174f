import Foundation
import RouteEngine
import TestSupport
import Testing
import WaymarkCLI

/// Runs `waymark` in-process.
func waymark(_ arguments: String...) -> (code: ExitCode, out: String, err: String) {
    var output = Output()
    let code = CLI.run(arguments, output: &output)
    return (code, output.standardOutput, output.standardError)
}

let example = Fixtures.path("manifests/storefront")
let schema52 = example + "/schema-ios-5.2.0.json"
let schema53 = example + "/schema-ios-5.3.0.json"
let routes = example + "/routes.json"

/// A temporary file holding `text`.
func temporaryFile(_ text: String) -> String {
    let path = FileManager.default.temporaryDirectory.appendingPathComponent("waymark-\(UUID().uuidString).json").path
    precondition(FileManager.default.createFile(atPath: path, contents: Data(text.utf8)))
    return path
}

@Suite("waymark CLI")
struct CLITests {
    @Test func validatesTheExample() {
        let result = waymark("validate", "--schema", schema52, "--schema", schema53, routes, "--now", "2026-03-15T00:00:00Z")
        #expect(result.code == .success)
        #expect(result.out.contains("valid against ios 5.2.0, ios 5.3.0 — 0 errors, 1 warning"))
        #expect(result.out.contains("unsupportedByVersion at routes[8].destination"))
    }

    @Test func validateJSONIsTheReport() throws {
        let result = waymark("validate", "--json", "--schema=\(schema53)", routes)
        #expect(result.code == .success)
        let json = try JSONParser().parse(result.out)
        #expect(json["valid"] == true)
        #expect(json["errors"] == [])
    }

    @Test func invalidRoutesExitOne() throws {
        let bad = temporaryFile(#"{"format": "waymark.routes/1", "app": "storefront", "routes": [{"id": "w", "patterns": ["/w"], "destination": "wishlist"}]}"#)
        let result = waymark("validate", "--schema", schema53, bad, "--json")
        #expect(result.code == .invalid)
        let json = try JSONParser().parse(result.out)
        #expect(json["errors"]?.arrayValue?.first?["code"] == "unknownDestination")
    }

    static let usageErrors: [([String], String)] = [
        ([], "Usage: waymark"),
        (["frobnicate"], "Unknown command 'frobnicate'"),
        (["validate", routes], "Missing --schema"),
        (["validate", "--schema", schema53], "Missing the ROUTES file"),
        (["validate", "--schema", schema53, routes, "extra.json"], "Unexpected argument 'extra.json'"),
        (["validate", "--schema"], "needs a value"),
        (["validate", "--bogus", routes], "Unknown option '--bogus'"),
        (["validate", "--schema", "/nonexistent.json", routes], "Cannot read /nonexistent.json"),
        (["validate", "--schema", schema53, "/nonexistent.json"], "Cannot read /nonexistent.json"),
        (["validate", "--schema", schema53, routes, "--now", "yesterday"], "--now 'yesterday' is not valid"),
        (["validate", "--schema", routes, routes], "is not a usable schema"),
        (["resolve", "--schema", schema53, "--routes", routes], "Missing the URL"),
        (["resolve", "storefront://", "--routes", routes], "Missing --schema"),
        (["resolve", "storefront://", "--schema", schema53], "Missing --routes"),
        (["validate", "--schema", schema53, routes, "--ca-file", "ca.pem"], "--ca-file 'ca.pem' is not valid: expected --check-links with it"),
        (["validate", "--schema", schema53, routes, "--check-links", "--link-findings", "fatal"], "expected warning or error"),
        (["validate", "--schema", schema53, routes, "--check-links", "--link-cache", "60"], "serve only"),
        (["validate", "--schema", schema53, routes, "--check-links", "--link-parallelism", "0"], "expected 1 to 64"),
        (["validate", "--schema", schema53, routes, "--check-links", "--allow-address", "localhost:443"], "expected ADDRESS:PORT"),
        (["validate", "--schema", schema53, routes, "--check-links", "--connect-to", "a.example:443:127.0.0.1"], "HOST:PORT:CONNECT-HOST:CONNECT-PORT"),
        (["serve", "--link-cache", "60"], "expected --check-links with it"),
    ]

    @Test(arguments: usageErrors)
    func usageErrorsExitTwo(_ arguments: [String], _ message: String) {
        var output = Output()
        #expect(CLI.run(arguments, output: &output) == .usage)
        #expect(output.standardError.contains(message), "\(output.standardError)")
    }

    @Test func notJSONExitsTwo() {
        let result = waymark("validate", "--schema", schema53, temporaryFile("{not json"))
        #expect(result.code == .usage)
        #expect(result.err.contains("is not valid JSON"))
    }

    @Test(arguments: [["--help"], ["validate", "--help"], ["resolve", "--help"], ["serve", "--help"], ["token", "--help"], ["publish", "--help"], ["revisions", "--help"], ["rollback", "--help"], ["schedule", "--help"], ["schedules", "--help"], ["unschedule", "--help"], ["rollout", "--help"], ["help"]])
    func everyCommandHasHelp(_ arguments: [String]) {
        var output = Output()
        #expect(CLI.run(arguments, output: &output) == .success)
        #expect(output.standardOutput.contains("Usage: waymark"))
    }

    @Test func resolvesToJSON() throws {
        let result = waymark("resolve", "https://storefront.example/orders/42", "--schema", schema53, "--routes", routes,
                             "--satisfied", "auth", "--json")
        #expect(result.code == .success)
        #expect(try JSONParser().parse(result.out) == [
            "outcome": "proceed", "route": "order-detail", "destination": "orderDetail", "params": ["orderId": 42],
            "path": ["home", "orders", "orderDetail"], "tab": "account", "presentation": "push",
        ])
    }

    @Test func resolvesGatedAndNotFound() throws {
        let gated = waymark("resolve", "storefront://cart", "--schema", schema53, "--routes", routes, "--json")
        #expect(try JSONParser().parse(gated.out)["precondition"] == "auth")
        let expired = waymark("resolve", "storefront://sale/spring", "--schema", schema53, "--routes", routes, "--now",
                              "2026-05-01T00:00:00Z", "--json")
        let json = try JSONParser().parse(expired.out)
        #expect(json["outcome"] == "notFound")
        #expect(json["reason"] == "expired")
        let human = waymark("resolve", "https://evil.example/", "--schema", schema53, "--routes", routes)
        #expect(human.out.contains("notFound: malformed"))
        #expect(human.out.contains("does not answer links on evil.example"))
    }

    @Test("resolve answers as the build's manifest would: routes the build lacks are left out and named")
    func resolveLeavesOutWhatTheBuildLacks() throws {
        // new-arrivals' destination exists in 5.3.0 only.
        let old = waymark("resolve", "https://storefront.example/new", "--schema", schema52, "--routes", routes, "--json")
        #expect(old.code == .success)
        #expect(try JSONParser().parse(old.out)["reason"] == "unknownRoute")
        #expect(old.err.contains("left out of ios 5.2.0's table") && old.err.contains("newArrivals"))
        let product = waymark("resolve", "https://storefront.example/p/p1", "--schema", schema52, "--routes", routes, "--json")
        #expect(try JSONParser().parse(product.out)["outcome"] == "proceed")
    }

    @Test("resolve leaves a route with an error of its own out, as a manifest would, and names it")
    func resolveLeavesOutInvalidRoutes() throws {
        let bad = temporaryFile(#"{"format": "waymark.routes/1", "app": "storefront", "routes": [{"id": "a", "patterns": ["/a"], "destination": "home"}, {"id": "b", "patterns": ["/a"], "destination": "home"}, {"id": "c", "patterns": ["/c/:"], "destination": "home"}]}"#)
        let first = waymark("resolve", "storefront://a", "--schema", schema53, "--routes", bad, "--json")
        #expect(first.code == .success)
        #expect(try JSONParser().parse(first.out)["route"] == "a")
        #expect(first.err.contains("conflict at routes[1].patterns[0]"))
        #expect(first.err.contains("invalidPattern at routes[2].patterns[0]"))
        let broken = waymark("resolve", "storefront://c/x", "--schema", schema53, "--routes", bad, "--json")
        #expect(try JSONParser().parse(broken.out)["reason"] == "unknownRoute")
    }

    static let unusableRoutes: [(String, String)] = [
        (#"{"format": "waymark.routes/2", "app": "storefront", "routes": []}"#, "format"),
        (#"{"format": "waymark.routes/1", "routes": []}"#, "app"),
        (#"{"format": "waymark.routes/1", "app": "storefront", "routes": {}}"#, "routes"),
        (#"{"format": "waymark.routes/1", "app": "other", "routes": []}"#, "for the app \"other\""),
        (#"[]"#, "object"),
    ]

    @Test("resolve refuses only a routes file that cannot be used at all", arguments: unusableRoutes)
    func resolveRefusesUnusableRoutes(text: String, says: String) {
        let result = waymark("resolve", "storefront://a", "--schema", schema53, "--routes", temporaryFile(text))
        #expect(result.code == .invalid)
        #expect(result.out.isEmpty)
        #expect(result.err.contains("cannot be used") && result.err.contains(says), "\(result.err)")
    }

    @Test("resolve --links answers one line per link, in order, links with controls included")
    func resolveManyLinks() throws {
        let links = temporaryFile(#""https://storefront.example/p/p1""# + "\n" + #""storefront://p/p\u0000""# + "\n\n" + #""nope""# + "\n")
        let result = waymark("resolve", "--links", links, "--schema", schema53, "--routes", routes, "--now", "2026-03-15T00:00:00Z")
        #expect(result.code == .success)
        let lines = result.out.split(separator: "\n").map(String.init)
        #expect(lines.count == 3)
        #expect(try JSONParser().parse(lines[0])["outcome"] == "proceed")
        #expect(try JSONParser().parse(lines[1])["reason"] == "malformed")
        #expect(try JSONParser().parse(lines[2])["reason"] == "malformed")
        let notJSON = waymark("resolve", "--links", temporaryFile("https://x\n"), "--schema", schema53, "--routes", routes)
        #expect(notJSON.code != .success && notJSON.err.contains("line 1"))
    }
}
