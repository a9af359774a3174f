from hostile_common import *  # noqa: F401,F403


# 32 -----------------------------------------------------------------------------------------
def bodies_after_reset(binary, scratch):
    """Four publishing tokens send 15 MiB drafts to preview, from four connections each, and
    reset each connection as soon as its body is sent, while a fifth keeps the document
    turn busy with slow validations: each draft waits, body and all, for its turn. Its
    bytes stay counted in the body budget until its job lets go of the request, not until
    its client leaves, so the next draft past the budget is refused at its head and RSS
    stays within the budgets. Before, a reset gave the bytes back at once and the queued
    bodies had no bound (1 GB with 64 MiB stated)."""
    data = os.path.join(scratch, "bodies-after-reset")
    budgets = {"bodies": 64, "answers": 16, "documents": 160, "caches": 32, "process": 64}
    daemon = Daemon(binary, data, "--max-buffered-body-bytes", str(budgets["bodies"] << 20), "--max-buffered-body-bytes-per-peer", "0",
                    "--max-queued-output-bytes", str(budgets["answers"] << 20))
    busy = token(binary, data, "busy", "routes:publish", rate="unlimited")
    senders = [token(binary, data, "drafts-%d" % index, "routes:publish", rate="unlimited") for index in range(4)]
    params = ",".join('"p%d":{"const":"x"}' % index for index in range(249_000))
    slow = ('{"format":"waymark.routes/1","app":"storefront","routes":[{"id":"x","patterns":["/x"],"destination":"home","params":{%s}}]}'
            % params).encode()
    draft = (b'{"url":"https://storefront.example/x","routes":{"format":"waymark.routes/1","app":"storefront","routes":[]}}'
             + b" " * (15 << 20))
    deadline = time.monotonic() + 5
    tally, lock = {"sent": 0, "refused": 0, "validated": 0}, threading.Lock()

    def validate():
        while time.monotonic() < deadline:
            try:
                status, _, _ = call(daemon.port, busy, "POST", "/v1/validate", slow, {"Content-Type": "application/json"}, timeout=120)
            except OSError:
                status = None
            with lock:
                tally["validated"] += status in (200, 422)

    def send(bearer):
        head = ("POST /v1/resolve HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: Bearer %s\r\nContent-Type: application/json\r\n"
                "Content-Length: %d\r\n\r\n" % (bearer, len(draft))).encode()
        while time.monotonic() < deadline:
            connection = socket.create_connection(("127.0.0.1", daemon.port), timeout=10)
            refused = False
            try:
                connection.sendall(head + draft)
                time.sleep(0.05)  # the rest of the body out of the socket's buffers
                connection.setblocking(False)
                try:
                    refused = connection.recv(64).startswith(b"HTTP/1.1 503")
                except BlockingIOError:
                    pass
            except OSError:
                refused = True  # refused at its head: the connection closed under the body
            connection.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, b"\x01\x00\x00\x00\x00\x00\x00\x00")
            connection.close()
            with lock:
                tally["refused" if refused else "sent"] += 1
            if refused:
                time.sleep(0.1)

    try:
        started = rss_mb(daemon.process.pid)
        workers = [threading.Thread(target=validate) for _ in range(2)]
        workers += [threading.Thread(target=send, args=(bearer,)) for bearer in senders for _ in range(4)]
        for worker in workers:
            worker.start()
        for worker in workers:
            worker.join(timeout=180)
        peak = peak_mb(daemon.process.pid)
        # Every queued draft ends, answered to nobody: all bytes come back.
        drained_by = time.monotonic() + 120
        while daemon.metric("waymark_http_body_bytes_reserved") != 0 and time.monotonic() < drained_by:
            time.sleep(0.2)
        left = daemon.metric("waymark_http_body_bytes_reserved")
        alive = daemon.alive()
    finally:
        daemon.stop()
    bound = sum(budgets.values()) * 1.048576
    if not alive or any(worker.is_alive() for worker in workers):
        fail("bodies after reset: the daemon died or a sender hung (%s)" % tally)
    if left != 0:
        fail("bodies after reset: %s body bytes still reserved once every draft ended" % left)
    if peak > bound:
        fail("bodies after reset: peak RSS %.0f MB from %.0f, past the %.0f MB the budgets state (%s MiB); %d drafts of 15 MiB sent and reset, %d refused"
             % (peak, started, bound, " + ".join("%d %s" % (value, key) for key, value in budgets.items()), tally["sent"], tally["refused"]))
    if tally["refused"] == 0 or tally["validated"] == 0:
        fail("bodies after reset: nothing was refused or nothing validated (%s): the attack did not reach the budget" % tally)
    print("hostile: 4 tokens sending 15 MiB drafts from 16 connections, each reset once its body was sent, behind slow validations for 5 s: "
          "%d sent, %d refused at the head; peak RSS %.0f MB from %.0f (bound %.0f MB); every byte given back once the drafts ended"
          % (tally["sent"], tally["refused"], peak, started, bound))
