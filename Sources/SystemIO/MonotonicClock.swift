#if canImport(Glibc)
import Glibc
#endif

/// Monotonic time in nanoseconds (CLOCK_MONOTONIC), for deadlines that wall-clock jumps cannot move.
/// Inlinable: the event loops read it several times per request.
@frozen
public struct MonotonicClock: Sendable {
    @inlinable
    public init() {}

    @inlinable
    public func now() -> Int64 {
        var spec = timespec()
        clock_gettime(CLOCK_MONOTONIC, &spec)
        return Int64(spec.tv_sec) * 1_000_000_000 + Int64(spec.tv_nsec)
    }
}

/// The processor cores online.
public func onlineCoreCount() -> Int {
    Int(sysconf(Int32(_SC_NPROCESSORS_ONLN)))
}
