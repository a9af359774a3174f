import HTTPCore
import Synchronization

/// The way a deferred handler answers its request: `respond` once, from any thread. The
/// response goes out on the connection's own loop, in request order; if the client has
/// gone meanwhile, it is dropped. A second call is ignored.
public final class Responder: Sendable {
    private let deliver: @Sendable (HTTPResponse) -> Void
    private let answered = Atomic<Bool>(false)

    /// `deliver` is called once, with the first response (or, if none is given, a `500`
    /// when the responder is released): a wrapper around another responder, say.
    public init(deliver: @escaping @Sendable (HTTPResponse) -> Void) {
        self.deliver = deliver
    }

    public func respond(_ response: HTTPResponse) {
        guard !answered.exchange(true, ordering: .acquiringAndReleasing) else { return }
        deliver(response)
    }

    deinit {
        // A handler that forgot to answer must not leave the connection waiting forever.
        if !answered.load(ordering: .acquiring) {
            deliver(.error(.internalServerError, message: "The request was dropped without an answer."))
        }
    }
}
