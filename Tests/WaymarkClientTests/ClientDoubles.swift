import Foundation
import RouteEngine
@testable import WaymarkClient

extension TelemetryEvent {
    /// A storefront 5.3.0 universal-link event of one minute (revision 1).
    static func testEvent(route: String, minute: Int, outcome: String = "proceed") -> TelemetryEvent {
        TelemetryEvent(client: .init(platform: "ios", appVersion: "5.3.0", revision: 1), minute: minute, entry: .universalLink,
                       outcome: outcome, reason: nil, route: route, destination: outcome == "proceed" ? route : nil, precondition: nil)
    }
}

/// The app's session as a test drives it: logged in or not, read fresh for every resolution.
actor Session: ContextProvider {
    var loggedIn: Bool
    var now: Date
    private(set) var reads = 0

    init(loggedIn: Bool = false, now: Date = Date()) {
        self.loggedIn = loggedIn
        self.now = now
    }

    func context() -> ResolutionContext {
        reads += 1
        return ResolutionContext(satisfied: loggedIn ? ["auth"] : [], now: now)
    }

    func logIn() { loggedIn = true }
}

/// A scripted login screen.
actor ScriptedLogin: GateHandler {
    enum Behaviour {
        /// Commits the session, then answers true (the right order).
        case succeed
        /// The user closes the login screen.
        case cancel
        /// Answers true before the session is committed: the essay's infinite loop.
        case signalBeforeCommit
    }

    let session: Session
    let behaviour: Behaviour
    private(set) var asked: [String] = []

    init(session: Session, behaviour: Behaviour) {
        self.session = session
        self.behaviour = behaviour
    }

    func satisfy(_ precondition: String, for gate: Gate) async -> Bool {
        asked.append(precondition)
        switch behaviour {
        case .succeed:
            await session.logIn()
            return true
        case .cancel: return false
        case .signalBeforeCommit: return true
        }
    }
}

/// A leave handler that waits for the test's answer.
actor ScriptedLeave: LeaveHandler {
    private(set) var asked: [[Screen]] = []
    private(set) var saved: [[Screen]] = []
    private var answer: CheckedContinuation<LeaveDecision, Never>?
    let saveSucceeds: Bool

    init(saveSucceeds: Bool = true) {
        self.saveSucceeds = saveSucceeds
    }

    func decide(leaving dirty: [Screen], for plan: NavigationPlan) async -> LeaveDecision {
        asked.append(dirty)
        return await withCheckedContinuation { answer = $0 }
    }

    func save(_ dirty: [Screen]) async -> Bool {
        saved.append(dirty)
        return saveSucceeds
    }

    var isAsking: Bool { answer != nil }

    func answer(_ decision: LeaveDecision) {
        answer?.resume(returning: decision)
        answer = nil
    }
}

/// Collects every result the dispatcher reports.
actor ResultLog: DispatchObserver {
    private(set) var results: [DispatchResult] = []

    func dispatched(_ result: DispatchResult) async {
        results.append(result)
    }
}

/// A transport that answers from a script, for what a live server will not do on demand
/// (a truncated body, a 503 with Retry-After); records what it was asked.
actor ScriptedTransport: Transport {
    private var answers: [Result<TransportResponse, URLError>]
    private(set) var requests: [TransportRequest] = []

    init(_ answers: [Result<TransportResponse, URLError>]) {
        self.answers = answers
    }

    func send(_ request: TransportRequest) async throws -> TransportResponse {
        requests.append(request)
        guard !answers.isEmpty else { throw URLError(.notConnectedToInternet) }
        return try answers.removeFirst().get()
    }
}

/// Waits until `condition` holds, up to a generous bound (the condition, not the bound, is the test).
func eventually(_ condition: @Sendable () async -> Bool) async -> Bool {
    for _ in 0..<2_000 {
        if await condition() { return true }
        try? await Task.sleep(nanoseconds: 5_000_000)
    }
    return false
}

func temporaryDirectory() -> URL {
    let url = URL(fileURLWithPath: NSTemporaryDirectory()).appendingPathComponent("waymark-client-\(UUID().uuidString)")
    try? FileManager.default.createDirectory(at: url, withIntermediateDirectories: true)
    return url
}

/// A transport whose every request waits until the test answers it, in any order: two
/// overlapping calls, one answered slowly and one fast.
actor HeldTransport: Transport {
    private(set) var requests: [TransportRequest] = []
    private var waiting: [Int: CheckedContinuation<TransportResponse, Never>] = [:]

    func send(_ request: TransportRequest) async throws -> TransportResponse {
        let index = requests.count
        requests.append(request)
        return await withCheckedContinuation { waiting[index] = $0 }
    }

    /// Requests asked and not yet answered.
    var held: Int { waiting.count }

    /// Answers request `index` (0 the first asked); false if it is not waiting.
    @discardableResult
    func answer(_ index: Int, _ response: TransportResponse) -> Bool {
        guard let continuation = waiting.removeValue(forKey: index) else { return false }
        continuation.resume(returning: response)
        return true
    }
}
