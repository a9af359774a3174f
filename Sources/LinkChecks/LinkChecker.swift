import Foundation
import RouteEngine
import Synchronization

/// How link checks run: what the network may be used for, how findings count, how many
/// fetches at once, how long results are reused.
public struct LinkCheckOptions: Hashable, Sendable {
    public var fetch = FetchOptions()
    /// Findings are warnings unless configured to block publishing.
    public var severity: Severity = .warning
    /// Fetches in flight at once, across all checks of one purpose (validations, publishes)
    /// running together.
    public var parallelism = 8
    /// Distinct URLs one check fetches at most; a document naming more is checked in part
    /// (`linksNotChecked`), so one request cannot make the server send thousands.
    public var maximumFetchesPerCheck = 200
    /// Seconds a fetched result is reused (0: never).
    public var cacheSeconds = 300
    /// Checks in progress at once (`admit`), of each kind, and for one holder (a token):
    /// past them a check is not started. Each runs at most `parallelism` threads, so the
    /// threads link checks hold are bounded by these and not by the requests that ask.
    public var maximumChecks = 4
    public var maximumChecksPerHolder = 1
    /// Seconds a check waits for its fetches: addresses not fetched by then are reported as
    /// not checked (`linksNotChecked`), and its answer does not wait for them (0: no limit).
    public var checkSeconds = 30
    /// The largest associated-domain file read (Apple's limit is 128 KB).
    public var maximumFileBytes = 128 << 10

    public init() {}
}

/// Checks what the validator cannot see from the document alone: that every fallback URL
/// answers, and that every universal-link host's `apple-app-site-association` and
/// `assetlinks.json` name the app and open each route's patterns. Findings are validation
/// problems (`unreachableFallback`, `associatedDomainMissing`, `associatedDomainWrongApp`,
/// `associatedDomainNotCovering`) for the report. Each URL is fetched once per check, in
/// parallel up to `parallelism`, and reused for `cacheSeconds`.
public final class LinkChecker: Sendable {
    public let options: LinkCheckOptions
    private let fetcher: HTTPSFetcher
    private let cache = Mutex<[Job: (outcome: Outcome, expires: ContinuousClock.Instant)]>([:])
    /// Fetch rounds made (not cache hits), since start: for tests and metrics.
    public let fetches = Atomic<Int>(0)
    /// `parallelism` slots for each purpose, shared by its checks in progress: validations
    /// cannot hold a publish's fetches.
    private let slots: [DispatchSemaphore]
    /// Checks in progress, by kind (index) and holder.
    private let places = Mutex<[(total: Int, holders: [String: Int])]>([(0, [:]), (0, [:])])

    public init(options: LinkCheckOptions = LinkCheckOptions()) {
        self.options = options
        self.fetcher = HTTPSFetcher(options: options.fetch)
        self.slots = [DispatchSemaphore(value: max(1, options.parallelism)), DispatchSemaphore(value: max(1, options.parallelism))]
    }

    /// What a check is for: its places are counted apart, so dry runs cannot keep a publish
    /// from being checked.
    public enum Purpose: Int, Sendable {
        case validation, publish
    }

    /// One check's place (`admit`): given back when the place is released — after the check
    /// has answered and its last fetch has ended, so a check that answered at its deadline
    /// still holds its place while its fetches run out.
    public final class Place: Sendable {
        public let purpose: Purpose
        fileprivate let release: @Sendable () -> Void

        fileprivate init(_ purpose: Purpose, release: @escaping @Sendable () -> Void) {
            self.purpose = purpose
            self.release = release
        }

        deinit { release() }
    }

