/// One segment of a route's path pattern.
public enum PatternSegment: Hashable, Sendable {
    /// Matches this text, compared case-insensitively (ASCII); stored lowercased.
    case literal(String)
    /// `:name` matches exactly one segment.
    case parameter(String)
    /// `*name`, last only, matches one or more remaining segments (joined with `/`).
    case rest(String)
}

/// A route's path pattern: `/product/:id`, `/help/*topic`, `/`.
public struct URLPattern: Hashable, Sendable, CustomStringConvertible {
    public let description: String
    public let segments: [PatternSegment]

    /// The capture names in order, `*rest` last.
    public var captureNames: [String] {
        segments.compactMap {
            switch $0 {
            case .literal: nil
            case .parameter(let name), .rest(let name): name
            }
        }
    }

    public var endsWithRest: Bool {
        if case .rest = segments.last { return true }
        return false
    }

    /// Patterns longer than this many segments are refused.
    public static let maximumSegments = 32

    public init(_ text: String) throws(URLPatternError) {
        guard text.first == "/" else { throw .mustStartWithSlash }
        if text.contains("?") || text.contains("#") { throw .containsQueryOrFragment }
        var raw = text.dropFirst().split(separator: "/", omittingEmptySubsequences: false)
        if raw.last?.isEmpty == true { raw.removeLast() }  // a trailing slash does not matter
        guard raw.count <= Self.maximumSegments else { throw .tooManySegments(limit: Self.maximumSegments) }
        var segments: [PatternSegment] = []
        var names: Set<String> = []
        for (index, part) in raw.enumerated() {
            let part = String(part)
            guard !part.isEmpty else { throw .emptySegment }
            switch part.first {
            case ":", "*":
                let name = String(part.dropFirst())
                guard isIdentifier(name) else { throw .invalidCaptureName(part) }
                guard names.insert(name).inserted else { throw .duplicateCapture(name) }
                if part.first == "*" {
                    guard index == raw.count - 1 else { throw .restNotLast(part) }
                    segments.append(.rest(name))
                } else {
                    segments.append(.parameter(name))
                }
            default:
                guard part != ".", part != ".." else { throw .dotSegment }
                guard part.utf8.allSatisfy(Self.isLiteralByte) else { throw .invalidLiteral(part) }
                segments.append(.literal(part.lowercased()))
            }
        }
        self.description = text
        self.segments = segments
    }

    /// RFC 3986 `pchar` without `%` and `:` (no encoded literals; a colon starts a capture).
    static func isLiteralByte(_ byte: UInt8) -> Bool {
        isASCIIAlphanumeric(byte) || "-._~!$&'()+,;=@".utf8.contains(byte)
    }
}

/// Why a path pattern is not valid; `message` says it in plain words.
public enum URLPatternError: Error, Hashable, Sendable {
    case mustStartWithSlash
    case containsQueryOrFragment
    case emptySegment
    case dotSegment
    case invalidLiteral(String)
    case invalidCaptureName(String)
    case duplicateCapture(String)
    case restNotLast(String)
    case tooManySegments(limit: Int)

    public var message: String {
        switch self {
        case .mustStartWithSlash: "A pattern must start with /."
        case .containsQueryOrFragment: "A pattern is a path only; map query items with params instead of writing ? or #."
        case .emptySegment: "A pattern must not contain an empty segment (//)."
        case .dotSegment: "A pattern must not contain . or .. segments."
        case .invalidLiteral(let part): "\"\(part)\" contains a character that is not allowed in a path segment."
        case .invalidCaptureName(let part): "\"\(part)\" must name its capture with letters, digits and _ (like :id)."
        case .duplicateCapture(let name): "The capture \"\(name)\" appears twice in the pattern."
        case .restNotLast(let part): "\"\(part)\" captures the rest of the path, so it must be the last segment."
        case .tooManySegments(let limit): "A pattern may have at most \(limit) segments."
        }
    }
}
