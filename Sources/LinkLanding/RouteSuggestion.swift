import Foundation
import RouteEngine

/// A pattern to add to an existing route so that an unknown link's shape resolves: the
/// closest route (the most segments in common, a capture where the shape has `:param`), and
/// its pattern with the shape's words where they differ. Only a suggestion that validates —
/// the routes document with the pattern added, against every registered schema — is made.
public struct RouteSuggestion: Hashable, Sendable {
    /// The route to add the pattern to, and where it leads.
    public let route: String
    public let destination: String
    /// The pattern to add (`"/products/:id"`), ready to paste into the route's `patterns`.
    public let pattern: String
    /// The route's pattern it was made from.
    public let from: String

    /// The candidates for `shape` (a `LinkShape` path) among `document`'s routes, best first:
    /// for each pattern of as many segments (none ending in `*rest`), where the shape has
    /// `:param` the pattern must capture, and where the shape has a word the pattern's
    /// literal scores 2 when it is that word (1 when the two start with the same three letters
    /// or more: `categories`, `category`) and the pattern's capture is kept; a capture facing
    /// `:param` scores 1. At least one word must differ (else the link would have matched)
    /// and one be the same or near (a shared capture alone is no likeness), and no route may have a pattern of the candidate's shape
    /// already (it would take the link). Ties: fewer differing words, then document order.
    /// - Complexity: O(patterns × segments).
    public static func candidates(for shape: String, in document: RoutesDocument) -> [RouteSuggestion] {
        let parts = shape.split(separator: "/", omittingEmptySubsequences: true).map(String.init)
        guard !parts.contains("*") else { return [] }
        var found: [(suggestion: RouteSuggestion, score: Int, differing: Int, order: Int)] = []
        let taken = Set(document.routes.flatMap(\.patterns).compactMap { try? URLPattern($0) }.map(shapeOf))
        for (order, route) in document.routes.enumerated() {
            for text in route.patterns {
                guard let pattern = try? URLPattern(text), !pattern.endsWithRest, pattern.segments.count == parts.count else { continue }
                var (score, differing, compatible, words) = (0, 0, true, 0)
                var made: [String] = []
                for (part, segment) in zip(parts, pattern.segments) {
                    switch (part == ":param", segment) {
                    case (true, .parameter(let name)): score += 1; made.append(":" + name)
                    case (true, _): compatible = false
                    case (false, .literal(let literal)):
                        if literal == part { score += 2; words += 1 } else {
                            differing += 1
                            if zip(literal, part).prefix(while: ==).count >= 3 { score += 1; words += 1 }
                        }
                        made.append(part)
                    case (false, .parameter(let name)), (false, .rest(let name)): made.append(":" + name)
                    }
                    if !compatible { break }
                }
                guard compatible, differing > 0, words > 0, let made = try? URLPattern("/" + made.joined(separator: "/")),
                      !taken.contains(shapeOf(made)) else { continue }
                found.append((RouteSuggestion(route: route.id, destination: route.destination, pattern: made.description, from: text),
                              score, differing, order))
            }
        }
        return found.sorted { ($1.score, $0.differing, $0.order) < ($0.score, $1.differing, $1.order) }.map(\.suggestion)
    }

    /// Literals as written (lowercased), captures as `:`: the paths a pattern takes.
    static func shapeOf(_ pattern: URLPattern) -> [String] {
        pattern.segments.map { segment in
            switch segment {
            case .literal(let text): text
            case .parameter: ":"
            case .rest: "*"
            }
        }
    }

    /// The best candidate that validates: `routes` (a routes document's JSON) with the
    /// pattern added to its route, checked against `schemas`, has no error. Each candidate
    /// is checked on the routes that could compete with it (those with a pattern of as many
    /// segments, or ending in `*rest`), which is where a conflict or shadowing can arise;
    /// at most `attempts` are tried.
    public static func suggest(for shape: String, routes: JSONValue, document: RoutesDocument, against schemas: [Schema], now: Date,
                               attempts: Int = 3) -> RouteSuggestion? {
        guard !schemas.isEmpty, case .object(var top)? = Optional(routes), case .array(let list)? = top["routes"] else { return nil }
        let length = shape.split(separator: "/", omittingEmptySubsequences: true).count
        for candidate in candidates(for: shape, in: document).prefix(attempts) {
            var kept: [JSONValue] = []
            for route in list {
                let id = route["id"]?.stringValue
                let patterns = route["patterns"]?.arrayValue?.compactMap(\.stringValue) ?? []
                if id == candidate.route {
                    guard case .object(var changed) = route else { continue }
                    changed["patterns"] = .array((patterns + [candidate.pattern]).map(JSONValue.string))
                    kept.append(.object(changed))
                } else if patterns.contains(where: { text in
                    (try? URLPattern(text)).map { $0.endsWithRest || $0.segments.count == length } ?? false
                }) {
                    kept.append(route)
                }
            }
            top["routes"] = .array(kept)
            if !Validator.validate(.object(top), against: schemas, now: now).problems.contains(where: { $0.severity == .error }) { return candidate }
        }
        return nil
    }
}
