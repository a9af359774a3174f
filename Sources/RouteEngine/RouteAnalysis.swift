import CivilDate
import Foundation

/// The schema-independent half of building a route table: patterns parsed, ids, windows
/// and fallbacks checked, and every pair of routes that compete for the same links
/// examined. Routes with a structural error are excluded from any table built from it.
public struct RouteAnalysis: Sendable {
    public let document: RoutesDocument
    /// Per route (in `document.routes` order), its patterns; nil where a pattern is invalid.
    let patterns: [[URLPattern?]]
    /// What it found, bounded as every report is (`ValidationReport.listLimit`).
    public private(set) var report = ValidationReport()
    /// The problems it lists, errors first.
    public var problems: [ValidationProblem] { report.problems }
    /// Positions in `document.routes` of routes that must not be served.
    public private(set) var excluded: Set<Int> = []

    /// - Parameter workLimit: how many scope comparisons the conflict analysis may make
    ///   (`defaultWorkLimit`); past it the document gets a `tooComplex` error.
    /// - Complexity: O(total pattern segments), plus O(k log k × s) for k routes of one
    ///   pattern shape using s different scopes.
    public init(document: RoutesDocument, now: Date, workLimit: Int = RouteAnalysis.defaultWorkLimit) {
        self.document = document
        var patterns: [[URLPattern?]] = []
        var problems = ValidationReport()
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
            // Whole microseconds compared as integers: as Dates (binary seconds since 2001) two
            // bounds 1 µs apart in the year 1000 or 9999 can be the same double.
            if let start = route.window.startMicroseconds, let end = route.window.endMicroseconds, start >= end {
                problems.append(ValidationProblem(.invalidWindow, at: route.path + "validUntil",
                    "The route ends (\(Timestamp.formatMicroseconds(end))) before it starts (\(Timestamp.formatMicroseconds(start)))."))
                excluded.insert(position)
            } else if let end = route.window.endMicroseconds, end <= Timestamp.microseconds(of: now) {
                problems.append(ValidationProblem(.expired, at: route.path + "validUntil",
                    "The route ended on \(Timestamp.formatMicroseconds(end)); its links now resolve as expired."))
            }
            if let fallback = route.fallbackURL, let problem = Self.checkFallback(fallback, at: route.path + "fallbackURL") {
                problems.append(problem)
            }
        }
        self.patterns = patterns
        self.report = problems
        self.excluded = excluded
        findCompetingRoutes(workLimit: workLimit)
    }

    /// Routes whose patterns have the same shape compete for the same paths. The earlier
    /// route wins where their links and windows overlap, so a later route whose links and
    /// window lie within an earlier one's can never win (`shadowed`), and two with exactly
    /// the same links and window are a `conflict`. Partial overlaps are allowed: that is
    /// how a host- or time-limited campaign overrides a general route placed after it.
    ///
    /// Each shape is swept once in document order: a route is checked against the routes
    /// kept before it (`Competitors`, O(log k) per scope they use), then kept unless it is
    /// excluded. When the scope checks of a document pass `workLimit`, the sweep
    /// stops and says so: a document that cannot be checked is not served.
    /// - Complexity: O(k log k) per shape of k routes using s different scopes (hosts and
    ///   schemes), times s.
    private mutating func findCompetingRoutes(workLimit: Int) {
        var trie = RouteTrie()
        var entries: [(route: Int, pattern: Int)] = []
        for (position, routePatterns) in patterns.enumerated() where !excluded.contains(position) {
            for (index, pattern) in routePatterns.enumerated() {
                guard let pattern else { continue }
                trie.insert(pattern, payload: entries.count)
                entries.append((position, index))
            }
        }
        var work = 0
        for terminal in trie.terminals where terminal.count > 1 {
            var competitors = Competitors(terminal.map { document.routes[entries[$0].route] })
            for (slot, entry) in terminal.enumerated() {
                let b = entries[entry]
                guard !excluded.contains(b.route) else { continue }
                let second = document.routes[b.route]
                guard let found = competitors.holder(of: slot, work: &work) else {
                    competitors.keep(slot)
                    continue
                }
                let a = entries[terminal[found.slot]]
                let first = document.routes[a.route]
                let firstPattern = first.patterns[a.pattern]
                let secondPattern = second.patterns[b.pattern]
                let path = second.path + "patterns" + b.pattern
                if found.isExact {
                    report.append(ValidationProblem(.conflict, at: path,
                        "Routes \"\(first.id)\" (\(firstPattern)) and \"\(second.id)\" (\(secondPattern)) match exactly the same links; remove one or give them different hosts or dates."))
                } else {
                    report.append(ValidationProblem(.shadowed, at: path,
                        "Route \"\(second.id)\" (\(secondPattern)) can never be used: route \"\(first.id)\" (\(firstPattern)), listed earlier, already takes every link it matches. Move it above \"\(first.id)\" or change its pattern."))
                }
                excluded.insert(b.route)
            }
            if work > workLimit {
                // The check stops: the first route of the shape is named and left out, and the
                // document is refused (docs/validation.md). Routes left unchecked resolve as
                // they would anyway: of two routes of one shape, the earlier wins.
                let first = entries[terminal[0]]
                let route = document.routes[first.route]
                report.append(ValidationProblem(.tooComplex, at: route.path + "patterns" + first.pattern,
                    "The \(terminal.count) routes on the pattern shape of \(route.patterns[first.pattern]) use too many different host and scheme lists to be checked for conflicts (more than \(workLimit) comparisons); give fewer of them their own hosts or schemes."))
                excluded.insert(first.route)
                return
            }
        }
    }

    /// How many scope comparisons one document's conflict analysis may make: each route the
    /// sweep checks costs one for each different scope (hosts and schemes list) among the
    /// routes of its pattern shape checked before it, so a calendar of 100,000 routes on one
    /// shape with a handful of host lists needs well under a million; this is reached only by
    /// thousands of routes on one shape each with its own list (2,829 of them: 4,000,206).
    public static let defaultWorkLimit = 4_000_000

    /// A fallback opens in a browser when the app is missing: it must be an https URL.
    static func checkFallback(_ text: String, at path: JSONPath) -> ValidationProblem? {
        checkAddress(text, at: path, what: "The fallback \(text)")
    }

    /// Whether `text` is an https address with a host, no user name and only URL bytes: the
    /// rule for every address a person's browser or a crawler is sent to. `what` names it.
    static func checkAddress(_ text: String, at path: JSONPath, what: String) -> ValidationProblem? {
        let lowered = text.lowercased()
        let isHTTPS = lowered.hasPrefix("https://")
        let rest = isHTTPS ? lowered.dropFirst(8) : ""
        let host = rest.prefix { $0 != "/" && $0 != "?" && $0 != "#" }
        if !isHTTPS || host.isEmpty || host.contains("@") || !text.utf8.allSatisfy(LinkParser.isURLByte) {
            return ValidationProblem(.insecureFallback, at: path,
                "\(what) must be an https:// address with a host (no user name), so people without the app land safely.")
        }
        return nil
    }
}

