from hostile_common import *  # noqa: F401,F403


# 21 -----------------------------------------------------------------------------------------
def counts_beside_ingestion(binary, scratch):
    """GET /v1/telemetry/counts over a store of 360,000 cells, asked without pause by a
    telemetry:read token at its default rate, while a phone posts batches and an app fetches
    manifests: the posts go on at least half as fast as before the queries began."""
    import uuid
    data = os.path.join(scratch, "counts-ingestion")
    # The token's whole rate, as from many addresses: one address gets a fifth of 50/s.
    daemon = Daemon(binary, data, "--rate-share-per-peer", "0")
    phone = token(binary, data, "ingest-phone", "telemetry:write", rate="unlimited")
    reader = token(binary, data, "ingest-reader", "telemetry:read")
    app = token(binary, data, "ingest-app", "manifest:read", rate="unlimited")
    routes = [route["id"] for route in json.load(open(os.path.join(EXAMPLE, "routes.json")))["routes"]]
    kinds = [("proceed", None)] + [("notFound", reason) for reason in ("malformed", "unknownRoute", "validationFailed", "expired")]
    combinations = [(route, entry, kind) for route in routes for entry in ("universalLink", "scheme", "push", "inApp") for kind in kinds]
    clients = [(platform, version, revision) for platform in ("ios", "android") for version in ("5.2.0", "5.3.0") for revision in (1, 2)]
    now = int(time.time())
    problems = []

    def fill(first):
        # Each batch: four hours of every route, entry point and outcome for one build, as
        # late events (they count in their hour only).
        connection = http.client.HTTPConnection("127.0.0.1", daemon.port, timeout=60)
        for batch in range(first, 600, 4):
            platform, version, revision = clients[batch % len(clients)]
            events = []
            for hour in range((batch // len(clients)) * 4, (batch // len(clients)) * 4 + 4):
                for route, entry, (outcome, reason) in combinations:
                    events.append({"ts": iso(now - (2 + hour) * 3600 - 60), "entry": entry, "outcome": outcome, "route": route,
                                   **({"reason": reason} if reason else {})})
            connection.request("POST", "/v1/telemetry", body=json.dumps({"batch": uuid.uuid4().hex, "events": events,
                               "client": {"platform": platform, "appVersion": version, "revision": revision}}),
                               headers={"Authorization": "Bearer " + phone, "Content-Type": "application/json"})
            response = connection.getresponse()
            answer = response.read()
            if response.status != 202:
                problems.append("%d %s" % (response.status, answer[:200]))
                return

    fillers = [threading.Thread(target=fill, args=(first,)) for first in range(4)]
    for thread in fillers:
        thread.start()
    for thread in fillers:
        thread.join()
    if problems:
        fail("filling the counts: %s" % problems[0])
    cells = daemon.metric("waymark_telemetry_cells") or 0
    if cells < 300_000:
        fail("the store holds %d cells, not the 360,000 the attack needs" % cells)
    query = "/v1/telemetry/counts?" + urllib.parse.urlencode({"from": iso(now - 88 * 86400), "step": "1h", "groupBy": "route", "limit": "1000"})

    def phase(hammers, seconds=5):
        stop = threading.Event()
        posts, manifests, answered = [], [], {200: 0, 429: 0, "other": []}
        lock = threading.Lock()

        def post():
            while not stop.is_set():
                began = time.monotonic()
                status, _, _ = call(daemon.port, phone, "POST", "/v1/telemetry", {
                    "batch": uuid.uuid4().hex, "client": {"platform": "ios", "appVersion": "5.3.0", "revision": 2},
                    "events": [{"ts": iso(int(time.time()) - 30), "entry": "scheme", "outcome": "proceed", "route": "product"}]},
                    {"Content-Type": "application/json"}, timeout=60)
                posts.append((status, time.monotonic() - began))
                stop.wait(0.005)

        def fetch():
            while not stop.is_set():
                began = time.monotonic()
                status, _, _ = call(daemon.port, app, "GET", "/v1/manifest?platform=ios&version=5.3.0", timeout=60)
                manifests.append((status, time.monotonic() - began))
                stop.wait(0.02)

        askers = [threading.Thread(target=ask_until, args=(daemon.port, query, reader, stop, answered, lock)) for _ in range(hammers)]
        run_for(askers + [threading.Thread(target=post), threading.Thread(target=fetch)], seconds, stop)
        if any(status != 202 for status, _ in posts) or any(status != 200 for status, _ in manifests) or answered["other"]:
            fail("beside the counts queries: posts %s, manifests %s, counts %s" % (sorted({s for s, _ in posts}),
                                                                                  sorted({s for s, _ in manifests}), answered["other"]))
        return posts, manifests, answered

    quiet_posts, quiet_manifests, _ = phase(0)
    busy_posts, busy_manifests, answered = phase(2)
    alive = daemon.alive()
    daemon.stop()
    if not alive:
        fail("the daemon died beside the counts queries")
    if answered[200] == 0:
        fail("no counts query was answered")
    # Before, each query held the store's lock for its whole scan, and a post waits on that
    # lock on its event loop (its batch id is checked there): posts went at a quarter of the pace.
    if len(busy_posts) < 0.5 * len(quiet_posts):
        fail("posts beside the counts queries: %d in 5 s against %d before them" % (len(busy_posts), len(quiet_posts)))

    def median(samples):
        times = sorted(seconds for _, seconds in samples)
        return 1000 * times[len(times) // 2]

    print("hostile: %d cells of hourly telemetry; a telemetry:read token at its default rate asking 88 days of hours by route from 2 "
          "connections for 5 s: %d answered, %d 429; posts meanwhile %d (median %.1f ms) against %d (median %.1f ms) in the 5 s before; "
          "manifests %d (median %.1f ms) against %d (median %.1f ms)"
          % (cells, answered[200], answered[429], len(busy_posts), median(busy_posts), len(quiet_posts), median(quiet_posts),
             len(busy_manifests), median(busy_manifests), len(quiet_manifests), median(quiet_manifests)))
