from hostile_common import *  # noqa: F401,F403


# 25 -----------------------------------------------------------------------------------------
def mistake_reports(binary, scratch):
    """Marketing's token sending documents of many small mistakes: the report is bounded,
    the largest are refused while they are parsed, and the daemon's peak memory stays
    within 256 MB of where it started."""
    data = os.path.join(scratch, "mistakes")
    daemon = Daemon(binary, data)
    marketing = token(binary, data, "mistakes-marketing", "routes:publish", rate="unlimited")

    def document(entries):
        return '{"format":"waymark.routes/1","app":"storefront","routes":[' + ",".join(entries) + ']}'

    try:
        started = rss_mb(daemon.process.pid)
        figures = []
        for count in (125_000, 200_000):
            routes = document(['{"a":0}'] * count)
            began = time.monotonic()
            status, body, _ = call(daemon.port, marketing, "POST", "/v1/validate", routes.encode(),
                                   {"Content-Type": "application/json"}, timeout=120)
            report = json.loads(body) if status == 200 else {}
            if status != 200 or report.get("valid") is not False:
                fail("validating %d tiny routes: %d %s" % (count, status, body[:300]))
            listed, omitted = len(report["errors"]) + len(report["warnings"]), report.get("omitted", {})
            if len(report["errors"]) != 1000 or len(report["warnings"]) != 1000 or omitted.get("errors") != 3 * count - 1000 \
                    or omitted.get("warnings") != count - 1000:
                fail("validating %d tiny routes listed %d errors and %d warnings, omitted %s" %
                     (count, len(report["errors"]), len(report["warnings"]), omitted))
            status, answer, _ = call(daemon.port, marketing, "POST", "/v1/revisions",
                                     ('{"message":"mistakes","routes":%s}' % routes).encode(),
                                     {"If-Match": '"rev-1"', "Content-Type": "application/json"}, timeout=120)
            if status != 422 or len(answer) > 1_000_000 or b'"omitted"' not in answer:
                fail("publishing %d tiny routes: %d, %d bytes %s" % (count, status, len(answer), answer[:200]))
            figures.append("%.0f MB validated in %.1f s, a report of %d KB listing %d (%d errors omitted), the publish's 422 of %d KB"
                           % (len(routes) / 1e6, time.monotonic() - began, len(body) // 1000, listed, omitted["errors"], len(answer) // 1000))
            peak = peak_mb(daemon.process.pid)
            if peak - started > 256:
                fail("after %d tiny routes the daemon's peak RSS is %.0f MB, from %.0f" % (count, peak, started))
        params = ",".join('"p%d":{"const":"x"}' % index for index in range(700_000))
        refused = [
            ("15 MB of {\"a\":0}", document(['{"a":0}'] * 1_900_000), "more than 250000 objects and lists"),
            ("14 MB of [0,...]", '{"format":"waymark.routes/1","app":"storefront","routes":[%s]}' % ",".join(["0"] * 7_000_000),
             "more than 1000000 values"),
            ("one route naming 700,000 params", document(['{"id":"x","patterns":["/x"],"destination":"home","params":{%s}}' % params]),
             "more than 250000 objects and lists"),
        ]
        for label, routes, says in refused:
            began = time.monotonic()
            status, body, _ = call(daemon.port, marketing, "POST", "/v1/validate", routes.encode(), {"Content-Type": "application/json"}, timeout=120)
            if status != 200 or says.encode() not in body or len(body) > 10_000:
                fail("validating %s: %d %s" % (label, status, body[:300]))
            status, answer, _ = call(daemon.port, marketing, "POST", "/v1/revisions", ('{"message":"big","routes":%s}' % routes).encode(),
                                     {"If-Match": '"rev-1"', "Content-Type": "application/json"}, timeout=120)
            if status != 400 or says.encode() not in answer:
                fail("publishing %s: %d %s" % (label, status, answer[:300]))
            figures.append("%s (%.1f MB) refused in %.1f s" % (label, len(routes) / 1e6, time.monotonic() - began))
        peak = peak_mb(daemon.process.pid)
        if peak - started > 256:
            fail("after documents refused as they were parsed the daemon's peak RSS is %.0f MB, from %.0f" % (peak, started))
        status, body, _ = call(daemon.port, marketing, "GET", "/v1/revisions")
        if status != 200 or json.loads(body)["current"] != 1:
            fail("a document of mistakes changed the store: %d %s" % (status, body[:200]))
        alive = daemon.alive()
    finally:
        daemon.stop()
    if not alive:
        fail("the daemon died under documents of mistakes")
    print("hostile: as marketing, documents of tiny mistakes: %s; nothing published; peak RSS %.0f MB from %.0f (bound +256)"
          % ("; ".join(figures), peak, started))
