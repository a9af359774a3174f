@testable import HTTPServer
import Testing

/// Request ids are unique across a process's loops and say nothing of the count: the
/// loop's counter goes through a keyed bijection.
@Suite("Request ids")
struct RequestIDTests {
    @Test func uniqueAcrossLoopsAndKeys() {
        var seen = Set<UInt64>()
        for loop in 0..<4 {
            var ids = RequestIDSequence(key: 0x1234_5678_9ABC_DEF0, loop: loop)
            for _ in 0..<20_000 { seen.insert(ids.next()) }
        }
        #expect(seen.count == 80_000, "no id repeats, across loops")
        var a = RequestIDSequence(key: 1, loop: 0), b = RequestIDSequence(key: 2, loop: 0)
        #expect(a.next() != b.next(), "another process's key, another id")
    }

    /// Each row: a key and a loop; consecutive ids must not step by a constant, rise, or
    /// show the loop in their low byte — what a counter in hex did.
    static let rows: [(UInt64, Int)] = [(0, 0), (0, 1), (42, 0), (UInt64.max, 3), (0xDEAD_BEEF, 7)]

    @Test(arguments: rows)
    func idsRevealNoCount(_ key: UInt64, _ loop: Int) {
        var ids = RequestIDSequence(key: key, loop: loop)
        let run = (0..<64).map { _ in ids.next() }
        let steps = Set(zip(run, run.dropFirst()).map { $1 &- $0 })
        #expect(steps.count > 60, "no constant step")
        #expect(zip(run, run.dropFirst()).contains { $1 < $0 }, "not rising")
        #expect(Set(run.map { $0 & 0xFF }).count > 30, "the low byte is not the loop")
        // Bits flip about half the time between neighbours (a counter flips one or two).
        let flips = zip(run, run.dropFirst()).map { ($0 ^ $1).nonzeroBitCount }.reduce(0, +) / 63
        #expect((20...44).contains(flips), "\(flips) bits differ on average")
    }

    @Test func theMixIsABijectionOnASample() {
        // Inverting each step: the finalizer of distinct inputs is distinct (spot check
        // on values that differ in one bit, where a weak mix would collide).
        let inputs = (0..<64).map { UInt64(1) << UInt64($0) } + [0, UInt64.max]
        #expect(Set(inputs.map(RequestIDSequence.mix)).count == inputs.count)
    }
}
