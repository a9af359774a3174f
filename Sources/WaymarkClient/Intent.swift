import Foundation
import RouteEngine

/// The door an intent came in by; telemetry's `entry`. `deferred`: a link followed before the
/// app was installed, handed to it after (the paste hand-off, `DeferredLink`).
public enum Door: String, Hashable, Sendable, CaseIterable {
    case universalLink, scheme, push, inApp, deferred
}

/// Something that asks the app to go somewhere. Every kind reaches the same resolver and
/// the same precondition policy: no door skips a gate.
public enum Intent: Hashable, Sendable, CustomStringConvertible {
    /// An untrusted link and the door it came by (`universalLink`, `scheme` or `push`).
    case link(String, door: Door)
    /// A typed request from the app's own screens.
    case request(DestinationRequest)

    public var door: Door {
        switch self {
        case .link(_, let door): door
        case .request: .inApp
        }
    }

    /// From outside the app: links by any door. Resets stacks; a newer one may supersede it.
    public var isExternal: Bool { door != .inApp }

    public var resolutionRequest: ResolutionRequest {
        switch self {
        case .link(let link, _): .url(link)
        case .request(let request): .destination(request)
        }
    }

    /// The link a push payload carries under the first of `keys` that holds one (a string
    /// or a URL); nil when it carries none — a push without a link is not an intent. A key
    /// with dots is a path into nested dictionaries (`data.deeplink`); a key that exists
    /// as written, dots and all, is taken first.
    public static func push(_ payload: [AnyHashable: Any], keys: [String]) -> Intent? {
        for key in keys {
            switch payload[AnyHashable(key)] ?? value(at: key.split(separator: ".", omittingEmptySubsequences: false), in: payload) {
            case let text as String: return .link(text, door: .push)
            case let url as URL: return .link(url.absoluteString, door: .push)
            default: continue
            }
        }
        return nil
    }

    /// The value at a path of keys through nested dictionaries (as a push payload decodes:
    /// `[AnyHashable: Any]` or `[String: Any]`); at most 8 levels, no empty key (a typo).
    private static func value(at path: [Substring], in payload: [AnyHashable: Any]) -> Any? {
        guard path.count > 1, path.count <= 8, !path.contains(where: \.isEmpty) else { return nil }
        var level: Any = payload
        for key in path {
            if let dictionary = level as? [AnyHashable: Any], let next = dictionary[AnyHashable(String(key))] {
                level = next
            } else if let dictionary = level as? [String: Any], let next = dictionary[String(key)] {
                level = next
            } else {
                return nil
            }
        }
        return level
    }

    /// Never the link itself (it may carry personal data): its door and length.
    public var description: String {
        switch self {
        case .link(let link, let door): "\(door.rawValue) link (\(link.utf8.count) bytes)"
        case .request(let request): "inApp request for \(request.destination)"
        }
    }
}

/// How an intent ended. Every intent ends in exactly one.
public enum DispatchOutcome: Hashable, Sendable {
    /// Resolved and allowed (after any gates), and the plan was applied.
    case navigated(NavigationPlan)
    /// A gate's handler answered `false`: the intent was dropped, never resumed.
    case gateCancelled(precondition: String)
    /// The gate's handler answered `true` but the fresh context still gated on the same
    /// precondition, again after one retry: the app signals before it commits its session.
    case gateLoop(precondition: String)
    /// Screens with unsaved work would have gone, and the leave handler kept them (or could not save them).
    case leaveCancelled(dirty: [Screen])
    /// The engine's answer: malformed, unknown route, validation failed, expired.
    case notFound(NotFound)
    /// Pushed out of a full stash or queue by newer intents (`DispatcherConfiguration.maximumWaiting`).
    case dropped
    /// A newer external link arrived while this one waited, in the queue or at a prompt
    /// (`SupersedePolicy.newestExternalLink`, `supersedesPrompts`).
    case superseded
    /// The gate handler did not answer within `gateTimeout`; it was told to close.
    case gateTimedOut(precondition: String)
    /// The leave handler did not answer (or save) within `leaveTimeout`; nothing was applied.
    case leaveTimedOut(dirty: [Screen])
    /// The navigator's `apply` had not returned after `applyTimeout`: the dispatcher stopped
    /// waiting for it (it may still finish) and the next intent runs, planned from what the
    /// navigator reports then.
    case applyTimedOut(NavigationPlan)
    /// `cancel()`, or the dispatching task was cancelled.
    case cancelled
    /// An auth callback, handed to the gate handler running for this precondition.
    case handedToGate(precondition: String)
    /// Dispatched from inside a gate or leave handler: queued behind the intent that handler
    /// serves and not awaited (that would wait for itself); its own end goes to the observer.
    case queuedFromHandler

    /// A short name for logs and the simulator.
    public var name: String {
        switch self {
        case .navigated: "navigated"
        case .gateCancelled: "gateCancelled"
        case .gateLoop: "gateLoop"
        case .leaveCancelled: "leaveCancelled"
        case .notFound(let notFound): "notFound(\(notFound.reason.rawValue))"
        case .dropped: "dropped"
        case .superseded: "superseded"
        case .gateTimedOut: "gateTimedOut"
        case .leaveTimedOut: "leaveTimedOut"
        case .applyTimedOut: "applyTimedOut"
        case .cancelled: "cancelled"
        case .handedToGate: "handedToGate"
        case .queuedFromHandler: "queuedFromHandler"
        }
    }
}

/// One intent's end, as the dispatcher reports it to its caller and its observer.
public struct DispatchResult: Sendable {
    /// Arrival order at the dispatcher, from 1.
    public let sequence: Int
    public let intent: Intent
    public let outcome: DispatchOutcome
    /// The engine's last answer for it; nil when it never reached the engine (dropped,
    /// superseded or cancelled while waiting, handed to a gate, queued from a handler).
    public let resolution: Resolution?
    /// The revision of the table it was resolved with (0: the empty table or not resolved).
    public let revision: Int
    public let time: Date
    /// For a link that ended `notFound(unknownRoute)`: its shape (`LinkShape`), keeping only
    /// the words of the app's own route table, which the telemetry reporter may send when the
    /// app opts in. nil otherwise.
    public let unknownLinkShape: String?

    /// For an app's own tests (an observer or a caller fed a made-up result); the
    /// dispatcher makes the real ones.
    public init(sequence: Int, intent: Intent, outcome: DispatchOutcome, resolution: Resolution?, revision: Int, time: Date,
                unknownLinkShape: String? = nil) {
        self.sequence = sequence
        self.intent = intent
        self.outcome = outcome
        self.resolution = resolution
        self.revision = revision
        self.time = time
        self.unknownLinkShape = unknownLinkShape
    }
}
