import RouteEngine

// One file, though long: the replay's index, its walk and the budget that bounds both are one
// computation (docs/api.md, "POST /v1/revisions/N/impact"), pure and tested as one.

/// What publishing a draft would do to the traffic that exists: last week's opens of each
/// route replayed against the base revision and the draft, and the unknown-link shapes the
/// draft would start answering. Pure: the counts, shapes and builds come in as values.
///
/// What can be known, and what is estimated (`Basis`): telemetry counts a resolution by
/// route, build, hour and outcome, never by link or pattern. So a change that takes all of
/// a route's links (the route removed, every pattern of it gone or taken by another route,
/// a build that no longer gets it, a window that now ends earlier) is counted exactly, to
/// the hour; a change that takes some of a route's patterns but not all of them (an alias
/// removed, one pattern taken by another route, a new route that shadows part of one) can
/// take anywhere from none to all of the route's opens, and is given as `upTo` that bound.
///
/// Windows are replayed one week ahead: each hour of last week is looked at as the same
/// hour of the coming week (`offset`), as if the week after publishing repeats the last one,
/// and an open changes when the base's window holds that time and the draft's does not.
public struct DraftImpact: Sendable, Equatable {
    /// An app build as telemetry names it.
    public struct Build: Hashable, Sendable, Comparable {
        public var platform: String
        public var version: String

        public init(platform: String, version: String) {
            self.platform = platform
            self.version = version
        }

        public static func < (a: Build, b: Build) -> Bool { (a.platform, a.version) < (b.platform, b.version) }
    }

    /// Opens of one route (resolutions that proceeded or were gated) by one build in one hour.
    public struct Opens: Hashable, Sendable {
        public var route: String
        public var build: Build
        /// The hour's start, seconds since 1970.
        public var hour: Int
        public var count: UInt64

        public init(route: String, build: Build, hour: Int, count: UInt64) {
            (self.route, self.build, self.hour, self.count) = (route, build, hour, count)
        }
    }

    /// An unknown-link shape and its count (`ShapeSketch`): at least `lowerBound`, at most `count`.
    public struct Shape: Hashable, Sendable {
        public var shape: String
        public var count: UInt64
        public var lowerBound: UInt64

        public init(shape: String, count: UInt64, lowerBound: UInt64) {
            (self.shape, self.count, self.lowerBound) = (shape, count, lowerBound)
        }
    }

    /// The routes each build is served, in the base and in the draft (a build's manifest
    /// leaves out a route whose destination or params its schema lacks).
    public struct Served: Hashable, Sendable {
        public var base: Set<String>
        public var draft: Set<String>

        public init(base: Set<String>, draft: Set<String>) {
            (self.base, self.draft) = (base, draft)
        }
    }

    public enum Basis: String, Sendable {
        /// Every open counted takes this path (to the hour, for windows).
        case exact
        /// At most this many: the route's opens, not known by pattern, of which some part does.
        case upTo
    }

    public enum Kind: String, Sendable {
        /// The route is not in the draft: every open ends `notFound(unknownRoute)`.
        case routeRemoved
        /// A pattern is in no route of the draft: its links end `notFound(unknownRoute)`.
        case patternRemoved
        /// A pattern's links now resolve to another route (its own pattern gone, or taken).
        case rerouted
        /// Another route's pattern now wins some of a pattern's links (more specific there).
        case shadowed
        /// The draft's window no longer holds hours the base's did: `notFound(expired)`.
        case windowShrunk
        /// A build the route was served to no longer gets it in the draft: `notFound(unknownRoute)`.
        case buildDropped
    }

    public struct Change: Equatable, Sendable {
        public var kind: Kind
        /// The base pattern whose links change (pattern kinds).
        public var pattern: String?
        /// Where those opens go instead: another route (`rerouted`, `shadowed`), or nil for `notFound`.
        public var toRoute: String?
        /// The `notFound` reason, when they end in `notFound`.
        public var reason: String?
        /// The pattern of `toRoute` that takes them.
        public var toPattern: String?
        public var count: UInt64
        public var basis: Basis
        public var builds: [Build: UInt64]
    }

    public struct RouteImpact: Equatable, Sendable {
        public var id: String
        /// Last week's opens of the route, all builds.
        public var opens: UInt64
        public var changes: [Change]
    }

    public struct Gained: Equatable, Sendable {
        public var shape: Shape
        public var route: String
        public var pattern: String
    }

