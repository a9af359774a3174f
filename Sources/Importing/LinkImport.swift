import Foundation
import LinkChecks
import RouteEngine

/// Short links of another service brought in as routes (`docs/migrating.md`): each short
/// link on the host being moved becomes a route whose one pattern is its path as a literal,
/// opening what its deep link opens today — the deep link resolved by the engine against the
/// current routes on every build, so the new route takes that route's destination and params,
/// and its UTM items for the landing to pass on.
/// Nothing is guessed: a link no route answers, one that cannot move, a duplicate or a value
/// that is not valid is reported with its reason, never imported. Pure: rows, a document and
/// schemas in; a document and a report out. It never publishes.
public struct LinkImport: Sendable {
    /// What wrote the file: Google's Takeout export of Dynamic Links, or any service's plain
    /// `short link, deep link[, title, description, image]`.
    public enum Source: String, Sendable {
        case firebase, csv
    }

    /// Why a row was not imported.
    public enum Reason: String, Sendable, CaseIterable {
        /// `archived` is true: Firebase no longer served it.
        case archived
        /// On a domain the old service owns (`page.link`, `app.link`: `serviceOwnedDomains`), which cannot be pointed anywhere else.
        case cannotMove
        /// On a host other than the one being imported.
        case otherHost
        /// The short link is not an https URL with a literal path (or has a query or fragment).
        case badShortLink
        /// No deep link, or one that is not a URL.
        case badDeepLink
        /// No route of the current routes answers the deep link on any build.
        case unanswered
        /// The builds resolve the deep link to different destinations or params.
        case differsByBuild
        /// The same short link came earlier in the file with the same deep link (or it appears
        /// with different ones, and none is imported).
        case duplicate
        /// Short links differing only in case, with different deep links: one pattern here
        /// (literals compare without case), so none is imported.
        case caseCollision
        /// A route of that id or that path exists already and is not this import's, and opens
        /// something else than the deep link (or a route of that id differs).
        case taken
        /// A route takes that path already and opens what the deep link opens on every build: nothing to import.
        case answered
        /// The path's first segment is one of Waymark's own (`reservedFirstSegments`): a browser
        /// opening the link would reach the API, not the landing.
        case reserved
        /// The route made from the row is not valid (a title, an image or a fallback that breaks a rule).
        case invalid
    }

    public struct Skipped: Sendable, Hashable {
        /// The row in the file, counted from 1 with the header.
        public var row: Int
        public var shortLink: String
        public var reason: Reason
        public var detail: String
        /// For `unanswered`: the deep link's shape, so a route can be added for it.
        public var shape: String?
    }

    public struct Imported: Sendable, Hashable {
        public var row: Int
        public var shortLink: String
        public var routeID: String
        public var destination: String
        /// The builds (`ios 5.3.0`) that open it; the others have no route for its deep link.
        public var builds: [String]
        /// What was changed on the way (a fallback left to the platform rule, a preview
        /// dropped), for people reviewing the import.
        public var notes: [String]
        /// The route was in the document already, exactly as this import makes it.
        public var unchanged: Bool
    }

    public struct Report: Sendable {
        public var imported: [Imported] = []
        public var skipped: [Skipped] = []
        /// Header columns the import does not read, in file order.
        public var unknownColumns: [String] = []
        public var rows = 0

        public func count(_ reason: Reason) -> Int { skipped.lazy.filter { $0.reason == reason }.count }

