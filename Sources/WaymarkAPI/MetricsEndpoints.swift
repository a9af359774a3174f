import Foundation
import HTTPCore
import HTTPServer
import Rollout
import Telemetry

/// `GET /metrics` (scope `telemetry:read`): Prometheus text format 0.0.4 — resolutions by
/// platform, outcome, reason and route, the telemetry log, the store, link checks,
/// replication, and requests by route.
struct MetricsEndpoints: EndpointGroup {
    let context: APIContext

    func register(on registry: inout EndpointRegistry) throws(RouterError) {
        // On the loop, not in the reads lane: monitoring must answer while that lane is full.
        // Its text grows with the resolutions' lines (about 1.6 µs each: 3,100 in 5 ms).
        try registry.add("GET", "/metrics", .scope(.telemetryRead, action: "readMetrics")) { _, _ in metrics() }
    }

    private func metrics() -> HTTPResponse {
        var out = ""
        func family(_ name: String, _ type: String, _ help: String) { out += "# HELP \(name) \(help)\n# TYPE \(name) \(type)\n" }
        func label(_ text: String) -> String {
            // Names rarely hold a byte to escape: looked for first, as replacing costs far more.
            guard text.utf8.contains(where: { $0 == UInt8(ascii: "\\") || $0 == UInt8(ascii: "\"") || $0 == UInt8(ascii: "\n") }) else { return text }
            return text.replacingOccurrences(of: "\\", with: "\\\\").replacingOccurrences(of: "\"", with: "\\\"").replacingOccurrences(of: "\n", with: "\\n")
        }
        // The table and the names are taken under the telemetry store's lock (shared, not
        // copied) and written out after it: a post checks its batch id under that lock.
        let (sinceStart, names) = context.telemetry.read { ($0.sinceStart, $0.names) }
        let resolutions: [(String, UInt64)] = sinceStart.map { key, count in
            let labels = [TelemetryDimension.platform, .outcome, .reason, .route].map { dimension in
                "\(dimension.rawValue)=\"\(label(names.name(of: dimension.value(of: key), for: dimension)))\""
            }
            return (labels.joined(separator: ","), count)
        }
        family("waymark_resolutions_total", "counter", "Resolutions reported by clients since start, by platform, outcome, reason and route (bounded: unknown routes are \"other\").")
        for (labels, count) in resolutions.sorted(by: { $0.0 < $1.0 }) { out += "waymark_resolutions_total{\(labels)} \(count)\n" }
        let dropped = context.telemetry.read { $0.droppedByClientsSinceStart }
        family("waymark_telemetry_batches_refused_total", "counter",
               "Telemetry batches refused whole since start, by the code answered (415 unsupportedMediaType, 400 countTooLarge, …): nothing of them was counted.")
        for (code, count) in context.telemetryRefusals.byCode { out += "waymark_telemetry_batches_refused_total{code=\"\(code)\"} \(count)\n" }
        family("waymark_rollout_evidence_refused_total", "counter",
               "The active rollout's resolution claims not counted as the guard's evidence, by reason (perSource, perNetwork, cohort, late, full).")
        let evidenceRefused = context.guardEvidence.withLock { $0?.refused } ?? [:]
        for reason in EvidenceRefusal.allCases { out += "waymark_rollout_evidence_refused_total{reason=\"\(reason.rawValue)\"} \(evidenceRefused[reason] ?? 0)\n" }
        family("waymark_unknown_link_shapes_refused_total", "counter",
               "Unknown-link shapes not counted since start: over an install's or a network's allowance a minute.")
        out += "waymark_unknown_link_shapes_refused_total \(context.shapeAllowance.refused.load(ordering: .relaxed))\n"
        family("waymark_telemetry_client_dropped_total", "counter",
               "Resolutions clients reported dropping before they could send them (client.dropped: their storage bound), in batches accepted since start, by platform.")
        for platform in [Platform.ios, .android] { out += "waymark_telemetry_client_dropped_total{platform=\"\(platform.name)\"} \(dropped[Int(platform.rawValue)])\n" }
        let rateRefusals = context.rates.refusals
        family("waymark_rate_limited_total", "counter",
               "Requests answered 429 because their token was over its rate for the route's scope, or their address over its share of it, since start.")
        for refusal in rateRefusals {
            out += "waymark_rate_limited_total{token=\"\(label(refusal.token))\",scope=\"\(refusal.scope.rawValue)\"} \(refusal.count + refusal.overPeerShare)\n"
        }
        family("waymark_rate_limited_over_peer_share_total", "counter",
               "Of those, the app's token's requests refused because their address (an IPv4 address, an IPv6 /64) or its IPv6 /56 or /48 was over its share of the rate (--rate-share-per-peer; twice and four times it), or busy while the token's bucket was below half, since start.")
        for refusal in rateRefusals where refusal.overPeerShare > 0 {
            out += "waymark_rate_limited_over_peer_share_total{token=\"\(label(refusal.token))\",scope=\"\(refusal.scope.rawValue)\"} \(refusal.overPeerShare)\n"
        }
        let statistics = context.telemetry.currentStatistics
        let (cells, cellLimit, folded, late, batchIDs, reclaimed, oldestBatchMinute, batchWindow) = context.telemetry.read {
            ($0.cells, $0.limits.maximumCells, $0.foldedEvents, $0.lateEvents, $0.batchIDs.count, $0.reclaimedRoutes,
             $0.batchIDs.oldestMinute, $0.limits.batchWindow)
        }
        // How far back a retried batch is still recognised: the window while the ids fit,
        // less once the cap forgets ids younger than the window.
        let now = context.telemetry.options.clock()
        let batchHorizon = batchIDs < context.telemetry.options.limits.maximumBatchIDs ? batchWindow
            : min(batchWindow, max(0, now - Int(oldestBatchMinute ?? Int32(clamping: now / 60)) * 60))
        let snapshot = context.store.snapshot
        let storeBytes = snapshot.revisions.reduce(0) { $0 + $1.bytes } + snapshot.schemas.values.reduce(0) { $0 + $1.bytes.count }
        let single: [(name: String, type: String, help: String, value: UInt64)] = [
            ("waymark_telemetry_events_accepted_total", "counter", "Telemetry events accepted (durable and counted) since start.", statistics.events),
            ("waymark_telemetry_events_rejected_total", "counter", "Telemetry events rejected one by one inside accepted batches since start.",
             context.telemetryRejected.load(ordering: .relaxed)),
            ("waymark_telemetry_batches_total", "counter", "Telemetry batches made durable since start.", statistics.batches),
            ("waymark_telemetry_commits_total", "counter", "Group commits (one fdatasync each) of the telemetry log since start.", statistics.commits),
            ("waymark_telemetry_commit_failures_total", "counter", "Telemetry commits that failed (their batches were answered 503).", statistics.failedCommits),
            ("waymark_telemetry_log_bytes", "gauge", "Bytes in the telemetry log since the last snapshot.", UInt64(statistics.logBytes)),
            ("waymark_telemetry_writable", "gauge", "1 while the telemetry log can be written; 0 after a failed commit until it is repaired (tried every second).",
             context.telemetry.currentHealth.writable ? 1 : 0),
            ("waymark_telemetry_cells", "gauge", "Count cells held (combinations of dimensions per minute and hour bucket), folded ones included.", UInt64(cells)),
            ("waymark_telemetry_cells_limit", "gauge", "Cells kept with their own names (--telemetry-max-cells); past it new combinations are folded.", UInt64(cellLimit)),
            ("waymark_telemetry_events_folded_total", "counter", "Counts added to a folded cell (route, revision, app version and precondition \"other\") because the cell cap was reached, since start; an event counts once for its minute and once for its hour.", folded),
            ("waymark_telemetry_routes_reclaimed_total", "counter", "Route names given back, the least recently counted, for new routes once --telemetry-max-routes were counted (their cells moved to route \"other\"), since start.", UInt64(reclaimed)),
            ("waymark_telemetry_events_late_total", "counter", "Counts of events more than the lateness window (10 minutes) older than their batch's arrival, counted in their hour only, since start (replayed ones included).", late),
            ("waymark_telemetry_batches_duplicate_total", "counter", "Batches answered as repeats of accepted ones (same id) and counted nothing, since start.",
             context.telemetryDuplicates.load(ordering: .relaxed)),
            ("waymark_telemetry_batch_ids", "gauge", "Ids of accepted batches remembered (--telemetry-batch-ids at most), so a retry is counted once.", UInt64(batchIDs)),
            ("waymark_telemetry_batch_ids_horizon_seconds", "gauge",
             "How far back a retried batch is still recognised and counted once: --telemetry-batch-window while the ids fit, less once --telemetry-batch-ids forgets younger ones (then raise it).",
             UInt64(batchHorizon)),
            ("waymark_telemetry_vocabulary_routes", "gauge", "Route ids a telemetry batch may name: the served revisions' and, newest first, at most --telemetry-max-routes of history's; others count as other.",
             UInt64(context.vocabulary.namedRoutes)),
            ("waymark_telemetry_parsers_made_total", "counter", "Telemetry parsers made since start: the first on a batch's arrival, later ones as a change that gave them something new to name is prepared.",
             UInt64(context.vocabulary.parsersMade)),
            ("waymark_publishes_total", "counter", "Revisions published (rollbacks and scheduled ones included) since start.", context.publishes.load(ordering: .relaxed)),
            ("waymark_schedules_pending", "gauge", "Scheduled publishes waiting for their time.",
             UInt64(snapshot.schedules.filter { $0.status == .pending }.count)),
            ("waymark_lease_held", "gauge", "1 when this node runs the scheduler and the rollout guard's looks: always alone, or holding the lease on a database.",
             (context.options.holdsLease?() ?? true) ? 1 : 0),
            ("waymark_schedules_fired_total", "counter", "Scheduled publishes fired since start.", context.schedulesFired.load(ordering: .relaxed)),
            ("waymark_schedules_skipped_total", "counter", "Scheduled publishes that did not fire since start: their routes no longer validated, or their base was no longer current.",
             context.schedulesSkipped.load(ordering: .relaxed)),
            ("waymark_schedule_failures_total", "counter", "Looks at due schedules that failed on the store (the disk: reading a schedule's routes or writing its status) since start; the schedule stays pending and is tried again at the next tick.",
             context.scheduleFailures.load(ordering: .relaxed)),
            ("waymark_link_check_fetches_total", "counter", "Outbound link-check fetches (fallbacks and associated-domain files, cache hits not counted) since start.",
             UInt64(context.linkChecker?.fetches.load(ordering: .relaxed) ?? 0)),
            ("waymark_link_check_findings_total", "counter", "Problems the link checks reported on validations and publishes since start.",
             context.linkFindings.load(ordering: .relaxed)),
            ("waymark_work_queued", "gauge", "Requests' off-loop work (validation, build views, revision reads, previews) waiting or running, in all lanes.",
             UInt64(context.work.queued)),
            ("waymark_work_refused_total", "counter", "Requests answered 503 busy because their lane of the work queue was full or they held their share of it, since start.",
             context.work.refused),
            ("waymark_generations_prepared_total", "counter", "Store generations whose manifest views, landing table and associated-domain files were made before their change was answered, since start.",
             context.preparer.prepared.load(ordering: .relaxed)),
            ("waymark_generation_prepare_longest_milliseconds", "gauge", "The longest such preparation since start, in milliseconds (readers were answered from the previous generation meanwhile).",
             context.preparer.longestNanoseconds.load(ordering: .relaxed) / 1_000_000),
            ("waymark_revision_current", "gauge", "The number of the current revision (0: none).", UInt64(snapshot.current?.number ?? 0)),
            ("waymark_store_revisions", "gauge", "Revisions stored.", UInt64(snapshot.revisions.count)),
            ("waymark_store_schemas", "gauge", "App build schemas stored.", UInt64(snapshot.schemas.count)),
            ("waymark_store_bytes", "gauge", "Bytes of stored revision documents and schemas.", UInt64(storeBytes)),
        ] + ReplicationEndpoints.metrics(context)
        for metric in single {
            family(metric.name, metric.type, metric.help)
            out += "\(metric.name) \(metric.value)\n"
        }
        out += rolloutMetrics(label: label)
        out += context.httpMetrics.exposition()
        return HTTPResponse(status: .ok, headers: HTTPHeaders([("Content-Type", "text/plain; version=0.0.4; charset=utf-8"), ("Cache-Control", "no-store")]),
                            body: Array(out.utf8))
    }

