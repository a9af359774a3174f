import Foundation

/// Waits for an operation's value for at most a bound, without cancelling the operation: a
/// refresh that outlives the wait still lands (and serves the next caller). Racing a task
/// group would not do — a group returns only once every child has, the slow one included.
enum BoundedWait {
    /// The operation's value, or nil if `seconds` passed first.
    static func value<T: Sendable>(within seconds: TimeInterval, _ operation: @escaping @Sendable () async -> T) async -> T? {
        let race = Race<T>()
        return await withCheckedContinuation { continuation in
            race.start(continuation)
            let work = Task { race.end(await operation()) }
            let timer = Task {
                await Sleep.seconds(seconds)
                race.end(nil)
            }
            race.cancelOnEnd(timer)
            _ = work
        }
    }

    /// The first ending wins, once; the timer is cancelled when the work wins.
    private final class Race<T: Sendable>: @unchecked Sendable {
        private let lock = NSLock()
        private var continuation: CheckedContinuation<T?, Never>?
        private var timer: Task<Void, Never>?
        private var ended = false

        func start(_ continuation: CheckedContinuation<T?, Never>) {
            lock.withLock { self.continuation = continuation }
        }

        func cancelOnEnd(_ timer: Task<Void, Never>) {
            let cancelNow = lock.withLock {
                self.timer = timer
                return ended
            }
            if cancelNow { timer.cancel() }
        }

        func end(_ value: T?) {
            let (continuation, timer): (CheckedContinuation<T?, Never>?, Task<Void, Never>?) = lock.withLock {
                guard !ended else { return (nil, nil) }
                ended = true
                defer { self.continuation = nil }
                return (self.continuation, self.timer)
            }
            timer?.cancel()
            continuation?.resume(returning: value)
        }
    }
}
