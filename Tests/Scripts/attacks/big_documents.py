from hostile_common import *  # noqa: F401,F403


def big_documents(binary, scratch):
    """Marketing's token against the store's memory: a route with a 10,000,000-byte note is
    refused naming the route and the field; ~14 MB documents (notes at their 4,096-byte
    limit) scheduled back to back for up to 30 s stop at the pending schedules' 64 MiB; RSS
    and a restart's time and RSS stay under their bounds."""
    data = os.path.join(scratch, "documents")
    daemon = Daemon(binary, data)
    marketing = token(binary, data, "marketing", "routes:publish", rate="unlimited")
    routes = json.load(open(os.path.join(EXAMPLE, "routes.json")))
    noted = json.loads(json.dumps(routes))
    noted["routes"].append({"id": "big-note", "patterns": ["/sale/big-note"], "destination": "home", "notes": "x" * 10_000_000})
    status, body, _ = call(daemon.port, marketing, "POST", "/v1/revisions", {"message": "a long note", "routes": noted},
                           {"If-Match": '"rev-1"', "Content-Type": "application/json"}, timeout=60)
    if status != 422 or b'Route \\"big-note\\": notes is 10000000 bytes' not in body:
        fail("a 10,000,000-byte note answered %d %s" % (status, body[:300]))
    # One route of 600,000 patterns (7 MB): validating it held 214 MB, past a document in
    # work's 160 MiB; refused by its count before it is decoded.
    wide = json.loads(json.dumps(routes))
    wide["routes"].append({"id": "wide", "patterns": ["/a%d" % index for index in range(600_000)], "destination": "home"})
    before_wide = rss_mb(daemon.process.pid)
    started = time.monotonic()
    status, body, _ = call(daemon.port, marketing, "POST", "/v1/revisions", {"message": "wide", "routes": wide},
                           {"If-Match": '"rev-1"', "Content-Type": "application/json"}, timeout=60)
    wide_seconds = time.monotonic() - started
    wide_peak = peak_mb(daemon.process.pid) - before_wide
    if status != 422 or b"tooComplex" not in body or b"600013 patterns" not in body:
        fail("a route of 600,000 patterns answered %d %s" % (status, body[:300]))
    if wide_peak > 160 * 1.048576:
        fail("a route of 600,000 patterns peaked %.1f MB over the daemon" % wide_peak)
    big = json.loads(json.dumps(routes))
    for index in range(3_300):
        big["routes"].append({"id": "c%d" % index, "patterns": ["/campaign/c%d" % index], "destination": "home", "notes": "n" * 4_000})
    sent = json.dumps({"at": iso(time.time() + 3_600), "message": "big", "routes": big}).encode()
    scheduled = refused = 0
    started = time.monotonic()
    while time.monotonic() - started < 30:
        status, answer, _ = call(daemon.port, marketing, "POST", "/v1/schedules", sent,
                                 {"If-Match": '"rev-1"', "Content-Type": "application/json"}, timeout=60)
        if status == 201:
            scheduled += 1
        elif status == 409 and json_of(answer)["error"]["code"] == "tooManySchedules":
            refused += 1
            if refused >= 3:
                break
        else:
            fail("scheduling a %d-byte document answered %d %s" % (len(sent), status, answer[:300]))
    rss = rss_mb(daemon.process.pid)
    size = data_mib(data)
    # Only pending schedules are bounded, so one that ends keeps no document: cancelling the
    # pending ones and filling the bound again leaves the data directory as large as before
    # (each cancelled one kept its ~14 MB before).
    def cancel_pending():
        status, listing, _ = call(daemon.port, marketing, "GET", "/v1/schedules")
        pending = [item["id"] for item in json_of(listing)["schedules"] if item["status"] == "pending"] if status == 200 else []
        for number in pending:
            status, answer, _ = call(daemon.port, marketing, "DELETE", "/v1/schedules/%d" % number)
            if status != 200:
                fail("cancelling schedule %d answered %d %s" % (number, status, answer[:200]))
        return len(pending)
    cancelled = cancel_pending()
    again = 0
    while again <= scheduled:
        status, answer, _ = call(daemon.port, marketing, "POST", "/v1/schedules", sent,
                                 {"If-Match": '"rev-1"', "Content-Type": "application/json"}, timeout=60)
        if status != 201:
            break
        again += 1
    cancelled += cancel_pending()
    cycled = data_mib(data)
    if again != scheduled or cycled > size + 16:
        fail("after cancelling %d big schedules and scheduling %d again (the first time %d), the data directory went from %.1f to %.1f MiB"
             % (cancelled, again, scheduled, size, cycled))
    daemon.stop()
    restarted = time.monotonic()
    daemon = Daemon(binary, data)
    restart = time.monotonic() - restarted
    restart_rss = rss_mb(daemon.process.pid)
    daemon.stop()
    if scheduled * len(sent) > (64 << 20) + len(sent) or refused == 0:
        fail("%d schedules of %d bytes were taken, %d refused" % (scheduled, len(sent), refused))
    # Pending schedules' routes stay in their files: a restart holds none of them.
    if rss > 400 or restart_rss > 64 or restart > 5:
        fail("under big schedules RSS %.1f MB, data %.1f MiB; restarted in %.1f s at %.1f MB" % (rss, size, restart, restart_rss))
    print("hostile: as marketing, a 10,000,000-byte note refused naming the route and the field; a route of 600,000 patterns refused "
          "422 tooComplex in %.2f s (peak %.1f MB over the daemon, bound 160 MiB); %.1f MB documents scheduled "
          "back to back: %d taken, then 409 tooManySchedules (64 MiB pending at most); RSS %.1f MB (bound 400), data directory "
          "%.1f MiB; cancelled, %d scheduled again and cancelled (%d cancels in all): %.2f MiB (bound +16: an ended schedule keeps no document); "
          "restarted in %.2f s at %.1f MB RSS (bounds 5 s, 64 MB: the schedules' routes stay on disk)"
          % (wide_seconds, wide_peak, len(sent) / 1e6, scheduled, rss, size, again, cancelled, cycled, restart, restart_rss))
