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

    /// A document's patterns parsed once, for every suggestion made against it: by path
    /// length (those not ending in `*rest`, the ones a shape's candidates come from), by
    /// route id, and the shapes they take.
    public struct Index: Sendable {
        struct Entry: Sendable {
            let route: Int
            let text: String
            let pattern: URLPattern
        }

        let routes: [(id: String, destination: String)]
        let byLength: [Int: [Entry]]
        let patternsByID: [String: [URLPattern]]
        let taken: Set<[String]>

        public init(_ document: RoutesDocument) {
            var routes: [(id: String, destination: String)] = [], byLength: [Int: [Entry]] = [:]
            var patternsByID: [String: [URLPattern]] = [:], taken = Set<[String]>()
            for (order, route) in document.routes.enumerated() {
                routes.append((route.id, route.destination))
                for text in route.patterns {
                    guard let pattern = try? URLPattern(text) else { continue }
                    taken.insert(pattern.shape)
                    patternsByID[route.id, default: []].append(pattern)
                    if !pattern.endsWithRest { byLength[pattern.segments.count, default: []].append(Entry(route: order, text: text, pattern: pattern)) }
                }
            }
            (self.routes, self.byLength, self.patternsByID, self.taken) = (routes, byLength, patternsByID, taken)
        }
    }

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
        candidates(for: shape, in: Index(document))
    }

    /// `candidates(for:in:)` on a document's index, at most `limit` of them: scored first,
    /// and only the best made into patterns and checked against what is taken.
    /// - Complexity: O(patterns of the shape's length × segments).
    public static func candidates(for shape: String, in index: Index, limit: Int = .max) -> [RouteSuggestion] {
        let parts = shape.split(separator: "/", omittingEmptySubsequences: true).map(String.init)
        guard !parts.contains("*") else { return [] }
        var found: [(entry: Index.Entry, score: Int, differing: Int)] = []
        for entry in index.byLength[parts.count] ?? [] {
            var (score, differing, compatible, words) = (0, 0, true, 0)
            for (part, segment) in zip(parts, entry.pattern.segments) {
                switch (part == ":param", segment) {
                case (true, .parameter): score += 1
                case (true, _): compatible = false
                case (false, .literal(let literal)):
                    if literal == part { score += 2; words += 1 } else {
                        differing += 1
                        if zip(literal, part).prefix(while: ==).count >= 3 { score += 1; words += 1 }
                    }
                case (false, .parameter), (false, .rest): break
                }
                if !compatible { break }
            }
            guard compatible, differing > 0, words > 0 else { continue }
            found.append((entry, score, differing))
        }
        found.sort { ($1.score, $0.differing, $0.entry.route) < ($0.score, $1.differing, $1.entry.route) }
        var chosen: [RouteSuggestion] = []
        for (entry, _, _) in found where chosen.count < limit {
            let made = zip(parts, entry.pattern.segments).map { part, segment -> String in
                switch segment {
                case .parameter(let name), .rest(let name): ":" + name
                case .literal: part
                }
            }
            guard let pattern = try? URLPattern("/" + made.joined(separator: "/")), !index.taken.contains(pattern.shape) else { continue }
            let route = index.routes[entry.route]
            chosen.append(RouteSuggestion(route: route.id, destination: route.destination, pattern: pattern.description, from: entry.text))
        }
        return chosen
    }


    /// The best candidate that validates: `routes` (a routes document's JSON) with the
    /// pattern added to its route, checked against `schemas`, has no error. Each candidate
    /// is checked on its own route and the routes with a pattern that shares a link with it
    /// (`URLPattern.overlaps`), which is where a conflict or shadowing can arise (the other
    /// routes come from a revision that validated); at most `attempts` are tried.
    public static func suggest(for shape: String, routes: JSONValue, document: RoutesDocument, against schemas: [Schema], now: Date,
                               attempts: Int = 3) -> RouteSuggestion? {
        suggest(for: shape, routes: routes, index: Index(document), against: schemas, now: now, attempts: attempts)
    }

    /// `suggest`, on the document's index (made once for many shapes).
    public static func suggest(for shape: String, routes: JSONValue, index: Index, against schemas: [Schema], now: Date,
                               attempts: Int = 3) -> RouteSuggestion? {
        guard !schemas.isEmpty, case .object(var top)? = Optional(routes), case .array(let list)? = top["routes"] else { return nil }
        for candidate in candidates(for: shape, in: index, limit: attempts) {
            guard let added = try? URLPattern(candidate.pattern) else { continue }
            var kept: [JSONValue] = []
            for route in list {
                let id = route["id"]?.stringValue
                let patterns = route["patterns"]?.arrayValue?.compactMap(\.stringValue) ?? []
                if id == candidate.route {
                    guard case .object(var changed) = route else { continue }
                    changed["patterns"] = .array((patterns + [candidate.pattern]).map(JSONValue.string))
                    kept.append(.object(changed))
                } else if (id.flatMap { index.patternsByID[$0] } ?? patterns.compactMap { try? URLPattern($0) }).contains(where: {
                    URLPattern.overlaps($0.segments, added.segments)
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
