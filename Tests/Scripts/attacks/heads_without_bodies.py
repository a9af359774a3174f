from hostile_common import *  # noqa: F401,F403


def heads_without_bodies(daemon, binary, data):
    """Heads that never send their bodies: bodiless chunked and 1 MiB-declared `POST`s on a
    path no route takes (anonymous, from 127.0.0.5) and on the phone's route with its token
    (from 127.0.0.6), opened again as fast as they are answered, while 127.0.0.1 posts
    telemetry and publishes. Then 300 whole 1 MiB bodies on unknown paths, RSS measured."""
    phone = token(binary, data, "heads-phone", "telemetry:write", rate="unlimited")
    stop = threading.Event()
    tallies = {}
    lock = threading.Lock()

    def tally(kind, line):
        with lock:
            key = (kind, line[9:12] or "none")
            tallies[key] = tallies.get(key, 0) + 1

    def unknown_heads():
        while not stop.is_set():
            batch = []
            for index in range(260):
                framing = "Transfer-Encoding: chunked" if index % 2 else "Content-Length: 1048576"
                try:
                    batch.append(open_head(daemon.port, "127.0.0.5", "POST /no/such/path HTTP/1.1\r\nHost: w\r\n%s\r\n\r\n" % framing))
                except OSError:
                    tally("unknown", "refused at connect")
            for connection in batch:
                tally("unknown", first_line(connection, 5))
                connection.close()

    def phone_heads():
        held = []
        while not stop.is_set():
            while len(held) < 260 and not stop.is_set():
                framing = "Transfer-Encoding: chunked" if len(held) % 2 else "Content-Length: 1000000"
                try:
                    held.append((time.monotonic(), open_head(daemon.port, "127.0.0.6", (
                        "POST /v1/telemetry HTTP/1.1\r\nHost: w\r\nAuthorization: Bearer %s\r\n"
                        "Content-Type: application/json\r\n%s\r\n\r\n") % (phone, framing))))
                except OSError:
                    tally("phone", "refused at connect")
            time.sleep(0.2)
            # An answered head (503 over its share, 408 when its body did not start) is
            # replaced by a new one: the attacker keeps 260 open.
            kept = []
            for opened, connection in held:
                line = first_line(connection, 0.001)
                if line or time.monotonic() - opened > 30:
                    tally("phone", line)
                    connection.close()
                else:
                    kept.append((opened, connection))
            held = kept
        for _, connection in held:
            connection.close()

    attackers = [threading.Thread(target=unknown_heads), threading.Thread(target=phone_heads)]
    for thread in attackers:
        thread.start()
    time.sleep(2)
    posts = publishes = 0
    statuses = {}
    started = time.monotonic()
    batch = {"client": {"platform": "ios", "appVersion": "5.3.0", "revision": 1},
             "events": [{"ts": iso(time.time() - 30), "entry": "push", "outcome": "proceed", "route": "home"}]}
    for index in range(200):
        status, _, _ = call(daemon.port, phone, "POST", "/v1/telemetry", batch, {"Content-Type": "application/json"}, timeout=10)
        statuses["post %d" % status] = statuses.get("post %d" % status, 0) + 1
        posts += status == 202
    routes = json.load(open(os.path.join(EXAMPLE, "routes.json")))
    for index in range(40):
        _, listing, _ = call(daemon.port, daemon.admin, "GET", "/v1/revisions")
        routes["routes"][0]["notes"] = "heads attack %d" % index
        status, _, _ = call(daemon.port, daemon.admin, "POST", "/v1/revisions", {"message": "during heads %d" % index, "routes": routes},
                            {"If-Match": '"rev-%d"' % json_of(listing)["current"], "Content-Type": "application/json"}, timeout=30)
        statuses["publish %d" % status] = statuses.get("publish %d" % status, 0) + 1
        publishes += status == 201
    legitimate_in = time.monotonic() - started
    # Held past the body's start deadline, so the figures show the phone's heads closed by it.
    time.sleep(max(0, 6.5 - legitimate_in))
    stop.set()
    for thread in attackers:
        thread.join()
    reserved_after = daemon.metric("waymark_http_body_bytes_reserved")
    unknown_404 = tallies.get(("unknown", "404"), 0)
    unknown_all = sum(count for (kind, _), count in tallies.items() if kind == "unknown")
    phone_answers = {line: count for (kind, line), count in tallies.items() if kind == "phone"}
    if posts < 190 or publishes < 38:
        fail("under heads without bodies %d of 200 telemetry posts and %d of 40 publishes succeeded: %s" % (posts, publishes, statuses))
    if unknown_404 < unknown_all * 0.99:
        fail("heads on an unknown path were answered %s" % {line: count for (kind, line), count in tallies.items() if kind == "unknown"})
    if phone_answers.get("408", 0) == 0:
        fail("no phone head was closed for a body that did not start: %s" % phone_answers)

    before = rss_mb(daemon.process.pid)
    bodies_started = time.monotonic()
    body = b"x" * (1 << 20)
    answered = 0

    def whole_bodies(count):
        nonlocal answered
        for _ in range(count):
            try:
                connection = open_head(daemon.port, "127.0.0.5", "POST /no/such/path HTTP/1.1\r\nHost: w\r\nContent-Length: %d\r\n\r\n" % len(body))
                try:
                    connection.sendall(body)
                except OSError:
                    pass  # answered and shut: the rest is not wanted
                if first_line(connection, 5).startswith("HTTP/1.1 404"):
                    with lock:
                        answered += 1
                connection.close()
            except OSError:
                pass

    senders = [threading.Thread(target=whole_bodies, args=(30,)) for _ in range(10)]
    for thread in senders:
        thread.start()
    for thread in senders:
        thread.join()
    after = rss_mb(daemon.process.pid)
    if answered < 300 or after - before > 16:
        fail("300 whole 1 MiB bodies on an unknown path: %d answered 404, RSS %.1f -> %.1f MB" % (answered, before, after))
    print("hostile: heads without bodies (260 at a time on an unknown path, anonymous; 260 on the phone's route with its token, "
          "each half chunked, half declaring ~1 MiB): %d of 200 telemetry posts and %d of 40 publishes succeeded in %.1f s; "
          "%d unknown-path heads all answered 404 at once; the phone's heads answered %s; %s body bytes reserved after; "
          "300 whole 1 MiB bodies on an unknown path answered 404 in %.1f s, RSS %.1f -> %.1f MB"
          % (posts, publishes, legitimate_in, unknown_all, ", ".join("%s x%d" % item for item in sorted(phone_answers.items())),
             "%.0f" % reserved_after if reserved_after is not None else "?", time.monotonic() - bodies_started, before, after))