    /// Routes with at least one change, in the base's order.
    public var routes: [RouteImpact]
    /// Shapes no base route answers and a draft route does, most counted first.
    public var gained: [Gained]

    /// A change's share of its route's opens above which the console warns (1 %).
    public static let warningShare = 0.01

    public static func share(_ change: Change, of route: RouteImpact) -> Double {
        route.opens == 0 ? 0 : Double(change.count) / Double(route.opens)
    }

    /// - Parameters:
    ///   - offset: seconds added to an hour (and half an hour, its middle) before the windows are asked about it.
    ///   - now: seconds since 1970; a draft route whose window has ended by then answers no shape.
    ///   - served: per build with a registered schema; a build without one is judged by its patterns and windows only.
    ///   - work: what the replay may spend; when it runs out, the answer is incomplete (`Work.exhausted`).
    static func compute(base: RoutesDocument, draft: RoutesDocument, opens: [Opens], shapes: [Shape],
                        served: [Build: Served], offset: Int, now: Int) -> DraftImpact {
        compute(Tables(base: base, draft: draft), opens: opens, shapes: shapes, served: served, offset: offset, now: now)
    }

    /// The base's and the draft's pattern indexes, made once for `affected` and `compute`,
    /// their lookups held to one `work`.
    public struct Tables {
        let before: Table
        let after: Table

        public init(base: RoutesDocument, draft: RoutesDocument, work: Work = Work()) {
            before = Table(base, work: work)
            after = Table(draft, work: work)
        }
    }

    public static func compute(_ tables: Tables, opens: [Opens], shapes: [Shape], served: [Build: Served], offset: Int, now: Int) -> DraftImpact {
        let (before, after) = (tables.before, tables.after)
        var byRoute: [String: [Opens]] = [:]
        for open in opens where open.count > 0 { byRoute[open.route, default: []].append(open) }
        var impacts: [RouteImpact] = []
        for route in before.routes {
            guard let traffic = byRoute[route.spec.id], !traffic.isEmpty else { continue }
            let total = traffic.reduce(0) { $0 + $1.count }
            let changes = routeChanges(route, traffic: traffic, before: before, after: after, served: served, offset: offset)
            if !changes.isEmpty { impacts.append(RouteImpact(id: route.spec.id, opens: total, changes: changes)) }
        }
        var gained: [Gained] = []
        for shape in shapes {
            guard let segments = Self.segments(ofShape: shape.shape), before.winner(for: segments, scope: nil, now: now) == nil,
                  let (route, pattern) = after.winner(for: segments, scope: nil, now: now) else { continue }
            gained.append(Gained(shape: shape, route: route.spec.id, pattern: pattern.description))
        }
        gained.sort { ($0.shape.count, $1.shape.shape) > ($1.shape.count, $0.shape.shape) }
        return DraftImpact(routes: impacts, gained: gained)
    }

    /// The base routes whose opens the draft can change: those it removes, changes or moves
    /// past another route they share, and those with a pattern that a pattern of a new,
    /// changed or moved draft route overlaps. Any other route keeps its links (a route
    /// removed or changed can only give links back), so only these routes' opens need to be read.
    static func affected(base: RoutesDocument, draft: RoutesDocument) -> Set<String> {
        affected(Tables(base: base, draft: draft))
    }

    public static func affected(_ tables: Tables) -> Set<String> {
        let (before, after) = (tables.before, tables.after)
        // A tie goes to the earlier route: two routes both have, sharing links, whose order
        // the draft swaps, have both moved.
        var basePosition: [String: Int] = [:], draftPosition: [String: Int] = [:]
        for (index, route) in before.routes.enumerated() where after.route(route.spec.id) != nil { basePosition[route.spec.id] = index }
        for (index, route) in after.routes.enumerated() where basePosition[route.spec.id] != nil { draftPosition[route.spec.id] = index }
        // Most drafts keep the routes they share in the same order: then none has moved.
        let reordered = before.routes.map(\.spec.id).filter { basePosition[$0] != nil } != after.routes.map(\.spec.id).filter { draftPosition[$0] != nil }
        var moved = Set<String>()
        for route in before.routes where reordered {
            guard let here = basePosition[route.spec.id], let there = draftPosition[route.spec.id] else { continue }
            for pattern in route.patterns {
                for other in before.meeting(pattern.segments) where other != route.spec.id {
                    guard let otherHere = basePosition[other], let otherThere = draftPosition[other] else { continue }
                    if (here < otherHere) != (there < otherThere) { moved.formUnion([route.spec.id, other]) }
                }
            }
        }
        func same(_ a: RouteSpec, _ b: RouteSpec) -> Bool {
            var (a, b) = (a, b)
            (a.index, b.index) = (0, 0)
            return a == b && !moved.contains(a.id)
        }
        let probe = Table(after.routes.filter { route in before.route(route.spec.id).map { !same($0.spec, route.spec) } ?? true }, work: after.work)
        var affected = Set<String>()
        for route in before.routes {
            guard let drafted = after.route(route.spec.id), same(drafted.spec, route.spec) else {
                affected.insert(route.spec.id)
                continue
            }
            if route.patterns.contains(where: { probe.meets($0.segments) }) { affected.insert(route.spec.id) }
        }
        return affected
    }

