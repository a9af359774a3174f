from hostile_common import *  # noqa: F401,F403


def cell_cap(binary, scratch):
    """A phone's token filling the cell table with events in old minutes: they count in their
    hour only (past the 10-minute lateness) and take named cells only up to half the cap, so
    the present keeps its names."""
    data = os.path.join(scratch, "cells")
    cap = 4_000
    daemon = Daemon(binary, data, "--telemetry-max-cells", str(cap))
    phone = token(binary, data, "phone", "telemetry:write", rate="unlimited")
    limited = token(binary, data, "phone-limited", "telemetry:write", rate=20)
    rss_before = rss_mb(daemon.process.pid)
    now = int(time.time()) - 60
    routes = ["home", "product", "category", "search", "cart", "orders", "order-detail", "settings", "new-arrivals", "spring-sale"]
    entries = ["universalLink", "scheme", "push", "inApp"]
    sent = accepted = 0
    minutes = 2_800
    started = time.monotonic()
    for batch in range(120):
        events = []
        for index in range(1_000):
            serial = batch * 1_000 + index
            # Every event its own cell: minute, then entry, then route, then outcome.
            rest = serial // minutes
            failed = (rest // 40) % 2 == 1
            events.append({"ts": iso(now - (serial % minutes) * 60), "entry": entries[rest % 4],
                           "outcome": "notFound" if failed else "proceed",
                           **({"reason": "unknownRoute"} if failed else {}), "route": routes[(rest // 4) % 10]})
        body = {"client": {"platform": "ios" if batch % 2 else "android", "appVersion": "5.3.0", "revision": 1}, "events": events}
        status, answer, _ = call(daemon.port, phone, "POST", "/v1/telemetry", body, {"Content-Type": "application/json"})
        sent += len(events)
        if status != 202:
            fail("a phone's batch answered %d %s" % (status, answer[:200]))
        accepted += json_of(answer)["accepted"]
    elapsed = time.monotonic() - started
    cells = daemon.metric("waymark_telemetry_cells")
    folded = daemon.metric("waymark_telemetry_events_folded_total")
    buckets = minutes + minutes // 60 + 2
    if cells is None or cells > cap + 112 * buckets:
        fail("%s cells held with a cap of %d" % (cells, cap))
    if not folded:
        fail("nothing was folded: the attack did not reach the cap")
    late = daemon.metric("waymark_telemetry_events_late_total")
    status, answer, _ = call(daemon.port, phone, "POST", "/v1/telemetry",
                             {"client": {"platform": "ios", "appVersion": "5.3.0", "revision": 1},
                              "events": [{"ts": iso(int(time.time()) - 5), "entry": "push", "outcome": "proceed", "route": "product"}]},
                             {"Content-Type": "application/json"})
    present = "/v1/telemetry/counts?groupBy=route,revision&from=%s&to=%s" % (iso(int(time.time()) - 300), iso(int(time.time()) + 60))
    groups = json_of(call(daemon.port, daemon.admin, "GET", present)[1])["groups"]
    keys = [group["key"] for group in groups]
    if status != 202 or {"route": "product", "revision": "1"} not in keys or any("other" in key.values() for key in keys):
        fail("the present lost its names after the flood of old events: %s" % keys)
    accepted += 1
    query = "/v1/telemetry/counts?step=1h&from=%s&to=%s" % (iso(now - 50 * 3_600), iso(now + 3_600))
    status, body, _ = call(daemon.port, daemon.admin, "GET", query)
    total = json_of(body)["total"]
    if total != accepted:
        fail("%d events counted, %d accepted" % (total, accepted))
    statuses = [call(daemon.port, limited, "POST", "/v1/telemetry",
                     {"client": {"platform": "ios", "appVersion": "5.3.0", "revision": 1},
                      "events": [{"ts": iso(now), "entry": "push", "outcome": "proceed", "route": "home"}]},
                     {"Content-Type": "application/json"}) for _ in range(150)]
    limited_count = sum(1 for status, _, _ in statuses if status == 429)
    retry = next((headers.get("Retry-After") for status, _, headers in statuses if status == 429), None)
    if limited_count == 0 or retry is None:
        fail("a token with --rate 20 made 150 requests without a 429 with Retry-After")
    rss_after = rss_mb(daemon.process.pid)
    print("hostile: a phone's token sent %d events over %d minutes x 10 routes x 4 entries x 2 outcomes x 2 platforms in %.1f s: "
          "%d counted in their hour only (late), %d cells held (late ones named up to half the cap of %d, the rest folded, at most 112 a bucket), "
          "%d counts folded, all %d counted; an event of now kept its route and revision; RSS %.1f -> %.1f MB; "
          "a token at 20/s made 150 quick requests: %d answered 429 (Retry-After %s s)"
          % (sent, minutes, elapsed, late, cells, cap, folded, total, rss_before, rss_after, limited_count, retry))
    daemon.stop()
