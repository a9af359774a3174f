/// Where a compiled binding reads its value.
enum BindingSource: Hashable, Sendable {
    /// The decoded path segment at this position.
    case segment(Int)
    /// The decoded segments from this position to the end, joined with `/`.
    case rest(Int)
    /// The first query item with this (decoded) name.
    case query([UInt8])
    /// A route constant, already checked against its type.
    case constant(ParamValue)
}

/// One destination param of one pattern: its name, type and source. A class because the
/// resolver reads it on every resolution: one retain instead of copying its spec.
final class Binding: Sendable {
    let name: String
    let spec: ParamSpec
    let source: BindingSource

    init(name: String, spec: ParamSpec, source: BindingSource) {
        self.name = name
        self.spec = spec
        self.source = source
    }
}

/// A route ready to match for one schema; immutable, shared by reference for the same reason.
final class CompiledRoute: Sendable {
    let id: String
    let destinationName: String
    let destination: DestinationSpec
    /// Per declared origin index, whether the route answers it.
    let admittedOrigins: [Bool]
    let window: ValidityWindow

    init(id: String, destinationName: String, destination: DestinationSpec, admittedOrigins: [Bool], window: ValidityWindow) {
        self.id = id
        self.destinationName = destinationName
        self.destination = destination
        self.admittedOrigins = admittedOrigins
        self.window = window
    }
}

/// Checks one route against one schema and compiles its params into bindings.
/// The problems it reports are those that depend on the app build.
struct RouteCompiler {
    let schema: Schema
    let parser: LinkParser

    init(schema: Schema) {
        self.schema = schema
        parser = LinkParser(schema: schema)
    }