        public var json: JSONValue {
            var counts: [String: JSONValue] = ["rows": .int(rows), "imported": .int(imported.count),
                                               "unchanged": .int(imported.lazy.filter(\.unchanged).count)]
            for reason in Reason.allCases { counts[reason.rawValue] = .int(count(reason)) }
            return ["counts": .object(counts),
                    "unknownColumns": .array(unknownColumns.map(JSONValue.string)),
                    "imported": .array(imported.map { item in
                        ["row": .int(item.row), "shortLink": .string(item.shortLink), "route": .string(item.routeID),
                         "destination": .string(item.destination), "builds": .array(item.builds.map(JSONValue.string)),
                         "notes": .array(item.notes.map(JSONValue.string)), "unchanged": .bool(item.unchanged)]
                    }),
                    "skipped": .array(skipped.map { item in
                        var object: [String: JSONValue] = ["row": .int(item.row), "shortLink": .string(item.shortLink),
                                                           "reason": .string(item.reason.rawValue), "detail": .string(item.detail)]
                        if let shape = item.shape { object["shape"] = .string(shape) }
                        return .object(object)
                    })]
        }
    }

    public enum Failure: Error, Sendable, Equatable, CustomStringConvertible {
        case table(CSVTable.Problem)
        case tooLarge(Int)
        case noHeader(String)
        case badHost(String)
        case hostNotDeclared(String)
        case badRoutes(String)
        case noSchemas

        public var description: String {
            switch self {
            case .table(let problem): problem.description
            case .tooLarge(let bytes): "The file is \(bytes) bytes; an import takes at most \(LinkImport.maximumFileBytes) (split it by domain, as Takeout does)."
            case .noHeader(let detail): detail
            case .badHost(let host): "--host \(host) is not a host name (letters, digits, - and ., no scheme or path)."
            case .hostNotDeclared(let host): "No build's schema declares the host \(host) (its \"hosts\"): register schemas whose apps claim it (their associated domains) before importing its links."
            case .badRoutes(let detail): "The current routes cannot be used: \(detail)"
            case .noSchemas: "No schema was given: the deep links are resolved on every build, so the import needs them."
            }
        }
    }

    /// The most bytes a file may hold: a Takeout export of tens of thousands of links fits many times over.
    public static let maximumFileBytes = 64 << 20
    /// The table's limits: rows (a link each) and a field's bytes (a deep link is at most
    /// 2,048 bytes to resolve; a description a few hundred).
    public static let tableLimits: CSVTable.Limits = {
        var limits = CSVTable.Limits()
        limits.maximumRows = 200_000
        limits.maximumFieldBytes = 8_192
        limits.maximumFields = 64
        return limits
    }()

    /// Domains a service owns, whose links cannot move to another server: Firebase's
    /// `page.link`, Branch's `app.link` and `test-app.link`, AppsFlyer's `onelink.me`.
    public static let serviceOwnedDomains: [(domain: String, owner: String)] = [
        ("page.link", "Google"), ("app.link", "Branch"), ("test-app.link", "Branch"), ("onelink.me", "AppsFlyer"),
    ]

    /// The first path segments of Waymark's own routes (the API, its pages, the
    /// associated-domain files): a link whose path starts with one is the server's, never a
    /// landing (`docs/landing.md`, "Which requests are links"), compared without case here.
    /// WaymarkAPITests holds this list to the API's routes.
    public static let reservedFirstSegments: Set<String> = ["v1", ".well-known", "dashboard", "console", "metrics", "healthz", "readyz"]

    public let source: Source
    /// The short links' host, lowercased: the custom domain being pointed at Waymark.
    public let host: String

    public init(source: Source, host: String) throws(Failure) {
        let lowered = host.lowercased()
        guard (1...253).contains(lowered.utf8.count), !lowered.hasPrefix("."), !lowered.hasSuffix("."), !lowered.contains(".."),
              lowered.utf8.allSatisfy({ Self.isHostByte($0) }) else { throw .badHost(host) }
        self.source = source
        self.host = lowered
    }

