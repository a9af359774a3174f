from hostile_common import *  # noqa: F401,F403


def suggestions_across_publishes(binary, scratch):
    data = os.path.join(scratch, "suggestions-large")
    daemon = Daemon(binary, data, "--shapes-per-source", "1000", "--shapes-per-network", "1000")
    app = token(binary, data, "large-suggest-app", "telemetry:write", rate="unlimited")
    reader = token(binary, data, "large-suggest-reader", "telemetry:read", rate="unlimited")
    qr_reader = token(binary, data, "large-suggest-qr", "routes:read", rate="unlimited")
    routes = json.load(open(os.path.join(EXAMPLE, "routes.json")))
    routes["routes"] += [{"id": "f%d" % index, "patterns": ["/f/%d" % index], "destination": "home"} for index in range(20_000)]
    status, answer, _ = call(daemon.port, daemon.admin, "POST", "/v1/revisions", {"message": "20,000 routes", "routes": routes},
                             {"If-Match": '"rev-1"'}, timeout=120)
    if status != 201:
        fail("publishing 20,000 routes: %d %s" % (status, answer[:200]))
    words = ["".join(chr(97 + (index // 26 ** place) % 26) for place in range(3)) for index in range(200)]
    events = [{"ts": iso(int(time.time()) - 30), "entry": "universalLink", "outcome": "notFound", "reason": "unknownRoute",
               "shape": "https://storefront.example/f/q%s" % word} for word in words]
    for network in range(3):
        connection = http.client.HTTPConnection("127.0.0.1", daemon.port, timeout=30, source_address=("127.0.%d.2" % (network + 1), 0))
        connection.request("POST", "/v1/telemetry", body=json.dumps({"client": {"platform": "ios", "appVersion": "5.3.0", "revision": 2}, "events": events}),
                           headers={"Authorization": "Bearer " + app, "Content-Type": "application/json"})
        response = connection.getresponse()
        answer = response.read()
        connection.close()
        if response.status != 202:
            fail("posting 200 shapes: %d %s" % (response.status, answer[:200]))

    def listing():
        status, answer, _ = call(daemon.port, reader, "GET", "/v1/telemetry/unknown-links?limit=200", timeout=120)
        if status != 200:
            fail("the unknown-links listing answered %d: %s" % (status, answer[:200]))
        return json_of(answer)

    qr_waits, listing_cpu, pending = [], [], []
    for attempt in range(40):
        result = {}
        before = cpu_seconds(daemon.process.pid)
        lister = threading.Thread(target=lambda: result.setdefault("listing", listing()))
        lister.start()
        if attempt < 5:
            time.sleep(0.05)
            started = time.monotonic()
            link = "https://storefront.example/f/qr-%d" % attempt
            status, _, _ = call(daemon.port, qr_reader, "GET", "/v1/qr?url=" + urllib.parse.quote(link, safe=""), timeout=60)
            if status != 200:
                fail("a QR code beside the listing answered %d" % status)
            qr_waits.append(time.monotonic() - started)
        lister.join(timeout=120)
        listing_cpu.append(cpu_seconds(daemon.process.pid) - before)
        pending.append(result["listing"]["pending"])
        if pending[-1] == 0:
            break
    if pending[-1] != 0:
        fail("40 listings left %d suggestions pending (CPU a listing %s)" % (pending[-1], ["%.2f" % cpu for cpu in listing_cpu[:10]]))
    made_cpu = sum(listing_cpu)
    routes["routes"].append({"id": "three-segments", "patterns": ["/a/b/c"], "destination": "home"})
    status, answer, _ = call(daemon.port, daemon.admin, "POST", "/v1/revisions", {"message": "a route of another length", "routes": routes},
                             {"If-Match": '"rev-2"'}, timeout=120)
    if status != 201:
        fail("publishing a three-segment route: %d %s" % (status, answer[:200]))
    before = cpu_seconds(daemon.process.pid)
    after_publish = listing()
    after_cpu = cpu_seconds(daemon.process.pid) - before
    suggested = sum(1 for shape in after_publish["shapes"] if shape["suggestion"] is not None)
    alive = daemon.alive()
    daemon.stop()
    if not alive:
        fail("the daemon died listing unknown links")
    if max(qr_waits) > 1.0:
        fail("QR codes beside unknown-link listings of 20,000 routes waited %s s" % ["%.2f" % wait for wait in qr_waits])
    # Standing, not made again: were the publish to drop them, one listing would make at most 20.
    if after_publish["pending"] != 0 or suggested < 190:
        fail("after a publish of another length the listing had %d pending, %d suggestions, %.2f s of CPU (making them all: %.2f s)"
             % (after_publish["pending"], suggested, after_cpu, made_cpu))
    print("hostile: 200 suggestible shapes beside 20,000 routes: %d listings made every suggestion (%.2f s of CPU, at most %.2f s a listing; "
          "pending %s), QR codes beside them answered in %s s; after a publish of another length %d suggestions stood, the listing %.2f s of CPU"
          % (len(pending), made_cpu, max(listing_cpu), pending[:8], ", ".join("%.2f" % wait for wait in qr_waits), suggested, after_cpu))