/// The routes of one pattern shape kept so far by the sweep of `findCompetingRoutes`,
/// indexed so that the question "does a kept route take every link of this one?" costs
/// O(log k) per scope (hosts and schemes) in use rather than one comparison per route.
///
/// A kept route `a` takes all of `b` when `b`'s scope lies within `a`'s and `b`'s window
/// within `a`'s: `a.start <= b.start` and `a.end >= b.end`. Per scope, the kept routes sit
/// in a Fenwick tree over their distinct start times holding the latest end (and its
/// route); the prefix up to `b.start` answers with the longest-living route that started
/// no later than `b`.
struct Competitors {
    /// Bounds in whole microseconds (`Int.min` / `Int.max` for none), compared as integers.
    private struct Window: Hashable {
        var group: Int
        var start: Int
        var end: Int
    }

    private struct Group {
        let scope: LinkScope
        /// Distinct start times of the group's routes, ascending.
        var starts: [Int] = []
        /// Fenwick tree (1-based in spirit) of (latest end, its slot) over `starts`.
        var tree: [(end: Int, slot: Int)] = []
    }

    private var groups: [Group] = []
    private let windows: [Window]
    private var exact: [Window: Int] = [:]
    private let scopes: [LinkScope]
    /// The groups of the routes checked so far, in the order first seen: a route is compared
    /// with these alone (a group no route was checked in holds no kept route).
    private var checked: [Int] = []
    private var isChecked: [Bool]

