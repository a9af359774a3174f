from hostile_common import *  # noqa: F401,F403


# 27 -----------------------------------------------------------------------------------------
def changes_flood(binary, scratch):
    """A marketer flooding validations of large documents: held to its share of the changes
    lane; an abort runs in the controls lane; another marketer gets places."""
    data = os.path.join(scratch, "changes")
    daemon = Daemon(binary, data)
    flooder = token(binary, data, "changes-flooder", "routes:publish", rate="unlimited")
    other = token(binary, data, "changes-other", "routes:publish", rate="unlimited")
    routes = json.load(open(os.path.join(EXAMPLE, "routes.json")))
    big = json.loads(json.dumps(routes))
    big["routes"] += [{"id": "f%d" % index, "patterns": ["/f/%d/:slug" % index], "destination": "home"} for index in range(30_000)]
    body = json.dumps(big).encode()
    stop = threading.Event()
    tally, lock = {}, threading.Lock()

    def flood():
        connection = http.client.HTTPConnection("127.0.0.1", daemon.port, timeout=60)
        while not stop.is_set():
            try:
                connection.request("POST", "/v1/validate", body=body, headers={"Authorization": "Bearer " + flooder,
                                                                              "Content-Type": "application/json"})
                response = connection.getresponse()
                response.read()
                status = response.status
                if response.getheader("Connection", "").lower() == "close":
                    connection.close()
                    connection = http.client.HTTPConnection("127.0.0.1", daemon.port, timeout=60)
            except (OSError, http.client.HTTPException):
                status = "reset"
                connection.close()
                connection = http.client.HTTPConnection("127.0.0.1", daemon.port, timeout=60)
            with lock:
                tally[status] = tally.get(status, 0) + 1
        connection.close()

    try:
        candidate = json.loads(json.dumps(routes))
        candidate["routes"][0]["notes"] = "the candidate"
        status, _, _ = call(daemon.port, daemon.admin, "POST", "/v1/revisions", {"message": "candidate", "routes": candidate, "rollout": {}},
                            {"If-Match": '"rev-1"', "Content-Type": "application/json"}, timeout=30)
        if status != 201:
            fail("starting a rollout: %d" % status)
        threads = [threading.Thread(target=flood) for _ in range(24)]
        for thread in threads:
            thread.start()
        time.sleep(3)
        _, _, headers = call(daemon.port, daemon.admin, "GET", "/v1/rollout")
        began = time.monotonic()
        aborted, _, _ = call(daemon.port, daemon.admin, "POST", "/v1/rollout/abort", None, {"If-Match": headers.get("ETag", "")}, timeout=60)
        abort = time.monotonic() - began
        began = time.monotonic()
        validated, _, _ = call(daemon.port, other, "POST", "/v1/validate", routes, timeout=60)
        validation = time.monotonic() - began
        _, listing, _ = call(daemon.port, other, "GET", "/v1/revisions")
        routes["routes"][0]["notes"] = "another marketer"
        began = time.monotonic()
        published, _, _ = call(daemon.port, other, "POST", "/v1/revisions", {"message": "beside the flood", "routes": routes},
                               {"If-Match": '"rev-%d"' % json_of(listing)["current"], "Content-Type": "application/json"}, timeout=60)
        publish = time.monotonic() - began
        time.sleep(2)
        stop.set()
        for thread in threads:
            thread.join()
        alive = daemon.alive()
    finally:
        stop.set()
        daemon.stop()
    if not alive:
        fail("the daemon died under a flood of validations")
    if aborted != 200 or abort > 1.0:
        fail("the operator's abort beside one marketer's flood of validations: %d in %.2f s" % (aborted, abort))
    if validated != 200 or published != 201:
        fail("another marketer beside the flood: validation %d in %.2f s, publish %d in %.2f s" % (validated, validation, published, publish))
    if tally.get(503, 0) == 0 or tally.get(200, 0) == 0:
        fail("the flooder's validations: %s" % tally)
    print("hostile: one marketer validating 3 MB documents from 24 connections: %d answered, %d refused 503 past its share; "
          "beside it the operator's abort in %.0f ms, another marketer's validation in %.2f s and publish in %.2f s"
          % (tally.get(200, 0), tally.get(503, 0), 1000 * abort, validation, publish))
