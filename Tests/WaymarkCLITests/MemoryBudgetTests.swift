import Foundation
import HTTPServer
import Testing
import TestSupport
@testable import WaymarkCLI

/// `serve` refuses to start when its budgets do not fit the memory it is given, naming the
/// sum and each part; a cgroup's limit is read when no --memory-limit is given.
@Suite("Memory budget")
struct MemoryBudgetTests {
    /// Each row: body and output budgets in MiB, changes at once (each a 160 MiB document in
    /// work), the limit in MiB; whether it starts.
    static let rows: [(String, Int, Int, Int, Int, Bool)] = [
        ("the defaults in a gigabyte", 256, 128, 1, 1_024, true),
        ("the Kubernetes manifest's budgets in 576 MiB", 128, 64, 1, 576, true),
        ("exactly at the limit", 128, 64, 1, 544, true),
        ("small budgets in 448 MiB", 64, 32, 1, 448, true),
        ("the defaults one MiB short", 256, 128, 1, 735, false),
        ("one MiB past the limit", 128, 64, 1, 543, false),
        ("a second change at once needs a second document's memory", 128, 64, 2, 576, false),
        ("two changes at once in 704 MiB", 128, 64, 2, 704, true),
        ("a huge body budget", 4_096, 128, 1, 2_048, false),
        ("nothing fits 64 MiB", 1, 1, 1, 64, false),
    ]

    @Test(arguments: rows)
    func fits(_ label: String, _ bodies: Int, _ output: Int, _ changes: Int, _ limit: Int, _ starts: Bool) {
        var configuration = ServerConfiguration()
        configuration.maximumBufferedBodyBytes = bodies << 20
        configuration.maximumQueuedOutputBytes = output << 20
        let refusal = MemoryBudget(configuration: configuration, documentsAtOnce: changes).refusal(limit: limit << 20, source: "--memory-limit")
        #expect((refusal == nil) == starts, "\(label): \(refusal ?? "fits")")
        if let refusal {
            #expect(refusal.contains("\(limit) MiB") && refusal.contains("\(bodies) MiB request bodies")
                    && refusal.contains("\(changes * 160) MiB documents being validated"), "\(label): \(refusal)")
        }
    }

    /// Each row: what the cgroup files hold (v2 `memory.max`, v1 `memory/memory.limit_in_bytes`), the limit read.
    static let cgroups: [(String, String?, String?, Int?)] = [
        ("v2 with a limit", "536870912\n", nil, 536_870_912),
        ("v2 without one", "max\n", nil, nil),
        ("v1 with a limit", nil, "268435456\n", 268_435_456),
        ("v1 unlimited", nil, "9223372036854771712\n", nil),
        ("neither", nil, nil, nil),
        ("garbage", "lots\n", nil, nil),
    ]

    @Test(arguments: cgroups)
    func cgroupLimit(_ label: String, _ v2: String?, _ v1: String?, _ expected: Int?) throws {
        let root = NSTemporaryDirectory() + "waymark-cgroup-\(UUID().uuidString)"
        defer { try? FileManager.default.removeItem(atPath: root) }
        try FileManager.default.createDirectory(atPath: root + "/memory", withIntermediateDirectories: true)
        if let v2 { try v2.write(toFile: root + "/memory.max", atomically: true, encoding: .utf8) }
        if let v1 { try v1.write(toFile: root + "/memory/memory.limit_in_bytes", atomically: true, encoding: .utf8) }
        #expect(MemoryBudget.cgroupLimit(root: root) == expected, "\(label)")
    }

    @Test func serveRefusesToStartPastItsLimit() {
        var output = Output()
        let code = CLI.run(["serve", "--data-dir", "/nonexistent/never-opened", "--memory-limit", String(384 << 20)], output: &output)
        #expect(code == .usage || code == .invalid, "\(code)")
        let text = output.standardError + output.standardOutput
        #expect(text.contains("--memory-limit") && text.contains("MiB request bodies"), "\(text.prefix(400))")
    }
}
