import Foundation
import LinkChecks

/// A `Tests/Scripts/https-fixture.py` server on loopback: a site a route may point at, with
/// its request log. Lives as long as the test process.
public final class HTTPSFixture: Sendable {
    public let directory: String
    public let port: UInt16
    public let address: String
    private let process: Process

    public var caFile: String { directory + "/ca.pem" }
    public var socketAddress: SocketAddress { SocketAddress(address.contains(":") ? "[\(address)]:\(port)" : "\(address):\(port)")! }

    /// The site every test may reach (its address is the one policy exception).
    public static let site: HTTPSFixture = try! HTTPSFixture(name: "site")
    /// A server nothing may reach: what a hostile route aims at. Same certificate.
    public static let target: HTTPSFixture = try! HTTPSFixture(name: "target", certificateFrom: site)

    public init(name: String, address: String = "127.0.0.1", certificateFrom other: HTTPSFixture? = nil) throws {
        let directory = NSTemporaryDirectory() + "waymark-links-\(name)-\(getpid())"
        try? FileManager.default.removeItem(atPath: directory)
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        if let other {
            for file in ["ca.pem", "key.pem"] {
                try FileManager.default.copyItem(atPath: other.directory + "/" + file, toPath: directory + "/" + file)
            }
        }
        let script = URL(fileURLWithPath: #filePath).deletingLastPathComponent()
            .appendingPathComponent("../Scripts/https-fixture.py").standardizedFileURL.path
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        process.arguments = ["python3", script, directory, "--address", address, "--names", "storefront.example,www.storefront.example"]
        let output = Pipe()
        process.standardOutput = output
        try process.run()
        let line = String(decoding: output.fileHandleForReading.availableLine(), as: UTF8.self)
        guard line.hasPrefix("PORT "), let port = UInt16(line.dropFirst(5)) else {
            process.terminate()
            throw FixtureError(message: "https-fixture.py did not start: \(line)")
        }
        self.directory = directory
        self.port = port
        self.address = address
        self.process = process
    }

    public struct FixtureError: Error { public var message: String }

    /// Fetch options that may reach this site (and only it) and trust its certificate.
    public func options(timeouts: Bool = true) -> FetchOptions {
        var options = FetchOptions()
        options.policy = AddressPolicy(exceptions: [socketAddress])
        options.caFile = caFile
        if timeouts {
            options.connectTimeout = 2_000
            options.totalTimeout = 2_500
            options.lowSpeedSeconds = 1
        }
        return options
    }

    /// `https://HOST:443/…` goes to this server: how a test stands in for a public site.
    public func connect(_ host: String) -> String { "\(host):443:\(address):\(port)" }

    /// Serves `body` at https://HOST/PATH.
    public func put(_ host: String, _ path: String, _ body: String, contentType: String? = nil) throws {
        let file = directory + "/sites/" + host + path
        try FileManager.default.createDirectory(atPath: (file as NSString).deletingLastPathComponent, withIntermediateDirectories: true)
        try body.write(toFile: file, atomically: true, encoding: .utf8)
        if let contentType { try contentType.write(toFile: file + ".type", atomically: true, encoding: .utf8) }
    }

    /// The storefront example's sites (Tests/Fixtures/storefront-sites: both kinds of
    /// apple-app-site-association, assetlinks.json, the sale page) under other host names.
    public func serveStorefrontSites(host: String, wwwHost: String) throws {
        let sites = URL(fileURLWithPath: #filePath).deletingLastPathComponent().appendingPathComponent("../Fixtures/storefront-sites").standardizedFileURL
        for (original, renamed) in [("storefront.example", host), ("www.storefront.example", wwwHost)] {
            let root = sites.appendingPathComponent(original).path
            for case let file as String in FileManager.default.enumerator(atPath: root)! where !file.hasSuffix("/") {
                var isDirectory: ObjCBool = false
                guard FileManager.default.fileExists(atPath: root + "/" + file, isDirectory: &isDirectory), !isDirectory.boolValue else { continue }
                try put(renamed, "/" + file, String(contentsOfFile: root + "/" + file, encoding: .utf8))
            }
        }
    }

    /// Every connection and request so far, oldest first.
    public func log() -> [String] {
        guard let text = try? String(contentsOfFile: directory + "/requests.log", encoding: .utf8) else { return [] }
        return text.split(separator: "\n").map(String.init)
    }

    /// The requests so far for one host.
    public func requests(host: String) -> [String] {
        log().filter { $0.hasPrefix("GET \(host) ") }
    }
}

extension FileHandle {
    /// Reads up to the first newline (blocking), without it.
    func availableLine() -> [UInt8] {
        var line: [UInt8] = []
        while true {
            let byte = readData(ofLength: 1)
            guard let first = byte.first, first != UInt8(ascii: "\n") else { return line }
            line.append(first)
        }
    }
}
