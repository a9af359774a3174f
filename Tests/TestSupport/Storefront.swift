import Foundation
import LinkChecks
import RouteEngine

/// The storefront example with its hosts renamed for one test (so parallel tests serve
/// their own files), checked against real files served from loopback.
public struct Storefront {
    public let host: String
    public let wwwHost: String
    public let routes: JSONValue
    public let schemas: [Schema]

    static let example = URL(fileURLWithPath: #filePath).deletingLastPathComponent().appendingPathComponent("../../manifests/storefront")

    public init(_ name: String) throws {
        let host = "\(name).waymark.test"
        let wwwHost = "\(name)-www.waymark.test"
        func load(_ file: String) throws -> JSONValue {
            let text = try String(contentsOf: Self.example.appendingPathComponent(file), encoding: .utf8)
                .replacingOccurrences(of: "www.storefront.example", with: wwwHost)
                .replacingOccurrences(of: "storefront.example", with: host)
            return try JSONParser().parse(text)
        }
        self.host = host
        self.wwwHost = wwwHost
        routes = try load("routes.json")
        schemas = try ["schema-ios-5.2.0.json", "schema-ios-5.3.0.json"].map { try Schema.decode(load($0)).get().schema }
    }

    /// Fetch options sending both hosts to the fixture.
    public func options(_ fixture: HTTPSFixture = .site) -> LinkCheckOptions {
        var options = LinkCheckOptions()
        options.fetch = fixture.options()
        options.fetch.connectTo = [fixture.connect(host), fixture.connect(wwwHost)]
        return options
    }

    public static let appID = "ABCDE12345.example.storefront"

    /// The example's apple-app-site-association in the components form.
    public static var componentsFile: String {
        let file = URL(fileURLWithPath: #filePath).deletingLastPathComponent()
            .appendingPathComponent("../Fixtures/storefront-sites/storefront.example/.well-known/apple-app-site-association")
        return try! String(contentsOf: file, encoding: .utf8)
    }

    /// Good files on both hosts and the sale page (Tests/Fixtures/storefront-sites).
    public func serveGoodFiles(_ fixture: HTTPSFixture = .site) throws {
        try fixture.serveStorefrontSites(host: host, wwwHost: wwwHost)
    }
}