    /// The newest rollout: whether it splits cohorts, its step, the primary's latest look at
    /// the step's telemetry, and what tripped it (each finding's numbers, by route and build).
    private func rolloutMetrics(label: (String) -> String) -> String {
        var out = ""
        func family(_ name: String, _ type: String, _ help: String) { out += "# HELP \(name) \(help)\n# TYPE \(name) \(type)\n" }
        let rollout = context.store.snapshot.rollout
        let active = rollout.map(\.status.isActive) ?? false
        family("waymark_rollout_active", "gauge", "1 while a rollout splits cohorts between a candidate and the stable revision (running or paused).")
        out += "waymark_rollout_active \(active ? 1 : 0)\n"
        family("waymark_rollout_percent", "gauge", "The share of cohorts the active rollout's candidate is served to (0: none).")
        out += "waymark_rollout_percent \(active ? rollout!.percent : 0)\n"
        family("waymark_rollout_candidate_revision", "gauge", "The newest rollout's candidate revision (0: none yet).")
        out += "waymark_rollout_candidate_revision \(rollout?.candidate ?? 0)\n"
        family("waymark_rollout_status", "gauge", "1 for the newest rollout's status (running, paused, tripped, aborted, completed, superseded).")
        for status in RolloutStatus.allCases {
            out += "waymark_rollout_status{status=\"\(status.rawValue)\"} \(rollout?.status == status ? 1 : 0)\n"
        }
        family("waymark_rollout_trips_total", "counter", "Rollouts the guard stopped since start.")
        out += "waymark_rollout_trips_total \(context.rolloutTrips.load(ordering: .relaxed))\n"
        let look = active ? context.rolloutLook.withLock { $0 }.flatMap { $0.candidate == rollout?.candidate ? $0 : nil } : nil
        family("waymark_rollout_step_resolutions", "gauge", "Resolutions of the candidate and of the stable revision (on the candidate's builds) since the active step began, at the primary's latest look.")
        family("waymark_rollout_step_failure_ratio", "gauge", "Their share that ended in notFound.")
        if let look {
            for (name, counts) in [("candidate", look.candidateCounts.overall), ("stable", look.stableCounts.overall)] {
                out += "waymark_rollout_step_resolutions{revision=\"\(name)\"} \(counts.total)\n"
                out += "waymark_rollout_step_failure_ratio{revision=\"\(name)\"} \(counts.rate)\n"
            }
        }
        family("waymark_rollout_trip_failure_ratio", "gauge", "For a tripped newest rollout, each finding: the candidate's and the stable revision's failure ratio, by scope, route, build and reason.")
        if let rollout, rollout.status == .tripped {
            for finding in rollout.findings {
                let labels = "scope=\"\(finding.scope.rawValue)\",route=\"\(label(finding.route ?? ""))\",build=\"\(label(finding.build ?? ""))\",reason=\"\(label(finding.reason ?? ""))\""
                for (name, failures, total) in [("candidate", finding.candidateFailures, finding.candidateTotal), ("stable", finding.stableFailures, finding.stableTotal)] {
                    out += "waymark_rollout_trip_failure_ratio{revision=\"\(name)\",\(labels)} \(total == 0 ? 0 : Double(failures) / Double(total))\n"
                }
            }
        }
        return out
    }
}
