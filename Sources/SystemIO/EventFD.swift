import CSystemShim
#if canImport(Glibc)
import Glibc
#endif

/// An eventfd(2) counter another thread bumps to wake a loop blocked in epoll_wait.
public enum EventFD {
    /// A non-blocking eventfd starting at zero.
    public static func make() throws(IOError) -> Int32 {
        try syscallBlocking("eventfd") { eventfd(0, Int32(EFD_NONBLOCK | EFD_CLOEXEC)) }
    }

    /// Adds one. Never blocks and never fails in a way that matters: the only failure of a
    /// non-blocking eventfd write is a full counter, when a wake-up is pending anyway.
    public static func signal(_ fd: Int32) {
        var one: UInt64 = 1
        _ = try? syscall("write") { Glibc.write(fd, &one, 8) }
    }

    /// Reads the counter back to zero (nothing to read is no error).
    public static func drain(_ fd: Int32) {
        var value: UInt64 = 0
        _ = try? syscall("read") { Glibc.read(fd, &value, 8) }
    }
}

/// Standard error, for a log line written whole in one call (never interleaved mid-line
/// with another loop's).
public func writeToStandardError(_ bytes: UnsafeRawBufferPointer) {
    _ = try? syscall("write") { Glibc.write(2, bytes.baseAddress, bytes.count) }
}
