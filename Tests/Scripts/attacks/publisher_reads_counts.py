from hostile_common import *  # noqa: F401,F403


# 18 -----------------------------------------------------------------------------------------
def publisher_reads_counts(daemon, binary, data):
    """GET /v1/telemetry/counts takes a routes:publish token (the console's performance
    view), rated as telemetry:read: a marketing token asking the costliest query as fast as
    6 connections can gets telemetry:read's allowance through and no more, manifests stay
    quick, and its publishing rate is not spent."""
    import http.client
    # Its own rate, low enough that 6 connections pass it on any machine: the bound and the
    # separate bucket are what is shown (the default, telemetry:read's 50/s, is a unit test's).
    marketing = token(binary, data, "hostile-marketing", "routes:publish", rate=5)
    phone = token(binary, data, "hostile-month-phone", "telemetry:write", rate="unlimited")
    routes = [route["id"] for route in json.load(open(os.path.join(EXAMPLE, "routes.json")))["routes"]]
    now = int(time.time())
    events = [{"ts": iso(now - hour * 3600 - 60), "entry": entry, "outcome": "proceed", "route": route, "count": 1 + hour % 7}
              for hour in range(1, 30 * 24) for route, entry in zip(routes, ["universalLink", "scheme", "push", "inApp"] * 3)]
    for index in range(0, len(events), 1000):
        status, body, _ = call(daemon.port, phone, "POST", "/v1/telemetry",
                               {"client": {"platform": "ios", "appVersion": "5.3.0", "revision": 1}, "events": events[index:index + 1000]})
        if status != 202:
            fail("seeding a month of telemetry: %d %s" % (status, body[:200]))
    target = "/v1/telemetry/counts?" + urllib.parse.urlencode(
        {"from": iso(now - 30 * 86400), "step": "1h", "groupBy": "route,platform,appVersion,entry,outcome,reason", "limit": "1000"})
    stop = threading.Event()
    answered = {200: 0, 429: 0, "other": []}
    lock = threading.Lock()
    fetches = []

    def fetch_manifests():
        while not stop.is_set():
            began = time.monotonic()
            status, _, _ = call(daemon.port, daemon.admin, "GET", "/v1/manifest?platform=ios&version=5.3.0", timeout=10)
            fetches.append((status, time.monotonic() - began))
            stop.wait(0.1)

    hammers = [threading.Thread(target=ask_until, args=(daemon.port, target, marketing, stop, answered, lock)) for _ in range(6)]
    elapsed = run_for(hammers + [threading.Thread(target=fetch_manifests)], 5, stop)
    allowance = 25 + 5 * elapsed
    if answered["other"]:
        fail("the publishing token's counts were answered %s" % sorted(set(answered["other"])))
    if answered[200] > 1.1 * allowance or answered[429] == 0:
        fail("a publishing token got %d counts through in %.1f s (allowance %.0f), %d refused" % (answered[200], elapsed, allowance, answered[429]))
    times = sorted(seconds for _, seconds in fetches)
    if any(status != 200 for status, _ in fetches) or not times or times[-1] > 1.0:
        fail("manifests during the counts flood: %r" % fetches[-5:])
    status, _, _ = call(daemon.port, marketing, "POST", "/v1/validate", json.load(open(os.path.join(EXAMPLE, "routes.json"))))
    if status != 200:
        fail("after reading counts, the marketing token's validation answered %d (its publishing rate was spent)" % status)
    print("hostile: a routes:publish token at --rate 5 on 6 connections asking 30 days of hours by six dimensions for %.1f s: %d through "
          "(allowance %.0f: a burst of 25 and 5 a second), %d answered 429; %d manifests meanwhile, p50 %.1f ms, "
          "slowest %.1f ms; its validation still 200" % (elapsed, answered[200], allowance, answered[429], len(times),
                                                         1000 * times[len(times) // 2], 1000 * times[-1]))
