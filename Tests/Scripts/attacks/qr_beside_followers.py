from hostile_common import *  # noqa: F401,F403


def qr_beside_followers(binary, scratch):
    import http.client
    data, follower_data = os.path.join(scratch, "qr-primary"), os.path.join(scratch, "qr-follower")
    daemon = Daemon(binary, data)
    replicator = token(binary, data, "qr-followers", "replication")
    dashboard = token(binary, data, "qr-dashboard", "telemetry:read", rate="unlimited")
    marketing = [token(binary, data, "qr-marketing-%d" % index, "telemetry:read", rate="unlimited") for index in range(2)]
    phone = token(binary, data, "qr-phone", "telemetry:write", rate="unlimited")
    readers = [token(binary, data, "qr-reader-%d" % index, "routes:read", rate="unlimited") for index in range(4)]
    process, _, follower_port = waymark_daemon.start(binary, follower_data, "--threads", "2", "--follow", "http://127.0.0.1:%d" % daemon.port,
                                                     "--follow-interval", "0.5", seed=False, env=dict(os.environ, WAYMARK_FOLLOW_TOKEN=replicator))
    if follower_port is None:
        process.kill()
        fail("the follower did not start:\n" + process.stderr.read())
    threading.Thread(target=process.stdout.read, daemon=True).start()
    threading.Thread(target=process.stderr.read, daemon=True).start()
    stop = threading.Event()
    counts = {"qr 200": 0, "qr 503": 0, "qr other": 0}
    lock = threading.Lock()
    long_path = "q" * 2_800

    def flood(index):
        connection, serial = None, 0
        while not stop.is_set():
            try:
                if connection is None:
                    connection = http.client.HTTPConnection("127.0.0.1", daemon.port, timeout=30, source_address=("127.0.0.%d" % (20 + index % 4), 0))
                serial += 1
                link = "https://storefront.example/%s/%d/%d" % (long_path, index, serial)
                connection.request("GET", "/v1/qr?ecc=L&url=" + urllib.parse.quote(link, safe=""), headers={"Authorization": "Bearer " + readers[index % 4]})
                response = connection.getresponse()
                response.read()
                key = "qr %d" % response.status if response.status in (200, 503) else "qr other"
                with lock:
                    counts[key] += 1
            except (OSError, http.client.HTTPException):
                connection = None

    # Counts worth asking: 480 groups, so two days of minutes by six dimensions is the
    # costliest answer a dashboard token may have (attack 38), asked over and over.
    import uuid
    ts = iso(int(time.time()) - 30)
    for version in ("5.2.0", "5.3.0"):
        events = [dict({"ts": ts, "entry": entry, "outcome": outcome, "route": route}, **({"reason": reason} if reason else {}))
                  for route in ("home", "product", "category", "search", "cart", "orders", "order-detail", "settings", "new-arrivals", "spring-sale")
                  for entry in ("universalLink", "scheme", "push", "inApp")
                  for outcome, reason in (("proceed", None), ("gated", None), ("notFound", "validationFailed"), ("notFound", "expired"),
                                          ("notFound", "unknownRoute"), ("notFound", "malformed"))]
        status, answer, _ = call(daemon.port, phone, "POST", "/v1/telemetry", json.dumps({
            "batch": uuid.uuid4().hex, "client": {"platform": "ios", "appVersion": version, "revision": 1}, "events": events}).encode(),
            {"Content-Type": "application/json"})
        if status != 202:
            fail("a batch of many groups answered %d: %s" % (status, answer[:300]))

    # The costly counts flood while a publish travels to the follower; the dashboard's own
    # counts are asked beside the QR flood alone (behind 32 costly ones each would wait ~3 s).
    counting = threading.Event()

    def costly_counts(index):
        connection = None
        while not stop.is_set():
            if not counting.wait(timeout=0.2):
                continue
            try:
                if connection is None:
                    connection = http.client.HTTPConnection("127.0.0.1", daemon.port, timeout=60)
                connection.request("GET", "/v1/telemetry/counts?groupBy=route,entry,outcome,reason,appVersion,platform&step=1m&limit=170&from=%s&to=%s"
                                   % (iso(time.time() - 47 * 3_600), iso(time.time() + 60)), headers={"Authorization": "Bearer " + marketing[index % 2]})
                response = connection.getresponse()
                response.read()
                key = "counts %d" % response.status if response.status in (200, 503) else "counts other"
                with lock:
                    counts[key] = counts.get(key, 0) + 1
            except (OSError, http.client.HTTPException):
                connection = None

    def follower_etag():
        status, _, headers = call(follower_port, daemon.admin, "GET", "/v1/manifest?platform=ios&version=5.3.0", timeout=10)
        return headers.get("ETag") if status == 200 else None

    def primary_etag():
        status, _, headers = call(daemon.port, daemon.admin, "GET", "/v1/manifest?platform=ios&version=5.3.0", timeout=10)
        return headers.get("ETag") if status == 200 else None

    deadline = time.monotonic() + 20
    while primary_etag() is None or follower_etag() != primary_etag():
        if time.monotonic() > deadline:
            fail("the follower did not mirror the primary before the flood")
        time.sleep(0.1)
    flooders = [threading.Thread(target=flood, args=(index,)) for index in range(64)] + [threading.Thread(target=costly_counts, args=(index,)) for index in range(32)]
    for thread in flooders:
        thread.start()
    time.sleep(2)
    lags, dashboard_answers = [], []
    routes = json.load(open(os.path.join(EXAMPLE, "routes.json")))
    try:
        for run in range(5):
            counting.set()
            time.sleep(1)  # the costly counts queued before the publish
            routes["routes"].append({"id": "beside-qr-%d" % run, "patterns": ["/beside-qr-%d" % run], "destination": "home"})
            status, body, _ = call(daemon.port, daemon.admin, "POST", "/v1/revisions", {"message": "beside QR", "routes": routes},
                                   {"If-Match": '"rev-%d"' % (run + 1)}, timeout=30)
            if status != 201:
                fail("a publish beside the QR flood answered %d %s" % (status, body[:200]))
            counting.set()
            published = time.monotonic()
            wanted = primary_etag()
            while follower_etag() != wanted:
                if time.monotonic() - published > 15:
                    break
                time.sleep(0.05)
            lags.append(time.monotonic() - published)
            counting.clear()
            for _ in range(4):
                status, _, _ = call(daemon.port, dashboard, "GET", "/v1/telemetry/counts?groupBy=route&step=1m&from=%s&to=%s"
                                    % (iso(int(time.time()) - 3_600), iso(int(time.time()) + 60)), timeout=30)
                dashboard_answers.append(status)
    finally:
        stop.set()
        for thread in flooders:
            thread.join(timeout=30)
    alive = daemon.alive() and process.poll() is None
    process.send_signal(signal.SIGTERM)
    process.wait(timeout=30)
    daemon.stop()
    if not alive:
        fail("a daemon died under the QR flood")
    if counts["qr 200"] < 10:
        fail("the QR flood did not flood: %s" % counts)
    if max(lags) > 2:
        fail("beside a QR flood (%s) the follower served new revisions %s s after the publish" % (counts, ["%.2f" % lag for lag in lags]))
    answered = sum(1 for status in dashboard_answers if status == 200)
    if answered < 0.95 * len(dashboard_answers):
        fail("beside a QR flood (%s) the dashboard's counts answered %d of %d: %s" % (counts, answered, len(dashboard_answers), dashboard_answers))
    if counts.get("counts 200", 0) < 4:
        fail("the costly counts did not flood: %s" % counts)
    print("hostile: 64 connections from 4 addresses asking new version-40 QR codes (%d answered, %d 503) and 32 asking two marketing tokens' "
          "costliest counts (%d answered, %d 503): 5 publishes served by a follower after %s s (at most 2); the dashboard's counts %d of %d answered"
          % (counts["qr 200"], counts["qr 503"], counts.get("counts 200", 0), counts.get("counts 503", 0), ", ".join("%.2f" % lag for lag in lags),
             answered, len(dashboard_answers)))
