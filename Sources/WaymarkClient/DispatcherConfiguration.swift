import Foundation

/// What a newer external link does to older ones still waiting.
public enum SupersedePolicy: String, Hashable, Sendable {
    /// A newer external link ends every external link still waiting (not the one running)
    /// as `superseded`: the user's last tap wins, and two links never replay one after the
    /// other. In-app requests are never superseded. The default.
    case newestExternalLink
    /// Every intent is carried out in arrival order.
    case keepAll
}

public struct DispatcherConfiguration: Sendable {
    /// Push payload keys that may carry the link, first match wins; a key with dots is a
    /// path into nested dictionaries (`"data.deeplink"`).
    public var pushLinkKeys: [String] = ["deeplink", "url", "link"]
    /// Intents waiting (stashed before `ready()`, or queued behind the running one) at
    /// most; one more drops the oldest waiting intent (`dropped`).
    public var maximumWaiting = 256
    public var supersede = SupersedePolicy.newestExternalLink
    /// With `newestExternalLink`: a newer external link also ends the external link that is
    /// waiting for its gate handler (the login screen) or its leave handler (the unsaved-work
    /// prompt) as `superseded`, and that handler is told to close. The default; `false`
    /// lets the prompt finish first.
    public var supersedesPrompts = true
    /// Gate handler calls one intent may make (chained gates), at most.
    public var maximumGates = 8
    /// How long a gate handler may take to answer (a login sheet swiped away without an
    /// answer); past it the intent ends `gateTimedOut`, the handler is told to close, and
    /// the next intent runs. Default 5 minutes; nil waits for ever.
    public var gateTimeout: TimeInterval? = 300
    /// The same for the leave handler's decision and save (`leaveTimedOut`). Default 5 minutes.
    public var leaveTimeout: TimeInterval? = 300
    /// How long the navigator's `apply` may take (animations, presentations and their
    /// completion handlers); past it the intent ends `applyTimedOut` and the next one runs, so
    /// an apply that never returns (a completion UIKit skipped) cannot stop every later link.
    /// `cancel()` ends a running apply's wait too, with or without a timeout. Default 10 s;
    /// nil: no limit.
    public var applyTimeout: TimeInterval? = 10
    /// Links that answer a running gate rather than go anywhere (an OAuth redirect, a magic
    /// link): a link by the scheme or universal-link door (never a push's) starting with one
    /// of these (scheme and host compared without case, the rest exactly) that arrives while a
    /// gate handler runs is handed to that handler (`GateHandler.received(callback:for:)`)
    /// instead of being queued behind the very gate it satisfies; the handler checks it is
    /// the answer to its own request (OAuth's `state`). With no gate running it is dispatched
    /// like any link.
    public var authCallbackPrefixes: [String] = []

    /// The first tap on a new campaign: an external link that ended `notFound(unknownRoute)`
    /// against a table a refresh in flight may replace waits for that refresh up to this
    /// many seconds and is resolved once more against the newer table, if it brought one.
    /// Once per intent. Default 3 s; nil never waits.
    public var unknownRouteWait: TimeInterval? = 3
    /// Keeps an external link waiting at a gate on disk, so a kill at the login screen does
    /// not lose it (`GateStash`); nil (the default) keeps it in memory only.
    public var gateStash: GateStash?
    /// Where the dispatcher's log messages go (`ClientLogMessage`): intents that did not
    /// navigate, and why — never the link. nil: nowhere.
    public var log: ClientLog?

    public init() {}

    /// Whether `link` is one of the auth callbacks.
    func isAuthCallback(_ link: String) -> Bool {
        authCallbackPrefixes.contains { prefix in
            guard link.utf8.count >= prefix.utf8.count else { return false }
            // The scheme and authority (up to the first "/" after "://") compare without case.
            let head = prefix.range(of: "://").map { prefix[..<(prefix[$0.upperBound...].firstIndex(of: "/") ?? prefix.endIndex)] } ?? ""
            let headCount = head.utf8.count
            let linkBytes = Array(link.utf8), prefixBytes = Array(prefix.utf8)
            for index in 0..<prefixBytes.count {
                let a = linkBytes[index], b = prefixBytes[index]
                if index < headCount ? lowercase(a) != lowercase(b) : a != b { return false }
            }
            return true
        }
    }

    private func lowercase(_ byte: UInt8) -> UInt8 { (65...90).contains(byte) ? byte + 32 : byte }
}
