import Foundation
import HTTPServer
import WaymarkAPI
import DatabaseStore
import ManifestStore
import Replication
import Rollout
import Telemetry
import SystemIO

// One file, though long: `waymark serve` from its options to a running daemon, in the
// order it starts (store, telemetry, follower, API, listeners) and stops.

/// `waymark serve`: opens (or creates and seeds) the data directory and serves the API.
enum ServeCommand {
    static let help = """
        Usage: waymark serve [--host H]... [--port P] [--data-dir D] [options]

        Serves the manifest API from a data directory. On first start the directory is
        created and seeded from --seed; when it has no tokens, an admin token is created
        and printed once. A damaged store is refused, not served in part.

        Options:
        \(options.help)
        \(LinkCheckArguments.help)
        \(LinkCheckArguments.cacheHelp)
                                   With --check-links, POST /v1/validate and publishing include
                                   the link findings (publishing is refused on them when they
                                   are errors); rollbacks are not checked, so they stay fast
        \([OptionSpec("--help", nil, ["Show this help"])].help)

        SIGTERM or SIGINT stop accepting, finish requests in flight, and exit 0.
        Exit status: 2 bad usage, 3 the store or the port cannot be used.
        """

    /// Every option of `waymark serve` but the link checks' (`LinkCheckArguments`) and
    /// `--help`, declared once: the help prints them in this order, and the parser accepts
    /// exactly these (a value after each that names one).
    static let options: [OptionSpec] = [
        OptionSpec("--host", "H", ["Address to listen on, IPv4 or IPv6 literal; repeatable", "(default 127.0.0.1: loopback only)"]),
        OptionSpec("--port", "P", ["TCP port (default 8080; 0 picks a free one)"]),
        OptionSpec("--data-dir", "D", ["The data directory (default ./data); with --database, the node's own", "(tokens and telemetry, until they move into the database)"]),
        OptionSpec("--database", "URL", ["Keep revisions, schemas, schedules, the rollout and the audit log in", "PostgreSQL (postgres://…; or set WAYMARK_DATABASE_URL, which keeps it", "out of the process list): any number of nodes on one database", "(docs/postgres.md)"]),
        OptionSpec("--seed", "DIR", ["Seed an empty store from DIR/schema-*.json and DIR/routes.json", "(default manifests/storefront, skipped when missing)"]),
        OptionSpec("--no-seed", nil, ["Start an empty store empty"]),
        OptionSpec("--public-reads", nil, ["Serve manifests without a token (what phones read; revisions,", "schemas, the rollout and QR codes still need routes:read)"]),
        OptionSpec("--allow-private-fallbacks", nil, ["Let fallback URLs name loopback or private addresses (tests", "against servers on loopback only; refused by default)"]),
        OptionSpec("--threads", "N", ["Event loops, one thread each (default: one per core)"]),
        OptionSpec("--max-connections", "N", ["Open connections; at the limit the longest idle one is closed", "for a new one, and with none idle new ones wait (default 10000)"]),
        OptionSpec("--max-connections-per-peer", "N", ["Open connections from one IPv4 address or IPv6 /64; more are", "reset at accept (default 1000; 0: no cap — behind a proxy,", "where every connection is the proxy's, raise it or use 0)"]),
        OptionSpec("--max-document-bytes", "N", ["Largest routes document or schema accepted (default 16777216)"]),
        OptionSpec("--max-buffered-body-bytes", "N", ["Request body bytes all connections may hold at once, reserved", "before a body is read; a head that does not fit gets 503", "(default 268435456)"]),
        OptionSpec("--max-buffered-body-bytes-per-peer", "N", ["The share of those one IPv4 address or IPv6 /64 may hold; more", "get 503 (default: a quarter of the total, and at least", "--max-document-bytes; 0: no share — behind a proxy use 0,", "or, for one on the same host, --trust-forwarded-for)"]),
        OptionSpec("--max-queued-output-bytes", "N", ["Bytes of large answers (8 KiB or more) queued for readers and", "not yet written; past it the slowest readers are reset", "(default 134217728)"]),
        OptionSpec("--max-queued-output-bytes-per-peer", "N", ["The share of those one IPv4 address or IPv6 /64 may have", "(default 33554432; 0: no share — behind a proxy use 0)"]),
        OptionSpec("--memory-limit", "N", ["The memory it is given, in bytes (default: its cgroup's limit,", "if any); it refuses to start when its budgets (bodies, queued", "answers, schedules, caches, itself) do not fit"]),
        OptionSpec("--max-queued-work", "N", ["Changes (publish, rollback, validation, schedules; 4 per", "token), rollout controls and, apart, costly reads (QR,", "previews, revisions, diffs; a quarter per token or peer) that", "may wait or run off the event loops at once, each lane; more", "get 503. Builds are never refused (default 64)"]),
        OptionSpec("--documents-at-once", "N", ["Documents parsed at once (every change, a draft previewed,", "diffed or replayed, a schedule firing), each held while it", "is validated (160 MiB at most, counted in the memory", "budget); the rest wait, each token's in turn (default 1)"]),
        OptionSpec("--rate-share-per-peer", "P", ["The percent of the app's token's rate (telemetry:write: every", "install's) one IPv4 address or IPv6 /64 may use, and never", "less than 10/s (an IPv6 /56 twice it, a /48 four times);", "below half, only quiet addresses are served", "(default 5; 0: off — behind a proxy use 0, or", "--trust-forwarded-for)"]),
        OptionSpec("--pin-threads", nil, ["Pin event loop i to the i-th allowed CPU"]),
        OptionSpec("--telemetry-minutes", "H", ["Keep per-minute telemetry counts for H hours (default 48)"]),
        OptionSpec("--telemetry-hours", "D", ["Keep per-hour telemetry counts for D days (default 90)"]),
        OptionSpec("--telemetry-max-routes", "N", ["Route ids counted by name, and history's route ids a batch may", "name beside the served revisions'; the rest are \"other\"", "(default 10000)"]),
        OptionSpec("--telemetry-max-versions", "N", ["App versions counted by name (default 1000)"]),
        OptionSpec("--telemetry-max-cells", "N", ["Count cells (combinations per minute or hour) kept with their", "own names; past it new ones are folded into \"other\"", "(default 1000000, about 35 MB)"]),
        OptionSpec("--quiet", nil, ["No access log (one JSON line per request on stderr)"]),
        OptionSpec("--init-tokens", nil, ["Create and print a new admin token when a store that has", "revisions has no tokens (tokens.json lost); without it such", "a store is refused (a new store gets its first token anyway)"]),
        OptionSpec("--follow", "URL", ["Run as a read-only follower of the primary at URL: mirror its", "revisions, schemas and tokens, serve the same manifests and", "ETags, refuse writes (409), forward telemetry to it as counts"]),
        OptionSpec("--follow-token", "T", ["A token of the primary with the scope replication (or set", "WAYMARK_FOLLOW_TOKEN, which keeps it out of the process list)"]),
        OptionSpec("--follow-token-file", "F", ["Read that token from the file F (a mounted secret)"]),
        OptionSpec("--follow-interval", "S", ["Seconds between polls of the primary and forwards (default 2)"]),
        OptionSpec("--rollout-look-interval", "S", ["Seconds between the primary's looks at a running rollout's", "telemetry, which advance or stop it (default 5)"]),
        OptionSpec("--guard-installs", "K", ["A guard trip needs candidate failures from K installs, and a", "step advances on evidence from K installs (default 25)"]),
        OptionSpec("--guard-networks", "J", ["A guard trip needs candidate failures from J networks", "(IPv4 /24, IPv6 /48) (default 10)"]),
        OptionSpec("--guard-per-source", "N", ["Resolutions one install may supply to the guard a day (default 5)"]),
        OptionSpec("--guard-per-network", "N", ["Resolutions one network may supply to each side of the guard", "a day (default 50)"]),
        OptionSpec("--trust-forwarded-for", nil, ["Behind a proxy on loopback: the client is the last", "X-Forwarded-For address (nginx's proxy_add_x_forwarded_for)", "for the guard's networks, rate and body shares"]),
        OptionSpec("--shapes-per-source", "N", ["Unknown-link shapes one install (or a visitor's network) may add", "to the list a minute (default 3)"]),
        OptionSpec("--shapes-per-network", "N", ["Unknown-link shapes one network may add a minute (default 30)"]),
        OptionSpec("--suggestion-sources", "N", ["Distinct sources a shape needs before a route is suggested for it", "(default 3)"]),
        OptionSpec("--telemetry-lateness", "M", ["Minutes an event may be older than its batch's arrival and still", "count in the per-minute cells (default 10; older: its hour only)"]),
        OptionSpec("--telemetry-batch-ids", "N", ["Ids of accepted batches remembered, so a retried batch is", "counted once (default 250000)"]),
        OptionSpec("--telemetry-batch-window", "H", ["Hours an accepted batch's id is remembered (default 168)"]),
        OptionSpec("--clock-file", "F", ["For tests: the daemon's wall clock is the seconds since 1970", "written in F, read again at each use (rollout steps, schedules,", "telemetry windows, revision and audit times); it never goes back.", "A move of --rollout-look-interval or more brings a look at once"]),
    ]

