from hostile_common import *  # noqa: F401,F403


# 23 -----------------------------------------------------------------------------------------
def ended_schedules(binary, scratch):
    """A routes:publish token scheduling and cancelling in a loop: the ended schedules kept,
    the files under schedules/ and the list anyone with routes:read may ask for stay
    bounded by the last 1,000 to end."""
    data = os.path.join(scratch, "ended-schedules")
    daemon = Daemon(binary, data)
    marketing = token(binary, data, "schedules-marketing", "routes:publish", rate="unlimited")
    app = token(binary, data, "schedules-app", "manifest:read", "routes:read", rate="unlimited")
    routes = json.load(open(os.path.join(EXAMPLE, "routes.json")))
    body = json.dumps({"at": iso(time.time() + 3_600), "message": "soon", "routes": routes}).encode()
    cycles, kept = 1_100, 1_000
    connection = http.client.HTTPConnection("127.0.0.1", daemon.port, timeout=60)
    began = time.monotonic()

    def ask(method, path, sent=None, headers=None):
        connection.request(method, path, body=sent, headers={"Authorization": "Bearer " + marketing, **(headers or {})})
        response = connection.getresponse()
        return response.status, response.read()
    for _ in range(cycles):
        status, answer = ask("POST", "/v1/schedules", body, {"If-Match": '"rev-1"', "Content-Type": "application/json"})
        if status != 201:
            fail("scheduling answered %d %s" % (status, answer[:300]))
        number = json_of(answer)["id"]
        status, answer = ask("DELETE", "/v1/schedules/%d" % number)
        if status != 200:
            fail("cancelling schedule %d answered %d %s" % (number, status, answer[:300]))
    cycling = time.monotonic() - began
    connection.close()
    status, listing, _ = call(daemon.port, app, "GET", "/v1/schedules")
    ids = [item["id"] for item in json_of(listing)["schedules"]] if status == 200 else []
    files = sorted(os.listdir(os.path.join(data, "schedules")))
    if ids != list(range(cycles - kept + 1, cycles + 1)) or files != ["%08d" % number for number in ids]:
        fail("after %d schedules cancelled: listed %d (%s…%s), %d files" % (cycles, len(ids), ids[:1], ids[-1:], len(files)))
    status, answer, _ = call(daemon.port, app, "GET", "/v1/schedules/1")
    if status != 404:
        fail("a removed schedule answered %d %s" % (status, answer[:200]))

    # The list, asked without pause by the app's token (any holder of the app binary has it),
    # beside an app fetching its manifest every 20 ms; the same 3 s without it before.
    def phase(hammers):
        stop = threading.Event()
        answered = {200: 0, 429: 0, "other": []}
        lock = threading.Lock()
        manifests = []

        def fetch():
            while not stop.is_set():
                started = time.monotonic()
                status, _, _ = call(daemon.port, app, "GET", "/v1/manifest?platform=ios&version=5.3.0", timeout=60)
                manifests.append((status, time.monotonic() - started))
                stop.wait(0.02)
        askers = [threading.Thread(target=ask_until, args=(daemon.port, "/v1/schedules", app, stop, answered, lock)) for _ in range(hammers)]
        run_for(askers + [threading.Thread(target=fetch)], 3, stop)
        if answered["other"] or (hammers and answered[200] == 0) or any(status != 200 for status, _ in manifests) or not manifests:
            fail("the schedule list under a flood: %s; manifests %s" % (answered, sorted({s for s, _ in manifests})))
        return answered, manifests
    _, quiet = phase(0)
    answered, manifests = phase(8)
    slowest = max(seconds for _, seconds in manifests)
    # Made on the loop for every request, the 219 KB list took ~3.3 ms each: manifests fell
    # to a third (40 against ~140), the slowest 83 ms.
    if len(manifests) < 0.5 * len(quiet):
        fail("manifests beside the schedule list flood: %d in 3 s against %d before, the slowest %.1f ms"
             % (len(manifests), len(quiet), 1000 * slowest))
    rss = rss_mb(daemon.process.pid)
    daemon.stop()
    daemon = Daemon(binary, data)
    status, answer, _ = call(daemon.port, marketing, "POST", "/v1/schedules", body, {"If-Match": '"rev-1"', "Content-Type": "application/json"})
    after = json_of(answer).get("id") if status == 201 else None
    relisted = len(json_of(call(daemon.port, app, "GET", "/v1/schedules")[1])["schedules"])
    daemon.stop()
    if after != cycles + 1 or relisted != kept + 1:
        fail("after a restart a schedule got id %s (the highest kept was %d), %d listed" % (after, cycles, relisted))
    print("hostile: one token scheduled and cancelled %d times in %.1f s: %d kept (ids %d-%d, as many files), the first 404; the list "
          "(%d bytes) asked by a dashboard's token from 8 connections for 3 s: %d answered; manifests meanwhile %d (%d in the 3 s before), "
          "the slowest %.1f ms; RSS %.1f MB; after a restart the next schedule is %d"
          % (cycles, cycling, len(ids), ids[0], ids[-1], len(listing), answered[200], len(manifests), len(quiet), 1000 * slowest, rss, after))
