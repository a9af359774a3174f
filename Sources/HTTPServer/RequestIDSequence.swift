/// A loop's request ids: unique across the process's loops and never repeated within it,
/// yet telling nothing of how many requests came before. The loop's counter and its index
/// go through a keyed bijection of 64 bits (the process's random key added, then
/// SplitMix64's finalizer: xor-shifts and odd multiplications, each invertible), so two
/// ids differ whenever their (loop, counter) do, and an id read off a response says
/// neither how busy the server is nor which loop answered. Not a secret: ids are for
/// finding a request in the log, and the key only keeps them from counting.
struct RequestIDSequence: Sendable {
    private let key: UInt64
    private let loop: UInt64
    private var counter: UInt64 = 0

    /// `loop` below 256 (a loop per core); `key` random per process.
    init(key: UInt64, loop: Int) {
        self.key = key
        self.loop = UInt64(truncatingIfNeeded: loop) & 0xFF
    }

    /// The next id.
    mutating func next() -> UInt64 {
        counter &+= 1
        return Self.mix((counter << 8 | loop) &+ key)
    }

    /// SplitMix64's finalizer (Steele, Lea, Flood 2014): a bijection on 64 bits.
    static func mix(_ value: UInt64) -> UInt64 {
        var x = value
        x = (x ^ (x >> 30)) &* 0xBF58_476D_1CE4_E5B9
        x = (x ^ (x >> 27)) &* 0x94D0_49BB_1331_11EB
        return x ^ (x >> 31)
    }
}
