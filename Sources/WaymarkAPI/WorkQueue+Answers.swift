import Dispatch
import HTTPCore
import HTTPServer
import Synchronization

/// What the endpoints call: whether a head will be refused before its body is read, the
/// `503 busy` a refusal answers, and jobs that answer a responder.
extension WorkQueue {
    /// Whether a request whose head this is will be a document job in a costly-read route:
    /// its route reads a stored document, or it declares a body longer than `documentBody`
    /// (a chunked body is known only once it is read, and `submit` decides then).
    static func isDocument(_ head: HTTPRequestHead, readsDocument: Bool) -> Bool {
        if readsDocument { return true }
        if case .contentLength(let length)? = try? HTTPBodyFraming.of(head) { return length > documentBody }
        return false
    }

    /// `wouldRefuse` for a request's head: the `503 busy` to answer it with, counted as refused.
    func refusalAtHead(_ lane: WorkLane, for caller: WorkCaller, document: Bool = false) -> Refusal? {
        guard let refusal = wouldRefuse(lane, for: caller, document: document) else { return nil }
        lanes[lane.rawValue].refused.add(1, ordering: .relaxed)
        return busy(refusal, in: lane)
    }

    /// The `503 busy` a refusal in `lane` is answered with.
    func busy(_ refusal: WorkRefusal, in lane: WorkLane) -> Refusal {
        switch refusal {
        case .full:
            Refusal(.serviceUnavailable, "busy",
                    "The server has \(capacity) requests' worth of \(lane.work) under way; retry in a moment.",
                    headers: [("Retry-After", "1")])
        case .overShare:
            Refusal(.serviceUnavailable, "busy",
                    "You have \(share(of: lane)) requests' worth of \(lane.work) under way, as many as one caller may; retry in a moment.",
                    headers: [("Retry-After", "1")])
        case .overDocumentShare:
            Refusal(.serviceUnavailable, "busy",
                    "You have as many documents (drafts, revisions or schedules) waiting to be read as one token (\(Self.documentShare)) or one address (\(Self.documentPeerShare)) may; retry in a moment.",
                    headers: [("Retry-After", "1")])
        }
    }

    /// Answers through `responder` with what `job` returns (or the refusal it throws), run
    /// off the loop in `lane`; `503` with `Retry-After: 1` when it is refused.
    func answer(_ responder: Responder, in lane: WorkLane, for caller: WorkCaller = WorkCaller(), document: Bool = false,
                _ job: @escaping @Sendable () throws(Refusal) -> HTTPResponse) {
        run(responder, in: lane, for: caller, document: document) { answering throws(Refusal) in answering.respond(try job()) }
    }

    /// Runs `job`, which answers through `responder` itself (perhaps later, from elsewhere),
    /// off the loop in `lane`; a refusal it throws is the answer, and so is `503` when the
    /// lane is full or the caller holds its share.
    /// `job` answers through the responder it is given, which gives the caller's share back
    /// as it hands the answer over.
    func run(_ responder: Responder, in lane: WorkLane, for caller: WorkCaller = WorkCaller(), document: Bool = false,
             _ job: @escaping @Sendable (Responder) throws(Refusal) -> Void) {
        let refusal = submit(lane, for: caller, document: document, releasing: { release in
            let answering = Responder { response in
                release()
                responder.respond(response)
            }
            do throws(Refusal) {
                try job(answering)
            } catch {
                answering.respond(error.response)
            }
        })
        if let refusal { responder.respond(busy(refusal, in: lane).response) }
    }
}