    static let defaultSeed = "manifests/storefront"

    static func run(_ arguments: [String], output: inout Output) throws(CLIError) -> ExitCode {
        let parsed = try Arguments(arguments, command: "serve", options: options.valued.union(LinkCheckArguments.options),
                                   booleans: options.flags.union(["--check-links", "--help"]))
        if parsed.has("--help") {
            output.print(help)
            return .success
        }
        if let extra = parsed.positionals.first { throw .unexpectedArgument(extra) }
        var configuration = ServerConfiguration()
        configuration.hosts = parsed.all("--host").isEmpty ? ["127.0.0.1"] : parsed.all("--host")
        configuration.port = try parsed.number("--port", default: 8080, in: 0...65535, expected: "a port number 0–65535").map(UInt16.init) ?? 8080
        configuration.threads = try parsed.number("--threads", in: 1...1024, expected: "1 to 1024 threads") ?? configuration.threads
        configuration.maximumConnections = try parsed.number("--max-connections", in: 1...1_000_000, expected: "1 to 1,000,000")
            ?? configuration.maximumConnections
        configuration.maximumConnectionsPerPeer = try parsed.number("--max-connections-per-peer", in: 0...1_000_000, expected: "0 to 1,000,000")
            ?? configuration.maximumConnectionsPerPeer
        configuration.maximumBufferedBodyBytes = try parsed.number("--max-buffered-body-bytes", in: 1 << 20...1 << 40, expected: "1 MiB to 1 TiB in bytes")
            ?? configuration.maximumBufferedBodyBytes
        configuration.maximumQueuedOutputBytes = try parsed.number("--max-queued-output-bytes", in: 1 << 20...1 << 40,
                                                                   expected: "1 MiB to 1 TiB in bytes")
            ?? configuration.maximumQueuedOutputBytes
        configuration.maximumQueuedOutputBytesPerPeer = try parsed.number("--max-queued-output-bytes-per-peer", in: 0...1 << 40,
                                                                          expected: "0 to 1 TiB in bytes")
            ?? min(configuration.maximumQueuedOutputBytesPerPeer, configuration.maximumQueuedOutputBytes)
        let documentsAtOnce = try parsed.number("--documents-at-once", in: 1...64, expected: "1 to 64") ?? API.Options().documentsAtOnce
        // The budgets must fit the memory the daemon is given, or it refuses to start.
        let budget = MemoryBudget(configuration: configuration, documentsAtOnce: documentsAtOnce)
        if let limit = try parsed.number("--memory-limit", in: 16 << 20...1 << 50, expected: "16 MiB to 1 PiB in bytes") {
            if let refusal = budget.refusal(limit: limit, source: "--memory-limit") {
                throw .invalidValue(option: "--memory-limit", value: String(limit), expected: refusal)
            }
        } else if let limit = MemoryBudget.cgroupLimit(), let refusal = budget.refusal(limit: limit, source: "its cgroup (memory.max)") {
            throw .invalidValue(option: "--memory-limit", value: String(limit), expected: refusal)
        }
        configuration.pinThreads = parsed.has("--pin-threads")
        configuration.accessLog = !parsed.has("--quiet")
        var options = API.Options()
        options.publicManifestReads = parsed.has("--public-reads")
        options.allowPrivateFallbacks = parsed.has("--allow-private-fallbacks")
        options.maximumDocumentBytes = try parsed.number("--max-document-bytes", in: 1024...(1 << 30), expected: "1024 to 1073741824 bytes")
            ?? options.maximumDocumentBytes
        if options.maximumDocumentBytes > configuration.maximumBufferedBodyBytes {
            throw .invalidValue(option: "--max-buffered-body-bytes", value: String(configuration.maximumBufferedBodyBytes),
                                expected: "at least --max-document-bytes (\(options.maximumDocumentBytes)), or no document could ever be read")
        }
        // By default a peer may hold a quarter of the total, and always one whole document.
        configuration.maximumBufferedBodyBytesPerPeer = try parsed.number("--max-buffered-body-bytes-per-peer", in: 0...1 << 40,
                                                                          expected: "0 to 1 TiB in bytes")
            ?? min(configuration.maximumBufferedBodyBytes,
                   max(configuration.maximumBufferedBodyBytes / 4, options.maximumDocumentBytes))
        if configuration.maximumBufferedBodyBytesPerPeer != 0, options.maximumDocumentBytes > configuration.maximumBufferedBodyBytesPerPeer {
            throw .invalidValue(option: "--max-buffered-body-bytes-per-peer", value: String(configuration.maximumBufferedBodyBytesPerPeer),
                                expected: "0 or at least --max-document-bytes (\(options.maximumDocumentBytes)), or no document could ever be read")
        }
        options.maximumQueuedWork = try parsed.number("--max-queued-work", in: 1...100_000, expected: "1 to 100000")
            ?? options.maximumQueuedWork
        options.documentsAtOnce = documentsAtOnce
        options.rateSharePerPeer = try parsed.number("--rate-share-per-peer", in: 0...100, expected: "0 to 100 percent") ?? options.rateSharePerPeer
        options.linkChecks = try LinkCheckArguments.parse(parsed, cache: true)
        options.rolloutLookInterval = try parsed.number("--rollout-look-interval", in: 1...3_600, expected: "1 to 3600 seconds").map(Double.init)
            ?? options.rolloutLookInterval
        options.guardPolicy.minimumInstalls = try parsed.number("--guard-installs", in: 1...GuardCounts.breadthCap, expected: "1 to \(GuardCounts.breadthCap)")
            ?? options.guardPolicy.minimumInstalls
        options.guardPolicy.minimumNetworks = try parsed.number("--guard-networks", in: 1...GuardCounts.breadthCap, expected: "1 to \(GuardCounts.breadthCap)")
            ?? options.guardPolicy.minimumNetworks
        options.evidencePolicy.perSource = try parsed.number("--guard-per-source", in: 1...1_000, expected: "1 to 1000")
            ?? options.evidencePolicy.perSource
        options.evidencePolicy.perNetwork = try parsed.number("--guard-per-network", in: 1...1_000_000, expected: "1 to 1000000")
            ?? options.evidencePolicy.perNetwork
        options.trustForwardedFor = parsed.has("--trust-forwarded-for")
        configuration.trustForwardedFor = options.trustForwardedFor
        options.shapesPerSource = try parsed.number("--shapes-per-source", in: 1...1_000_000, expected: "1 to 1000000") ?? options.shapesPerSource
        options.shapesPerNetwork = try parsed.number("--shapes-per-network", in: 1...1_000_000, expected: "1 to 1000000") ?? options.shapesPerNetwork
        options.sourcesForSuggestion = try parsed.number("--suggestion-sources", in: 1...8, expected: "1 to 8") ?? options.sourcesForSuggestion
        if let path = parsed.last("--clock-file") {
            guard let clock = WallClock.file(path) else {
                throw .invalidValue(option: "--clock-file", value: path, expected: "a readable file holding the seconds since 1970")
            }
            options.clock = clock
        }
        if parsed.has("--no-seed"), parsed.last("--seed") != nil { throw .invalidValue(option: "--seed", value: parsed.last("--seed")!, expected: "no --seed with --no-seed") }
        let dataDirectory = parsed.last("--data-dir") ?? "data"
        let follow = try followArguments(parsed)
        let database = parsed.last("--database") ?? ProcessInfo.processInfo.environment["WAYMARK_DATABASE_URL"].flatMap { $0.isEmpty ? nil : $0 }
        if database != nil, follow != nil {
            throw .invalidValue(option: "--database", value: "…", expected: "no --follow with --database (a follower mirrors a primary's data directory over HTTP)")
        }
        if follow != nil {
            if parsed.last("--seed") != nil { throw .invalidValue(option: "--seed", value: parsed.last("--seed")!, expected: "no --seed with --follow (a follower mirrors its primary)") }
        }
        var telemetryOptions = TelemetryStore.Options()
        let clock = options.clock
        telemetryOptions.clock = { Int(clock.now().timeIntervalSince1970) }
        telemetryOptions.forwarding = follow != nil
        telemetryOptions.limits.minuteRetention = try parsed.number("--telemetry-minutes", in: 1...24 * 31, expected: "1 to 744 hours").map { $0 * 3_600 }
            ?? telemetryOptions.limits.minuteRetention
        telemetryOptions.limits.hourRetention = try parsed.number("--telemetry-hours", in: 1...3_660, expected: "1 to 3660 days").map { $0 * 86_400 }
            ?? telemetryOptions.limits.hourRetention
        telemetryOptions.limits.maximumRoutes = try parsed.number("--telemetry-max-routes", in: 0...200_000, expected: "0 to 200000")
            ?? telemetryOptions.limits.maximumRoutes
        telemetryOptions.limits.maximumAppVersions = try parsed.number("--telemetry-max-versions", in: 0...4_000, expected: "0 to 4000")
            ?? telemetryOptions.limits.maximumAppVersions
        telemetryOptions.limits.maximumCells = try parsed.number("--telemetry-max-cells", in: 1_000...100_000_000, expected: "1000 to 100000000")
            ?? telemetryOptions.limits.maximumCells
        telemetryOptions.limits.lateness = try parsed.number("--telemetry-lateness", in: 1...120, expected: "1 to 120 minutes").map { $0 * 60 }
            ?? telemetryOptions.limits.lateness
        telemetryOptions.limits.maximumBatchIDs = try parsed.number("--telemetry-batch-ids", in: 1...10_000_000, expected: "1 to 10000000")
            ?? telemetryOptions.limits.maximumBatchIDs
        telemetryOptions.limits.batchWindow = try parsed.number("--telemetry-batch-window", in: 1...24 * 90, expected: "1 to 2160 hours").map { $0 * 3_600 }
            ?? telemetryOptions.limits.batchWindow
        if telemetryOptions.limits.minuteRetention > telemetryOptions.limits.hourRetention {
            throw .invalidValue(option: "--telemetry-minutes", value: parsed.last("--telemetry-minutes") ?? "", expected: "no longer than --telemetry-hours")
        }

        // One malloc arena per event loop, before any thread starts (see Memory.limitArenas).
        Memory.limitArenas(configuration.threads)
        let store: ManifestStore
        var watcher: DatabaseWatcher?
        let lease = database.map { DatabaseLease(url: $0) }
        do throws(StoreError) {
            let (opened, report) = if let database {
                (try ManifestStore.open(directory: readingIOErrors(as: StoreError.init) { () throws(IOError) in try DataDirectory(path: dataDirectory, subdirectories: []) },
                                        medium: DatabaseMedium(url: database)), OpenReport())
            } else {
                try ManifestStore.open(at: dataDirectory)
            }
            store = opened
            if let database {
                // Changes other nodes commit reach this one by notification, or by the poll.
                let started = DatabaseWatcher(url: database, store: opened)
                started.start()
                watcher = started
            }
            if !report.removedTemporaries.isEmpty {
                output.print("Removed \(report.removedTemporaries.count) unfinished temporary file(s) a crash left behind (never acknowledged).")
            }
            if report.truncatedAuditBytes > 0 {
                output.print("Cut a torn last line (\(report.truncatedAuditBytes) bytes) off \(dataDirectory)/audit.log.")
            }
            if report.damagedAuditLines > 0 {
                output.print("Skipped \(report.damagedAuditLines) damaged line(s) near the end of \(dataDirectory)/audit.log (not JSON); they stay in the file.")
            }
            if report.recoveredAuditEntries > 0 {
                output.print("Added \(report.recoveredAuditEntries) audit entr\(report.recoveredAuditEntries == 1 ? "y" : "ies") for changes stored just before a crash.")
            }
            // A store that holds revisions or schemas had tokens: a missing tokens.json is
            // a mistake or tampering, not a new start, and minting a new admin token for
            // whoever restarts the daemon would be a way in. Refused unless asked.
            let fresh = store.snapshot.revisions.isEmpty && store.snapshot.schemas.isEmpty
            if follow == nil, !fresh, store.tokens.isEmpty, !parsed.has("--init-tokens") {
                throw StoreError.refusedToken("\(dataDirectory) holds revisions and schemas but no tokens (tokens.json is missing or empty). "
                    + "Restore it from a backup; or, to start over with a new admin token (printed once), pass --init-tokens.")
            }
            if let follow {
                try store.setFollowing(follow.client.base)
            } else {
                try store.setFollowing(nil)
                try seed(store, parsed, output: &output)
            }
        } catch {
            watcher?.stop()
            throw .store(error.message)
        }
        let telemetry: TelemetryStore
        do throws(TelemetryError) {
            telemetry = try TelemetryStore(directory: store.directory, options: telemetryOptions)
        } catch {
            throw .store(error.message)
        }
        let replay = telemetry.openReport
        if replay.replayedBatches > 0 || replay.truncatedBytes > 0 {
            output.print("Telemetry: replayed \(replay.replayedBatches) batch(es) from the log"
                + (replay.truncatedBytes > 0 ? ", cleared a torn tail of \(replay.truncatedBytes) bytes (never acknowledged)." : "."))
        }
        let snapshot = store.snapshot
        output.print((database != nil ? "Database (this node's own directory \(dataDirectory)): " : "Data directory \(dataDirectory): ") + (snapshot.current.map { "revision \($0.number) current" } ?? "no revision yet")
            + ", schemas " + (snapshot.schemas.isEmpty ? "none" : snapshot.schemas.keys.sorted().map(\.description).joined(separator: ", ")) + ".")

        var follower: Follower?
        if let follow {
            let started = Follower(store: store, telemetry: telemetry, client: follow.client, options: follow.options)
            switch started.syncOnce() {
            case .success(let mirrored):
                output.print("Following \(follow.client.base): mirrored \(mirrored) record(s); revision \(store.snapshot.current?.number ?? 0) current.")
            case .failure(let error):
                output.print("Following \(follow.client.base), which cannot be reached yet (\(error.message)); "
                    + "serving what this store holds and retrying every \(follow.options.interval) s.")
            }
            started.start()
            follower = started
            options.follower = started
        }
        if let lease {
            lease.start()
            options.holdsLease = { lease.isHeld }
        }
        let sharedTelemetry = database.map { DatabaseTelemetry(url: $0, idWindow: telemetryOptions.limits.batchWindow) }
        if let sharedTelemetry {
            sharedTelemetry.start()
            options.sharedTelemetry = sharedTelemetry
        }
        let service = API(store: store, telemetry: telemetry, options: options)
        let router: Router
        do {
            router = try service.router()
        } catch {
            follower?.stop(); lease?.stop(); sharedTelemetry?.stop()
            throw .unavailable("The API's routes do not fit together (a bug): \(error)")
        }
        let server = HTTPServer(configuration: configuration, router: router, metrics: service.httpMetrics)
        do {
            try server.start()
        } catch {
            follower?.stop(); lease?.stop(); sharedTelemetry?.stop()
            throw .unavailable("Cannot listen on \(configuration.hosts.joined(separator: ", ")) port \(configuration.port): \(error)")
        }
        let base = baseURL(host: configuration.hosts[0], port: server.port)
        if store.tokens.isEmpty, follower == nil {
            do {
                let (_, token) = try store.tokens.create(name: "admin", scopes: [.admin], actor: "waymark serve")
                printFirstToken(token, base: base, dataDirectory: database == nil ? dataDirectory : nil, current: snapshot.current?.number, output: &output)
            } catch where database != nil && { (try? store.tokens.reload()) != nil && !store.tokens.isEmpty }() {
                // Another node starting on the same new database made the first admin token (and printed it).
            } catch {
                server.shutdown()
                throw .store("Cannot create the first admin token: \(error.message)")
            }
        }
        let reads = options.publicManifestReads ? "manifest reads are public" : "every request needs a token"
        let links = (options.linkChecks.map { "; link checks on, findings are \($0.severity.rawValue)s" } ?? "")
            + (follow.map { "; a read-only follower of \($0.client.base), polling every \($0.options.interval) s" } ?? "")
        output.print("Listening on " + configuration.hosts.map { baseURL(host: $0, port: server.port) }.joined(separator: ", ")
            + " (\(configuration.threads) event loop\(configuration.threads == 1 ? "" : "s"); \(reads)\(links)). SIGTERM or Ctrl-C stops it.")
        server.shutdownOnSignals {
            FileHandle.standardError.write(Data("waymark: stopping: finishing requests in flight\n".utf8))
        }
        // Scheduled publishes: the ones missed while stopped fire now, the rest at their time.
        // With a clock the test moves, every 50 ms, so a look follows each move at once.
        service.startScheduling(every: parsed.last("--clock-file") != nil ? 0.05 : 1)
        server.wait()
        service.stopScheduling()
        lease?.stop()
        follower?.stop()
        watcher?.stop()
        // What is waiting is committed (and answered) before the node's own store closes.
        sharedTelemetry?.stop()
        telemetry.close()
        // The refusals of the minute under way, which its timer would have written.
        store.flushRefusals(all: true)
        output.print("Stopped.")
        return .success
    }