    /// A place for `holder`'s check of `purpose`, or nil when `maximumChecks` of that purpose,
    /// or `maximumChecksPerHolder` of the holder's, are in progress.
    public func admit(_ holder: String, for purpose: Purpose) -> Place? {
        let (limit, perHolder) = (max(1, options.maximumChecks), max(1, options.maximumChecksPerHolder))
        let taken = places.withLock { places -> Bool in
            let kind = places[purpose.rawValue]
            guard kind.total < limit, kind.holders[holder, default: 0] < perHolder else { return false }
            places[purpose.rawValue].total += 1
            places[purpose.rawValue].holders[holder, default: 0] += 1
            return true
        }
        guard taken else { return nil }
        return Place(purpose) { [self] in
            places.withLock { places in
                places[purpose.rawValue].total -= 1
                let left = places[purpose.rawValue].holders[holder, default: 1] - 1
                places[purpose.rawValue].holders[holder] = left > 0 ? left : nil
            }
        }
    }

    /// Checks in progress now, of each purpose (tests, metrics).
    public func checksInProgress(_ purpose: Purpose) -> Int { places.withLock { $0[purpose.rawValue].total } }

    enum Job: Hashable, Sendable {
        case fallback(String)
        case apple(host: String)
        case android(host: String)

        var url: String {
            switch self {
            case .fallback(let url): url
            case .apple(let host): "https://\(host)/.well-known/apple-app-site-association"
            case .android(let host): "https://\(host)/.well-known/assetlinks.json"
            }
        }
    }

    enum Outcome: Sendable {
        case fallback(FallbackProbe.Verdict)
        /// The file's bytes, or why it could not be had.
        case file(Result<[UInt8], AssociationError>)
    }

    /// The findings for a routes document against the schemas it is validated with. A
    /// document that does not decode gives none: the validator reports why. `place`, when
    /// given, is held until the check's last fetch has ended. At most `checkSeconds`: the
    /// addresses not fetched by then are reported as not checked.
    public func check(_ routes: JSONValue, against schemas: [Schema], in place: Place? = nil) -> [ValidationProblem] {
        guard let document = RoutesDocument.decode(routes).document else { return [] }
        let routes = document.routes
        var apple: [String: [String]] = [:]
        var android: [String: [AndroidApp]] = [:]
        for schema in schemas {
            for host in schema.hosts {
                if !schema.appleAppIDs.isEmpty { apple[host, default: []].append(contentsOf: schema.appleAppIDs) }
                if let app = schema.android { android[host, default: []].append(app) }
            }
        }
        let fallbacks = (routes.compactMap(\.fallbackURL) + routes.compactMap(\.preview?.image)).filter { $0.lowercased().hasPrefix("https://") }
        // Host files first: they decide whether any universal link opens the app.
        let hostJobs = apple.keys.sorted().map { Job.apple(host: $0) } + android.keys.sorted().map { Job.android(host: $0) }
        let wanted = unique(hostJobs + fallbacks.map(Job.fallback))
        let jobs = Array(wanted.prefix(options.maximumFetchesPerCheck))
        let outcomes = Dictionary(uniqueKeysWithValues: zip(jobs, run(jobs, holding: place)).compactMap { job, outcome in outcome.map { (job, $0) } })

        var problems: [ValidationProblem] = []
        if wanted.count > jobs.count {
            problems.append(ValidationProblem(.linksNotChecked, at: .root,
                "Only \(jobs.count) of the \(wanted.count) addresses these routes name were checked (the limit for one validation); the fallbacks of the rest were not."))
        }
        if outcomes.count < jobs.count {
            // With the findings' severity: where they block publishing, links left unchecked
            // (a slow or flooded network) do too, rather than letting a broken one through.
            problems.append(problem(.linksNotChecked, at: .root,
                "Only \(outcomes.count) of the \(jobs.count) addresses these routes name could be checked within \(options.checkSeconds) s "
                + "(the limit for one check); the rest were not."))
        }
        for route in routes {
            if let url = route.fallbackURL, case .fallback(.unreachable(let reason))? = outcomes[.fallback(url)] {
                problems.append(problem(.unreachableFallback, at: route.path + "fallbackURL",
                    "The fallback \(url) of route \"\(route.id)\" is unreachable: \(reason). People without the app would land on an error."))
            }
            if let url = route.preview?.image, case .fallback(.unreachable(let reason))? = outcomes[.fallback(url)] {
                problems.append(problem(.unreachableFallback, at: route.path + "preview" + "image",
                    "The preview image \(url) of route \"\(route.id)\" is unreachable: \(reason). Cards shared in chats would show no picture."))
            }
        }
        for host in apple.keys.sorted() {
            guard case .file(let fetched)? = outcomes[.apple(host: host)] else { continue }
            problems += appleProblems(host: host, appIDs: unique(apple[host]!), file: fetched, routes: routes)
        }
        for host in android.keys.sorted() {
            guard case .file(let fetched)? = outcomes[.android(host: host)] else { continue }
            problems += androidProblems(host: host, apps: unique(android[host]!), file: fetched)
        }
        return problems
    }

