import Foundation
import Testing
@testable import WaymarkAPI

/// A landing table keeps every window edge and scheduled publish ahead of it, so the next
/// one is known after each passes: landings are kept (and shared caches may keep them)
/// again, rather than `no-cache` until the store next changes.
@Suite("Landing edges")
struct LandingEdgeTests {
    static let edges = [100.0, 200, 300].map { Date(timeIntervalSince1970: $0) }

    /// Each row: the time (seconds since 1970) and the next edge after it, nil when none is left.
    static let rows: [(Double, Double?)] = [
        (0, 100),
        (99.5, 100),
        (100, 200),       // an edge that has come is past
        (150, 200),
        (250, 300),
        (300, nil),
        (1_000, nil),
        (-1, 100),
    ]

    @Test(arguments: rows)
    func nextEdgeAfter(_ now: Double, _ next: Double?) {
        #expect(LandingTable.nextEdge(in: Self.edges, after: Date(timeIntervalSince1970: now)) == next.map(Date.init(timeIntervalSince1970:)))
    }

    @Test func noEdgesNoChange() {
        #expect(LandingTable.nextEdge(in: [], after: Date(timeIntervalSince1970: 0)) == nil)
    }
}