    private static func followArguments(_ parsed: Arguments) throws(CLIError) -> (client: PrimaryClient, options: Follower.Options)? {
        guard let url = parsed.last("--follow") else {
            for option in ["--follow-token", "--follow-token-file", "--follow-interval"] where parsed.last(option) != nil {
                throw .invalidValue(option: option, value: parsed.last(option)!, expected: "only with --follow URL")
            }
            return nil
        }
        guard let parsedURL = URL(string: url), ["http", "https"].contains(parsedURL.scheme?.lowercased() ?? ""), parsedURL.host != nil,
              parsedURL.query == nil, parsedURL.fragment == nil else {
            throw .invalidValue(option: "--follow", value: url, expected: "the primary's http:// or https:// base URL, e.g. http://10.0.0.5:8080")
        }
        var fromFile: String?
        if let file = parsed.last("--follow-token-file") {
            guard parsed.last("--follow-token") == nil else { throw .invalidValue(option: "--follow-token-file", value: file, expected: "not with --follow-token") }
            guard let data = FileManager.default.contents(atPath: file) else {
                throw .invalidValue(option: "--follow-token-file", value: file, expected: "a readable file holding the token")
            }
            fromFile = String(decoding: data, as: UTF8.self).trimmingCharacters(in: .whitespacesAndNewlines)
        }
        guard let token = fromFile ?? parsed.last("--follow-token") ?? ProcessInfo.processInfo.environment["WAYMARK_FOLLOW_TOKEN"], !token.isEmpty else {
            throw .missingArgument("--follow-token T, --follow-token-file F or WAYMARK_FOLLOW_TOKEN: a token of the primary with the scope replication")
        }
        guard token.utf8.allSatisfy({ $0 > 0x20 && $0 < 0x7F }) else {
            throw .invalidValue(option: "--follow-token", value: "…", expected: "a token as 'waymark token create' prints it")
        }
        var options = Follower.Options()
        if let text = parsed.last("--follow-interval") {
            guard let seconds = Double(text), seconds >= 0.05, seconds <= 3_600 else {
                throw .invalidValue(option: "--follow-interval", value: text, expected: "seconds from 0.05 to 3600")
            }
            options.interval = seconds
        }
        return (PrimaryClient(base: url, token: token), options)
    }