    private func problem(_ code: ProblemCode, at path: JSONPath, _ message: String) -> ValidationProblem {
        ValidationProblem(code, at: path, message, severity: options.severity)
    }

    private func appleProblems(host: String, appIDs: [String], file: Result<[UInt8], AssociationError>, routes: [RouteSpec]) -> [ValidationProblem] {
        let url = Job.apple(host: host).url
        let opening = "Universal links to \(host) will open in the browser, not the app"
        let association: AppleAppSiteAssociation
        switch file.flatMap({ AppleAppSiteAssociation.parse($0) }) {
        case .failure(let error): return [problem(.associatedDomainMissing, at: .root, "\(opening): \(url) \(error.reason).")]
        case .success(let value): association = value
        }
        let ruleSets = appIDs.compactMap { id in association.rules(for: id).map { (id, $0) } }
        guard !ruleSets.isEmpty else {
            let listed = association.appIDs.isEmpty ? "no app" : association.appIDs.joined(separator: ", ")
            return [problem(.associatedDomainWrongApp, at: .root,
                "\(opening): \(url) lists \(listed), not \(appIDs.joined(separator: " or ")).")]
        }
        var problems: [ValidationProblem] = []
        for route in routes where route.scope.admits(.web(host: host)) {
            for (index, pattern) in route.patterns.enumerated() where (try? URLPattern(pattern)) != nil {
                let verdicts = ruleSets.map { PathCoverage.check(route: pattern, rules: $0.1) }
                guard !verdicts.contains(.covered) else { continue }
                let path = route.path + "patterns" + index
                let lead = "Route \"\(route.id)\" (\(pattern)) will open in the browser on \(host), not the app"
                switch verdicts[0] {
                case .covered: break
                case .undecided:
                    problems.append(problem(.associatedDomainNotCovering, at: path,
                        "\(lead)? It could not be decided: the patterns of \(url) are too complex to compare."))
                case .notCovered(let example, let rule):
                    let why = rule.map { "is excluded by \($0)" } ?? "matches none of the paths"
                    problems.append(problem(.associatedDomainNotCovering, at: path,
                        "\(lead): a link such as https://\(host)\(example) \(why) in \(url) for \(ruleSets[0].0)."))
                }
            }
        }
        return problems
    }

    private func androidProblems(host: String, apps: [AndroidApp], file: Result<[UInt8], AssociationError>) -> [ValidationProblem] {
        let url = Job.android(host: host).url
        let opening = "Android App Links to \(host) will not be verified and open in the browser"
        let links: AssetLinks
        switch file.flatMap({ AssetLinks.parse($0) }) {
        case .failure(let error): return [problem(.associatedDomainMissing, at: .root, "\(opening): \(url) \(error.reason).")]
        case .success(let value): links = value
        }
        return apps.filter { !links.allows(package: $0.package, fingerprints: $0.sha256CertFingerprints) }.map { app in
            let why = links.lists(package: app.package)
                ? "lists \(app.package) with other certificate fingerprints than the schema's"
                : "does not list the package \(app.package) for handle_all_urls"
            return problem(.associatedDomainWrongApp, at: .root, "\(opening): \(url) \(why).")
        }
    }

    // MARK: Fetching