    /// The current routes with this file's links added after them, and the report.
    /// `routes`: the current routes document (`waymark.routes/1`); `schemas`: every live build's.
    /// - Complexity: O(file bytes + rows × builds × the cost of one resolution).
    public func run(_ bytes: [UInt8], routes: JSONValue, schemas: [Schema], now: Date) throws(Failure) -> (document: JSONValue, report: Report) {
        guard !schemas.isEmpty else { throw .noSchemas }
        guard bytes.count <= Self.maximumFileBytes else {
            throw .tooLarge(bytes.count)
        }
        guard schemas.contains(where: { $0.hosts.contains { $0.lowercased() == host } }) else { throw .hostNotDeclared(host) }
        let table: CSVTable
        do { table = try CSVTable(bytes, limits: Self.tableLimits) } catch { throw .table(error) }
        let (document, problems) = RoutesDocument.decode(routes)
        guard let document, case .array(var list)? = routes["routes"], case .object(var top) = routes else {
            throw .badRoutes(problems.first.map { "\($0.path): \($0.message)" } ?? "not a waymark.routes/1 document")
        }
        guard schemas.allSatisfy({ $0.app == document.app }) else { throw .badRoutes("the routes are for \(document.app); a schema is another app's") }
        let columns = try Columns(table.rows.first ?? [], source: source)
        var report = Report()
        report.unknownColumns = columns.unknown
        let context = ResolutionContext(satisfied: Set(schemas.flatMap(\.preconditions)), now: now)
        let resolvers = schemas.map { Resolver(schema: $0, analysis: RouteAnalysis(document: document, now: now)) }
        var ids: [String: Int] = [:], paths: [String: Int] = [:]
        for (index, route) in list.enumerated() {
            if let id = route["id"]?.stringValue { ids[id] = index }
            for pattern in route["patterns"]?.arrayValue ?? [] {
                if let text = pattern.stringValue, route["hosts"]?.arrayValue?.contains(.string(host)) ?? true { paths[text.lowercased()] = index }
            }
        }
        var seen: [String: Int] = [:]
        let rows = table.rows.dropFirst(columns.hasHeader ? 1 : 0)
        // Short links whose paths differ only in case (`/aBc1`, `/AbC1`: two links in
        // Firebase) are one pattern here: with different deep links, neither is imported, or
        // one printed code would open the other's destination.
        var variants: [String: (paths: Set<String>, deepLinks: Set<String>)] = [:]
        for fields in rows {
            guard !Self.isTrue(columns.value(.archived, in: fields)), let link = ShortLink(columns.value(.shortLink, in: fields)), link.host == host else { continue }
            variants[link.path.lowercased(), default: ([], [])].paths.insert(link.path)
            variants[link.path.lowercased(), default: ([], [])].deepLinks.insert(columns.value(.deepLink, in: fields))
        }
        for (offset, fields) in rows.enumerated() {
            let row = offset + (columns.hasHeader ? 2 : 1)
            report.rows += 1
            let field = { (name: Columns.Name) -> String in columns.value(name, in: fields) }
            let shortLink = field(.shortLink)
            func skip(_ reason: Reason, _ detail: String, shape: String? = nil) {
                report.skipped.append(Skipped(row: row, shortLink: Self.quoted(shortLink), reason: reason, detail: detail, shape: shape))
            }
            if Self.isTrue(field(.archived)) { skip(.archived, "Archived in Firebase: no longer served, so not imported."); continue }
            guard let link = ShortLink(shortLink) else {
                skip(.badShortLink, "Not an http(s) short link whose path is literal text (letters, digits and -._~!$&'()+,;=@), without a query or fragment.")
                continue
            }
            if let owner = Self.serviceOwnedDomains.first(where: { link.host == $0.domain || link.host.hasSuffix("." + $0.domain) })?.owner {
                skip(.cannotMove, "\(link.host) is \(owner)'s domain: it cannot be pointed at Waymark. Links on it stop working there; reprint or resend them on your own domain.")
                continue
            }
            guard link.host == host else { skip(.otherHost, "On \(link.host), not \(host): import that domain's links with --host \(link.host)."); continue }
            let key = link.path.lowercased()
            if let segment = key.split(separator: "/").first, Self.reservedFirstSegments.contains(String(segment)) {
                skip(.reserved, "/\(segment) is one of Waymark's own paths (the API, its pages, the associated-domain files): a browser opening this link would reach them, not the link. Give it another path.")
                continue
            }
            if let kinds = variants[key], kinds.deepLinks.count > 1 {
                if kinds.paths.count > 1 {
                    skip(.caseCollision, "Short links differing only in case (\(kinds.paths.sorted().prefix(3).map { Self.quoted($0) }.joined(separator: ", "))) have different deep links; Waymark's paths compare without case, so none of them is imported (one would open the other's destination). Add the one to keep by hand.")
                } else {
                    skip(.duplicate, "The same short link appears with different deep links: none of them is imported. Keep one row and import again.")
                }
                continue
            }
            if let first = seen[key] { skip(.duplicate, "The same short link as row \(first), with the same deep link: the first is imported."); continue }
            seen[key] = row
            let deepLink = field(.deepLink)
            guard !deepLink.isEmpty, deepLink.utf8.count <= 2_048, deepLink.contains(":"),
                  deepLink.unicodeScalars.allSatisfy({ $0.value > 0x20 && $0.value < 0x7F }) else {
                skip(.badDeepLink, "The deep link is missing or not a URL of at most 2,048 bytes of URL characters.")
                continue
            }
            // Every build: what the deep link opens there.
            var answers: [(build: String, destination: String, params: [String: ParamValue])] = []
            var matched: String? = nil
            var missed: NotFound? = nil
            for resolver in resolvers {
                switch resolver.resolve(url: deepLink, context: context) {
                case .proceed(let proceed):
                    answers.append((resolver.schema.buildName, proceed.destination, proceed.params))
                    matched = matched ?? proceed.routeID
                case .gated(let gate):
                    matched = matched ?? gate.routeID
                    if case .destination(let request) = gate.resume { answers.append((resolver.schema.buildName, request.destination, request.params)) }
                    else if case .proceed(let proceed) = resolver.resolve(url: deepLink, context: ResolutionContext(satisfied: Set(resolver.schema.preconditions), now: now)) {
                        answers.append((resolver.schema.buildName, proceed.destination, proceed.params))
                    }
                case .notFound(let notFound): missed = missed ?? notFound
                }
            }
            guard let answer = answers.first else {
                skip(.unanswered, Self.unanswered(missed), shape: LinkShape(link: deepLink).description)
                continue
            }
            if let other = answers.first(where: { $0.destination != answer.destination || $0.params != answer.params }) {
                skip(.differsByBuild, "\(answer.build) opens \(answer.destination), \(other.build) opens \(other.destination)\(other.destination == answer.destination ? " with other params" : ""): make the builds agree, then import again.")
                continue
            }
            let id = Self.routeID(for: link.path)
            var notes: [String] = []
            var route: [String: JSONValue] = ["id": .string(id), "patterns": [.string(link.path)], "destination": .string(answer.destination),
                                              "hosts": [.string(host)]]
            if !answer.params.isEmpty {
                route["params"] = .object(answer.params.mapValues { ["const": $0.json] })
            }
            // The deep link's route's window, so the short link ends when what it opens does.
            if let matched, let source = list.first(where: { $0["id"]?.stringValue == matched }) {
                for key in ["validFrom", "validUntil"] { if let value = source[key] { route[key] = value } }
            }
            if let fallback = fallback(fields, columns: columns, deepLink: deepLink, notes: &notes) { route["fallbackURL"] = .string(fallback) }
            var preview: [String: JSONValue] = [:]
            for (name, key) in [(Columns.Name.title, "title"), (.description, "description"), (.image, "image")] where !field(name).isEmpty {
                preview[key] = .string(field(name))
            }
            if !preview.isEmpty { route["preview"] = .object(preview) }
            // The UTM items, for the landing to pass on (Play's Install Referrer, the App Store's `ct`).
            var utm: [String: JSONValue] = [:]
            for name in Columns.Name.utm where !field(name).isEmpty {
                let key = String(name.rawValue.dropFirst(4))
                if RouteSpec.isUTMValue(field(name)) { utm[key] = .string(field(name)) } else {
                    notes.append("\(name.rawValue) dropped: a UTM value is 1 to \(RouteSpec.maximumUTMBytes) bytes of letters, digits and - . _ ~.")
                }
            }
            if !utm.isEmpty { route["utm"] = .object(utm) }
            route["notes"] = .string(Self.notes(source: source, shortLink: shortLink, deepLink: deepLink, fields: fields, columns: columns))
            // Each value held to the routes document's rules: a preview or fallback that
            // breaks one is dropped and said so; anything else refuses the row.
            if let problem = Self.check(&route, app: document.app, schemas: schemas, now: now, notes: &notes) { skip(.invalid, problem); continue }
            let builds = answers.map(\.build)
            let missing = resolvers.map(\.schema.buildName).filter { !builds.contains($0) }
            if !missing.isEmpty { notes.append("Not opened on \(missing.joined(separator: ", ")): no route answers its deep link there.") }
            let made = JSONValue.object(route)
            if let index = ids[id] {
                // Imported before: the same route is no change; another is not replaced.
                if Self.sameRoute(list[index], made) {
                    report.imported.append(Imported(row: row, shortLink: Self.quoted(shortLink), routeID: id, destination: answer.destination,
                                                    builds: builds, notes: notes, unchanged: true))
                } else {
                    skip(.taken, "A route with the id \(id) exists and differs from what this row makes (this link's route edited since it was imported, or another route of that id): left as it is.")
                }
                continue
            }
            if let index = paths[key] {
                let taker = list[index]["id"]?.stringValue ?? "at \(index)"
                // What the short link opens today: the same as its deep link on every build, or not.
                let same = resolvers.allSatisfy { resolver in
                    let now = Self.answer(resolver.resolve(url: "https://\(host)\(link.path)", context: context))
                    let was = Self.answer(resolver.resolve(url: deepLink, context: context))
                    return now?.destination == was?.destination && now?.params == was?.params
                }
                if same {
                    skip(.answered, "The route \(taker) already takes \(link.path) on \(host) and opens what the deep link opens, on every build: nothing to import.")
                } else {
                    skip(.taken, "The route \(taker) already takes \(link.path) on \(host) and opens something else: left as it is (the short link opens \(taker)'s destination). Limit \(taker) to its hosts (\"hosts\") and import again, or give the link another path.")
                }
                continue
            }
            ids[id] = list.count
            paths[key] = list.count
            list.append(made)
            report.imported.append(Imported(row: row, shortLink: Self.quoted(shortLink), routeID: id, destination: answer.destination,
                                            builds: builds, notes: notes, unchanged: false))
        }
        top["routes"] = .array(list)
        return (.object(top), report)
    }

