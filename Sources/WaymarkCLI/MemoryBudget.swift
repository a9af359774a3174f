import Foundation
import HTTPServer
import ManifestStore
import WaymarkAPI

/// What `waymark serve` may hold in memory whatever its clients do, from its budgets, set
/// against the memory it is given (`--memory-limit`, or its cgroup's limit): a daemon whose
/// budgets do not fit refuses to start with the sum and each part, rather than being
/// killed by the kernel the first time someone fills them (docs/operations.md, "Memory").
struct MemoryBudget: Equatable {
    /// The process without its budgets filled: code, loops, the store's current revision
    /// and its build views, idle connections — 10,000 routes served to 20 builds with 1,000
    /// idle connections measure 61 MB (`make test-memory`); a larger route table
    /// needs the limit raised with it.
    static let baseline = 64 << 20
    /// QR codes and revision answers kept (`APIContext.qrAnswers`, `revisionAnswers`).
    static let answerCaches = 32 << 20

    let parts: [(name: String, bytes: Int)]

    static func == (a: MemoryBudget, b: MemoryBudget) -> Bool { a.parts.map(\.bytes) == b.parts.map(\.bytes) }

    /// `documentsAtOnce`: `--documents-at-once`, each holding a document in work.
    init(configuration: ServerConfiguration, documentsAtOnce: Int = 1) {
        parts = [
            ("request bodies (--max-buffered-body-bytes)", configuration.maximumBufferedBodyBytes),
            ("answers queued for slow readers (--max-queued-output-bytes)", configuration.maximumQueuedOutputBytes),
            ("documents being validated (--documents-at-once)", documentsAtOnce * API.Options.documentInWorkBytes),
            ("kept QR codes and revision answers", Self.answerCaches),
            ("counts answers being made", API.Options.answersInMakingBytes),
            ("a draft's impact being replayed", API.Options.replayBytes),
            ("the process itself (10,000 routes, 20 builds, 1,000 connections)", Self.baseline),
        ]
    }

    var total: Int { parts.reduce(0) { $0 + $1.bytes } }

    /// Why it does not fit in `limit` bytes, or nil when it does.
    func refusal(limit: Int, source: String) -> String? {
        guard total > limit else { return nil }
        let mib = { (bytes: Int) in "\(bytes >> 20) MiB" }
        return "budgets that fit it: Waymark may hold \(mib(total)), more than the \(mib(limit)) \(source) gives it ("
            + parts.map { "\(mib($0.bytes)) \($0.name)" }.joined(separator: ", ")
            + "). Lower --max-buffered-body-bytes, --max-queued-output-bytes or --documents-at-once, or give it more memory"
    }

    /// The cgroup's memory limit in bytes (v2 `memory.max`, else v1 `memory.limit_in_bytes`),
    /// nil when there is none (`max`, or v1's "unlimited", a value past 2^60).
    static func cgroupLimit(root: String = "/sys/fs/cgroup") -> Int? {
        for file in ["\(root)/memory.max", "\(root)/memory/memory.limit_in_bytes"] {
            guard let text = try? String(contentsOfFile: file, encoding: .utf8) else { continue }
            let value = text.trimmingCharacters(in: .whitespacesAndNewlines)
            guard let bytes = Int(value), bytes > 0, bytes < 1 << 60 else { return nil }
            return bytes
        }
        return nil
    }
}
