from hostile_common import *  # noqa: F401,F403


# 19 -----------------------------------------------------------------------------------------
def impact_flood(binary, scratch):
    """One marketing token floods the impact endpoint with 3,000-route drafts against a
    3,000-route revision that has a week of telemetry on every route: it has at most 2
    impacts queued or running (the rest 503 busy, on their heads, before their bodies are
    read), while another marketer from another address is answered each time, manifests
    stay answered and RSS stays bounded; a draft past --max-document-bytes is refused 413
    before it is read."""
    data = os.path.join(scratch, "impact")
    daemon = Daemon(binary, data, "--max-document-bytes", str(4 << 20))
    flooder = token(binary, data, "impact-flooder", "routes:publish", rate="unlimited")
    other = token(binary, data, "impact-other", "routes:publish", rate="unlimited")
    phone = token(binary, data, "impact-phone", "telemetry:write", rate="unlimited")
    reader = token(binary, data, "impact-reader", "manifest:read", "routes:read", rate="unlimited")
    routes = json.load(open(os.path.join(EXAMPLE, "routes.json")))
    calendar = json.loads(json.dumps(routes))
    for index in range(3_000):
        calendar["routes"].append({"id": "c%d" % index, "patterns": ["/campaign/c%d" % index, "/c%d/now" % index], "destination": "home"})
    status, body, _ = call(daemon.port, daemon.admin, "POST", "/v1/revisions", {"message": "calendar", "routes": calendar},
                           {"If-Match": '"rev-1"'}, timeout=120)
    if status != 201:
        fail("publishing the calendar answered %d %s" % (status, body[:300]))
    now = int(time.time())
    for version in ("5.2.0", "5.3.0"):
        for start in range(0, 3_000, 1_000):
            events = [{"ts": iso(now - 3600 - (index % 160) * 3600), "entry": "universalLink", "outcome": "proceed", "route": "c%d" % index, "count": 3}
                      for index in range(start, start + 1_000)]
            status, body, _ = call(daemon.port, phone, "POST", "/v1/telemetry",
                                   {"client": {"platform": "ios", "appVersion": version, "revision": 2}, "events": events})
            if status != 202:
                fail("posting a week of calendar telemetry answered %d %s" % (status, body[:300]))
    draft = json.loads(json.dumps(calendar))
    for route in draft["routes"][-3_000:]:
        route["patterns"] = ["/campaign/%s/now" % route["id"], "/%s/later" % route["id"]]
    draft["routes"].append({"id": "catch-all", "patterns": ["/campaign/:name"], "destination": "home"})
    sent = json.dumps(draft).encode()
    alone_at = time.monotonic()
    status, body, _ = call(daemon.port, other, "POST", "/v1/revisions/2/impact", sent, {"Content-Type": "application/json"}, timeout=120)
    alone = time.monotonic() - alone_at
    answer = json_of(body) if status == 200 else {}
    changes = sum(len(route["changes"]) for route in answer.get("routes", []))
    if status != 200 or len(answer["routes"]) != 3_000 or changes != 6_000:
        fail("one calendar impact answered %d with %d routes, %d changes: %s" % (status, len(answer.get("routes", [])), changes, body[:300]))
    rss_before = rss_mb(daemon.process.pid)
    stop = threading.Event()
    counts = {200: 0, 503: 0, "other": 0}
    lock = threading.Lock()

    def flood():
        connection = None
        while not stop.is_set():
            try:
                if connection is None:
                    connection = http.client.HTTPConnection("127.0.0.1", daemon.port, timeout=120)
                connection.request("POST", "/v1/revisions/2/impact", body=sent,
                                   headers={"Authorization": "Bearer " + flooder, "Content-Type": "application/json"})
                response = connection.getresponse()
                response.read()
                with lock:
                    counts[response.status if response.status in (200, 503) else "other"] += 1
            except (OSError, http.client.HTTPException):
                connection = None

    threads = [threading.Thread(target=flood) for _ in range(24)]
    for thread in threads:
        thread.start()
    time.sleep(1)
    small = json.dumps(routes).encode()
    others, manifests = [], []
    started = time.monotonic()
    while time.monotonic() - started < 10:
        sent_at = time.monotonic()
        connection = http.client.HTTPConnection("127.0.0.1", daemon.port, timeout=120, source_address=("127.0.0.9", 0))
        connection.request("POST", "/v1/revisions/2/impact", body=small, headers={"Authorization": "Bearer " + other, "Content-Type": "application/json"})
        response = connection.getresponse()
        response.read()
        connection.close()
        others.append((response.status, time.monotonic() - sent_at))
        sent_at = time.monotonic()
        status, _, _ = call(daemon.port, reader, "GET", "/v1/manifest?platform=ios&version=5.3.0")
        manifests.append((status, time.monotonic() - sent_at))
        time.sleep(0.2)
    # While the flooder holds its impacts, its next draft is refused on its head: the
    # answer comes though the body is never sent (before this, it was read first).
    at_head = ""
    for _ in range(20):
        connection = open_head(daemon.port, "127.0.0.1", "POST /v1/revisions/2/impact HTTP/1.1\r\nHost: waymark.test\r\n"
                               "Authorization: Bearer %s\r\nContent-Type: application/json\r\nContent-Length: %d\r\n\r\n" % (flooder, len(sent)))
        at_head = first_line(connection, 2)
        connection.close()
        if " 503 " in at_head:
            break
    peak = rss_mb(daemon.process.pid)
    held = daemon.metric("waymark_work_refused_total")
    stop.set()
    for thread in threads:
        thread.join()
    # A draft past --max-document-bytes: refused on its head, before a byte of it is read.
    connection = open_head(daemon.port, "127.0.0.1", "POST /v1/revisions/2/impact HTTP/1.1\r\nHost: waymark.test\r\n"
                           "Authorization: Bearer %s\r\nContent-Type: application/json\r\nContent-Length: %d\r\n\r\n" % (flooder, 5 << 20))
    line = first_line(connection, 10)
    connection.close()
    if " 413 " not in line:
        fail("a 5 MiB draft past --max-document-bytes 4 MiB answered %r" % line)
    alive = daemon.alive()
    daemon.stop()
    if not alive:
        fail("the daemon died under the impact flood")
    if counts[503] == 0 or counts[200] == 0 or counts["other"]:
        fail("the impact flood was not held to its share: %s" % counts)
    if " 503 " not in at_head:
        fail("a draft from the flooder holding its impacts was not refused on its head (its body unsent): %r" % at_head)
    if any(status != 200 for status, _ in others) or any(status != 200 for status, _ in manifests):
        fail("beside the impact flood: the other marketer %s, manifests %s" % (sorted({s for s, _ in others}), sorted({s for s, _ in manifests})))
    # A liveness bound, not a benchmark: the machine may be shared and the build a debug one.
    slowest_manifest = max(seconds for _, seconds in manifests)
    median_manifest = sorted(seconds for _, seconds in manifests)[len(manifests) // 2]
    if slowest_manifest > 5 or peak > rss_before + 300:
        fail("under the impact flood: slowest manifest %.2f s, RSS %.1f -> %.1f MB" % (slowest_manifest, rss_before, peak))
    waits = sorted(seconds for _, seconds in others)
    print("hostile: a 3,000-route revision with a week of telemetry on every route; one impact of a %.0f KB draft alone in %.2f s; "
          "one token flooding such drafts that move all "
          "6,000 patterns from 24 connections: %d answered, %d refused 503 at once past its 2 impacts at a time (of them by the reads lane: %d); another marketer "
          "from another address answered %d of %d (median %.2f s, slowest %.2f s); %d manifests beside them, median %.0f ms, slowest %.0f ms "
          "(bound 5 s); RSS %.1f -> %.1f MB (bound +300); the flooder's next draft refused 503 on its head, unread; a 5 MiB draft refused 413 unread"
          % (len(sent) / 1e3, alone, counts[200], counts[503], held or 0, len(others), len(others), waits[len(waits) // 2], waits[-1],
             len(manifests), median_manifest * 1000, slowest_manifest * 1000, rss_before, peak))