    /// The one fallback Waymark keeps: where Firebase's three (`ofl` desktop, `ifl` iOS, `afl`
    /// Android) send everyone to the same address — a missing `ifl` or `afl` meaning the store
    /// and a missing `ofl` the deep link itself, as Firebase read them. Where they differ, none:
    /// the landing's platform rule (the schema's `appStoreURL`, `playStoreURL`, `webURL`) applies.
    private func fallback(_ fields: [String], columns: Columns, deepLink: String, notes: inout [String]) -> String? {
        let desktop = columns.value(.desktopFallback, in: fields), ios = columns.value(.iosFallback, in: fields)
        let android = columns.value(.androidFallback, in: fields)
        if desktop.isEmpty, ios.isEmpty, android.isEmpty { return nil }
        if !ios.isEmpty, ios == android, ios == (desktop.isEmpty ? deepLink : desktop) { return ios }
        let given = [("ofl", desktop), ("ifl", ios), ("afl", android)].filter { !$0.1.isEmpty }.map(\.0)
        notes.append("Fallbacks differ by platform (\(given.joined(separator: ", ")) given): no fallbackURL; the landing's platform rule sends people without the app to the schema's store or web address.")
        return nil
    }

    /// The route's text for people: where it came from, and what of the row Waymark does not use.
    private static func notes(source: Source, shortLink: String, deepLink: String, fields: [String], columns: Columns) -> String {
        var parts = ["Imported from \(source == .firebase ? "Firebase Dynamic Links" : "CSV"): \(shortLink) -> \(deepLink)."]
        let name = columns.value(.name, in: fields), created = columns.value(.created, in: fields)
        if !name.isEmpty { parts.append("Name: \(name).") }
        if !created.isEmpty { parts.append("Created: \(created).") }
        let versions = [("iOS minimum", Columns.Name.iosMinimum), ("Android minimum", .androidMinimum)].compactMap { label, name -> String? in
            let value = columns.value(name, in: fields)
            return value.isEmpty ? nil : "\(label) \(value)"
        }
        if !versions.isEmpty { parts.append("\(versions.joined(separator: ", ")) (a route opens on every build whose schema has its destination).") }
        // Only text for people: control and bidi characters out, and at most the notes' limit.
        var text = String(String.UnicodeScalarView(parts.joined(separator: " ").unicodeScalars.filter { !LinkPreview.isControl($0) }))
        while text.utf8.count > RouteSpec.maximumNotesBytes { text.removeLast() }
        return text
    }

