from hostile_common import *  # noqa: F401,F403


def slow_qr_readers(daemon, binary, data):
    """200 connections from one address each get a new version-40 QR code as a ~520 KB PNG
    (retrying while the reads lane refuses them their share) and then read nothing more:
    what waits for them is held to the peer's share of the output budget (32 MiB), the
    slowest reset past it, and RSS grows by less than the share and 32 MB."""
    reader = token(binary, data, "slow-qr-reader", "manifest:read", "routes:read", rate="unlimited")
    before = rss_mb(daemon.process.pid)
    long_path = "s" * 2_800
    held, drawn, lock = [], [0], threading.Lock()

    def slow(index):
        try:
            connection = socket.socket()
            connection.bind(("127.0.0.9", 0))
            connection.settimeout(30)
            connection.connect(("127.0.0.1", daemon.port))
            connection.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)
        except OSError:
            return
        with lock:
            held.append(connection)
        for attempt in range(400):
            link = "https://storefront.example/%s/%d/%d" % (long_path, index, attempt)
            try:
                connection.sendall(("GET /v1/qr?ecc=L&format=png&scale=11&url=%s HTTP/1.1\r\nHost: w\r\n"
                                    "Authorization: Bearer %s\r\n\r\n" % (urllib.parse.quote(link, safe=""), reader)).encode())
                head = b""
                while b"\r\n\r\n" not in head:
                    chunk = connection.recv(1)
                    if not chunk:
                        return
                    head += chunk
            except OSError:
                return
            if head.startswith(b"HTTP/1.1 200"):
                with lock:
                    drawn[0] += 1
                return  # and never reads the PNG
            length = int(re.search(rb"Content-Length: (\d+)", head).group(1))
            try:
                while length > 0:
                    length -= len(connection.recv(length))
            except OSError:
                return
            time.sleep(0.05)

    threads = [threading.Thread(target=slow, args=(index,)) for index in range(200)]
    started = time.monotonic()
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    elapsed = time.monotonic() - started
    time.sleep(0.5)
    peak = rss_mb(daemon.process.pid)
    queued = daemon.metric("waymark_http_output_bytes_queued") or 0
    shed = daemon.metric("waymark_http_slow_readers_shed_total") or 0
    probe_started = time.monotonic()
    status, _, _ = call(daemon.port, reader, "GET", "/v1/manifest?platform=ios&version=5.3.0", timeout=10)
    probe = time.monotonic() - probe_started
    for connection in held:
        connection.close()
    if drawn[0] < 100:
        fail("only %d of 200 slow readers got their QR code drawn in %.0f s" % (drawn[0], elapsed))
    if queued > (32 << 20) + (1 << 20):
        fail("%.1f MiB queued for slow readers from one address (share 32 MiB)" % (queued / 1048576))
    if peak - before > 32 + 32:
        fail("RSS grew from %.1f to %.1f MB under 200 slow QR readers" % (before, peak))
    if status != 200:
        fail("a manifest fetch beside the slow readers answered %d" % status)
    print("hostile: 200 slow readers from one address, each given a new version-40 QR PNG (~520 KB) in %.1f s and reading nothing: "
          "%d drawn, %d reset as the slowest past the peer's 32 MiB share, %.1f MiB left queued; RSS %.1f -> %.1f MB "
          "(bound: + the share + 32 MB); a manifest fetch beside them in %.0f ms"
          % (elapsed, drawn[0], shed, queued / 1048576, before, peak, probe * 1000))
