import Testing
@testable import Telemetry

/// The unknown-links list cannot be wiped or flooded for good: a phone's shape counts once,
/// days are windows (a flood leaves after two), and the list ranks by what is certain and by
/// how many sources saw a shape.
@Suite("Shape sketch")
struct ShapeSketchTests {
    static let day = ShapeSketch.window
    static let minute: Int32 = 20_000 * ShapeSketch.window + 600

    static func offer(_ sketch: inout ShapeSketch, _ shape: String, weight: UInt64 = 1, source: UInt32, at minute: Int32 = ShapeSketchTests.minute) {
        sketch.offer(shape, weight: weight, minute: minute, platform: 0, entry: 0, source: source, arrival: minute)
    }

    @Test func aFloodLeavesAfterTwoDays() {
        var sketch = ShapeSketch(capacity: 50)
        for source in UInt32(1)...20 { Self.offer(&sketch, "/real/path", source: source) }
        for index in 0..<10_000 { Self.offer(&sketch, "/flood/w\(index)", weight: 1_000, source: 99, at: Self.minute + 60) }
        #expect(sketch.ranked(1).first?.key != "/real/path", "the flood, today, is on top")
        // The next day the flood is yesterday's; the day after, it is gone.
        for source in UInt32(1)...20 { Self.offer(&sketch, "/real/path", source: source, at: Self.minute + Self.day) }
        for source in UInt32(1)...20 { Self.offer(&sketch, "/real/path", source: source, at: Self.minute + 2 * Self.day) }
        #expect(sketch.ranked(1).first?.key == "/real/path")
        #expect(sketch.entries.count == 1, "nothing of the flood is held two days later")
        #expect(sketch.ranked(1).first?.count == 40, "today's and yesterday's")
    }

    @Test func rankedByLowerBoundThenSources() {
        var sketch = ShapeSketch(capacity: 3)
        for _ in 0..<5 { Self.offer(&sketch, "/a", source: 1) }             // 5, one source
        for source in UInt32(1)...5 { Self.offer(&sketch, "/b", source: source) }  // 5, five sources
        Self.offer(&sketch, "/c", source: 7)
        Self.offer(&sketch, "/d", weight: 5, source: 8)                      // displaces /c: count 6, error 1
        let ranked = sketch.ranked(3)
        #expect(ranked.map(\.key) == ["/b", "/a", "/d"], "\(ranked.map { ($0.key, $0.count, $0.error) })")
        #expect(ranked.map { $0.note.sources.count } == [5, 1, 1])
    }
}
