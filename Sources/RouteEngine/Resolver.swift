import CivilDate
import Foundation

/// The frozen route table of one app build: resolves untrusted links and typed in-app
/// requests to a `Resolution`. Immutable and `Sendable`; matching never fails, it returns
/// a value.
public struct Resolver: Sendable {
    public let schema: Schema
    /// Behind one reference, so copying a resolver (or capturing it) costs one retain.
    private let tables: Tables

    final class Tables: Sendable {
        let parser: LinkParser
        let trie: RouteTrie
        let routes: [CompiledRoute]
        /// Per trie payload: the route it belongs to and the bindings of that pattern.
        let patterns: [CompiledPattern]
        /// Every literal segment of the table's patterns, lowercased.
        let vocabulary: Set<String>

        init(parser: LinkParser, trie: RouteTrie, routes: [CompiledRoute], patterns: [CompiledPattern], vocabulary: Set<String>) {
            self.parser = parser
            self.trie = trie
            self.routes = routes
            self.patterns = patterns
            self.vocabulary = vocabulary
        }
    }

    final class CompiledPattern: Sendable {
        let route: CompiledRoute
        let bindings: [Binding]

        init(route: CompiledRoute, bindings: [Binding]) {
            self.route = route
            self.bindings = bindings
        }
    }

    /// Ids of the routes this build resolves, in document order.
    public var routeIDs: [String] { tables.routes.map(\.id) }

    /// Every literal segment of the table's patterns, lowercased: the words an app's
    /// unknown-link shapes may keep (`LinkShape(link:vocabulary:)`), since the app has them already.
    public var vocabulary: Set<String> { tables.vocabulary }

    /// Why routes of the document were left out of this table: the analysis's errors for
    /// routes it excluded, then what stopped this build from compiling the others.
    public let leftOut: [ValidationProblem]

    /// Builds the table for `schema` from the routes that are free of structural errors
    /// and that this build can resolve; the others are left out (the validator reports them).
    /// - Complexity: O(total pattern segments + params).
    public init(schema: Schema, analysis: RouteAnalysis) {
        self.schema = schema
        let compiler = RouteCompiler(schema: schema)
        var trie = RouteTrie(originCount: compiler.parser.originCount)
        var routes: [CompiledRoute] = []
        var patterns: [CompiledPattern] = []
        var leftOut = analysis.excluded.isEmpty ? [] : analysis.problems.filter { $0.severity == .error }
        var vocabulary: Set<String> = []
        for (position, spec) in analysis.document.routes.enumerated() where !analysis.excluded.contains(position) {
            let patternList = analysis.patterns[position]
            let compiled = compiler.compile(spec, patterns: patternList)
            guard let bindings = compiled.bindings else {
                leftOut += compiled.problems
                continue
            }
            routes.append(compiled.route)
            for (pattern, patternBindings) in zip(patternList.compactMap { $0 }, bindings) {
                for case .literal(let word) in pattern.segments { vocabulary.insert(word) }
                trie.insert(pattern, payload: patterns.count, origins: compiled.route.admittedOrigins)
                patterns.append(CompiledPattern(route: compiled.route, bindings: patternBindings))
            }
        }
        tables = Tables(parser: compiler.parser, trie: trie, routes: routes, patterns: patterns, vocabulary: vocabulary)
        self.leftOut = leftOut
    }

    /// Convenience: analyse and build in one step.
    public init(schema: Schema, routes document: RoutesDocument) {
        self.init(schema: schema, analysis: RouteAnalysis(document: document, now: Date()))
    }

    // MARK: Resolving

    /// Resolves an untrusted link: match, extract params, validate them, then evaluate preconditions.
    /// - Complexity: O(link length + segments) for typical tables (see `RouteTrie.match`).
    public func resolve(url: String, context: ResolutionContext) -> Resolution {
        var link = url
        return link.withUTF8 { resolve(link: $0, original: url, context: context) }
    }

    /// Resolves a typed in-app request through the same param checks and precondition evaluation.
    public func resolve(request: DestinationRequest, context: ResolutionContext) -> Resolution {
        guard let destination = schema.destinations[request.destination] else {
            return .notFound(NotFound(.unknownRoute, detail: "The app has no destination \"\(request.destination)\"."))
        }
        var params: [String: ParamValue] = [:]
        for name in request.params.keys where destination.params[name] == nil {
            return .notFound(NotFound(.validationFailed, detail: "\(request.destination) has no param \"\(name)\"."))
        }
        for (name, spec) in destination.params {
            guard let given = request.params[name] else {
                if spec.isOptional { continue }
                return .notFound(NotFound(.validationFailed, detail: "\(name) \(ParamFailure.missing)."))
            }
            switch spec.value(from: given) {
            case .success(let value): params[name] = value
            case .failure(let failure):
                return .notFound(NotFound(.validationFailed, detail: "\(name) \"\(given)\" \(failure)."))
            }
        }
        return decide(routeID: nil, destinationName: request.destination, destination: destination, params: params,
                      resume: .destination(request), context: context)
    }

    /// Resolves a gate's `resume` request again, through whichever door it came in by.
    public func resolve(_ request: ResolutionRequest, context: ResolutionContext) -> Resolution {
        switch request {
        case .url(let url): resolve(url: url, context: context)
        case .destination(let destination): resolve(request: destination, context: context)
        }
    }