    private static func routeChanges(_ route: Table.Route, traffic: [Opens], before: Table, after: Table,
                                     served: [Build: Served], offset: Int) -> [Change] {
        func tally(_ opens: [Opens]) -> [Build: UInt64] { opens.reduce(into: [:]) { $0[$1.build, default: 0] += $1.count } }
        func sum(_ builds: [Build: UInt64]) -> UInt64 { builds.values.reduce(0, +) }
        guard let drafted = after.route(route.spec.id) else {
            let builds = tally(traffic)
            return [Change(kind: .routeRemoved, reason: "unknownRoute", count: sum(builds), basis: .exact, builds: builds)]
        }
        var changes: [Change] = []
        // Builds that were served the route and are not in the draft: all their opens.
        let dropped = Set(traffic.map(\.build).filter { served[$0].map { $0.base.contains(route.spec.id) && !$0.draft.contains(route.spec.id) } ?? false })
        if !dropped.isEmpty {
            let builds = tally(traffic.filter { dropped.contains($0.build) })
            changes.append(Change(kind: .buildDropped, reason: "unknownRoute", count: sum(builds), basis: .exact, builds: builds))
        }
        let kept = traffic.filter { !dropped.contains($0.build) }
        guard !kept.isEmpty else { return changes }
        let keptBuilds = tally(kept)

        // Each of the route's patterns that carried its links in the base: where they go now.
        struct Fate {
            var pattern: URLPattern
            var winner: (id: String, pattern: String)?
            var newShadows: [(id: String, pattern: String)]
            /// Moved, but some of its links still reach the route (a narrower pattern of it).
            var partlyKept: Bool
        }
        var fates: [Fate] = []
        for pattern in route.patterns {
            guard let own = before.winner(for: pattern.segments, scope: route.spec.scope, own: route.spec.id, now: nil),
                  own.route.spec.id == route.spec.id else { continue }
            let winner = after.winner(for: pattern.segments, scope: route.spec.scope, own: route.spec.id, now: nil)
            let was = Set(before.shadows(of: pattern.segments, winner: own, excluding: route.spec.id).map { "\($0.id) \($0.pattern)" })
            let now = after.shadows(of: pattern.segments, winner: winner, excluding: route.spec.id).filter { !was.contains("\($0.id) \($0.pattern)") }
            let partlyKept = winner?.route.spec.id != route.spec.id && after.meets(pattern.segments, route: route.spec.id)
            fates.append(Fate(pattern: pattern, winner: winner.map { ($0.route.spec.id, $0.pattern.description) }, newShadows: now, partlyKept: partlyKept))
        }
        let unchanged = fates.filter { $0.winner?.id == route.spec.id && $0.newShadows.isEmpty }
        let moved = fates.filter { $0.winner?.id != route.spec.id }
        // All links move, and to one place: exact. Otherwise each change is bounded by all the route's opens.
        let whole = unchanged.isEmpty && Set(moved.map { $0.winner?.id ?? "" }).count == 1 && moved.allSatisfy { $0.newShadows.isEmpty && !$0.partlyKept }
        for fate in fates {
            if fate.winner?.id != route.spec.id {
                let kind: Kind = fate.winner == nil ? .patternRemoved : .rerouted
                changes.append(Change(kind: kind, pattern: fate.pattern.description, toRoute: fate.winner?.id, reason: fate.winner == nil ? "unknownRoute" : nil,
                                      toPattern: fate.winner?.pattern, count: sum(keptBuilds), basis: whole ? .exact : .upTo, builds: keptBuilds))
            }
            for shadow in fate.newShadows {
                changes.append(Change(kind: .shadowed, pattern: fate.pattern.description, toRoute: shadow.id, toPattern: shadow.pattern,
                                      count: sum(keptBuilds), basis: .upTo, builds: keptBuilds))
            }
        }
        // The window: only the opens that still reach the route (all of them, or some).
        if !whole, let base = before.route(route.spec.id)?.spec.window, base != drafted.spec.window {
            let expired = kept.filter { open in
                let middle = (open.hour + 1_800 + offset) * 1_000_000
                return base.contains(microseconds: middle) && !drafted.spec.window.contains(microseconds: middle)
            }
            let builds = tally(expired)
            if !builds.isEmpty {
                changes.append(Change(kind: .windowShrunk, reason: "expired", count: sum(builds), basis: moved.isEmpty && fates.allSatisfy { $0.newShadows.isEmpty } ? .exact : .upTo,
                                      builds: builds))
            }
        }
        return changes
    }