    /// The route held to the validator's rules (as a one-route document, on every build) and
    /// to the server's fallback addresses: a preview or fallback that breaks one is dropped (said in
    /// `notes`), any other problem refuses the route (its message returned).
    private static func check(_ route: inout [String: JSONValue], app: String, schemas: [Schema], now: Date, notes: inout [String]) -> String? {
        for _ in 0..<5 {
            let single: JSONValue = ["format": "waymark.routes/1", "app": .string(app), "routes": [.object(route)]]
            let problems = Validator.validate(single, against: schemas, now: now).errors + FallbackAddresses.problems(in: single)
            guard let problem = problems.first else { return nil }
            let path = problem.path.description
            if path.contains(".preview"), case .object(var preview)? = route["preview"] {
                // Only the member that breaks the rule (the problem names it), unless it names none.
                let member = ["title", "description", "image"].first { path.hasSuffix(".preview." + $0) }
                if let member { preview[member] = nil } else { preview = [:] }
                route["preview"] = preview.isEmpty ? nil : .object(preview)
                notes.append("Preview \(member ?? "") dropped: \(problem.message)".replacingOccurrences(of: "  ", with: " "))
            } else if path.contains(".fallbackURL"), route["fallbackURL"] != nil {
                route["fallbackURL"] = nil
                notes.append("Fallback dropped: \(problem.message)")
            } else {
                return problem.message
            }
        }
        return "The route breaks the routes document's rules."
    }