    private static func seed(_ store: ManifestStore, _ parsed: Arguments, output: inout Output) throws(StoreError) {
        guard store.snapshot.current == nil, !parsed.has("--no-seed") else { return }
        let explicit = parsed.last("--seed")
        let directory = explicit ?? defaultSeed
        var isDirectory: ObjCBool = false
        guard FileManager.default.fileExists(atPath: directory, isDirectory: &isDirectory), isDirectory.boolValue else {
            if explicit != nil { throw StoreError.badSeed("The seed directory \(directory) does not exist.") }
            output.print("The store is empty and \(directory) is not here to seed it: publish a first revision with 'waymark publish'.")
            return
        }
        if try store.seedIfEmpty(from: directory) {
            output.print("Seeded the store from \(directory): revision 1.")
        }
    }

    static func baseURL(host: String, port: UInt16) -> String {
        let shown = host == "0.0.0.0" ? "127.0.0.1" : host == "::" ? "::1" : host
        return "http://" + (shown.contains(":") ? "[\(shown)]" : shown) + ":\(port)"
    }

    /// `dataDirectory`: where `waymark token` finds the tokens (nil: the database, named by its variable, never by its URL).
    private static func printFirstToken(_ token: String, base: String, dataDirectory: String?, current: Int?, output: inout Output) {
        let ifMatch = current.map { "-H 'If-Match: \"rev-\($0)\"'" } ?? "-H 'If-None-Match: *'"
        // As this binary was started (`.build/debug/waymark` under `make run`), so the line runs as printed.
        let program = CommandLine.arguments.first.map { $0.hasSuffix("/waymark") || $0 == "waymark" ? $0 : "waymark" } ?? "waymark"
        output.print("""

            No tokens existed, so an admin token was created. It is shown only this once:

                \(token)

            Keep it somewhere safe; make narrower ones with '\(program) token create \(dataDirectory.map { "--data-dir \($0)" } ?? "--database \"$WAYMARK_DATABASE_URL\"") --name N --scope S'.
            Try it:

                export WAYMARK_TOKEN=\(token)
                # the manifest an iOS 5.3.0 build fetches
                curl -s -H "Authorization: Bearer $WAYMARK_TOKEN" '\(base)/v1/manifest?platform=ios&version=5.3.0'
                # publish a routes document (validated first; If-Match names the revision you started from)
                curl -s -X POST -H "Authorization: Bearer $WAYMARK_TOKEN" \(ifMatch) -H 'Content-Type: application/json' \\
                  --data-binary @<(printf '{"message": "From curl", "routes": %s}' "$(cat manifests/storefront/routes.json)") \\
                  \(base)/v1/revisions
                # or the same with the CLI, which finds the current revision itself
                \(program) publish manifests/storefront/routes.json --server \(base) --message 'From the CLI'
                # the ops dashboard, in a browser (better with a token of scope telemetry:read only):
                #   \(base)/dashboard#token=\(token)

            """)
    }
}
