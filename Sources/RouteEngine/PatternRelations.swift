/// How patterns relate to each other, apart from any link: the rules the engine's precedence
/// follows (`docs/resolution.md`), in one place for all that reasons about patterns without
/// resolving — the validator, the impact preview (`DraftImpact`) and route suggestions
/// (`RouteSuggestion`). `PatternRelationsTests` holds them in tables; a route's hosts and
/// schemes relate by `LinkScope.overlaps` and `LinkScope.isWithin`.
extension PatternSegment {
    /// The segment's shape, ignoring capture names: two patterns of the same shape match the
    /// same paths.
    public var shape: String {
        switch self {
        case .literal(let text): text
        case .parameter: ":"
        case .rest: "*"
        }
    }

    /// Literal beats `:param` beats `*rest`, segment by segment.
    public var rank: Int {
        switch self {
        case .literal: 2
        case .parameter: 1
        case .rest: 0
        }
    }
}

extension URLPattern {
    /// The paths the pattern takes: literals as written (lowercased), captures as `:`, a
    /// `*rest` as `*`.
    public var shape: [String] { segments.map(\.shape) }

    /// Whether some path matches both `a` and `b`: segment by segment a literal meets the
    /// same literal or a capture, a capture meets anything, and a `*rest` (one or more
    /// segments) meets whatever follows; without one, both are as long.
    public static func overlaps(_ a: [PatternSegment], _ b: [PatternSegment]) -> Bool {
        for index in 0..<min(a.count, b.count) {
            switch (a[index], b[index]) {
            case (.rest, _), (_, .rest): return true
            case (.literal(let x), .literal(let y)) where x != y: return false
            default: continue
            }
        }
        return a.count == b.count
    }

    /// Whether every path `inner` matches, `outer` matches too.
    public static func covers(_ outer: [PatternSegment], _ inner: [PatternSegment]) -> Bool {
        for (index, segment) in outer.enumerated() {
            switch segment {
            case .rest: return inner.count > index
            case .parameter:
                guard index < inner.count else { return false }
                if case .rest = inner[index] { return false }
            case .literal(let text):
                guard index < inner.count, case .literal(let other) = inner[index], other == text else { return false }
            }
        }
        return outer.count == inner.count
    }

    /// Whether `a` wins over `b` on a path both match: the first segment whose rank differs
    /// decides, and between two of the same ranks the longer wins.
    public static func beats(_ a: [PatternSegment], _ b: [PatternSegment]) -> Bool {
        for (x, y) in zip(a, b) where x.rank != y.rank { return x.rank > y.rank }
        return a.count > b.count
    }
}
