from hostile_common import *  # noqa: F401,F403


def qr_flood(daemon, binary, data):
    """96 keep-alive connections from one address asking version-40 QR codes with a phone's
    read token, each a new link (no cache helps), while the operator starts and aborts
    rollouts, publishes, and a scheduled publish fires: every change is answered, and right
    after the schedule fires the landing, the manifests and the associated-domain files are."""
    import http.client
    reader = token(binary, data, "qr-flood-reader", "manifest:read", "routes:read", rate="unlimited")
    stop = threading.Event()
    counts = {"qr 200": 0, "qr 503": 0, "qr other": 0}
    lock = threading.Lock()
    long_path = "q" * 2_800

    def flood(index):
        connection = None
        serial = 0
        while not stop.is_set():
            try:
                if connection is None:
                    connection = http.client.HTTPConnection("127.0.0.1", daemon.port, timeout=30, source_address=("127.0.0.7", 0))
                serial += 1
                link = "https://storefront.example/%s/%d/%d" % (long_path, index, serial)
                connection.request("GET", "/v1/qr?ecc=L&url=" + urllib.parse.quote(link, safe=""),
                                   headers={"Authorization": "Bearer " + reader})
                response = connection.getresponse()
                response.read()
                key = "qr %d" % response.status if response.status in (200, 503) else "qr other"
                with lock:
                    counts[key] += 1
            except (OSError, http.client.HTTPException):
                connection = None

    flooders = [threading.Thread(target=flood, args=(index,)) for index in range(96)]
    for thread in flooders:
        thread.start()
    time.sleep(2)
    answers = {}

    def note(what, status):
        answers.setdefault(what, []).append(status)

    routes = json.load(open(os.path.join(EXAMPLE, "routes.json")))
    started = time.monotonic()
    for index in range(10):
        _, listing, _ = call(daemon.port, daemon.admin, "GET", "/v1/revisions")
        routes["routes"][0]["notes"] = "qr flood rollout %d" % index
        status, _, _ = call(daemon.port, daemon.admin, "POST", "/v1/revisions",
                            {"message": "candidate %d" % index, "routes": routes, "rollout": {}},
                            {"If-Match": '"rev-%d"' % json_of(listing)["current"], "Content-Type": "application/json"}, timeout=30)
        note("rollout start", status)
        _, _, headers = call(daemon.port, daemon.admin, "GET", "/v1/rollout")
        status, _, _ = call(daemon.port, daemon.admin, "POST", "/v1/rollout/abort", None, {"If-Match": headers.get("ETag", "")}, timeout=30)
        note("abort", status)
        _, listing, _ = call(daemon.port, daemon.admin, "GET", "/v1/revisions")
        routes["routes"][0]["notes"] = "qr flood publish %d" % index
        status, published, _ = call(daemon.port, daemon.admin, "POST", "/v1/revisions", {"message": "publish %d" % index, "routes": routes},
                                    {"If-Match": '"rev-%d"' % json_of(listing)["current"], "Content-Type": "application/json"}, timeout=30)
        note("publish", status)
        # Once a publish is answered, its revision is what phones get (the views of the
        # builds being fetched are made before the answer; until then the previous answer).
        status, manifest, _ = call(daemon.port, reader, "GET", "/v1/manifest?platform=ios&version=5.3.0", None, {}, timeout=30)
        if status == 200 and json_of(manifest).get("revision") != json_of(published).get("number"):
            fail("a manifest right after publish %s answered revision %s" % (json_of(published).get("number"), json_of(manifest).get("revision")))
        note("manifest after publish", status)
        status, _, _ = call(daemon.port, daemon.admin, "POST", "/v1/validate", routes, {"Content-Type": "application/json"}, timeout=30)
        note("validate", status)
    changes_in = time.monotonic() - started
    # A scheduled publish fires during the flood; then what every phone and browser asks.
    _, listing, _ = call(daemon.port, daemon.admin, "GET", "/v1/revisions")
    base = json_of(listing)["current"]
    routes["routes"][0]["notes"] = "qr flood schedule"
    status, _, _ = call(daemon.port, daemon.admin, "POST", "/v1/schedules",
                        {"at": iso(time.time() + 2), "message": "scheduled under the flood", "routes": routes},
                        {"If-Match": '"rev-%d"' % base, "Content-Type": "application/json"}, timeout=30)
    note("schedule", status)
    deadline = time.time() + 20
    while time.time() < deadline:
        _, listing, _ = call(daemon.port, daemon.admin, "GET", "/v1/revisions")
        if json_of(listing)["current"] > base:
            break
        time.sleep(0.2)
    else:
        fail("the scheduled publish did not fire within 20 s of its time under the QR flood")
    fired_at = time.monotonic()
    browser = {"Host": "storefront.example", "User-Agent": "Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 Chrome/124.0 Safari/537.36"}
    for _ in range(5):
        for what, path, credential, headers in (
                ("landing", "/product/p1", None, browser),
                ("manifest ios 5.3.0", "/v1/manifest?platform=ios&version=5.3.0", reader, {}),
                ("manifest ios 5.2.0", "/v1/manifest?platform=ios&version=5.2.0", reader, {}),
                ("apple-app-site-association", "/.well-known/apple-app-site-association", None, {"Host": "storefront.example"})):
            status, _, _ = call(daemon.port, credential, "GET", path, None, headers, timeout=30)
            note(what, status)
    after_fire = time.monotonic() - fired_at
    stop.set()
    for thread in flooders:
        thread.join()
    expected = {"rollout start": 201, "abort": 200, "publish": 201, "manifest after publish": 200, "validate": 200, "schedule": 201,
                "landing": 302, "manifest ios 5.3.0": 200, "manifest ios 5.2.0": 200, "apple-app-site-association": 200}
    wrong = {what: statuses for what, statuses in answers.items() if any(status != expected[what] for status in statuses)}
    if wrong:
        fail("under a QR flood: %s (QR %s)" % (wrong, counts))
    if counts["qr 503"] == 0:
        fail("the QR flood was never held to its share: %s" % counts)
    print("hostile: 96 keep-alive connections asking version-40 QR codes (a new link each): %d drawn, %d refused 503 past their share; "
          "meanwhile 10 rollouts started and aborted, 10 publishes, 10 validations in %.1f s, a scheduled publish fired, and 5 rounds of "
          "landing, two builds' manifests and apple-app-site-association right after it in %.2f s: all answered (%s)"
          % (counts["qr 200"], counts["qr 503"], changes_in, after_fire,
             ", ".join("%s %s" % (what, "/".join(sorted({str(status) for status in statuses}))) for what, statuses in sorted(answers.items()))))
