from hostile_common import *  # noqa: F401,F403


# 33 -----------------------------------------------------------------------------------------
def drafts_fill_reads(binary, scratch):
    """Four publishing tokens preview and diff 300 KB drafts from 16 connections each while
    a fifth keeps the document turn busy: each draft waits for its turn holding a place in
    the costly-reads lane. A token holds at most 2 such documents, an address 4 (refused
    503 at the head past them), so the lane keeps room for everyone else: a dashboard's
    token asking QR codes, the revision list and revision 1 is answered throughout. Before,
    the four tokens' shares (16 each) filled all 64 places and those reads got 503."""
    data = os.path.join(scratch, "drafts-fill-reads")
    daemon = Daemon(binary, data)
    busy = token(binary, data, "busy", "routes:publish", rate="unlimited")
    drafters = [token(binary, data, "drafter-%d" % index, "routes:publish", rate="unlimited") for index in range(4)]
    reader = token(binary, data, "dashboard", "manifest:read", "routes:read", rate="unlimited")
    params = ",".join('"p%d":{"const":"x"}' % index for index in range(249_000))
    slow = ('{"format":"waymark.routes/1","app":"storefront","routes":[{"id":"x","patterns":["/x"],"destination":"home","params":{%s}}]}'
            % params).encode()
    routes = ('{"format":"waymark.routes/1","app":"storefront","routes":[%s]}'
              % ",".join('{"id":"r%d","patterns":["/r%d"],"destination":"home"}' % (index, index) for index in range(6_000))).encode()
    stop = threading.Event()
    counts, lock = {}, threading.Lock()

    def note(key):
        with lock:
            counts[key] = counts.get(key, 0) + 1

    def validate():
        while not stop.is_set():
            try:
                call(daemon.port, busy, "POST", "/v1/validate", slow, {"Content-Type": "application/json"}, timeout=120)
            except OSError:
                pass

    def draft(bearer, worker, address):
        connection = None
        while not stop.is_set():
            try:
                if connection is None:
                    connection = http.client.HTTPConnection("127.0.0.1", daemon.port, timeout=60, source_address=(address, 0))
                if worker % 2:
                    target, body = "/v1/resolve", b'{"url":"https://storefront.example/r1","routes":' + routes + b"}"
                else:
                    target, body = "/v1/revisions/1/diff", routes
                connection.request("POST", target, body, {"Authorization": "Bearer " + bearer, "Content-Type": "application/json"})
                response = connection.getresponse()
                response.read()
                note("draft %d" % response.status)
                if response.status == 503:
                    if response.getheader("Connection", "").lower() == "close":
                        connection.close()
                        connection = None
                    time.sleep(0.05)
            except (OSError, http.client.HTTPException):
                note("draft reset")
                connection = None

    try:
        workers = [threading.Thread(target=validate) for _ in range(2)]
        # Each drafter from an address of its own; the dashboard from 127.0.0.1.
        workers += [threading.Thread(target=draft, args=(bearer, worker, "127.0.0.%d" % (20 + index)))
                    for index, bearer in enumerate(drafters) for worker in range(16)]
        for worker in workers:
            worker.start()
        time.sleep(1.5)
        deadline = time.monotonic() + 5

        def read(kind):
            asked = 0
            while time.monotonic() < deadline:
                asked += 1
                target = {"qr": "/v1/qr?ecc=L&url=" + urllib.parse.quote("https://storefront.example/qr/%d" % asked, safe=""),
                          "list": "/v1/revisions", "revision": "/v1/revisions/1"}[kind]
                status, _, _ = call(daemon.port, reader, "GET", target, timeout=30)
                note("%s %d" % (kind, status))
                time.sleep(0.05)

        readers = [threading.Thread(target=read, args=(kind,)) for kind in ("qr", "list", "revision")]
        for worker in readers:
            worker.start()
        for worker in readers:
            worker.join(timeout=60)
        stop.set()
        for worker in workers:
            worker.join(timeout=180)
        alive = daemon.alive()
    finally:
        stop.set()
        daemon.stop()
    reads = {key: value for key, value in counts.items() if not key.startswith("draft")}
    answered = sum(value for key, value in reads.items() if key.endswith(" 200"))
    if not alive or any(worker.is_alive() for worker in workers):
        fail("drafts fill the reads lane: the daemon died or a request hung (%s)" % counts)
    if answered < 0.95 * sum(reads.values()):
        fail("drafts fill the reads lane: the dashboard's reads got %s while four tokens sent drafts (%s)" % (reads, counts))
    if counts.get("draft 503", 0) == 0:
        fail("drafts fill the reads lane: no draft was refused (%s): the attack did not reach the lane" % counts)
    print("hostile: 4 publishing tokens previewing and diffing 300 KB drafts from 64 connections behind slow validations: "
          "the dashboard's QR codes, revision list and revision reads %d of %d answered (%s); drafts %d answered, %d refused 503"
          % (answered, sum(reads.values()), ", ".join("%s %d" % item for item in sorted(reads.items())), sum(value for key, value in counts.items() if key in ("draft 200", "draft 422")),
             counts.get("draft 503", 0)))