    private func resolve(link: UnsafeBufferPointer<UInt8>, original: String, context: ResolutionContext) -> Resolution {
        guard link.count <= LinkParser.maximumLength else {
            return .notFound(NotFound(.malformed, detail: LinkDefect.tooLong.description))
        }
        let capacity = max(link.count, 1)
        let tables = tables
        let (parser, trie) = (tables.parser, tables.trie)
        return withUnsafeTemporaryAllocation(of: UInt8.self, capacity: capacity) { decoded in
            withUnsafeTemporaryAllocation(of: Range<Int>.self, capacity: capacity) { ranges in
                let parsed: LinkParser.Parsed
                do throws(LinkDefect) {
                    parsed = try parser.parse(link, decoded: decoded, ranges: ranges)
                } catch {
                    return .notFound(NotFound(.malformed, detail: error.description))
                }
                let segments = UnsafeBufferPointer(rebasing: ranges[0..<parsed.segmentCount])
                // A shape whose routes answer this origin but none is live now is a dead end:
                // matching goes on to more general shapes (`/launch` from next month does not
                // hide `/:page` today). The first such shape, in precedence order, explains a
                // link nothing else answers.
                var filter = LiveRouteFilter(tables: tables, origin: parsed.origin, now: context.nowMicroseconds)
                _ = trie.match(segments: segments, bytes: decoded, origin: parsed.origin, filter: &filter)
                let (chosen, notLive, now) = (filter.chosen, filter.notLive, context.nowMicroseconds)
                guard let chosen else {
                    guard let first = notLive?.route else { return .notFound(NotFound(.unknownRoute)) }
                    if let end = first.window.endMicroseconds, end <= now {
                        return .notFound(NotFound(.expired, routeID: first.id, detail: "Ended \(Timestamp.formatMicroseconds(end))."))
                    }
                    return .notFound(NotFound(.unknownRoute, routeID: first.id, detail: "Not live yet."))
                }
                let route = chosen.route
                var params = [String: ParamValue](minimumCapacity: chosen.bindings.count)
                for binding in chosen.bindings {
                    let text: String?
                    switch binding.source {
                    case .constant(let value):
                        params[binding.name] = value
                        continue
                    case .segment(let position):
                        if decoded[segments[position]].contains(UInt8(ascii: "/")) {
                            return .notFound(NotFound(.validationFailed, routeID: route.id, detail: "\(binding.name) \(ParamFailure.encodedSlash)."))
                        }
                        text = String(decoding: UnsafeBufferPointer(rebasing: decoded[segments[position]]), as: UTF8.self)
                    case .rest(let position):
                        if segments[position...].contains(where: { decoded[$0].contains(UInt8(ascii: "/")) }) {
                            return .notFound(NotFound(.validationFailed, routeID: route.id, detail: "\(binding.name) \(ParamFailure.encodedSlash)."))
                        }
                        let joined = segments[position].lowerBound..<segments[segments.count - 1].upperBound
                        text = segments[position...].count == 1
                            ? String(decoding: UnsafeBufferPointer(rebasing: decoded[joined]), as: UTF8.self)
                            : segments[position...].map { String(decoding: UnsafeBufferPointer(rebasing: decoded[$0]), as: UTF8.self) }
                                .joined(separator: "/")
                    case .query(let name):
                        text = LinkParser.queryValue(link, parsed.query, named: name)
                    }
                    guard let text else {
                        if binding.spec.isOptional { continue }
                        return .notFound(NotFound(.validationFailed, routeID: route.id, detail: "\(binding.name) \(ParamFailure.missing)."))
                    }
                    switch binding.spec.value(fromText: text) {
                    case .success(let value): params[binding.name] = value
                    case .failure(let failure):
                        return .notFound(NotFound(.validationFailed, routeID: route.id, detail: "\(binding.name) \"\(text)\" \(failure)."))
                    }
                }
                return decide(routeID: route.id, destinationName: route.destinationName, destination: route.destination,
                              params: params, resume: .url(original), context: context)
            }
        }
    }

    /// Among routes sharing a shape, the first live one that answers the link's origin wins;
    /// a shape with none is a dead end, and the first such shape's first admitted route is
    /// kept to explain a link nothing else answers.
    struct LiveRouteFilter: TerminalFilter {
        /// The tables, not their arrays, and unretained: the filter lives inside one
        /// `resolve(link:)` call, which holds the tables for its whole length.
        unowned(unsafe) let tables: Tables
        let origin: Int
        /// Microseconds since 1970.
        let now: Int
        var chosen: CompiledPattern?
        var notLive: CompiledPattern?

        init(tables: Tables, origin: Int, now: Int) {
            self.tables = tables
            self.origin = origin
            self.now = now
        }

        mutating func accepts(_ terminal: Int) -> Bool {
            var firstAdmitted: CompiledPattern?
            for candidate in tables.trie.terminals[terminal] {
                let pattern = tables.patterns[candidate]
                guard pattern.route.admittedOrigins[origin] else { continue }
                if pattern.route.window.contains(microseconds: now) {
                    chosen = pattern
                    return true
                }
                if firstAdmitted == nil { firstAdmitted = pattern }
            }
            if notLive == nil { notLive = firstAdmitted }
            return false
        }
    }

    /// The one precondition evaluation both doors share: the first unsatisfied
    /// precondition along the destination's path gates.
    private func decide(
        routeID: String?, destinationName: String, destination: DestinationSpec, params: [String: ParamValue],
        resume: ResolutionRequest, context: ResolutionContext
    ) -> Resolution {
        if destination.isGated, let precondition = schema.firstUnsatisfiedPrecondition(from: destination.lineageIndex, satisfied: context.satisfied) {
            return .gated(Gate(precondition: precondition, routeID: routeID, destination: destinationName, resume: resume))
        }
        let path = destination.keptPath.isEmpty ? schema.walkPath(from: destination.lineageIndex, depth: destination.depth) : destination.keptPath
        return .proceed(Proceed(routeID: routeID, destination: destinationName, params: params, path: path,
                                tab: destination.effectiveTab, presentation: destination.presentation))
    }
}
