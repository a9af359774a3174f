import Foundation

/// When to try again: the interval after a success, exponential backoff with jitter after
/// failures, never sooner than the server's `Retry-After` — up to `maximum`: a proxy or a
/// captive portal may send any number or date, and a client that obeyed 10^12 s would never
/// ask again. Pure; the random source is given.
public struct Backoff: Hashable, Sendable {
    /// The wait after a success.
    public var interval: TimeInterval
    /// The first wait after a failure; doubled per consecutive failure…
    public var minimum: TimeInterval
    /// …up to this.
    public var maximum: TimeInterval

    public init(interval: TimeInterval, minimum: TimeInterval, maximum: TimeInterval) {
        self.interval = interval
        self.minimum = minimum
        self.maximum = maximum
    }

    /// The wait after `failures` consecutive failures (0: after a success). `random` is in
    /// 0..<1: the wait is drawn from the upper half of the exponential step ("equal
    /// jitter"), so a fleet that failed together does not come back together, and no wait
    /// is shorter than half the step. `retryAfter` from the server is a floor, itself capped
    /// at `maximum` (and ignored unless it is a finite number of seconds).
    public func delay(failures: Int, retryAfter: TimeInterval? = nil, random: Double) -> TimeInterval {
        let floor = retryAfter.map { $0.isFinite ? min(max($0, 0), maximum) : 0 } ?? 0
        guard failures > 0 else { return max(interval, floor) }
        let step = min(maximum, minimum * pow(2, Double(min(failures - 1, 30))))
        let jittered = step / 2 + step / 2 * (random.isNaN ? 0 : min(max(random, 0), 1))
        return max(jittered, floor)
    }
}
