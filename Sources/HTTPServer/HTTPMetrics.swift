import Synchronization

/// Requests served, by route and status, with a latency histogram per route, in
/// Prometheus's text exposition format. Each event loop counts into its own slot (an
/// uncontended lock on the request path); a scrape adds the slots up.
public final class HTTPMetrics: Sendable {
    /// Upper bounds of the latency buckets, in seconds (Prometheus's defaults, finer at the bottom).
    public static let bounds: [Double] = [0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5]

    struct Counters {
        /// Per route index + 1 (0: requests no route took): each status answered and how
        /// many times, in the order first seen. A route answers with a few statuses, so a
        /// short scan finds one; a dictionary's hashing cost every request more.
        var statuses: [[(status: Int, count: UInt64)]]
        /// Per route index + 1, `HTTPMetrics.bucketCount` counts in a row: one per bound and
        /// one past the last.
        var buckets: [UInt64]
        /// Per route index + 1, seconds in all.
        var sums: [Double]

        init(routes: Int) {
            statuses = Array(repeating: [], count: routes + 1)
            buckets = Array(repeating: 0, count: (routes + 1) * HTTPMetrics.bucketCount)
            sums = Array(repeating: 0, count: routes + 1)
        }

        mutating func add(route row: Int, status: Int, count: UInt64) {
            if let index = statuses[row].firstIndex(where: { $0.status == status }) {
                statuses[row][index].count += count
            } else {
                statuses[row].append((status, count))
            }
        }
    }

    static let bucketCount = bounds.count + 1

    /// One event loop's counters; only that loop records into them.
    final class Slot: Sendable {
        let counters: Mutex<Counters>

        init(routes: Int) {
            counters = Mutex(Counters(routes: routes))
        }

        /// Records one response; `route` is the router's index, -1 for none.
        func record(route: Int, status: Int, nanoseconds: Int64) {
            let seconds = Double(nanoseconds) / 1e9
            var bucket = HTTPMetrics.bounds.count
            for (index, bound) in HTTPMetrics.bounds.enumerated() where seconds <= bound {
                bucket = index
                break
            }
            let row = route + 1
            counters.withLock { counters in
                counters.add(route: row, status: status, count: 1)
                counters.buckets[row &* HTTPMetrics.bucketCount &+ bucket] += 1
                counters.sums[row] += seconds
            }
        }
    }

    /// Connections accepted and closed at once because their peer had
    /// `maximumConnectionsPerPeer` open, since start.
    let refusedOverPeerCap = Atomic<UInt64>(0)
    /// Idle connections closed to make room for a new one at `maximumConnections`, since start.
    let shedIdle = Atomic<UInt64>(0)

    /// The serving server's body budget, for its gauge.
    private let bodyBudget = Mutex<BodyBudget?>(nil)

    func attach(_ budget: BodyBudget) { bodyBudget.withLock { $0 = budget } }
    private let outputBudget = Mutex<OutputBudget?>(nil)
    func attach(_ budget: OutputBudget) { outputBudget.withLock { $0 = budget } }

    private let labels = Mutex<[(method: String, path: String)]>([])
    private let slots = Mutex<[Slot]>([])

    public init() {}

    /// Called by the server before it serves: the routes' labels, and a slot for each loop.
    func configure(routes: [(method: String, path: String)], loops: Int) -> [Slot] {
        labels.withLock { $0 = routes }
        let made = (0..<loops).map { _ in Slot(routes: routes.count) }
        slots.withLock { $0 = made }
        return made
    }