    /// A shape's path (`docs/link-shapes.md`) as pattern segments: a word is a literal,
    /// `:param` a capture, a trailing `*` (a path cut short) one or more segments. The query
    /// names are dropped: a route never matches on them.
    static func segments(ofShape shape: String) -> [PatternSegment]? {
        let path = shape.prefix { $0 != "?" }
        guard path.first == "/" else { return nil }
        var segments: [PatternSegment] = []
        for part in path.split(separator: "/") {
            switch part {
            case ":param": segments.append(.parameter("param"))
            case "*": segments.append(.rest("rest"))
            default: segments.append(.literal(part.lowercased()))
            }
        }
        return segments
    }

    // MARK: Patterns

    // What patterns are to each other (`URLPattern.covers`, `overlaps`, `beats`) and scopes
    // (`LinkScope.isWithin`) is the engine's: `PatternRelations.swift` in RouteEngine.

    /// What a replay may spend, in steps of its pattern index (a node looked at, a pattern
    /// found): the tables' lookups share it, and once it runs out they find nothing and
    /// `exhausted` says the answer is incomplete. A lookup costs what it finds and the nodes
    /// it passes; a `:param` looked up under many literals passes them all, so a draft can
    /// make each lookup as long as the document, and this bounds their sum.
    public final class Work {
        private(set) var left: Int
        public private(set) var exhausted = false

        public init(steps: Int = .max) { left = steps }

        /// The steps a replay of these documents and shapes may take: `perPattern` a pattern
        /// and shape of either document, at least `minimum`.
        public static func bounded(base: RoutesDocument, draft: RoutesDocument, shapes: Int) -> Work {
            let patterns = base.routes.reduce(0) { $0 + $1.patterns.count } + draft.routes.reduce(0) { $0 + $1.patterns.count }
            return Work(steps: max(minimum, perPattern * (patterns + shapes)))
        }

        /// Steps a pattern or shape brings: a replay looks each pattern with opens up a few
        /// times (its winner and shadows before and after), each a few nodes deep.
        public static let perPattern = 128
        /// Steps any replay may take, whatever its size (about a second on one core).
        public static let minimum = 16_000_000

        /// Takes `steps`; false (and exhausted from then on) when they are not left.
        func take(_ steps: Int) -> Bool {
            guard !exhausted else { return false }
            guard left >= steps else {
                exhausted = true
                left = 0
                return false
            }
            left -= steps
            return true
        }
    }

    /// A document's routes with their parsed patterns (the first route of each id; a pattern
    /// that does not parse takes no links, as the validator refuses it).
    struct Table {
        struct Route {
            var spec: RouteSpec
            var patterns: [URLPattern]
        }

        var routes: [Route] = []
        private var positions: [String: Int] = [:]
        /// Every pattern in a tree of segments (literal, `:param`, `*rest`), so that the
        /// patterns a link shape may meet are found without looking at all of them.
        /// Kept small, as a replay holds two of a large document's outside the document turn:
        /// a node's literal children are a list through the nodes (`firstLiteral`,
        /// `nextLiteral`) found by `literals` in one table, not a dictionary per node.
        private var nodes: [Node] = [Node()]
        /// A literal child by its parent and text.
        private var literals: [Edge: Int32] = [:]

