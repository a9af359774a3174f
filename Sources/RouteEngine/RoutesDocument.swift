import CivilDate
import Foundation

/// Where a destination param takes its value from.
public enum ParamSource: Hashable, Sendable {
    /// A capture of the matched pattern (`:name` or `*name`).
    case capture(String)
    /// A query item of the link; only mapped query items are read.
    case query(String)
    /// A fixed value.
    case constant(JSONValue)
}

/// A time window in which a route is live: `validFrom` inclusive, `validUntil` exclusive.
/// Its bounds are whole microseconds since 1970 and compare as integers, so every port
/// (Java's nanosecond `Instant`, JavaScript's millisecond `Date`, Swift's binary `Date`)
/// reads the same instants and draws the same line (`docs/formats.md`, "Timestamps").
public struct ValidityWindow: Hashable, Sendable {
    public var startMicroseconds: Int?
    public var endMicroseconds: Int?

    public init(startMicroseconds: Int? = nil, endMicroseconds: Int? = nil) {
        self.startMicroseconds = startMicroseconds
        self.endMicroseconds = endMicroseconds
    }

    public init(start: Date?, end: Date?) {
        self.init(startMicroseconds: start.map(Timestamp.microseconds(of:)), endMicroseconds: end.map(Timestamp.microseconds(of:)))
    }

    public var start: Date? { startMicroseconds.map(Timestamp.date(microseconds:)) }
    public var end: Date? { endMicroseconds.map(Timestamp.date(microseconds:)) }

    /// Whether the instant `now` (microseconds since 1970) is inside.
    public func contains(microseconds now: Int) -> Bool {
        (startMicroseconds.map { now >= $0 } ?? true) && (endMicroseconds.map { now < $0 } ?? true)
    }

    public func contains(_ date: Date) -> Bool {
        contains(microseconds: Timestamp.microseconds(of: date))
    }

    public func overlaps(_ other: ValidityWindow) -> Bool {
        let startsBeforeOtherEnds = (startMicroseconds ?? .min) < (other.endMicroseconds ?? .max)
        let otherStartsBeforeEnd = (other.startMicroseconds ?? .min) < (endMicroseconds ?? .max)
        return startsBeforeOtherEnds && otherStartsBeforeEnd
    }

    public func isWithin(_ other: ValidityWindow) -> Bool {
        (startMicroseconds ?? .min) >= (other.startMicroseconds ?? .min) && (endMicroseconds ?? .max) <= (other.endMicroseconds ?? .max)
    }
}

/// Which links a route answers: all declared ones, or only the listed hosts and schemes.
public struct LinkScope: Hashable, Sendable {
    /// nil when the route is not restricted at all.
    public var hosts: Set<String>?
    public var schemes: Set<String>?

    public static let all = LinkScope(hosts: nil, schemes: nil)

    public init(hosts: Set<String>?, schemes: Set<String>?) {
        if hosts == nil && schemes == nil {
            self.hosts = nil
            self.schemes = nil
        } else {
            self.hosts = hosts ?? []
            self.schemes = schemes ?? []
        }
    }

    public func admits(_ origin: LinkOrigin) -> Bool {
        guard let hosts, let schemes else { return true }
        switch origin {
        case .web(let host): return hosts.contains(host)
        case .custom(let scheme): return schemes.contains(scheme)
        }
    }

    public func overlaps(_ other: LinkScope) -> Bool {
        guard let hosts, let schemes, let otherHosts = other.hosts, let otherSchemes = other.schemes else { return true }
        return !hosts.isDisjoint(with: otherHosts) || !schemes.isDisjoint(with: otherSchemes)
    }

    public func isWithin(_ other: LinkScope) -> Bool {
        guard let otherHosts = other.hosts, let otherSchemes = other.schemes else { return true }
        guard let hosts, let schemes else { return false }
        return hosts.isSubset(of: otherHosts) && schemes.isSubset(of: otherSchemes)
    }
}

/// One route of a routes document, as written, with its position for report paths.
public struct RouteSpec: Hashable, Sendable {
    /// Position in the document's `routes` list.
    public var index: Int
    public var id: String

    /// A route id: 1 to 128 ASCII letters, digits and `- _ .`, starting with a letter or
    /// digit. Ids name routes in telemetry, metrics labels, audit lines and reports, so no
    /// control, bidi override or unbounded string gets there through one.
    /// The most bytes (UTF-8) a route's `owner` may hold: a team or a person, not a file.
    public static let maximumOwnerBytes = 256
    /// The most bytes (UTF-8) a route's `notes` may hold: a campaign's few lines. Every
    /// revision keeps its routes, so a note is paid for in every revision it stays in.
    public static let maximumNotesBytes = 4_096

