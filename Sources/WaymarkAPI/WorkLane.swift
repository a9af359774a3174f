import Dispatch
import HTTPCore
import HTTPServer
import Synchronization
import SystemIO

/// The lane a job runs in (`WorkQueue`).
enum WorkLane: Int, Sendable, CaseIterable {
    /// Changes that parse a document: publish, rollback, validation, schedules, schema
    /// registration. No read is ever queued here; one token's share at a time.
    case changes
    /// What a new generation serves: a build's manifest view, the landing table, the
    /// associated-domain files. Never refused; until built, nothing else waits for it.
    case builds
    /// Costly reads: QR codes, previews, revision documents, diffs, unknown links; shared,
    /// one token's and one peer's share at a time.
    case reads
    /// Rollout controls (advance, pause, resume, abort, promote) and cancelled schedules:
    /// no document, so however many documents are being validated, an abort in
    /// an incident waits for none of them.
    case controls
    /// What the operators' own readers ask, apart from the costly reads anyone with a read
    /// token can multiply: the dashboards' counts and top lists (`telemetry:read`). Shared
    /// like the reads lane, on a queue of its own, so a flood of QR codes leaves dashboards
    /// answered.
    case internalReads
    /// Followers' revision records (`replication`): on a queue of their own, so neither a
    /// QR flood nor the costly counts a dashboard token may ask keep a publish off the
    /// followers.
    case replication

    var name: String { ["changes", "builds", "reads", "controls", "internal", "replication"][rawValue] }
    var work: String { ["changes", "building", "costly reads", "rollout controls", "dashboards' reads", "followers' reads"][rawValue] }
    /// Whether one caller holds at most a share of its places.
    var isShared: Bool { self == .changes || self == .reads || self == .internalReads || self == .replication }

    /// Who holds a share: in the reads lane the token and the peer; in the replication lane
    /// the token and the peer too (followers share one token, `docs/replication.md`, each
    /// from a machine of its own: one holder of it cannot take every follower's places); in
    /// the changes and internal reads lanes the token alone (every job there needs one, a
    /// credential of its own, and behind a proxy or from one office every caller would be
    /// one peer: an operator's abort beside a marketer's flood, a dashboard beside a
    /// marketing token's costly counts).
    func sharer(_ caller: WorkCaller) -> WorkCaller { self == .reads || self == .replication ? caller : WorkCaller(token: caller.token) }
}

/// Who a job is for, for the changes and reads lanes' shares: the token's name (nil for a public or
/// anonymous caller, who is known by its peer alone) and the connection's peer.
struct WorkCaller: Sendable {
    var token: String?
    var peer: PeerAddress?

    init(token: String? = nil, peer: PeerAddress? = nil) {
        self.token = token
        self.peer = peer
    }

    /// `trustForwardedFor`: the peer is the address a proxy on loopback names
    /// (`HTTPRequestHead.client`), not the proxy, which would make every caller one peer.
    init(_ request: HTTPRequest, actor: String, trustForwardedFor: Bool) {
        self.init(request.head, actor: actor, trustForwardedFor: trustForwardedFor)
    }

    init(_ head: HTTPRequestHead, actor: String, trustForwardedFor: Bool) {
        token = actor == "public" || actor == "anonymous" ? nil : actor
        peer = head.client(trustingForwardedFor: trustForwardedFor)
    }
}

/// Why `WorkQueue.submit` did not run a job.
enum WorkRefusal: Sendable, Equatable {
    case full
    case overShare
    /// A document job in the reads lane past `WorkQueue.documentShare`.
    case overDocumentShare
}