        private struct Node {
            var parameter: Int32 = -1
            var firstLiteral: Int32 = -1
            /// The next literal child of this node's parent.
            var nextLiteral: Int32 = -1
            /// Patterns that end here, and those with a `*rest` at this depth: the first of
            /// each list in `listed`.
            var ends: Int32 = -1
            var rests: Int32 = -1
        }

        /// Every pattern, once, in lists (a node's `ends` and `rests`) through `next`.
        private var listed: [(ref: Ref, next: Int32)] = []

        private struct Edge: Hashable {
            var parent: Int32
            var text: String
        }

        /// `node`'s literal children.
        private func literalChildren(of node: Int) -> some Sequence<Int> {
            sequence(first: nodes[node].firstLiteral) { [nodes] in nodes[Int($0)].nextLiteral }.prefix { $0 >= 0 }.lazy.map { Int($0) }
        }

        private func literal(_ text: String, below node: Int) -> Int? { literals[Edge(parent: Int32(node), text: text)].map { Int($0) } }

        struct Ref: Comparable {
            var route: Int
            var pattern: Int

            static func < (a: Ref, b: Ref) -> Bool { (a.route, a.pattern) < (b.route, b.pattern) }
        }

        /// Shadows named per pattern, at most: the rest of a calendar of literals is not news.
        static let maximumShadows = 20

        fileprivate let work: Work

        init(_ document: RoutesDocument, work: Work = Work()) {
            self.init(document.routes.map { spec in Route(spec: spec, patterns: spec.patterns.compactMap { try? URLPattern($0) }) }, work: work)
        }

        /// Routes whose patterns are parsed already (a probe made of another table's).
        init(_ parsed: [Route], work: Work) {
            self.work = work
            let patterns = parsed.reduce(0) { $0 + $1.patterns.count }
            listed.reserveCapacity(patterns)
            nodes.reserveCapacity(1 + parsed.reduce(0) { $0 + $1.patterns.reduce(0) { $0 + $1.segments.count } })
            for route in parsed where positions[route.spec.id] == nil {
                positions[route.spec.id] = routes.count
                for (index, pattern) in route.patterns.enumerated() { insert(pattern.segments, Ref(route: routes.count, pattern: index)) }
                routes.append(route)
            }
        }

        private mutating func insert(_ segments: [PatternSegment], _ ref: Ref) {
            var node = 0
            for segment in segments {
                let next: Int
                switch segment {
                case .rest:
                    listed.append((ref, nodes[node].rests))
                    nodes[node].rests = Int32(listed.count - 1)
                    return
                case .parameter:
                    if nodes[node].parameter >= 0 { next = Int(nodes[node].parameter) } else {
                        next = nodes.count
                        nodes.append(Node())
                        nodes[node].parameter = Int32(next)
                    }
                case .literal(let text):
                    if let existing = literal(text, below: node) { next = existing } else {
                        next = nodes.count
                        nodes.append(Node(nextLiteral: nodes[node].firstLiteral))
                        nodes[node].firstLiteral = Int32(next)
                        literals[Edge(parent: Int32(node), text: text)] = Int32(next)
                    }
                }
                node = next
            }
            listed.append((ref, nodes[node].ends))
            nodes[node].ends = Int32(listed.count - 1)
        }