    /// Why no build opens a deep link, from the engine's reason on the first build that tried.
    private static func unanswered(_ missed: NotFound?) -> String {
        let detail = missed?.detail.map { " (\(quoted($0)))" } ?? ""
        switch missed?.reason {
        case .expired:
            return "The route \(missed?.routeID ?? "") that answers the deep link has ended\(detail): extend its window, then import again."
        case .validationFailed:
            return "A route's pattern matches the deep link but a param does not fit\(detail): the link the old service held is not one the app opens."
        case .malformed:
            return "The deep link is not one of this app's links\(detail): its host or scheme is not one a schema declares, or it is not a valid link."
        default:
            return "No route answers the deep link on any build: add a route for its shape, then import again."
        }
    }

    /// What a resolution opens, a gate's destination included.
    private static func answer(_ resolution: Resolution) -> (destination: String, params: [String: ParamValue])? {
        switch resolution {
        case .proceed(let proceed): (proceed.destination, proceed.params)
        case .gated(let gate): if case .destination(let request) = gate.resume { (request.destination, request.params) } else { (gate.destination, [:]) }
        case .notFound: nil
        }
    }

    /// Whether a route in the document is the one this import makes (its notes aside, which
    /// people may edit).
    private static func sameRoute(_ existing: JSONValue, _ made: JSONValue) -> Bool {
        guard case .object(var a) = existing, case .object(var b) = made else { return false }
        a["notes"] = nil
        b["notes"] = nil
        return JSONValue.object(a).serializedBytes() == JSONValue.object(b).serializedBytes()
    }

