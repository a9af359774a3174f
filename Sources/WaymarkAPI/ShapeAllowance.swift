import Synchronization

/// How many unknown-link shapes one source may add to the list in a minute, so that no one
/// install or network can flood it or choose what it shows: at most `perSource` from one
/// install (its source key) or one visitor's network, and `perNetwork` from one network
/// however many source keys it sends. The rest are not counted as shapes (their resolutions
/// still are) and are tallied in `refused`. Memory: the sources and networks of one minute.
final class ShapeAllowance: Sendable {
    /// The defaults (`API.Options.shapeAllowance`).
    static let perSource = 3
    static let perNetwork = 30
    let perSource: Int
    let perNetwork: Int

    init(perSource: Int = ShapeAllowance.perSource, perNetwork: Int = ShapeAllowance.perNetwork) {
        (self.perSource, self.perNetwork) = (perSource, perNetwork)
    }
    /// Sources tracked in one minute; past it a new source's shapes are refused.
    static let maximumTracked = 200_000

    private struct State {
        var minute = Int.min
        var sources: [UInt64: Int] = [:]
        var networks: [UInt64: Int] = [:]
    }
    private let state = Mutex(State())
    /// Shapes refused since start.
    let refused = Atomic<UInt64>(0)

    /// Whether one more shape from `source` (a hash of its source key; nil: none sent) on
    /// `network` may be counted in the minute of `now` (seconds).
    func allow(source: UInt64?, network: UInt64, now: Int) -> Bool {
        let allowed = state.withLock { state -> Bool in
            let minute = now / 60
            if minute != state.minute { state = State(minute: minute) }
            let key = source ?? (network | 1 << 63)
            let fromSource = state.sources[key] ?? 0, fromNetwork = state.networks[network] ?? 0
            guard fromSource < perSource, fromNetwork < perNetwork else { return false }
            guard state.sources.count < Self.maximumTracked || state.sources[key] != nil else { return false }
            state.sources[key] = fromSource + 1
            state.networks[network] = fromNetwork + 1
            return true
        }
        if !allowed { refused.add(1, ordering: .relaxed) }
        return allowed
    }

    /// A shape's source as the list stores it: 32 bits of the source key or the network (never 0).
    static func sourceHash(source: (UInt64, UInt64)?, network: UInt64) -> UInt32 {
        let mixed = source.map { $0.0 ^ ($0.1 &* 0x9E37_79B9_7F4A_7C15) } ?? (network &* 0xBF58_476D_1CE4_E5B9)
        let folded = UInt32(truncatingIfNeeded: mixed ^ (mixed >> 32))
        return folded == 0 ? 1 : folded
    }
}
