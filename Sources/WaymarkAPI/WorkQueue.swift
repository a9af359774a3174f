import Dispatch
import HTTPCore
import HTTPServer
import Synchronization
import SystemIO

/// Where the CPU work a request causes runs — validating a document, building a build's
/// view, reading a revision, a diff, a preview — so that no event loop spends more than a
/// lookup on any request and a slow document never delays the next connection.
///
/// A concurrent dispatch queue below the loops' priority: libdispatch runs its jobs on as
/// many threads as there are cores, and the kernel gives the loops' threads the CPU first.
/// At most `capacity` jobs wait or run at once; one more is refused with `503` and
/// `Retry-After` rather than queued without bound (`waymark_work_refused_total`).
final class WorkQueue: Sendable {
    let capacity: Int
    private let queue = DispatchQueue(label: "waymark.work", qos: .utility, attributes: .concurrent)
    private let pending = Atomic<Int>(0)
    /// Jobs refused because `capacity` were pending, since start.
    let refused = Atomic<UInt64>(0)

    init(capacity: Int) {
        self.capacity = capacity
    }

    /// Jobs waiting or running now.
    var queued: Int { pending.load(ordering: .relaxed) }

    /// Runs `job` off the loop; false (and nothing run) when `capacity` jobs are pending.
    func submit(_ job: @escaping @Sendable () -> Void) -> Bool {
        guard pending.add(1, ordering: .acquiringAndReleasing).newValue <= capacity else {
            pending.subtract(1, ordering: .relaxed)
            refused.add(1, ordering: .relaxed)
            return false
        }
        queue.async { [self] in
            job()
            let left = pending.subtract(1, ordering: .relaxed).newValue
            if left == 0 { releaseMemory() }
        }
        return true
    }

    /// Monotonic nanoseconds of the last `Memory.releaseFree`, and whether one is due.
    private let lastRelease = Atomic<UInt64>(0)
    private let releaseScheduled = Atomic<Bool>(false)

    /// When the queue falls quiet, at most once a second: what its jobs freed (a document's
    /// parse, a resolver) goes back to the system instead of staying in malloc's arenas.
    /// A moment later, not at once: the job's request and answer are freed only after it
    /// returns, on the loop that writes the answer.
    private func releaseMemory() {
        guard releaseScheduled.compareExchange(expected: false, desired: true, ordering: .acquiringAndReleasing).exchanged else { return }
        let now = DispatchTime.now().uptimeNanoseconds
        let due = max(now + 200_000_000, lastRelease.load(ordering: .relaxed) + 1_000_000_000)
        queue.asyncAfter(deadline: DispatchTime(uptimeNanoseconds: due)) { [self] in
            if pending.load(ordering: .relaxed) == 0 {
                Memory.releaseFree()
                lastRelease.store(DispatchTime.now().uptimeNanoseconds, ordering: .relaxed)
            }
            releaseScheduled.store(false, ordering: .releasing)
        }
    }

    /// Answers through `responder` with what `job` returns (or the refusal it throws), run
    /// off the loop; `503` with `Retry-After: 1` when the queue is full.
    func answer(_ responder: Responder, _ job: @escaping @Sendable () throws(Refusal) -> HTTPResponse) {
        run(responder) { () throws(Refusal) in responder.respond(try job()) }
    }

    /// Runs `job`, which answers through `responder` itself (perhaps later, from elsewhere),
    /// off the loop; a refusal it throws is the answer, and so is `503` when the queue is full.
    func run(_ responder: Responder, _ job: @escaping @Sendable () throws(Refusal) -> Void) {
        let accepted = submit {
            do throws(Refusal) {
                try job()
            } catch {
                responder.respond(error.response)
            }
        }
        if !accepted {
            responder.respond(Refusal(.serviceUnavailable, "busy",
                "The server has \(capacity) requests' worth of validation and other work under way; retry in a moment.",
                headers: [("Retry-After", "1")]).response)
        }
    }
}
