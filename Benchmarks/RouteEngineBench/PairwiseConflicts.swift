import BenchSupport
import RouteEngine

/// The conflict analysis as a plain pairwise comparison, written here as the benchmark's
/// peer and cross-check: each route against every earlier route kept on its pattern shape.
/// Returns the ids of the routes found shadowed or in conflict.
func pairwiseConflicts(_ document: RoutesDocument) -> Set<String> {
    var kept: [String: [RouteSpec]] = [:]
    var excluded: Set<String> = []
    for route in document.routes {
        var isExcluded = false
        for shape in Set(route.patterns.map(shapeOf)) {
            for earlier in kept[shape, default: []]
            where earlier.scope.overlaps(route.scope) && route.scope.isWithin(earlier.scope) && route.window.isWithin(earlier.window) {
                isExcluded = true
                break
            }
        }
        if isExcluded {
            excluded.insert(route.id)
        } else {
            for shape in Set(route.patterns.map(shapeOf)) { kept[shape, default: []].append(route) }
        }
    }
    return excluded
}

/// `/Sale/:slug` → `/sale/:`: the links a pattern matches, without capture names.
private func shapeOf(_ pattern: String) -> String {
    pattern.split(separator: "/", omittingEmptySubsequences: false).map { segment in
        segment.hasPrefix(":") ? ":" : segment.hasPrefix("*") ? "*" : segment.lowercased()
    }.joined(separator: "/")
}
