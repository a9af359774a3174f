import Foundation

/// A `Tests/Scripts/hostile-origin.py` server on loopback: an answer of 400 MB (`/big/…`, by
/// its `Content-Length`; `/chunked/…`, without one) and one that drips a byte every 10 s
/// (`/drip/…`), with what it sent (`/stats`). Lives as long as the test process.
public final class HostileOrigin: Sendable {
    public let port: UInt16
    private let process: Process

    public static let shared: HostileOrigin = try! HostileOrigin()

    public init() throws {
        let script = URL(fileURLWithPath: #filePath).deletingLastPathComponent()
            .appendingPathComponent("../Scripts/hostile-origin.py").standardizedFileURL.path
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        process.arguments = ["python3", script]
        let output = Pipe()
        process.standardOutput = output
        try process.run()
        let line = String(decoding: output.fileHandleForReading.availableLine(), as: UTF8.self)
        guard let port = UInt16(line) else {
            process.terminate()
            throw HTTPSFixture.FixtureError(message: "hostile-origin.py did not start: \(line)")
        }
        self.port = port
        self.process = process
    }

    /// The server's base address for one kind of answer: `big`, `chunked` or `drip`.
    public func url(_ kind: String) -> URL { URL(string: "http://127.0.0.1:\(port)/\(kind)/")! }

    /// Where it says what it has sent so far: `{"big": bytes, …}`.
    public var stats: URL { URL(string: "http://127.0.0.1:\(port)/stats")! }
}