    /// The metrics as Prometheus text (`text/plain; version=0.0.4`).
    public func exposition() -> String {
        let labels = labels.withLock { $0 }
        var total = Counters(routes: labels.count)
        slots.withLock { slots in
            for slot in slots {
                slot.counters.withLock { counters in
                    for row in counters.statuses.indices where row < total.statuses.count {
                        for (status, count) in counters.statuses[row] { total.add(route: row, status: status, count: count) }
                        total.sums[row] += counters.sums[row]
                    }
                    for index in counters.buckets.indices where index < total.buckets.count { total.buckets[index] += counters.buckets[index] }
                }
            }
        }
        func route(_ index: Int) -> String {
            index < 0 || index >= labels.count ? "method=\"\",route=\"unmatched\"" : "method=\"\(labels[index].method)\",route=\"\(labels[index].path)\""
        }
        var out = "# HELP waymark_http_requests_total HTTP requests answered, by route and status.\n# TYPE waymark_http_requests_total counter\n"
        for row in total.statuses.indices {
            for (status, count) in total.statuses[row].sorted(by: { $0.status < $1.status }) {
                out += "waymark_http_requests_total{\(route(row - 1)),status=\"\(status)\"} \(count)\n"
            }
        }
        out += "# HELP waymark_http_request_duration_seconds Time from a request's decoding to its response being queued.\n"
        out += "# TYPE waymark_http_request_duration_seconds histogram\n"
        for index in -1..<labels.count {
            let buckets = total.buckets[((index + 1) * Self.bucketCount)..<((index + 2) * Self.bucketCount)]
            let count = buckets.reduce(0, +)
            guard count > 0 else { continue }
            var cumulative: UInt64 = 0
            for (position, bound) in Self.bounds.enumerated() {
                cumulative += buckets[buckets.startIndex + position]
                out += "waymark_http_request_duration_seconds_bucket{\(route(index)),le=\"\(bound)\"} \(cumulative)\n"
            }
            out += "waymark_http_request_duration_seconds_bucket{\(route(index)),le=\"+Inf\"} \(count)\n"
            out += "waymark_http_request_duration_seconds_sum{\(route(index))} \(total.sums[index + 1])\n"
            out += "waymark_http_request_duration_seconds_count{\(route(index))} \(count)\n"
        }
        out += "# HELP waymark_http_connections_refused_total Connections closed at accept because their peer (an IPv4 address, an IPv6 /64) had the most it may open.\n"
        out += "# TYPE waymark_http_connections_refused_total counter\nwaymark_http_connections_refused_total \(refusedOverPeerCap.load(ordering: .relaxed))\n"
        out += "# HELP waymark_http_idle_connections_shed_total Idle connections closed to make room for new ones at the connection limit.\n"
        out += "# TYPE waymark_http_idle_connections_shed_total counter\nwaymark_http_idle_connections_shed_total \(shedIdle.load(ordering: .relaxed))\n"
        out += "# HELP waymark_http_body_files Sealed memory files large cached bodies (manifests of 16 KiB or more) are sent from.\n"
        out += "# TYPE waymark_http_body_files gauge\nwaymark_http_body_files \(BodyFiles.openCount)\n"
        out += "# HELP waymark_http_body_file_bytes Bytes those files hold: shared memory, counted by the cgroup, not in the process's RSS.\n"
        out += "# TYPE waymark_http_body_file_bytes gauge\nwaymark_http_body_file_bytes \(BodyFiles.heldBytes)\n"
        if let budget = bodyBudget.withLock({ $0 }) {
            out += "# HELP waymark_http_body_bytes_reserved Request body bytes reserved across connections (limit: --max-buffered-body-bytes).\n"
            out += "# TYPE waymark_http_body_bytes_reserved gauge\nwaymark_http_body_bytes_reserved \(budget.reserved)\n"
            out += "# HELP waymark_http_body_budget_refused_total Requests answered 503 because their body did not fit the body budget (at the end of their head, or a chunked body as it came).\n"
            out += "# TYPE waymark_http_body_budget_refused_total counter\nwaymark_http_body_budget_refused_total \(budget.refused.load(ordering: .relaxed))\n"
            out += "# HELP waymark_http_body_budget_over_peer_share_total Of those, the ones whose peer (an IPv4 address, an IPv6 /64) held its share of the budget.\n"
            out += "# TYPE waymark_http_body_budget_over_peer_share_total counter\nwaymark_http_body_budget_over_peer_share_total \(budget.refusedOverShare.load(ordering: .relaxed))\n"
        }
        if let budget = outputBudget.withLock({ $0 }) {
            out += "# HELP waymark_http_output_bytes_queued Bytes of large response bodies queued for readers and not yet written (limit: --max-queued-output-bytes).\n"
            out += "# TYPE waymark_http_output_bytes_queued gauge\nwaymark_http_output_bytes_queued \(budget.queued)\n"
            out += "# HELP waymark_http_slow_readers_shed_total Connections reset because queued output passed the output budget or their peer's share of it (the slowest first).\n"
            out += "# TYPE waymark_http_slow_readers_shed_total counter\nwaymark_http_slow_readers_shed_total \(budget.shed.load(ordering: .relaxed))\n"
        }
        return out
    }
}
