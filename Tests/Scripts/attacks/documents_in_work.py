from hostile_common import *  # noqa: F401,F403


# 31 -----------------------------------------------------------------------------------------
def documents_in_work(binary, scratch):
    """Six publishing tokens sending, from two connections each, the documents that cost
    the most to parse and validate under the request limits (about 250,000 tiny routes,
    one route naming 249,000 params, a million values) to validate, publish, preview and
    diff: documents are parsed one at a time whatever their lane (--documents-at-once 1),
    so the daemon's peak RSS stays within the budgets it states (bodies + queued answers +
    one document in work + caches + the process), where running every such job
    libdispatch starts at once had no bound."""
    data = os.path.join(scratch, "documents-in-work")
    budgets = {"bodies": 64, "answers": 16, "documents": 160, "caches": 32, "process": 64}
    daemon = Daemon(binary, data, "--max-buffered-body-bytes", str(budgets["bodies"] << 20), "--max-buffered-body-bytes-per-peer", "0",
                    "--max-queued-output-bytes", str(budgets["answers"] << 20))
    names = ["work-%d" % index for index in range(6)]
    tokens = [token(binary, data, name, "routes:publish", rate="unlimited") for name in names]

    def document(entries):
        return '{"format":"waymark.routes/1","app":"storefront","routes":[' + ",".join(entries) + ']}'

    params = ",".join('"p%d":{"const":"x"}' % index for index in range(249_000))
    documents = [document(['{"a":0}'] * 249_000).encode(),
                 document(['{"id":"x","patterns":["/x"],"destination":"home","params":{%s}}' % params]).encode(),
                 ('{"format":"waymark.routes/1","app":"storefront","routes":[%s]}' % ",".join(["0"] * 999_000)).encode()]
    statuses, lock = {}, threading.Lock()
    deadline = time.monotonic() + 4

    def send(index):
        kind = index
        while time.monotonic() < deadline:
            routes = documents[kind % len(documents)]
            kind += 1
            headers = {"Content-Type": "application/json"}
            if kind % 4 == 0:
                target, body = "/v1/validate", routes
            elif kind % 4 == 1:
                target, body = "/v1/revisions", b'{"message":"work","routes":' + routes + b"}"
                headers["If-Match"] = '"rev-1"'
            elif kind % 4 == 2:  # a draft previewed: the reads lane
                target, body = "/v1/resolve", b'{"url":"https://storefront.example/x","routes":' + routes + b"}"
            else:  # a draft compared with revision 1
                target, body = "/v1/revisions/1/diff", routes
            try:
                status, _, _ = call(daemon.port, tokens[index % len(tokens)], "POST", target, body, headers, timeout=180)
            except OSError as error:
                status = type(error).__name__
            with lock:
                statuses[status] = statuses.get(status, 0) + 1
            if status == 503:
                time.sleep(0.2)

    try:
        started = rss_mb(daemon.process.pid)
        workers = [threading.Thread(target=send, args=(index,)) for index in range(12)]
        began = time.monotonic()
        for worker in workers:
            worker.start()
        for worker in workers:
            worker.join(timeout=240)
        seconds = time.monotonic() - began
        peak = peak_mb(daemon.process.pid)
        status, body, _ = call(daemon.port, tokens[0], "GET", "/v1/revisions")
        unchanged = status == 200 and json.loads(body)["current"] == 1
        alive = daemon.alive()
    finally:
        daemon.stop()
    bound = sum(budgets.values()) * 1.048576
    answered = sum(count for status, count in statuses.items() if status in (200, 400, 422))
    if not alive or any(worker.is_alive() for worker in workers):
        fail("documents in work: the daemon died or left requests unanswered (%s)" % statuses)
    # A body past the budget is refused at its head (503) and the connection closed, which
    # a client still sending sees as a broken pipe or a reset.
    if not unchanged or set(statuses) - {200, 400, 422, 503, "BrokenPipeError", "ConnectionResetError"}:
        fail("documents in work: %s; store unchanged: %s" % (statuses, unchanged))
    if peak > bound:
        fail("documents in work: peak RSS %.0f MB from %.0f, past the %.0f MB the budgets state (%s MiB)"
             % (peak, started, bound, " + ".join("%d %s" % (value, key) for key, value in budgets.items())))
    print("hostile: 6 tokens sending the costliest documents a request may hold (249,000 tiny routes, 249,000 params, 999,000 values) "
          "validated, published, previewed and diffed from 12 connections for 4 s: %d answered, %d 503 and %d reset in %.0f s; peak RSS %.0f MB from %.0f (bound %.0f MB: %s MiB)"
          % (answered, statuses.get(503, 0), statuses.get("BrokenPipeError", 0) + statuses.get("ConnectionResetError", 0), seconds, peak, started, bound,
             " + ".join("%d %s" % (value, key) for key, value in budgets.items())))
