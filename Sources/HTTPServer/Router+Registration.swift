/// Why a route was refused at registration. A router that takes every route it is given
/// can hold one that no request reaches; these are programming errors, found when the
/// server is assembled rather than by a client getting the wrong handler.
public enum RouterError: Error, Hashable, Sendable, CustomStringConvertible {
    /// The method is not an RFC 9110 token.
    case invalidMethod(String)
    /// The path is not `/` followed by segments; `reason` says which rule it breaks.
    case invalidPath(String, reason: String)
    /// A literal segment holds a byte no request path carries as it is (paths are compared
    /// undecoded), so the route can never be reached.
    case unreachable(String, segment: String)
    /// `method` already has a route taking exactly the same paths (`existing`, parameter
    /// names aside).
    case duplicate(method: String, path: String, existing: String)

    public var description: String {
        switch self {
        case .invalidMethod(let method): "\"\(method)\" is not an HTTP method token"
        case .invalidPath(let path, let reason): "route \(path): \(reason)"
        case .unreachable(let path, let segment):
            "route \(path) is unreachable: the literal segment \"\(segment)\" holds a byte a request path cannot carry unescaped"
        case .duplicate(let method, let path, let existing): "\(method) \(path) takes exactly the paths of \(method) \(existing)"
        }
    }
}

extension Router {
    /// The segments of a route's path, checked: `/`, then segments separated by single
    /// slashes (a trailing one ignored), each a literal of RFC 3986 `pchar`s without `%`,
    /// or `:name` with a name of letters, digits and `_` used once in the path.
    static func parse(method: String, path: String) throws(RouterError) -> [Segment] {
        guard !method.isEmpty, method.utf8.allSatisfy(isTokenByte) else { throw .invalidMethod(method) }
        guard path.first == "/" else { throw .invalidPath(path, reason: "a route's path starts with /") }
        var parts = path.dropFirst().split(separator: "/", omittingEmptySubsequences: false)
        if parts.last?.isEmpty == true { parts.removeLast() }
        var segments: [Segment] = []
        var names: Set<Substring> = []
        for part in parts {
            guard !part.isEmpty else { throw .invalidPath(path, reason: "an empty segment (//) is never matched") }
            if part.first == ":" {
                let name = part.dropFirst()
                guard !name.isEmpty, name.utf8.allSatisfy({ isNameByte($0) }) else {
                    throw .invalidPath(path, reason: "a parameter is : and a name of letters, digits and _, not \"\(part)\"")
                }
                guard names.insert(name).inserted else { throw .invalidPath(path, reason: "the parameter :\(name) is named twice") }
                segments.append(.parameter(String(name)))
            } else {
                guard part.utf8.allSatisfy(isLiteralByte) else { throw .unreachable(path, segment: String(part)) }
                segments.append(.literal(String(part)))
            }
        }
        return segments
    }

    /// Whether two routes take exactly the same paths: the same literals in the same places,
    /// parameters in the others.
    static func sameShape(_ a: [Segment], _ b: [Segment]) -> Bool {
        a.count == b.count && zip(a, b).allSatisfy { x, y in
            switch (x, y) {
            case (.literal(let p), .literal(let q)): p == q
            case (.parameter, .parameter): true
            default: false
            }
        }
    }

    /// Whether route `a` is tried before route `b`. Only routes of as many segments can take
    /// the same path; among them a literal precedes a parameter at the first segment where
    /// they differ, so the first route that binds a path is the most specific one. The
    /// shorter of two routes is read as if padded with literals, which keeps routes without
    /// parameters first and in the order added (a request to one is not slowed by the
    /// others), and otherwise the order added decides.
    static func precedes(_ a: [Segment], _ b: [Segment], _ indexA: Int, _ indexB: Int) -> Bool {
        for position in 0..<max(a.count, b.count) {
            let x = position < a.count && isParameter(a[position])
            let y = position < b.count && isParameter(b[position])
            if x != y { return y }
        }
        return indexA < indexB
    }

    private static func isParameter(_ segment: Segment) -> Bool {
        if case .parameter = segment { return true }
        return false
    }

    /// `/v1/revisions/:number` again, from segments.
    static func pattern(_ segments: [Segment]) -> String {
        "/" + segments.map { segment in
            switch segment {
            case .literal(let text): text
            case .parameter(let name): ":" + name
            }
        }.joined(separator: "/")
    }

    /// RFC 9110 §5.6.2 tchar.
    private static func isTokenByte(_ byte: UInt8) -> Bool {
        isNameByte(byte) || "!#$%&'*+-.^`|~".utf8.contains(byte)
    }

    private static func isNameByte(_ byte: UInt8) -> Bool {
        (0x30...0x39).contains(byte) || (0x41...0x5A).contains(byte) || (0x61...0x7A).contains(byte) || byte == 0x5F
    }

    /// RFC 3986 §3.3 pchar, less `%`: unreserved, sub-delims, `:` and `@`.
    private static func isLiteralByte(_ byte: UInt8) -> Bool {
        isNameByte(byte) || "-.~!$&'()*+,;=:@".utf8.contains(byte)
    }
}
