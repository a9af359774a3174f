from hostile_common import *  # noqa: F401,F403


# 17 -----------------------------------------------------------------------------------------
def old_revisions(binary, scratch):
    """One read token against history on disk: every read of an old revision reads and
    hashes its file and parses it, so a token asking many different ones must hold only
    its share of the reads lane, and what the daemon keeps of them must stay bounded."""
    data = os.path.join(scratch, "history")
    daemon = Daemon(binary, data)
    reader = token(binary, data, "reader", "manifest:read", "routes:read", rate="unlimited")
    other = token(binary, data, "other-reader", "manifest:read", "routes:read", rate="unlimited")
    routes = json.load(open(os.path.join(EXAMPLE, "routes.json")))
    revisions = 24
    for number in range(2, revisions + 2):
        big = json.loads(json.dumps(routes))
        for index in range(4_000):
            big["routes"].append({"id": "r%d-%d" % (number, index), "patterns": ["/c/r%d-%d" % (number, index)], "destination": "home",
                                  "notes": "history %d %s" % (number, "n" * 200)})
        status, body, _ = call(daemon.port, daemon.admin, "POST", "/v1/revisions", {"message": "big %d" % number, "routes": big},
                               {"If-Match": '"rev-%d"' % (number - 1)}, timeout=60)
        if status != 201:
            fail("publishing big revision %d: %d %s" % (number, status, body[:300]))
    size = os.path.getsize(os.path.join(data, "revisions", "%08d" % 2))
    time.sleep(1.5)  # the work queue gives back what the publishes freed once it is quiet
    before = rss_mb(daemon.process.pid)
    stop = threading.Event()
    counts = {"ok": 0, "busy": 0, "other": 0}
    statuses = set()
    lock = threading.Lock()

    def flood(seed):
        rng = random.Random(seed)
        connection = None
        while not stop.is_set():
            try:
                if connection is None:
                    connection = http.client.HTTPConnection("127.0.0.1", daemon.port, timeout=30)
                a = rng.randint(1, revisions)
                path = "/v1/revisions/%d" % a if rng.random() < 0.7 else "/v1/revisions/%d/diff/%d" % (a, rng.randint(1, revisions))
                connection.request("GET", path, headers={"Authorization": "Bearer " + reader})
                response = connection.getresponse()
                response.read()
                kind = "ok" if response.status == 200 else "busy" if response.status == 503 else "other"
                with lock:
                    counts[kind] += 1
                    if kind == "other":
                        statuses.add(response.status)
            except (OSError, http.client.HTTPException):
                connection = None
    threads = [threading.Thread(target=flood, args=(seed,), daemon=True) for seed in range(32)]
    for thread in threads:
        thread.start()
    side = []

    def other_reads():
        # Another token from another address (the reader holds its token's and its peer's
        # share): answered, after at most the reader's share of jobs queued before it.
        for _ in range(3):
            began = time.monotonic()
            connection = http.client.HTTPConnection("127.0.0.1", daemon.port, timeout=60, source_address=("127.0.0.2", 0))
            connection.request("GET", "/v1/revisions/%d" % random.randint(2, revisions), headers={"Authorization": "Bearer " + other})
            response = connection.getresponse()
            response.read()
            connection.close()
            side.append((response.status, time.monotonic() - began))
    peak = before
    time.sleep(1)
    reading = threading.Thread(target=other_reads, daemon=True)
    reading.start()
    started = time.monotonic()
    while time.monotonic() - started < 10 or reading.is_alive():
        time.sleep(0.5)
        peak = max(peak, rss_mb(daemon.process.pid))
        if time.monotonic() - started > 120:
            break
    status, body, _ = call(daemon.port, daemon.admin, "POST", "/v1/revisions", {"message": "during the reads", "routes": routes},
                           {"If-Match": '"rev-%d"' % (revisions + 1)}, timeout=60)
    stop.set()
    for thread in threads:
        thread.join(timeout=30)
    peak = max(peak, rss_mb(daemon.process.pid))
    alive = daemon.alive()
    daemon.stop()
    if not alive:
        fail("the daemon died under old-revision reads")
    if status != 201:
        fail("a publish during old-revision reads answered %d %s" % (status, body[:200]))
    if counts["other"] or counts["ok"] == 0:
        fail("old-revision reads: %s, statuses %s" % (counts, statuses))
    if len(side) < 3 or any(answer != 200 for answer, _ in side):
        fail("another token's reads of old revisions during the flood: %s" % side)
    bound = 64 + 32  # kept documents and answers, and one peer's share of the queued-output budget
    if peak - before > bound:
        fail("old-revision reads took RSS from %.1f to %.1f MB (bound +%d MB)" % (before, peak, bound))
    print("hostile: one token reading %d old revisions of %.1f MB and their diffs for 10 s on 32 connections: %d answered, %d 503 "
          "(past its share of the reads lane); another token's 3 reads from another address answered, the slowest in %.2f s; a publish 201; RSS %.1f -> "
          "%.1f MB (bound +%d MB)" % (revisions, size / 1e6, counts["ok"], counts["busy"], max(t for _, t in side), before, peak, bound))