    /// - Parameter routes: the routes of one shape, by slot, in document order.
    init(_ routes: [RouteSpec]) {
        var groupOfScope: [LinkScope: Int] = [:]
        var groups: [Group] = []
        var windows: [Window] = []
        for route in routes {
            let group: Int
            if let known = groupOfScope[route.scope] {
                group = known
            } else {
                group = groups.count
                groupOfScope[route.scope] = group
                groups.append(Group(scope: route.scope))
            }
            let window = Window(group: group, start: route.window.startMicroseconds ?? .min, end: route.window.endMicroseconds ?? .max)
            windows.append(window)
            groups[group].starts.append(window.start)
        }
        for index in groups.indices {
            groups[index].starts = Array(Set(groups[index].starts)).sorted()
            groups[index].tree = Array(repeating: (.min, Int.max), count: groups[index].starts.count)
        }
        isChecked = Array(repeating: false, count: groups.count)
        self.groups = groups
        self.windows = windows
        scopes = routes.map(\.scope)
    }

    /// The kept route that takes every link of the route at `slot`, the one with exactly
    /// its scope and window first; nil when none does. Each call is a route checked: `work`
    /// grows by the number of different scopes among the routes checked before it
    /// (`docs/validation.md`), whatever the answer.
    mutating func holder(of slot: Int, work: inout Int) -> (slot: Int, isExact: Bool)? {
        let window = windows[slot]
        work += checked.count
        defer {
            if !isChecked[window.group] {
                isChecked[window.group] = true
                checked.append(window.group)
            }
        }
        if let twin = exact[window] { return (twin, true) }
        let scope = scopes[slot]
        if scope.hosts?.isEmpty == true, scope.schemes?.isEmpty == true { return nil }  // matches no link
        var best: (end: Int, slot: Int)?
        for index in checked {
            let group = groups[index]
            guard scope.isWithin(group.scope) else { continue }
            let found = Self.latestEnd(in: group, startingBy: window.start)
            if found.end >= window.end, found.slot < (best?.slot ?? .max) { best = found }
        }
        return best.map { ($0.slot, false) }
    }

    /// Keeps the route at `slot` for the routes after it.
    mutating func keep(_ slot: Int) {
        let window = windows[slot]
        exact[window] = exact[window] ?? slot
        var group = groups[window.group]
        var index = Self.count(group.starts, notAfter: window.start)  // position + 1
        while index <= group.tree.count {
            let held = group.tree[index - 1]
            if window.end > held.end || (window.end == held.end && slot < held.slot) { group.tree[index - 1] = (window.end, slot) }
            index += index & -index
        }
        groups[window.group] = group
    }

    private static func latestEnd(in group: Group, startingBy start: Int) -> (end: Int, slot: Int) {
        var best: (end: Int, slot: Int) = (.min, .max)
        var index = count(group.starts, notAfter: start)
        while index > 0 {
            let held = group.tree[index - 1]
            if held.end > best.end || (held.end == best.end && held.slot < best.slot) { best = held }
            index -= index & -index
        }
        return best
    }

    /// How many of the ascending `starts` are at most `start`.
    private static func count(_ starts: [Int], notAfter start: Int) -> Int {
        var low = 0, high = starts.count
        while low < high {
            let middle = (low + high) / 2
            if starts[middle] <= start { low = middle + 1 } else { high = middle }
        }
        return low
    }
}