    /// `link.` and the path's segments joined with `.`, each byte a route id cannot hold made
    /// `_`; when that lost anything (a byte made `_`, a `_` or `.` of the path's own, a capital
    /// letter, which literals do not tell apart, or past 110 bytes), `_` and the first 8 hex
    /// digits of the path's SHA-256 are added. An id without them has no `_`, so a hashed id
    /// is never another path's plain one; two hashed ids meet only if 32 bits of two paths'
    /// hashes do, and then the second is reported `taken`, not imported over the first.
    static func routeID(for path: String) -> String {
        let segments = path.split(separator: "/", omittingEmptySubsequences: true).joined(separator: ".")
        var id = "link." + String(decoding: segments.utf8.map { byte in
            RouteSpec.isValidID("a" + String(decoding: [byte], as: UTF8.self)) ? byte : UInt8(ascii: "_")
        }, as: UTF8.self)
        // `.` joins segments and `_` stands for a lost byte, so a path holding either is hashed too (`/x.y` is not `/x/y`).
        let lossless = path.dropFirst().utf8.allSatisfy { $0 == UInt8(ascii: "/") || ($0 != UInt8(ascii: "_") && $0 != UInt8(ascii: ".") && RouteSpec.isValidID("a" + String(decoding: [$0], as: UTF8.self))) }
        if !lossless || id.utf8.count > 128 || path.lowercased() != path {
            var hash = SHA256()
            hash.update(Array(path.utf8))
            let digest = hash.finalize().prefix(4).map { String($0, radix: 16).count == 1 ? "0" + String($0, radix: 16) : String($0, radix: 16) }.joined()
            id = String(id.prefix(110)) + "_" + digest
        }
        return id
    }

    /// A value as a report shows it: at most 200 bytes, control and bidi characters as `?`.
    static func quoted(_ text: String) -> String {
        var out = String.UnicodeScalarView()
        var bytes = 0
        for scalar in text.unicodeScalars {
            bytes += String(scalar).utf8.count
            if bytes > 200 { out.append(contentsOf: "…".unicodeScalars); break }
            out.append(LinkPreview.isControl(scalar) ? "?" : scalar)
        }
        return String(out)
    }

    static func isTrue(_ value: String) -> Bool {
        ["true", "yes", "1"].contains(value.trimmingCharacters(in: .whitespaces).lowercased())
    }

    static func isHostByte(_ byte: UInt8) -> Bool {
        (UInt8(ascii: "a")...UInt8(ascii: "z")).contains(byte) || (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(byte)
            || byte == UInt8(ascii: "-") || byte == UInt8(ascii: ".")
    }
}

/// A short link as the import takes it: `https://host/path`, the path of literal segments
/// (the pattern it becomes), no query, fragment, user or port.
struct ShortLink {
    let host: String
    let path: String

    init?(_ text: String) {
        let trimmed = text.trimmingCharacters(in: .whitespaces)
        guard trimmed.utf8.count <= 1_024 else { return nil }
        let lowered = trimmed.lowercased()
        let rest: Substring
        if lowered.hasPrefix("https://") { rest = trimmed.dropFirst(8) } else if lowered.hasPrefix("http://") { rest = trimmed.dropFirst(7) } else { return nil }
        let slash = rest.firstIndex(of: "/") ?? rest.endIndex
        let host = rest[..<slash].lowercased()
        guard !host.isEmpty, host.utf8.allSatisfy(LinkImport.isHostByte) else { return nil }
        var path = String(rest[slash...])
        while path.hasSuffix("/"), path.count > 1 { path.removeLast() }
        let segments = path.split(separator: "/", omittingEmptySubsequences: false).dropFirst()
        guard !segments.isEmpty, segments.allSatisfy({ segment in
            !segment.isEmpty && segment != "." && segment != ".." && segment.utf8.allSatisfy(Self.isLiteralByte)
        }) else { return nil }
        self.host = host
        self.path = path
    }

