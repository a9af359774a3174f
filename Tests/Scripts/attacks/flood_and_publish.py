from hostile_common import *  # noqa: F401,F403


def flood_and_publish(daemon, binary, data):
    reader = token(binary, data, "hostile-reader", "manifest:read", "routes:read")
    phone = token(binary, data, "hostile-phone", "telemetry:write", rate="unlimited")
    audit = os.path.join(data, "audit.log")
    lines_before = sum(1 for _ in open(audit))
    document = calendar(5_000)
    status, body, _ = call(daemon.port, daemon.admin, "POST", "/v1/validate", document, {"Content-Type": "application/json"})
    report = json_of(body)
    if status != 200 or not report or not report.get("valid"):
        fail("the 5,000-route calendar does not validate: %d %s" % (status, body[:400]))

    stop = threading.Event()
    latencies, probe_failures = [], []

    def probe():
        while not stop.is_set():
            started = time.monotonic()
            try:
                status, _, _ = call(daemon.port, reader, "GET", "/v1/manifest?platform=ios&version=5.3.0", timeout=5)
                if status != 200:
                    probe_failures.append(status)
            except OSError as error:
                probe_failures.append(str(error))
            latencies.append(time.monotonic() - started)
            time.sleep(max(0, 0.1 - (time.monotonic() - started)))

    refusals = [0]
    lock = threading.Lock()
    forged = "wm_00000000_" + "A" * 43

    def flood(credential):
        body = b'{"routes": {}}'
        while not stop.is_set():
            try:
                connection = socket.create_connection(("127.0.0.1", daemon.port), timeout=5)
                auth = "Authorization: Bearer %s\r\n" % credential if credential else ""
                connection.sendall(("POST /v1/revisions HTTP/1.1\r\nHost: w\r\nContent-Type: application/json\r\n%s"
                                    "Content-Length: %d\r\n\r\n" % (auth, len(body))).encode() + body)
                answer = connection.recv(64)
                connection.close()
                if answer.startswith(b"HTTP/1.1 401") or answer.startswith(b"HTTP/1.1 403"):
                    with lock:
                        refusals[0] += 1
            except OSError:
                pass

    threads = [threading.Thread(target=probe)] + [threading.Thread(target=flood, args=(credential,))
                                                  for credential in (None, forged, phone, None)]
    for thread in threads:
        thread.start()
    time.sleep(2)
    status, current, _ = call(daemon.port, daemon.admin, "GET", "/v1/revisions")
    base = json_of(current)["current"]
    started = time.monotonic()
    status, body, _ = call(daemon.port, daemon.admin, "POST", "/v1/revisions", {"message": "5,000 deals", "routes": document},
                           {"If-Match": '"rev-%d"' % base, "Content-Type": "application/json"}, timeout=120)
    published_in = time.monotonic() - started
    if status != 201:
        fail("the 5,000-route publish answered %d %s" % (status, body[:300]))
    time.sleep(4)
    stop.set()
    for thread in threads:
        thread.join()
    if probe_failures:
        fail("manifest probes failed: %s" % probe_failures[:5])
    ordered = sorted(latencies)
    p50 = ordered[len(ordered) // 2] * 1000
    p99 = ordered[min(len(ordered) - 1, int(len(ordered) * 0.99))] * 1000
    slowest = ordered[-1] * 1000
    if slowest > 1000:
        fail("a manifest probe took %.0f ms during the publish and the flood" % slowest)
    lines_during = sum(1 for _ in open(audit)) - lines_before
    print("hostile: 5,000-route overlapping calendar published in %.2f s during a flood of %d refused publishes (%d/s; "
          "no token, a forged token, a phone's token); %d manifest fetches on fresh connections every 100 ms: "
          "p50 %.1f ms, p99 %.1f ms, slowest %.1f ms" % (published_in, refusals[0], refusals[0] / 7, len(latencies), p50, p99, slowest))
    if refusals[0] < 1000:
        fail("the flood made only %d refusals" % refusals[0])
    return {"lines_before": lines_before, "lines_during": lines_during, "refusals": refusals[0]}