    public static func isValidID(_ id: String) -> Bool {
        let bytes = id.utf8
        guard (1...128).contains(bytes.count), let first = bytes.first, isASCIIAlphanumeric(first) else { return false }
        return bytes.allSatisfy { isASCIIAlphanumeric($0) || $0 == UInt8(ascii: "-") || $0 == UInt8(ascii: "_") || $0 == UInt8(ascii: ".") }
    }
    public var patterns: [String]
    public var destination: String
    public var params: [String: ParamSource]
    public var hosts: [String]?
    public var schemes: [String]?
    public var window: ValidityWindow
    public var fallbackURL: String?
    public var owner: String?
    public var notes: String?
    /// What the link's card shows when it is shared (`docs/formats.md`); never in a manifest.
    public var preview: LinkPreview? = nil
    /// The campaign items a landing passes on for links that carry none of their own
    /// (`source` … `content`, as `utm_source` … `utm_content`); never in a manifest.
    public var utm: [String: String]? = nil

    /// The members `utm` may hold, in the order a landing writes them.
    public static let utmNames = ["source", "medium", "campaign", "term", "content"]
    /// The most bytes a UTM value may hold (what a landing passes on).
    public static let maximumUTMBytes = 100

    /// Whether `text` may be a UTM value: 1 to `maximumUTMBytes` bytes of `A–Z a–z 0–9 - . _ ~`.
    public static func isUTMValue(_ text: some StringProtocol) -> Bool {
        (1...maximumUTMBytes).contains(text.utf8.count) && text.utf8.allSatisfy { byte in
            isASCIIAlphanumeric(byte) || byte == UInt8(ascii: "-") || byte == UInt8(ascii: ".") || byte == UInt8(ascii: "_") || byte == UInt8(ascii: "~")
        }
    }

    public var path: JSONPath { JSONPath.root + "routes" + index }
    public var scope: LinkScope {
        LinkScope(hosts: hosts.map { Set($0.map { $0.lowercased() }) }, schemes: schemes.map { Set($0.map { $0.lowercased() }) })
    }
}

/// A route's `preview`: the title, description and image of the card a chat app or social
/// network shows for its links (`og:title`, `og:description`, `og:image`). Checked when the
/// route is decoded (`isShowableText`, the image by the fallback's rules), so a landing
/// page writes only values that passed, and escapes them even so.
public struct LinkPreview: Hashable, Sendable {
    public var title: String?
    public var description: String?
    public var image: String?

    public init(title: String? = nil, description: String? = nil, image: String? = nil) {
        (self.title, self.description, self.image) = (title, description, image)
    }

    /// Unicode scalars a title may hold: what a card shows on one or two lines.
    public static let maximumTitleScalars = 120
    /// Unicode scalars a description may hold.
    public static let maximumDescriptionScalars = 300
    /// Bytes the image's address may hold.
    public static let maximumImageBytes = 2_048

    /// Whether `scalar` is one no card or report line may show: an ASCII control (C0, DEL),
    /// or one of those a link may not decode to (C1, the line and paragraph separators, the
    /// bidirectional formatting characters).
    public static func isControl(_ scalar: Unicode.Scalar) -> Bool {
        scalar.value < 0x20 || scalar.value == 0x7F || isInvisibleControl(scalar)
    }

    /// Whether `text` may stand on a card: at least one scalar that is not white space, and
    /// no control character (C0, DEL, C1; the line and paragraph separators: a line break is
    /// not part of a title) and no bidirectional formatting character (U+061C, U+200E,
    /// U+200F, U+202A–U+202E, U+2066–U+2069), which could make a card read otherwise than its
    /// text — the scalars a link may not decode to either (`isInvisibleControl`). Its length
    /// is checked by the caller.
    public static func isShowableText(_ text: String) -> Bool {
        var seen = false
        for scalar in text.unicodeScalars {
            if scalar.value < 0x20 || scalar.value == 0x7F || isInvisibleControl(scalar) { return false }
            if !scalar.properties.isWhitespace { seen = true }
        }
        return seen
    }
}

/// A `waymark.routes/1` document: the route table marketing edits.
public struct RoutesDocument: Hashable, Sendable {
    public static let format = "waymark.routes/1"

    public var app: String
    /// The routes that are well-formed enough to analyse; the rest are reported by `decode`.
    public var routes: [RouteSpec]
    /// The number of entries in the document's `routes` list, well-formed or not.
    public var declaredRouteCount: Int
}