    /// Each job's outcome, from the cache or fetched, `parallelism` at a time; nil for a job
    /// not fetched within `checkSeconds`. The fetching threads hold `place`.
    private func run(_ jobs: [Job], holding place: Place?) -> [Outcome?] {
        let now = ContinuousClock.now
        var outcomes: [Outcome?] = cache.withLock { cache in
            cache = cache.filter { $0.value.expires > now }
            return jobs.map { cache[$0]?.outcome }
        }
        let missing = jobs.indices.filter { outcomes[$0] == nil }
        let deadline: DispatchTime = options.checkSeconds > 0 ? .now() + .seconds(options.checkSeconds) : .distantFuture
        // Each outcome is counted and kept as its fetch ends, so one that ends after the
        // deadline is there for the next check, and a fetch never started is not counted.
        let fetched = Self.parallelMap(missing.map { jobs[$0] }, width: options.parallelism, until: deadline) { [self] job in
            let outcome = withExtendedLifetime(place) { fetch(job, slots: slots[(place?.purpose ?? .publish).rawValue]) }
            fetches.add(1, ordering: .relaxed)
            if options.cacheSeconds > 0 {
                let expires = ContinuousClock.now + .seconds(options.cacheSeconds)
                cache.withLock { $0[job] = (outcome, expires) }
            }
            return outcome
        }
        for (index, outcome) in zip(missing, fetched) { outcomes[index] = outcome }
        return outcomes
    }

    private func fetch(_ job: Job, slots: DispatchSemaphore) -> Outcome {
        slots.wait()
        defer { slots.signal() }
        switch job {
        case .fallback(let url): return .fallback(FallbackProbe(fetcher: fetcher).check(url))
        case .apple, .android: return .file(fetchFile(job.url))
        }
    }

    /// An associated-domain file as Apple and Google fetch it: 200, no redirect,
    /// `application/json`, at most `maximumFileBytes`.
    private func fetchFile(_ url: String) -> Result<[UInt8], AssociationError> {
        switch fetcher.fetch(url, accept: "application/json", maximumBody: options.maximumFileBytes) {
        case .failure(let failure): return .failure(AssociationError("cannot be fetched: \(failure.message)"))
        case .success(let response):
            if (300..<400).contains(response.status) {
                return .failure(AssociationError("redirects to \(response.redirect ?? "another address"); it must be served directly"))
            }
            guard response.status == 200 else {
                return .failure(AssociationError("answers \(response.status)\(FallbackProbe.statusName(response.status).map { " (\($0))" } ?? "")"))
            }
            guard response.mediaType == "application/json" else {
                return .failure(AssociationError("is served as \(response.contentType ?? "no content type"), not application/json"))
            }
            return .success(response.body)
        }
    }

    /// `body` over `items` on `width` threads of their own (the work blocks on the network,
    /// so Dispatch's pool, sized to the cores, would run too few at once), until `deadline`:
    /// then what has finished (nil for the rest), and the threads take no new item; those in
    /// the middle of one end with it, in the background.
    static func parallelMap<T: Sendable, R: Sendable>(_ items: [T], width: Int, until deadline: DispatchTime = .distantFuture,
                                                      _ body: @escaping @Sendable (T) -> R) -> [R?] {
        guard !items.isEmpty else { return [] }
        let results = Mutex<[R?]>(Array(repeating: nil, count: items.count))
        let next = Atomic<Int>(0)
        let done = DispatchGroup()
        for _ in 0..<max(1, min(width, items.count)) {
            done.enter()
            let thread = Thread {
                while case let index = next.add(1, ordering: .relaxed).oldValue, index < items.count {
                    let result = body(items[index])
                    results.withLock { $0[index] = result }
                }
                done.leave()
            }
            thread.start()
        }
        if done.wait(timeout: deadline) == .timedOut {
            // No new item is started; what is in progress ends on its own.
            next.store(items.count, ordering: .relaxed)
        }
        return results.withLock { $0 }
    }

    private func unique<T: Hashable>(_ items: [T]) -> [T] {
        var seen: Set<T> = []
        return items.filter { seen.insert($0).inserted }
    }
}
