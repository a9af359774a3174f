#if canImport(Glibc)
import Glibc
#endif

/// A failed system call: which call, on which path (when it has one), and the `errno` it
/// left, captured at once. The one error of every file and socket operation.
public struct IOError: Error, Hashable, Sendable, CustomStringConvertible {
    public let call: String
    public let path: String?
    public let errno: Int32

    public init(call: String, path: String? = nil, errno: Int32) {
        self.call = call
        self.path = path
        self.errno = errno
    }

    /// `open DIR/x: No space left on device`, or `accept4: … (errno 24)` without a path.
    public var description: String {
        guard let path else { return "\(call): \(String(cString: strerror(errno))) (errno \(errno))" }
        return "\(call) \(path): \(String(cString: strerror(errno)))"
    }

    /// The call and what went wrong, without the path: for answers to clients, which must
    /// not learn where the server keeps its files.
    public var withoutPath: String { "\(call): \(String(cString: strerror(errno)))" }

    /// Whether the disk (or the quota) is full: the operation may succeed once space is freed.
    public var isNoSpace: Bool { errno == ENOSPC || errno == EDQUOT }
}

/// What a non-blocking call did: a value, or nothing because it would block.
public enum IOResult<Value: Sendable>: Sendable {
    case processed(Value)
    case wouldBlock
}

/// Every system call goes through here (swift-nio's `syscall(blocking:where:_:)`):
/// retries `EINTR`, turns `EAGAIN`/`EWOULDBLOCK` into `.wouldBlock`, and captures `errno`
/// immediately into an `IOError` naming the call (and the path, when there is one). No
/// other file calls the raw functions.
@inlinable @inline(__always)
public func syscall<T: FixedWidthInteger & Sendable>(_ call: StaticString, path: String? = nil, _ body: () -> T) throws(IOError) -> IOResult<T> {
    while true {
        let result = body()
        if result >= 0 { return .processed(result) }
        let error = Glibc.errno
        switch error {
        case EINTR: continue
        case EAGAIN, EWOULDBLOCK: return .wouldBlock
        default: throw IOError(call: "\(call)", path: path, errno: error)
        }
    }
}

/// The same for calls that are never expected to block (files, epoll, a blocking flock).
@inlinable @inline(__always) @discardableResult
public func syscallBlocking<T: FixedWidthInteger & Sendable>(_ call: StaticString, path: String? = nil, _ body: () -> T) throws(IOError) -> T {
    switch try syscall(call, path: path, body) {
    case .processed(let value): return value
    case .wouldBlock: throw IOError(call: "\(call)", path: path, errno: EAGAIN)
    }
}

/// Runs `body`, reading its `IOError` as the caller's own error: how a store says what a
/// failed call means to it.
@inlinable
public func readingIOErrors<T, E: Error>(as transform: (IOError) -> E, _ body: () throws(IOError) -> T) throws(E) -> T {
    do throws(IOError) {
        return try body()
    } catch {
        throw transform(error)
    }
}
