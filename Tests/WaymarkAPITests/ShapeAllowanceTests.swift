import Testing
@testable import WaymarkAPI

/// Each install adds at most three shapes a minute and each network thirty, however many
/// source keys it makes up; the next minute they may again.
@Suite("Shape allowance")
struct ShapeAllowanceTests {
    @Test func perSourceAndPerNetworkPerMinute() {
        let allowance = ShapeAllowance()
        let now = 1_795_000_020
        #expect((0..<5).map { _ in allowance.allow(source: 1, network: 10, now: now) } == [true, true, true, false, false])
        let fromOneNetwork = (0..<100).filter { allowance.allow(source: UInt64(100 + $0), network: 10, now: now) }.count
        #expect(fromOneNetwork == 27, "the network's 30, three of them used above")
        #expect(allowance.allow(source: nil, network: 11, now: now), "an old client stands for its network")
        #expect(allowance.allow(source: 1, network: 10, now: now + 60), "a new minute")
        #expect(allowance.refused.load(ordering: .relaxed) == 2 + 73)
    }

    @Test func sourceHashesAreNeverZero() {
        #expect(ShapeAllowance.sourceHash(source: (0, 0), network: 0) != 0)
        #expect(ShapeAllowance.sourceHash(source: nil, network: 0) != 0)
        #expect(ShapeAllowance.sourceHash(source: (1, 2), network: 0) != ShapeAllowance.sourceHash(source: (1, 3), network: 0))
    }
}
