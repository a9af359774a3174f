from hostile_common import *  # noqa: F401,F403


def suggestion_listing(binary, scratch):
    """The unknown-links listing of 200 suggestible shapes, twenty times: suggestions are made
    at most 20 a request and kept, so listings after the first ten cost little CPU."""
    data = os.path.join(scratch, "suggestions")
    daemon = Daemon(binary, data, "--shapes-per-source", "1000", "--shapes-per-network", "1000")
    app = token(binary, data, "suggest-app", "telemetry:write", rate="unlimited")
    reader = token(binary, data, "suggest-reader", "telemetry:read", rate="unlimited")
    try:
        routes = json.load(open(os.path.join(EXAMPLE, "routes.json")))
        routes["routes"] += [{"id": "f%d" % index, "patterns": ["/f/%d" % index], "destination": "home"} for index in range(1_000)]
        status, answer, _ = call(daemon.port, daemon.admin, "POST", "/v1/revisions", {"message": "1,000 routes", "routes": routes},
                                 {"If-Match": '"rev-1"'}, timeout=120)
        if status != 201:
            fail("publishing 1,000 routes: %d %s" % (status, answer[:200]))
        words = ["".join(chr(97 + (index // 26 ** place) % 26) for place in range(3)) for index in range(200)]
        events = [{"ts": iso(int(time.time()) - 30), "entry": "universalLink", "outcome": "notFound", "reason": "unknownRoute",
                   "shape": "https://storefront.example/f/q%s" % word} for word in words]
        for network in range(3):
            connection = http.client.HTTPConnection("127.0.0.1", daemon.port, timeout=30, source_address=("127.0.%d.2" % (network + 1), 0))
            connection.request("POST", "/v1/telemetry", body=json.dumps({"client": {"platform": "ios", "appVersion": "5.3.0", "revision": 2},
                                                                         "events": events}),
                               headers={"Authorization": "Bearer " + app, "Content-Type": "application/json"})
            response = connection.getresponse()
            answer = response.read()
            connection.close()
            if response.status != 202:
                fail("posting 200 shapes: %d %s" % (response.status, answer[:200]))

        def listings(count, until_made=False):
            before, pending, suggested = cpu_seconds(daemon.process.pid), [], 0
            for _ in range(count):
                status, answer, _ = call(daemon.port, reader, "GET", "/v1/telemetry/unknown-links?limit=200", timeout=120)
                if status != 200:
                    fail("the unknown-links listing answered %d: %s" % (status, answer[:200]))
                listing = json_of(answer)
                pending.append(listing.get("pending"))
                suggested = sum(1 for shape in listing["shapes"] if shape["suggestion"] is not None)
                if until_made and listing.get("pending") == 0:
                    break
            return cpu_seconds(daemon.process.pid) - before, pending, suggested

        # Until every suggestion is made (each listing makes at most 20, and stops at 0.2 s of CPU).
        first, first_pending, _ = listings(40, until_made=True)
        second, second_pending, suggested = listings(10)
        alive = daemon.alive()
    finally:
        daemon.stop()
    if not alive:
        fail("the daemon died listing unknown links")
    if suggested < 190:
        fail("only %d of 200 shapes got a suggestion (pending %s)" % (suggested, second_pending))
    # Kept, not made again: were each listing to make its own, at most 20 a listing, ten more
    # would leave some pending.
    if any(pending != 0 for pending in second_pending):
        fail("listings of 200 suggestible shapes until all were made cost %.2f s of CPU, ten more %.2f s; pending %s, then %s"
             % (first, second, first_pending, second_pending))
    print("hostile: 200 suggestible shapes on a 1,000-route revision listed with limit=200: listings until all were made %.2f s of CPU (pending %s), "
          "ten more %.2f s (pending %s), %d suggestions" % (first, first_pending, second, second_pending, suggested))