    /// A literal pattern's characters (`docs/formats.md`): letters, digits, `-._~!$&'()+,;=@`.
    static func isLiteralByte(_ byte: UInt8) -> Bool {
        (UInt8(ascii: "a")...UInt8(ascii: "z")).contains(byte) || (UInt8(ascii: "A")...UInt8(ascii: "Z")).contains(byte)
            || (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(byte) || Array("-._~!$&'()+,;=@".utf8).contains(byte)
    }
}

/// Which field of a row holds what: from the header's names (case, spaces, `_` and `-`
/// aside), or for a plain CSV without a header, by position.
struct Columns {
    enum Name: String, CaseIterable {
        case shortLink = "short link", deepLink = "link", androidPackage = "apn", androidFallback = "afl", androidMinimum = "amv"
        case iosBundle = "ibi", iosFallback = "ifl", iosScheme = "ius", iPadFallback = "ipfl", iPadBundle = "ipbi", appStoreID = "isi"
        case iosMinimum = "imv", forcedRedirect = "efr", desktopFallback = "ofl", title = "st", description = "sd", image = "si"
        case utmSource = "utm_source", utmMedium = "utm_medium", utmCampaign = "utm_campaign", utmTerm = "utm_term", utmContent = "utm_content"
        case providerToken = "at", campaignToken = "ct", mediaType = "mt", providerToken2 = "pt", archived = "archived", name = "link name", created = "created"

        static let utm: [Name] = [.utmSource, .utmMedium, .utmCampaign, .utmTerm, .utmContent]

        /// The header names each column goes by (normalized: lowercase, no spaces, `_` or `-`).
        var aliases: [String] {
            switch self {
            case .shortLink: ["shortlink", "shorturl", "short", "url"]
            case .deepLink: ["link", "deeplink", "longurl", "longlink", "destination", "destinationurl"]
            case .title: ["st", "socialtitle", "title"]
            case .description: ["sd", "socialdescription", "description"]
            case .image: ["si", "socialimagelink", "socialimage", "image", "imageurl"]
            case .name: ["linkname", "name"]
            case .created: ["created", "creationtime", "createdat", "createtime"]
            default: [Columns.normalized(rawValue)]
            }
        }
    }

    private var positions: [Name: Int] = [:]
    let hasHeader: Bool
    var unknown: [String] = []

    init(_ first: [String], source: LinkImport.Source) throws(LinkImport.Failure) {
        // A plain file may start with its first link.
        if source == .csv, let cell = first.first, cell.lowercased().hasPrefix("http") {
            hasHeader = false
            for (index, name) in [Name.shortLink, .deepLink, .title, .description, .image].enumerated() { positions[name] = index }
            return
        }
        hasHeader = true
        var byAlias: [String: Name] = [:]
        for name in Name.allCases { for alias in name.aliases { byAlias[alias] = name } }
        for (index, header) in first.enumerated() {
            if let name = byAlias[Self.normalized(header)], positions[name] == nil { positions[name] = index } else { unknown.append(LinkImport.quoted(header)) }
        }
        guard positions[.shortLink] != nil, positions[.deepLink] != nil else {
            throw .noHeader("The first row must name the columns, among them the short link (\"short link\") and the deep link (\"link\")\(source == .csv ? ", or be the first link itself (short link, deep link[, title, description, image])" : ""); it names \(first.prefix(8).map { LinkImport.quoted($0) }.joined(separator: ", ")).")
        }
    }

    func value(_ name: Name, in fields: [String]) -> String {
        guard let index = positions[name], index < fields.count else { return "" }
        return fields[index].trimmingCharacters(in: .whitespaces)
    }

    static func normalized(_ header: String) -> String {
        String(header.lowercased().unicodeScalars.filter { $0 != " " && $0 != "_" && $0 != "-" && $0 != "\u{FEFF}" }.map(Character.init))
    }
}
