import CivilDate
import Foundation

extension RoutesDocument {
    /// Decodes a routes document, reporting every format problem with its path. Routes
    /// that are not well-formed are left out of the result (and reported); nil only when
    /// the document as a whole is unusable.
    public static func decode(_ json: JSONValue) -> (document: RoutesDocument?, problems: [ValidationProblem]) {
        let (document, report) = decodeReporting(json)
        return (document, report.problems)
    }

    /// `decode`, with its problems as a report: at most `ValidationReport.listLimit` of
    /// each severity listed, the rest counted.
    /// Patterns a document may hold, all routes together: what validating it holds in memory
    /// grows with them (about 300 bytes a pattern and 200 a segment), and a document's work
    /// must fit its term of the server's memory formula (`docs/operations.md`).
    public static let maximumPatterns = 250_000
    /// Path segments of all the patterns together (a pattern counts at least one).
    public static let maximumSegments = 500_000

    public static func decodeReporting(_ json: JSONValue) -> (document: RoutesDocument?, report: ValidationReport) {
        var reader = FieldReader()
        let root = JSONPath.root
        guard let object = reader.object(json, at: root) else { return (nil, reader.found) }
        let hasFormat = reader.checkFormat(object, expected: format)
        reader.warnUnknownKeys(object, known: ["format", "app", "routes"], at: root)
        let app = reader.requiredString(object, "app", at: root)
        guard let routesValue = object["routes"] else {
            reader.missing("routes", at: root)
            return (nil, reader.found)
        }
        guard case .array(let entries) = routesValue else {
            reader.report(.invalidFormat, at: root + "routes", "routes must be a list, but it is \(routesValue.typeName).")
            return (nil, reader.found)
        }
        // Counted before anything is decoded, so what analysing a document may hold is
        // bounded by the bound, not by what fits in the bytes.
        var patternCount = 0, segmentCount = 0
        for case .object(let route) in entries {
            guard case .array(let patterns)? = route["patterns"] else { continue }
            patternCount += patterns.count
            for case .string(let pattern) in patterns { segmentCount += max(1, pattern.utf8.reduce(0) { $0 + ($1 == UInt8(ascii: "/") ? 1 : 0) }) }
        }
        guard patternCount <= maximumPatterns, segmentCount <= maximumSegments else {
            reader.report(.tooComplex, at: root + "routes",
                "The routes hold \(patternCount) patterns of \(segmentCount) segments; a document holds at most \(maximumPatterns) patterns and \(maximumSegments) segments. Split the campaign links into fewer, wider patterns (a :param for what varies).")
            return (nil, reader.found)
        }
        var routes: [RouteSpec] = []
        for (index, entry) in entries.enumerated() {
            if let route = decodeRoute(entry, index: index, reader: &reader) { routes.append(route) }
        }
        guard hasFormat, let app else { return (nil, reader.found) }
        return (RoutesDocument(app: app, routes: routes, declaredRouteCount: entries.count), reader.found)
    }

    private static let routeFields: Set<String> = [
        "id", "patterns", "destination", "params", "hosts", "schemes", "validFrom", "validUntil", "fallbackURL", "owner", "notes", "preview", "utm",
    ]

    private static func decodeRoute(_ value: JSONValue, index: Int, reader: inout FieldReader) -> RouteSpec? {
        let path = JSONPath.root + "routes" + index
        guard let object = reader.object(value, at: path) else { return nil }
        let before = reader.errorCount
        reader.warnUnknownKeys(object, known: routeFields, at: path)
        let id = reader.requiredString(object, "id", at: path)
        if let id, !RouteSpec.isValidID(id) {
            // The id is echoed only when it is short and plain: it may be 100 KB, or hold controls.
            let shown = id.utf8.count <= 40 && id.utf8.allSatisfy({ $0 >= 0x20 && $0 < 0x7F }) ? " \"\(id)\"" : ""
            reader.report(.invalidFormat, at: path + "id",
                "A route id is 1 to 128 letters, digits and - _ ., starting with a letter or digit (spring-sale); the id\(shown) is not.")
        }
        let destination = reader.requiredString(object, "destination", at: path)
        var patterns: [String]?
        if object["patterns"] == nil {
            reader.missing("patterns", at: path)
        } else if let list = reader.strings(object, "patterns", at: path) {
            if list.isEmpty {
                reader.report(.invalidFormat, at: path + "patterns", "A route needs at least one pattern.")
            } else {
                patterns = list
            }
        }
        var params: [String: ParamSource] = [:]
        if let mapping = reader.object(object["params"], at: path + "params") {
            for name in mapping.keys.sorted() {
                if let source = decodeSource(mapping[name]!, at: path + "params" + name, reader: &reader) { params[name] = source }
            }
        }
        let hosts = reader.strings(object, "hosts", at: path)
        let schemes = reader.strings(object, "schemes", at: path)
        func instant(_ key: String) -> Int? {
            guard let text = reader.string(object, key, at: path) else { return nil }
            guard let microseconds = Timestamp.microseconds(text) else {
                reader.report(.invalidFormat, at: path + key, "\(key) \"\(text)\" is not a date and time like 2026-03-01T00:00:00Z.")
                return nil
            }
            return microseconds
        }
        let window = ValidityWindow(startMicroseconds: instant("validFrom"), endMicroseconds: instant("validUntil"))
        let fallbackURL = reader.string(object, "fallbackURL", at: path)
        let owner = reader.string(object, "owner", at: path)
        let notes = reader.string(object, "notes", at: path)
        for (field, text, limit) in [("owner", owner, RouteSpec.maximumOwnerBytes), ("notes", notes, RouteSpec.maximumNotesBytes)] {
            guard let text, text.utf8.count > limit else { continue }
            // Named by its id when the id is short and plain (it may itself be the problem).
            let named = id.flatMap { $0.utf8.count <= 40 && RouteSpec.isValidID($0) ? "Route \"\($0)\"" : nil } ?? "This route"
            reader.report(.invalidFormat, at: path + field,
                          "\(named): \(field) is \(text.utf8.count) bytes; it holds at most \(limit) (a few lines: link to a longer brief).")
        }
        let preview = object["preview"].flatMap { decodePreview($0, at: path + "preview", reader: &reader) }
        let utm = object["utm"].flatMap { decodeUTM($0, at: path + "utm", reader: &reader) }
        let hasErrors = reader.errorCount > before
        guard !hasErrors, let id, let destination, let patterns else { return nil }
        var route = RouteSpec(index: index, id: id, patterns: patterns, destination: destination, params: params, hosts: hosts,
                              schemes: schemes, window: window, fallbackURL: fallbackURL, owner: owner, notes: notes)
        route.preview = preview
        route.utm = utm
        return route
    }