    /// The compiled route and one binding list per pattern, or the problems that stop this build from resolving it.
    func compile(_ route: RouteSpec, patterns: [URLPattern?]) -> (route: CompiledRoute, bindings: [[Binding]]?, problems: [ValidationProblem]) {
        // Bounded as a report is: a route may name thousands of params.
        var problems = ValidationReport()
        let path = route.path
        guard let destination = schema.destinations[route.destination] else {
            problems.append(ValidationProblem(.unknownDestination, at: path + "destination",
                "The destination \"\(route.destination)\" does not exist in the app (\(schema.buildName))."))
            return (compiledRoute(route, destination: DestinationSpec()), nil, problems.problems)
        }
        for (index, host) in (route.hosts ?? []).enumerated() where !schema.declaresHost(host.lowercased()) {
            problems.append(ValidationProblem(.undeclaredHost, at: path + "hosts" + index,
                "The app (\(schema.buildName)) does not answer links on \(host); it declares \(list(schema.hosts))."))
        }
        for (index, scheme) in (route.schemes ?? []).enumerated() where !schema.declaresScheme(scheme.lowercased()) {
            problems.append(ValidationProblem(.undeclaredScheme, at: path + "schemes" + index,
                "The app (\(schema.buildName)) does not answer \(scheme):// links; it declares \(list(schema.schemes))."))
        }
        for name in route.params.keys.sorted() where destination.params[name] == nil {
            problems.append(ValidationProblem(.unknownParam, at: path + "params" + name,
                "\(route.destination) has no param \"\(name)\" in \(schema.buildName); it takes \(list(destination.params.keys.sorted()))."))
        }
        var constants: [String: ParamValue] = [:]
        for name in route.params.keys.sorted() {
            guard case .constant(let json) = route.params[name]!, let spec = destination.params[name] else { continue }
            let value: ParamValue = json.intValue.map(ParamValue.int) ?? .string(json.stringValue ?? "")
            switch spec.value(from: value) {
            case .success(let checked): constants[name] = checked
            case .failure(let failure):
                problems.append(ValidationProblem(.paramTypeMismatch, at: path + "params" + name + "const",
                    "The fixed value \(json.serialized()) for \(name) \(failure) (\(name) is \(describe(spec)))."))
            }
        }
        var bindings: [[Binding]] = []
        var missingEverywhere: [String: Int] = [:]
        let validPatterns = patterns.enumerated().compactMap { index, pattern in pattern.map { (index, $0) } }
        for (patternIndex, pattern) in validPatterns {
            let patternPath = path + "patterns" + patternIndex
            var patternBindings: [Binding] = []
            var consumed: Set<String> = []
            let captures = pattern.captureNames
            for name in destination.params.keys.sorted() {
                let spec = destination.params[name]!
                let source = route.params[name] ?? (captures.contains(name) ? .capture(name) : nil)
                switch source {
                case nil:
                    if !spec.isOptional { missingEverywhere[name, default: 0] += 1 }
                case .capture(let capture):
                    consumed.insert(capture)
                    guard let position = pattern.segments.firstIndex(where: { $0 == .parameter(capture) || $0 == .rest(capture) })
                    else {
                        problems.append(ValidationProblem(.missingParam, at: patternPath,
                            "The pattern \(pattern) has no capture :\(capture), which \(name) is taken from."))
                        continue
                    }
                    if case .rest = pattern.segments[position] {
                        guard spec.acceptsMultipleSegments else {
                            problems.append(ValidationProblem(.paramTypeMismatch, at: patternPath,
                                "*\(capture) in \(pattern) captures several path segments, which can never be \(describe(spec)) as \(name) requires."))
                            continue
                        }
                        patternBindings.append(Binding(name: name, spec: spec, source: .rest(position)))
                    } else {
                        patternBindings.append(Binding(name: name, spec: spec, source: .segment(position)))
                    }
                case .query(let item):
                    patternBindings.append(Binding(name: name, spec: spec, source: .query(Array(item.utf8))))
                case .constant:
                    if let value = constants[name] { patternBindings.append(Binding(name: name, spec: spec, source: .constant(value))) }
                }
            }
            for capture in captures where !consumed.contains(capture) {
                problems.append(ValidationProblem(.unknownParam, at: patternPath,
                    "The capture :\(capture) in \(pattern) fills no param of \(route.destination) (\(schema.buildName)), which takes \(list(destination.params.keys.sorted()))."))
            }
            bindings.append(patternBindings)
        }
        for name in missingEverywhere.keys.sorted() {
            let count = missingEverywhere[name]!
            let where_ = count == validPatterns.count ? "" : " for \(count) of its patterns"
            problems.append(ValidationProblem(.missingParam, at: path + "params" + name,
                "\(route.destination) requires \(name) (\(describe(destination.params[name]!))), but this route does not provide it\(where_). Capture it in the pattern or map it in params."))
        }
        return (compiledRoute(route, destination: destination), problems.problems.isEmpty ? bindings : nil, problems.problems)
    }

    private func compiledRoute(_ route: RouteSpec, destination: DestinationSpec) -> CompiledRoute {
        let scope = route.scope
        let admitted = (0..<parser.originCount).map { scope.admits(parser.origin(at: $0)) }
        return CompiledRoute(id: route.id, destinationName: route.destination, destination: destination,
                             admittedOrigins: admitted, window: route.window)
    }
}

func list(_ items: [String]) -> String {
    items.isEmpty ? "none" : items.joined(separator: ", ")
}

/// `a whole number from 1 to 2147483647`, `text matching ^p[0-9]{1,8}$`: a param's type in words.
func describe(_ spec: ParamSpec) -> String {
    switch spec.type {
    case .int:
        switch (spec.minimum, spec.maximum) {
        case let (minimum?, maximum?): "a whole number from \(minimum) to \(maximum)"
        case let (minimum?, nil): "a whole number of at least \(minimum)"
        case let (nil, maximum?): "a whole number of at most \(maximum)"
        case (nil, nil): "a whole number"
        }
    case .string: spec.pattern.map { "text matching \($0)" } ?? "text"
    case .enum: "one of \(list(spec.values ?? []))"
    case .uuid: "a UUID"
    case .slug: "a slug"
    }
}
