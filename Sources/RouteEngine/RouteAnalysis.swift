import CivilDate
import Foundation

/// The schema-independent half of building a route table: patterns parsed, ids, windows
/// and fallbacks checked, and every pair of routes that compete for the same links
/// examined. Routes with a structural error are excluded from any table built from it.
public struct RouteAnalysis: Sendable {
    public let document: RoutesDocument
    /// Per route (in `document.routes` order), its patterns; nil where a pattern is invalid.
    let patterns: [[URLPattern?]]
    public private(set) var problems: [ValidationProblem] = []
    /// Positions in `document.routes` of routes that must not be served.
    public private(set) var excluded: Set<Int> = []

    /// - Complexity: O(total pattern segments), plus O(k²) for k routes competing for the same pattern shape.
    public init(document: RoutesDocument, now: Date) {
        self.document = document
        var patterns: [[URLPattern?]] = []
        var problems: [ValidationProblem] = []
        var excluded: Set<Int> = []
        var firstWithID: [String: Int] = [:]
        for (position, route) in document.routes.enumerated() {
            if let first = firstWithID[route.id] {
                problems.append(ValidationProblem(.duplicateRouteId, at: route.path + "id",
                    "The id \"\(route.id)\" is already used by routes[\(document.routes[first].index)]; every route needs its own id."))
                excluded.insert(position)
            } else {
                firstWithID[route.id] = position
            }
            var parsed: [URLPattern?] = []
            var shapes: [String: Int] = [:]
            for (index, text) in route.patterns.enumerated() {
                do {
                    let pattern = try URLPattern(text)
                    let shape = pattern.segments.map(\.shape).joined(separator: "/")
                    if let earlier = shapes[shape] {
                        problems.append(ValidationProblem(.duplicatePattern, at: route.path + "patterns" + index,
                            "\(text) matches the same links as \(route.patterns[earlier]) in the same route; it can be removed."))
                        parsed.append(nil)
                        continue
                    }
                    shapes[shape] = index
                    parsed.append(pattern)
                } catch {
                    problems.append(ValidationProblem(.invalidPattern, at: route.path + "patterns" + index,
                        "The pattern \(text) is not valid: \(error.message)"))
                    parsed.append(nil)
                    excluded.insert(position)
                }
            }
            patterns.append(parsed)
            if let start = route.window.start, let end = route.window.end, start >= end {
                problems.append(ValidationProblem(.invalidWindow, at: route.path + "validUntil",
                    "The route ends (\(Timestamp.format(end))) before it starts (\(Timestamp.format(start)))."))
                excluded.insert(position)
            } else if let end = route.window.end, end <= now {
                problems.append(ValidationProblem(.expired, at: route.path + "validUntil",
                    "The route ended on \(Timestamp.format(end)); its links now resolve as expired."))
            }
            if let fallback = route.fallbackURL, let problem = Self.checkFallback(fallback, at: route.path + "fallbackURL") {
                problems.append(problem)
            }
        }
        self.patterns = patterns
        self.problems = problems
        self.excluded = excluded
        findCompetingRoutes()
    }

    /// Routes whose patterns have the same shape compete for the same paths. The earlier
    /// route wins where their links and windows overlap, so a later route whose links and
    /// window lie within an earlier one's can never win (`shadowed`), and two with exactly
    /// the same links and window are a `conflict`. Partial overlaps are allowed: that is
    /// how a host- or time-limited campaign overrides a general route placed after it.
    private mutating func findCompetingRoutes() {
        var trie = RouteTrie()
        var entries: [(route: Int, pattern: Int)] = []
        for (position, routePatterns) in patterns.enumerated() where !excluded.contains(position) {
            for (index, pattern) in routePatterns.enumerated() {
                guard let pattern else { continue }
                trie.insert(pattern, payload: entries.count)
                entries.append((position, index))
            }
        }
        for terminal in trie.terminals where terminal.count > 1 {
            for (laterIndex, later) in terminal.enumerated() {
                let b = entries[later]
                guard !excluded.contains(b.route) else { continue }
                for earlier in terminal[..<laterIndex] {
                    let a = entries[earlier]
                    guard a.route != b.route, !excluded.contains(a.route) else { continue }
                    let first = document.routes[a.route]
                    let second = document.routes[b.route]
                    guard first.scope.overlaps(second.scope), first.window.overlaps(second.window) else { continue }
                    let firstPattern = first.patterns[a.pattern]
                    let secondPattern = second.patterns[b.pattern]
                    let path = second.path + "patterns" + b.pattern
                    if first.scope == second.scope && first.window == second.window {
                        problems.append(ValidationProblem(.conflict, at: path,
                            "Routes \"\(first.id)\" (\(firstPattern)) and \"\(second.id)\" (\(secondPattern)) match exactly the same links; remove one or give them different hosts or dates."))
                        excluded.insert(b.route)
                    } else if second.scope.isWithin(first.scope) && second.window.isWithin(first.window) {
                        problems.append(ValidationProblem(.shadowed, at: path,
                            "Route \"\(second.id)\" (\(secondPattern)) can never be used: route \"\(first.id)\" (\(firstPattern)), listed earlier, already takes every link it matches. Move it above \"\(first.id)\" or change its pattern."))
                        excluded.insert(b.route)
                    }
                    if excluded.contains(b.route) { break }
                }
            }
        }
    }

    /// A fallback opens in a browser when the app is missing: it must be an https URL.
    static func checkFallback(_ text: String, at path: JSONPath) -> ValidationProblem? {
        let lowered = text.lowercased()
        let isHTTPS = lowered.hasPrefix("https://")
        let rest = isHTTPS ? lowered.dropFirst(8) : ""
        let host = rest.prefix { $0 != "/" && $0 != "?" && $0 != "#" }
        if !isHTTPS || host.isEmpty || host.contains("@") || !text.utf8.allSatisfy(LinkParser.isURLByte) {
            return ValidationProblem(.insecureFallback, at: path,
                "The fallback \(text) must be an https:// address with a host (no user name), so people without the app land safely.")
        }
        return nil
    }
}
