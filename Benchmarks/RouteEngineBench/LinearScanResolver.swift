import Foundation
import BenchSupport
import RouteEngine

/// The naive peer: every route's patterns tried in order until one matches, the way a
/// hand-written `switch` over URL paths or a list of regexes works. Not a strawman:
/// literals are lowercased once up front and the link is split once per resolution.
/// It answers in the form of `Resolution.summary` so the bench can check both agree
/// before timing them (the bench satisfies every precondition, so nothing gates).
struct LinearScanResolver {
    struct Entry {
        var routeID: String
        var destination: String
        var segments: [PatternSegment]
        var params: [String: ParamSource]
        var specs: [String: ParamSpec]
    }

    let entries: [Entry]
    let schema: Schema

    init(schema: Schema, document: RoutesDocument) {
        self.schema = schema
        var entries: [Entry] = []
        for route in document.routes {
            for text in route.patterns {
                let pattern = try! URLPattern(text)
                entries.append(Entry(routeID: route.id, destination: route.destination, segments: pattern.segments,
                                     params: route.params, specs: schema.destinations[route.destination]!.params))
            }
        }
        self.entries = entries
    }

    func resolve(url: String) -> String {
        guard let schemeEnd = url.range(of: "://") else { return "notFound malformed" }
        let scheme = url[..<schemeEnd.lowerBound].lowercased()
        var rest = url[schemeEnd.upperBound...]
        var query = Substring("")
        if let mark = rest.firstIndex(of: "?") {
            query = rest[rest.index(after: mark)...]
            rest = rest[..<mark]
        }
        var parts = rest.split(separator: "/").map(String.init)
        if scheme == "https" {
            guard let host = parts.first?.lowercased(), schema.hosts.contains(host) else { return "notFound malformed" }
            parts.removeFirst()
        } else if !schema.schemes.contains(scheme) {
            return "notFound malformed"
        }
        let lowered = parts.map { $0.lowercased() }
        for entry in entries {
            var captures: [String: String] = [:]
            var matched = true
            var index = 0
            for segment in entry.segments {
                switch segment {
                case .literal(let text):
                    if index >= lowered.count || lowered[index] != text { matched = false }
                    index += 1
                case .parameter(let name):
                    if index >= parts.count { matched = false } else { captures[name] = parts[index] }
                    index += 1
                case .rest(let name):
                    if index >= parts.count { matched = false } else { captures[name] = parts[index...].joined(separator: "/") }
                    index = parts.count
                }
                if !matched { break }
            }
            guard matched, index == parts.count else { continue }
            var params: [String: ParamValue] = [:]
            for (name, spec) in entry.specs {
                var text: String?
                switch entry.params[name] ?? .capture(name) {
                case .capture(let capture): text = captures[capture]
                case .query(let item):
                    text = query.split(separator: "&").first { $0.hasPrefix(item + "=") }
                        .map { String($0.dropFirst(item.count + 1)).replacingOccurrences(of: "+", with: " ").removingPercentEncoding ?? "" }
                    if text?.isEmpty == true { text = nil }
                case .constant: text = nil
                }
                guard let text else {
                    if spec.isOptional { continue }
                    return "notFound validationFailed \(entry.routeID)"
                }
                guard case .success(let value) = spec.value(fromText: text) else { return "notFound validationFailed \(entry.routeID)" }
                params[name] = value
            }
            let rendered = params.keys.sorted().map { "\($0)=\(params[$0]!)" }
            return (["proceed", entry.routeID, entry.destination] + rendered).joined(separator: " ")
        }
        return "notFound unknownRoute"
    }
}
