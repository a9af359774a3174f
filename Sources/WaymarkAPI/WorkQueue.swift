import Dispatch
import HTTPCore
import HTTPServer
import Synchronization

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
            pending.subtract(1, ordering: .relaxed)
        }
        return true
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
