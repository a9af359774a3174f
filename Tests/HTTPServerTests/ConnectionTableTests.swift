@testable import HTTPServer
import Testing

/// A loop's connections by descriptor (`ConnectionTable`) against a dictionary: random
/// adds, replacements and removals over descriptors 0–300 (sparse and dense), then every
/// lookup, the count and the values agree.
@Suite("Connections by descriptor")
struct ConnectionTableTests {
    @Test func agreesWithADictionary() {
        var state: UInt64 = 0x7AB1E
        func next(_ bound: Int) -> Int {
            state = state &* 6_364_136_223_846_793_005 &+ 1_442_695_040_888_963_407
            return Int((state >> 33) % UInt64(bound))
        }
        var table = ConnectionTable()
        var model: [Int32: Connection] = [:]
        for step in 0..<5_000 {
            let fd = Int32(next(step < 2_500 ? 40 : 300))
            switch next(3) {
            case 0, 1:
                let connection = Connection(fd: fd, machine: ConnectionStateMachine(now: 0))
                table[fd] = connection
                model[fd] = connection
            default:
                #expect(table.removeValue(forKey: fd) === model.removeValue(forKey: fd))
            }
            #expect(table.count == model.count)
            #expect(table.isEmpty == model.isEmpty)
        }
        for fd in Int32(-2)...Int32(400) { #expect(table[fd] === model[fd], "fd \(fd)") }
        #expect(table.values.map(\.fd) == model.keys.sorted())
        table[-1] = Connection(fd: -1, machine: ConnectionStateMachine(now: 0))
        #expect(table[-1] == nil, "no slot for a negative descriptor")
    }
}
