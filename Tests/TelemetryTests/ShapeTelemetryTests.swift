import CivilDate
import Foundation
import Testing
import TestSupport
@testable import Telemetry

/// Unknown-link shapes through telemetry: a client's opt-in `shape` field (normalised again
/// on arrival), landing's shape-only batches, and both durable through the log and the
/// snapshot like the counts.
@Suite("Unknown-link shapes in telemetry", .serialized)
struct ShapeTelemetryTests {
    static func body(_ events: [String]) -> [UInt8] {
        Array(batchBody(events.map { "{\"ts\": \"\(Timestamp.format(testNow))\", \"entry\": \"universalLink\", " + $0 + "}" }).utf8)
    }

    /// (label, event fields, accepted, the shape kept)
    static let rows: [(String, String, Bool, String?)] = [
        ("a shape", #""outcome": "notFound", "reason": "unknownRoute", "shape": "/products/:param""#, true, "/products/:param"),
        ("a raw link is normalised", #""outcome": "notFound", "reason": "unknownRoute", "shape": "https://shop.example/u/jane.doe@example.com/orders/123?token=abc&utm_source=mail""#,
         true, "/u/:param/orders/:param?utm_source"),
        ("an escaped one too", #""outcome": "notFound", "reason": "unknownRoute", "shape": "\/Reset\/A1B2C3D4E5F6""#, true, "/reset/:param"),
        ("on another outcome", #""outcome": "proceed", "shape": "/x""#, false, nil),
        ("on another reason", #""outcome": "notFound", "reason": "expired", "shape": "/x""#, false, nil),
        ("empty", #""outcome": "notFound", "reason": "unknownRoute", "shape": """#, false, nil),
        ("too long", #""outcome": "notFound", "reason": "unknownRoute", "shape": ""# + String(repeating: "a", count: 513) + "\"", false, nil),
        ("not a string", #""outcome": "notFound", "reason": "unknownRoute", "shape": 12"#, false, nil),
        ("twice", #""outcome": "notFound", "reason": "unknownRoute", "shape": "/a", "shape": "/b""#, false, nil),
    ]

    @Test(arguments: rows)
    func theParserTakesOnlyShapesOfUnknownLinks(_ row: (String, String, Bool, String?)) throws {
        let batch = try BatchParser(vocabulary: vocabulary).parse(Self.body([row.1]), now: testNow)
        #expect(batch.tallies.count == (row.2 ? 1 : 0), "\(row.0): \(batch.rejected)")
        #expect(batch.shapes.map { String(decoding: $0.shape, as: UTF8.self) } == (row.3.map { [$0] } ?? []), "\(row.0)")
    }

    @Test func shapesSurviveTheLogAndTheSnapshot() throws {
        for compactionBytes in [64 << 20, 1] {  // replayed from the log; read from the snapshot
            let scratch = TelemetryScratch()
            let store = try scratch.open(compactionBytes: compactionBytes)
            let events = Array(repeating: #""outcome": "notFound", "reason": "unknownRoute", "shape": "/products/:param""#, count: 3)
                + [#""outcome": "notFound", "reason": "unknownRoute", "shape": "/old/path""#]
            _ = commit(try BatchParser(vocabulary: vocabulary).parse(Self.body(events), now: testNow), to: store)
            var landing = Batch()
            landing.platform = .other
            landing.shapes = [ShapeTally(minute: Int32(testNow / 60) + 1, entry: EntryPoint.web.rawValue, shape: Array("/products/:param".utf8), count: 5)]
            _ = commit(landing, to: store)
            let before = store.read { counts in counts.shapes.top(10).map { ($0.key, $0.count, $0.note) } }
            store.close()
            let reopened = try scratch.open(compactionBytes: compactionBytes)
            defer { reopened.close() }
            let after = reopened.read { counts in counts.shapes.top(10).map { ($0.key, $0.count, $0.note) } }
            #expect(after.map(\.0) == ["/products/:param", "/old/path"], "compaction at \(compactionBytes)")
            #expect(after.map(\.1) == [8, 1])
            #expect(after.map(\.2) == before.map(\.2))
            let products = try #require(after.first?.2)
            #expect(products.platformNames == ["ios", "other"])
            #expect(products.entryNames == ["universalLink", "web"])
            #expect(products.lastMinute == products.firstMinute + 1)
        }
    }

    /// A scanner's million random links keep the sketch at its capacity, and so does its
    /// snapshot, while the shapes that really recur stay on top.
    @Test func aFloodStaysAtCapacity() throws {
        var limits = TelemetryLimits()
        limits.maximumShapes = 100
        var counts = Counts(limits: limits)
        var generator = SplitMix(seed: 11)
        for round in 0..<200 {
            var batch = Batch()
            batch.shapes = (0..<500).map { index in
                let shape = index % 10 == 0 ? "/real/\(["a", "b", "c"][index % 3])" : "/w\(generator.next() % 1_000_000)"
                return ShapeTally(minute: Int32(testNow / 60), entry: EntryPoint.web.rawValue, shape: Array(shape.utf8), count: 1)
            }
            counts.apply(batch, sequence: UInt64(round + 1), now: testNow)
        }
        #expect(counts.shapes.count == 100)
        #expect(Set(counts.shapes.top(3).map(\.key)) == ["/real/a", "/real/b", "/real/c"])
        let restored = try #require(SnapshotCodec.encode(counts).withUnsafeBytes { SnapshotCodec.decode($0, limits: limits) })
        #expect(restored.shapes.count == 100)
        #expect(restored.shapes.top(3).map(\.key) == counts.shapes.top(3).map(\.key))
    }
}
