from hostile_common import *  # noqa: F401,F403


# 22 -----------------------------------------------------------------------------------------
def vocabulary_growth(binary, scratch):
    """A routes:publish token publishing documents of new route ids, then scheduling and
    cancelling: telemetry posts never wait for a parser, and what the parser names stays
    bounded (the served revisions' ids, and --telemetry-max-routes of history's)."""
    import uuid
    data = os.path.join(scratch, "vocabulary")
    daemon = Daemon(binary, data)
    phone = token(binary, data, "vocabulary-phone", "telemetry:write", rate="unlimited")
    marketing = token(binary, data, "vocabulary-marketing", "routes:publish")
    routes = json.load(open(os.path.join(EXAMPLE, "routes.json")))
    stop = threading.Event()
    posts = []

    def post():
        status, _, _ = call(daemon.port, phone, "POST", "/v1/telemetry", {
            "batch": uuid.uuid4().hex, "client": {"platform": "ios", "appVersion": "5.3.0", "revision": 1},
            "events": [{"ts": iso(int(time.time()) - 30), "entry": "scheme", "outcome": "proceed", "route": "product"}]},
            {"Content-Type": "application/json"}, timeout=60)
        return status

    def keep_posting():
        while not stop.is_set():
            began = time.monotonic()
            status = post()
            posts.append((status, time.monotonic() - began))
            stop.wait(0.005)

    def change(method, path, body=None, headers=None):
        # At the token's default rate (10 a second): wait out a 429.
        while True:
            status, answer, head = call(daemon.port, marketing, method, path, body, headers, timeout=120)
            if status != 429:
                return status, answer
            time.sleep(float(head.get("Retry-After", "1")))

    if post() != 202:
        fail("the first telemetry post was not accepted")
    per, rounds = 40_000, 10
    # Made before the posts start: building them in this process beside the poster thread
    # would hold Python's lock, and time the client rather than the daemon.
    bodies = []
    for round in range(rounds):
        document = json.loads(json.dumps(routes))
        document["routes"] += [{"id": "v%d-%d" % (round, index), "patterns": ["/v/%d/%d" % (round, index)], "destination": "home"}
                               for index in range(per)]
        bodies.append(json.dumps({"message": "ids %d" % round, "routes": document}).encode())
    poster = threading.Thread(target=keep_posting)
    poster.start()
    settled = None
    try:
        for round, body in enumerate(bodies):
            status, answer = change("POST", "/v1/revisions", body, {"If-Match": '"rev-%d"' % (round + 1), "Content-Type": "application/json"})
            if status != 201:
                fail("publishing %d new route ids: %d %s" % (per, status, answer[:300]))
            if round == 0:
                time.sleep(1.5)  # the work queue gives back what the publish freed once it is quiet
                settled = rss_mb(daemon.process.pid)
        made = daemon.metric("waymark_telemetry_parsers_made_total") or 0
        for index in range(rounds):
            status, answer = change("POST", "/v1/schedules", {"at": iso(int(time.time()) + 3600), "message": "later %d" % index, "routes": routes},
                                    {"If-Match": '"rev-%d"' % (rounds + 1)})
            if status != 201:
                fail("scheduling: %d %s" % (status, answer[:300]))
            status, answer = change("DELETE", "/v1/schedules/%d" % json.loads(answer)["id"])
            if status != 200:
                fail("cancelling: %d %s" % (status, answer[:300]))
        made_by_schedules = (daemon.metric("waymark_telemetry_parsers_made_total") or 0) - made
    finally:
        stop.set()
        poster.join()
    time.sleep(1.5)
    after = rss_mb(daemon.process.pid)
    named = daemon.metric("waymark_telemetry_vocabulary_routes")
    alive = daemon.alive()
    daemon.stop()
    if not alive:
        fail("the daemon died under publishes of new route ids")
    if any(status != 202 for status, _ in posts):
        fail("telemetry posts beside the publishes: %s" % sorted({status for status, _ in posts}))
    slowest = max(seconds for _, seconds in posts)
    served = len(routes["routes"]) + per
    # Before, each change had one post (the first on its loop) make a parser from every id
    # in history while the others waited: one slow post per change, 0.1-0.7 s each past
    # the third publish (over 20 of the 30 changes). A post slowed by the machine alone is
    # rare and alone.
    slow = sum(1 for _, seconds in posts if seconds > 0.1)
    if slow > 2:
        fail("%d telemetry posts beside the publishes took over 100 ms, the slowest %.0f ms" % (slow, 1000 * slowest))
    if after - settled > 32:
        fail("publishing %d new route ids took RSS from %.1f MB (after the first) to %.1f MB" % (per * rounds, settled, after))
    if named is None or named > served + 10_000:
        fail("the vocabulary names %s route ids; the served revision has %d and history may add 10,000" % (named, served))
    if made_by_schedules:
        fail("%d parsers were made for schedules and cancels, which name nothing new" % made_by_schedules)
    times = sorted(seconds for _, seconds in posts)
    print("hostile: marketing published %d documents of %d new route ids (%d over history), then scheduled and cancelled %d times: "
          "%d telemetry posts meanwhile, median %.1f ms, slowest %.1f ms, %d over 100 ms; the vocabulary names %d route ids (%d served); "
          "parsers made for the schedules: %d; RSS %.1f MB after the first publish, %.1f MB after the last"
          % (rounds, per, per * rounds, rounds, len(posts), 1000 * times[len(times) // 2], 1000 * slowest, slow, named, served,
             made_by_schedules, settled, after))