        /// The patterns that share a link with `segments` (every one found does: the walk
        /// follows only segments that can match the same link), or with `covering`, the
        /// patterns that may match every link of `segments` (a superset: a `:param` of theirs
        /// where `segments` has a literal or `:param`, never a literal where it has a
        /// `:param`). In document order; at most `limit` of those `accept` takes, in the
        /// order found (not document order) when a limit cuts them. Each node passed and
        /// pattern found is a step of `work`: nothing is found once it runs out.
        private func candidates(_ segments: [PatternSegment], covering: Bool = false, limit: Int = .max,
                                accept: (Ref) -> Bool = { _ in true }) -> [Ref] {
            var found: [Ref] = []
            var stopped = false
            func gather(_ first: Int32) {
                var next = first
                while next >= 0, !stopped {
                    let (ref, following) = listed[Int(next)]
                    guard work.take(1) else { return stopped = true }
                    if accept(ref) {
                        found.append(ref)
                        if found.count >= limit { return stopped = true }
                    }
                    next = following
                }
            }
            func enter() -> Bool {
                if stopped { return false }
                if !work.take(1) { stopped = true }
                return !stopped
            }
            func everything(below node: Int) {
                guard enter() else { return }
                gather(nodes[node].ends)
                gather(nodes[node].rests)
                for child in literalChildren(of: node) where !stopped { everything(below: child) }
                if nodes[node].parameter >= 0 { everything(below: Int(nodes[node].parameter)) }
            }
            func walk(_ node: Int, _ depth: Int) {
                guard enter() else { return }
                guard depth < segments.count else { return gather(nodes[node].ends) }
                gather(nodes[node].rests)
                switch segments[depth] {
                case .rest:
                    // Only a `*rest`, gathered above, covers a rest.
                    guard !covering else { return }
                    for child in literalChildren(of: node) where !stopped { everything(below: child) }
                    if nodes[node].parameter >= 0 { everything(below: Int(nodes[node].parameter)) }
                case .parameter:
                    if !covering { for child in literalChildren(of: node) where !stopped { walk(child, depth + 1) } }
                    if nodes[node].parameter >= 0 { walk(Int(nodes[node].parameter), depth + 1) }
                case .literal(let text):
                    if let child = literal(text, below: node) { walk(child, depth + 1) }
                    if nodes[node].parameter >= 0 { walk(Int(nodes[node].parameter), depth + 1) }
                }
            }
            walk(0, 0)
            guard !work.exhausted else { return [] }
            guard found.count > 1 else { return found }
            guard work.take(found.count) else { return [] }
            return found.sorted()
        }

        func route(_ id: String) -> Route? { positions[id].map { routes[$0] } }

        /// The ids of the routes with a pattern that shares a link with `segments`.
        func meeting(_ segments: [PatternSegment]) -> Set<String> {
            Set(candidates(segments).map { routes[$0.route].spec.id })
        }

        /// Whether some pattern (of the route `route`, when given) shares a link with `segments`.
        func meets(_ segments: [PatternSegment], route: String? = nil) -> Bool {
            guard let route else { return !candidates(segments, limit: 1).isEmpty }
            guard let position = positions[route] else { return false }
            return !candidates(segments, limit: 1) { $0.route == position }.isEmpty
        }

        /// The route and pattern that take every link of `segments` (as a link of `scope`):
        /// the most specific pattern that covers them, the earlier route on a tie. A route
        /// limited to fewer hosts or schemes than `scope` takes only some (nil: any scope does).
        /// With `now`, a route whose window has ended by then takes none; without, a route with
        /// a window (other than `own`) takes only some, in its window.
        func winner(for segments: [PatternSegment], scope: LinkScope?, own: String? = nil, now: Int?) -> (route: Route, pattern: URLPattern)? {
            var best: (route: Route, pattern: URLPattern)?
            for ref in candidates(segments, covering: true) {
                let route = routes[ref.route], pattern = route.patterns[ref.pattern]
                if let scope, !scope.isWithin(route.spec.scope) { continue }
                if let now, let end = route.spec.window.endMicroseconds, end <= now * 1_000_000 { continue }
                if now == nil, route.spec.id != own, route.spec.window != ValidityWindow() { continue }
                guard URLPattern.covers(pattern.segments, segments) else { continue }
                if let held = best, !URLPattern.beats(pattern.segments, held.pattern.segments) { continue }
                best = (route, pattern)
            }
            return best
        }

        /// Patterns of other routes than `excluding` that take some of `segments`' links and
        /// not all: they overlap them, and beat `winner` where they do (or there is no winner),
        /// or they cover them for fewer hosts or schemes or for a window, and do not lose to it.
        /// The first `maximumShadows` in document order.
        func shadows(of segments: [PatternSegment], winner: (route: Route, pattern: URLPattern)?, excluding: String) -> [(id: String, pattern: String)] {
            var found: [(id: String, pattern: String)] = []
            for ref in candidates(segments) where found.count < Self.maximumShadows {
                let route = routes[ref.route], pattern = route.patterns[ref.pattern]
                guard route.spec.id != excluding, route.spec.id != winner?.route.spec.id, URLPattern.overlaps(pattern.segments, segments) else { continue }
                let covering = URLPattern.covers(pattern.segments, segments)
                if covering && route.spec.scope == .all && route.spec.window == ValidityWindow() { continue }  // the winner, or it loses to it everywhere
                if let winner = winner?.pattern, covering ? URLPattern.beats(winner.segments, pattern.segments) : !URLPattern.beats(pattern.segments, winner.segments) { continue }
                found.append((route.spec.id, pattern.description))
            }
            return found
        }
    }
}
