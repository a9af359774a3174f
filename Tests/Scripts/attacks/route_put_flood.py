from hostile_common import *  # noqa: F401,F403


def route_put_flood(binary, scratch):
    """One route at a time, as an attacker holding a publishing token would use it: a token
    at the default rate floods valid PUTs from 24 connections (each a new revision; 429 past
    its rate) while another marketer's whole publish lands (refetching on 412), nothing of
    either lost; then an unlimited token floods PUTs during a rollout (each refused 409, or
    503 past its share of the changes lane) and the operator's abort is answered within a
    second, and beside its PUTs landing (many a second) a whole publish is rebased over them
    and lands; a route nested just within a request's depth, and routes that together pass the
    values a whole publish may send, are refused (the store can always read its revisions
    back, and the document be published whole); and bodies made to
    hurt — past the body limit (413 before it is read), nested 100,000 deep, an id of 300
    bytes or with a NUL, a batch of 1,001 or naming one route twice, a route of another id, a UTM value that would add a referrer or a header —
    are refused and change nothing."""
    data = os.path.join(scratch, "route-puts")
    daemon = Daemon(binary, data)
    flooder = token(binary, data, "put-flooder", "routes:publish", rate="unlimited")
    rated = token(binary, data, "put-rated", "routes:publish")
    other = token(binary, data, "put-other", "routes:publish", rate="unlimited")
    stop = threading.Event()
    tally, lock, counter = {}, threading.Lock(), itertools.count()

    def flood(bearer):
        connection = http.client.HTTPConnection("127.0.0.1", daemon.port, timeout=60)
        while not stop.is_set():
            index = next(counter)
            body = json.dumps({"patterns": ["/flood/f%d" % index], "destination": "cart"}).encode()
            try:
                connection.request("PUT", "/v1/routes/flood-%d" % index, body=body, headers={"Authorization": "Bearer " + bearer})
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
                if status == 201:
                    tally.setdefault("ids", []).append("flood-%d" % index)
                if bearer == rated:
                    tally.setdefault("rated", {})[status] = tally.setdefault("rated", {}).get(status, 0) + 1
        connection.close()

    def current():
        _, listing, _ = call(daemon.port, other, "GET", "/v1/revisions")
        number = json_of(listing)["current"]
        _, revision, _ = call(daemon.port, other, "GET", "/v1/revisions/%d" % number, timeout=60)
        return number, json_of(revision)["routes"]

    def publish_beside(route_id, pattern, beside):
        """Another marketer's whole publish adding one route, from a base fetched and fetched
        again on 412, for up to 30 s: (seconds to land or None, 412s, rebasedFrom)."""
        began, stale = time.monotonic(), 0
        while time.monotonic() - began < 30:
            number, routes = current()
            routes["routes"].append({"id": route_id, "patterns": [pattern], "destination": "cart"})
            status, answer, _ = call(daemon.port, other, "POST", "/v1/revisions", {"message": "beside", "routes": routes},
                                     {"If-Match": '"rev-%d"' % number, "Content-Type": "application/json"}, timeout=60)
            if status == 201:
                return time.monotonic() - began, stale, json_of(answer).get("rebasedFrom")
            if status != 412:
                fail("the marketer's publish beside %s: %d %s" % (beside, status, answer[:300]))
            stale += 1
        return None, stale, None

    try:
        # A token at the default rate (10/s, a burst of 5 s' worth) floods from 24 connections.
        threads = [threading.Thread(target=flood, args=(rated,)) for _ in range(24)]
        for thread in threads:
            thread.start()
        time.sleep(3)
        # Another marketer publishes the whole document beside the flood.
        published, stale, _ = publish_beside("beside-the-flood", "/beside", "the PUT flood")
        # A rollout, started between floods (a whole publish names its base, and an
        # unlimited token publishing many revisions a second keeps a base stale: the
        # token's rate is what bounds that, below), then every PUT is refused (409) until it
        # ends, and the abort goes through.
        stop.set()
        for thread in threads:
            thread.join()
        for attempt in range(100):
            number, routes = current()
            routes["routes"][0]["notes"] = "the candidate"
            status, _, _ = call(daemon.port, daemon.admin, "POST", "/v1/revisions", {"message": "candidate", "routes": routes, "rollout": {}},
                                {"If-Match": '"rev-%d"' % number, "Content-Type": "application/json"}, timeout=60)
            if status != 412:
                break
        if status != 201:
            fail("starting a rollout beside the PUT flood: %d" % status)
        stop.clear()
        threads = [threading.Thread(target=flood, args=(flooder,)) for _ in range(24)]
        for thread in threads:
            thread.start()
        time.sleep(2)
        _, _, headers = call(daemon.port, daemon.admin, "GET", "/v1/rollout")
        began = time.monotonic()
        aborted, _, _ = call(daemon.port, daemon.admin, "POST", "/v1/rollout/abort", None, {"If-Match": headers.get("ETag", "")}, timeout=60)
        abort = time.monotonic() - began
        time.sleep(1)
        # The unlimited token's PUTs now land, many a second; a whole publish from a fetched
        # base is rebased over them (they change other routes) rather than refused.
        took, rebased_stale, rebased_from = publish_beside("beside-unlimited", "/beside/unlimited", "the unlimited flood")
        rebased_answer = None if took is None else (took, rebased_from)
        stop.set()
        for thread in threads:
            thread.join()
        if not daemon.alive():
            fail("the daemon died under a flood of PUTs")
        number, routes = current()
        ids = {route["id"] for route in routes["routes"]}
        lost = [i for i in tally.get("ids", []) if i not in ids]
        # Bodies made to hurt, each refused with nothing changed.
        before, _ = current()
        hurt = [("PUT", "/v1/routes/big", b'{"patterns": ["/x"], "destination": "cart", "notes": "' + b"n" * 300_000 + b'"}', 413),
                ("PUT", "/v1/routes/deep", b"[" * 100_000 + b"]" * 100_000, 400),
                ("PUT", "/v1/routes/" + "a" * 300, b'{"patterns": ["/x"], "destination": "cart"}', 400),
                ("PUT", "/v1/routes/a%00b", b'{"patterns": ["/x"], "destination": "cart"}', 400),
                ("PUT", "/v1/routes/one", b'{"id": "two", "patterns": ["/x"], "destination": "cart"}', 400),
                ("PUT", "/v1/routes/one", b'{"patterns": ["/x"], "destination": "cart", "preview": {"title": "a\\u202eb"}}', 422),
                ("PUT", "/v1/routes/one", b'{"patterns": ["/x"], "destination": "cart", "utm": {"campaign": "a&referrer=evil"}}', 422),
                ("PUT", "/v1/routes/one", b'{"patterns": ["/x"], "destination": "cart", "utm": {"source": "%0d%0aSet-Cookie:x"}}', 422),
                ("POST", "/v1/routes:batch", json.dumps({"put": [{"id": "x%d" % i, "patterns": ["/x/%d" % i], "destination": "cart"} for i in range(1001)]}).encode(), 413),
                ("POST", "/v1/routes:batch", json.dumps({"put": [{"id": "x", "patterns": ["/x"], "destination": "cart"}], "delete": ["x"]}).encode(), 400),
                ("POST", "/v1/routes:batch", b'{"delete": ["no-such-route"]}', 404),
                ("DELETE", "/v1/routes/no-such-route", b"", 404)]
        for method, target, body, expected in hurt:
            status, answer, _ = call(daemon.port, other, method, target, body, {"Content-Type": "application/json"}, timeout=60)
            if status != expected:
                fail("%s %s (%d bytes): %d, expected %d: %s" % (method, target[:60], len(body), status, expected, answer[:200]))
        after, _ = current()
        # A route nested just within a request's depth sits deeper in the document: refused, or
        # the store could not read its own revision back. Routes that together pass the values a
        # whole publish may send: refused once they would, so the document can always be
        # published whole again, and a small change still lands.
        deep = b'{"patterns": ["/deep/1"], "destination": "cart", "x": ' + b"[" * 62 + b"]" * 62 + b"}"
        deep_status, _, _ = call(daemon.port, other, "PUT", "/v1/routes/deep-1", deep, {"Content-Type": "application/json"}, timeout=60)
        growth = []
        for index in range(9):
            body = json.dumps({"patterns": ["/big/%d" % index], "destination": "cart", "x": [0] * 120_000}, separators=(",", ":")).encode()
            status, _, _ = call(daemon.port, other, "PUT", "/v1/routes/big-%d" % index, body, {"Content-Type": "application/json"}, timeout=120)
            growth.append(status)
        small, _, _ = call(daemon.port, other, "PUT", "/v1/routes/small-after", {"patterns": ["/small"], "destination": "cart"}, timeout=120)
        number, routes = current()
        whole, _, _ = call(daemon.port, other, "POST", "/v1/revisions", {"message": "whole again", "routes": routes},
                           {"If-Match": '"rev-%d"' % number, "Content-Type": "application/json"}, timeout=120)
    finally:
        stop.set()
        daemon.stop()
    if lost:
        fail("%d acknowledged PUTs are not in the current routes: %s" % (len(lost), lost[:5]))
    if "beside-the-flood" not in ids or published is None:
        fail("the marketer's publish beside the flood was lost")
    if rebased_answer is None or "beside-unlimited" not in ids:
        fail("a whole publish beside an unlimited token's PUTs did not land in 30 s (%d refused 412)" % rebased_stale)
    if aborted != 200 or abort > 1.0:
        fail("the operator's abort beside a flood of PUTs: %d in %.2f s" % (aborted, abort))
    if tally.get(201, 0) == 0 or tally.get(409, 0) == 0:
        fail("the flood's answers: %s" % {k: v for k, v in tally.items() if k not in ("ids", "rated")})
    rated_tally = tally.get("rated", {})
    if rated_tally.get(429, 0) == 0 or rated_tally.get(201, 0) > 5 * 10 + 10 * 4:
        fail("a token at the default rate: %s" % rated_tally)
    if after != before:
        fail("a refused body changed the routes (revision %d -> %d)" % (before, after))
    if deep_status != 413:
        fail("a route nested past the document's depth: %d" % deep_status)
    if 201 not in growth or growth[-1] != 413 or small != 201 or whole not in (200, 201):
        fail("routes growing past a publish's values: %s, then a small PUT %d and a whole publish %d" % (growth, small, whole))
    print("hostile: 24 connections flooding PUTs with a token at the default rate (%s; %d PUTs published in all, the unlimited token's after the abort too, none lost), beside them a marketer's whole publish in %.2f s "
          "(%d refetches); then an unlimited token's flood in a rollout: %d refused 409, %d 503 past its share, the operator's abort in %.0f ms; %d hostile bodies refused"
          % (", ".join("%s %d" % item for item in sorted(rated_tally.items(), key=str)), tally.get(201, 0), published, stale, tally.get(409, 0), tally.get(503, 0),
             abort * 1000, len(hurt)))
    print("hostile: beside the unlimited token's PUTs landing, a whole publish landed in %.2f s (%d refused 412; rebased from revision %s over the PUTs since)"
          % (rebased_answer[0], rebased_stale, rebased_answer[1]))
    print("hostile: a route nested past the document's depth refused %d; 120,000-value routes %s (refused once the document would pass a publish's 1,000,000 values), then a small PUT %d and the whole document published again %d"
          % (deep_status, growth, small, whole))
