#if canImport(Glibc)
import Glibc
#endif

/// A failed system call: which call, and the `errno` it left, captured at once.
public struct SystemError: Error, Hashable, Sendable, CustomStringConvertible {
    public let call: String
    public let errno: Int32

    public var description: String { "\(call): \(String(cString: strerror(errno))) (errno \(errno))" }
}

/// What a non-blocking call did: a value, or nothing because it would block.
public enum IOResult<Value: Sendable>: Sendable {
    case processed(Value)
    case wouldBlock
}

/// Every system call goes through here (swift-nio's `syscall(blocking:where:_:)`):
/// retries `EINTR`, turns `EAGAIN`/`EWOULDBLOCK` into `.wouldBlock`, and captures `errno`
/// immediately into a `SystemError` naming the call. No other file calls the raw functions.
@inline(__always)
func syscall<T: FixedWidthInteger & Sendable>(_ call: StaticString, _ body: () -> T) throws(SystemError) -> IOResult<T> {
    while true {
        let result = body()
        if result >= 0 { return .processed(result) }
        let error = Glibc.errno
        switch error {
        case EINTR: continue
        case EAGAIN, EWOULDBLOCK: return .wouldBlock
        default: throw SystemError(call: "\(call)", errno: error)
        }
    }
}

/// The same for calls that are never expected to block.
@inline(__always)
@discardableResult
func syscallBlocking<T: FixedWidthInteger & Sendable>(_ call: StaticString, _ body: () -> T) throws(SystemError) -> T {
    switch try syscall(call, body) {
    case .processed(let value): return value
    case .wouldBlock: throw SystemError(call: "\(call)", errno: EAGAIN)
    }
}

/// Monotonic time in nanoseconds (CLOCK_MONOTONIC), for deadlines that wall-clock jumps cannot move.
public struct MonotonicClock: Sendable {
    public init() {}

    public func now() -> Int64 {
        var spec = timespec()
        clock_gettime(CLOCK_MONOTONIC, &spec)
        return Int64(spec.tv_sec) * 1_000_000_000 + Int64(spec.tv_nsec)
    }
}

func sysconfCoreCount() -> Int {
    Int(sysconf(Int32(_SC_NPROCESSORS_ONLN)))
}
