from hostile_common import *  # noqa: F401,F403


def link_check_flood(binary, scratch):
    """Marketing tokens validating documents whose fallbacks never answer, with link checks on:
    bounded checks and threads; the operator's publish is checked and answered."""
    data = os.path.join(scratch, "links")
    stop = threading.Event()
    silent, listener = silent_listener(stop)
    closed_socket = socket.socket()
    closed_socket.bind(("127.0.0.1", 0))
    closed = closed_socket.getsockname()[1]  # bound, never listening: connections are refused
    arguments = ["--check-links", "--link-cache", "0",
                 "--connect-to", "slow.example:443:127.0.0.1:%d" % silent, "--allow-address", "127.0.0.1:%d" % silent,
                 "--allow-address", "127.0.0.1:%d" % closed]
    for host in ("storefront.example", "www.storefront.example"):
        arguments += ["--connect-to", "%s:443:127.0.0.1:%d" % (host, closed)]
    daemon = Daemon(binary, data, *arguments)
    flooders = [token(binary, data, "links-%d" % index, "routes:publish", rate="unlimited") for index in range(6)]
    routes = json.load(open(os.path.join(EXAMPLE, "routes.json")))
    tally, lock, peak = {}, threading.Lock(), [0]
    base_threads = threads_of(daemon.process.pid)

    def flood(bearer, worker):
        for round_ in range(1_000_000):
            if stop.is_set():
                return
            document = json.loads(json.dumps(routes))
            document["routes"] += [{"id": "slow%d" % index, "patterns": ["/slow/%d" % index], "destination": "home",
                                    "fallbackURL": "https://slow.example/%d/%d/%d" % (worker, round_, index)} for index in range(200)]
            try:
                status, body, _ = call(daemon.port, bearer, "POST", "/v1/validate", document, timeout=120)
                key = "503 %s" % ((json_of(body) or {}).get("error") or {}).get("code", "") if status == 503 else status
            except (OSError, http.client.HTTPException):
                key = "reset"
            with lock:
                tally[key] = tally.get(key, 0) + 1

    def sample():
        while not stop.is_set():
            peak[0] = max(peak[0], threads_of(daemon.process.pid))
            time.sleep(0.1)

    workers = [threading.Thread(target=flood, args=(bearer, index * 4 + connection))
               for index, bearer in enumerate(flooders) for connection in range(4)]
    sampler = threading.Thread(target=sample)
    try:
        sampler.start()
        for worker in workers:
            worker.start()
        # The threads peak within a second (every check's fetches start at once).
        time.sleep(3)
        operator = json.loads(json.dumps(routes))
        operator["routes"][0]["notes"] = "published beside the link-check flood"
        began = time.monotonic()
        try:
            published, answer, _ = call(daemon.port, daemon.admin, "POST", "/v1/revisions", {"message": "beside the flood", "routes": operator},
                                        {"If-Match": '"rev-1"'}, timeout=60)
        except (OSError, http.client.HTTPException) as error:
            published, answer = 0, str(error).encode()
        publish = time.monotonic() - began
        time.sleep(4)
        stop.set()
        for worker in workers:
            worker.join()
        sampler.join()
        alive = daemon.alive()
    finally:
        stop.set()
        daemon.stop()
        closed_socket.close()
    if not alive:
        fail("the daemon died under a flood of link checks")
    bound = 4 * 2 * (8 + 1) + 40
    if peak[0] > base_threads + bound:
        fail("link checks took the daemon from %d to %d threads (bound: %d more): %s" % (base_threads, peak[0], bound, tally))
    if published != 201 or publish > 10:
        fail("the operator's publish beside the link-check flood: %d in %.1f s: %s" % (published, publish, answer[:300]))
    if tally.get("503 linkChecksBusy", 0) == 0 or tally.get(200, 0) == 0:
        fail("the flooders' validations: %s" % tally)
    print("hostile: 6 tokens validating 200 fallbacks that never answer from 24 connections for 7 s: %s; threads %d at most "
          "(%d at rest); the operator's publish, checked beside them, in %.2f s"
          % (", ".join("%s: %d" % item for item in sorted(tally.items(), key=str)), peak[0], base_threads, publish))