    /// A route's `utm` (`docs/formats.md`): an object of `source`, `medium`, `campaign`,
    /// `term` and `content`, at least one, each 1 to 100 bytes of `A–Z a–z 0–9 - . _ ~`
    /// (what a landing passes on as written); each problem an error at its field, nothing echoed.
    private static func decodeUTM(_ value: JSONValue, at path: JSONPath, reader: inout FieldReader) -> [String: String]? {
        guard let object = reader.object(value, at: path) else { return nil }
        let before = reader.errorCount
        var items: [String: String] = [:]
        for (key, member) in object.sorted(by: { $0.key < $1.key }) {
            guard RouteSpec.utmNames.contains(key) else {
                reader.report(.invalidFormat, at: path + key, "utm holds source, medium, campaign, term and content, nothing else; remove \(path + key).")
                continue
            }
            guard let text = member.stringValue, RouteSpec.isUTMValue(text) else {
                reader.report(.invalidFormat, at: path + key, "A UTM value is 1 to \(RouteSpec.maximumUTMBytes) bytes of letters, digits and - . _ ~.")
                continue
            }
            items[key] = text
        }
        if items.isEmpty, reader.errorCount == before {
            reader.report(.invalidFormat, at: path, "utm needs at least one of source, medium, campaign, term and content (or leave utm out).")
        }
        return reader.errorCount > before ? nil : items
    }

    /// A route's `preview` (`docs/formats.md`): an object of `title`, `description` and
    /// `image`, at least one of them; each problem an error at its field, nothing echoed
    /// (the text may be long or hostile).
    private static func decodePreview(_ value: JSONValue, at path: JSONPath, reader: inout FieldReader) -> LinkPreview? {
        guard let object = reader.object(value, at: path) else { return nil }
        let before = reader.errorCount
        for key in object.keys.sorted() where !["title", "description", "image"].contains(key) {
            reader.report(.invalidFormat, at: path + key, "A preview holds title, description and image, nothing else; remove \(path + key).")
        }
        func text(_ key: String, limit: Int) -> String? {
            guard let text = reader.string(object, key, at: path) else { return nil }
            let scalars = text.unicodeScalars.count
            if scalars > limit {
                reader.report(.invalidFormat, at: path + key, "The preview's \(key) is \(scalars) characters; it holds at most \(limit).")
            } else if !LinkPreview.isShowableText(text) {
                reader.report(.invalidFormat, at: path + key,
                    "The preview's \(key) must hold visible text and no line breaks, control characters or bidi overrides.")
            }
            return text
        }
        let preview = LinkPreview(title: text("title", limit: LinkPreview.maximumTitleScalars),
                                  description: text("description", limit: LinkPreview.maximumDescriptionScalars),
                                  image: reader.string(object, "image", at: path))
        if let image = preview.image, image.utf8.count > LinkPreview.maximumImageBytes {
            reader.report(.invalidFormat, at: path + "image", "The preview image's address is \(image.utf8.count) bytes; it holds at most \(LinkPreview.maximumImageBytes).")
        } else if let image = preview.image, RouteAnalysis.checkAddress(image, at: path + "image", what: "The preview image") != nil {
            reader.report(.invalidFormat, at: path + "image",
                "The preview image must be an https:// address with a host (no user name), as a fallback is: chat apps fetch it.")
        }
        if preview.title == nil, preview.description == nil, preview.image == nil, reader.errorCount == before {
            reader.report(.invalidFormat, at: path, "A preview needs a title, a description or an image (or leave preview out).")
        }
        return reader.errorCount > before ? nil : preview
    }

    private static func decodeSource(_ value: JSONValue, at path: JSONPath, reader: inout FieldReader) -> ParamSource? {
        guard let object = reader.object(value, at: path) else { return nil }
        let keys = Set(object.keys).intersection(["capture", "query", "const"])
        guard keys.count == 1, let key = keys.first else {
            reader.report(.invalidFormat, at: path, "\(path) must have exactly one of capture, query or const.")
            return nil
        }
        reader.warnUnknownKeys(object, known: [key], at: path)
        switch key {
        case "capture": return reader.requiredString(object, "capture", at: path).map(ParamSource.capture)
        case "query": return reader.requiredString(object, "query", at: path).map(ParamSource.query)
        default:
            let constant = object["const"]!
            switch constant {
            case .string, .int: return .constant(constant)
            default:
                reader.report(.invalidFormat, at: path + "const", "\(path + "const") must be a string or a whole number.")
                return nil
            }
        }
    }
}
