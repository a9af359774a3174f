from hostile_common import *  # noqa: F401,F403


# 26 -----------------------------------------------------------------------------------------
def pipelined_small_answers(binary, scratch):
    """One address pipelining small answers on 300 connections without reading them: held
    to its output share, RSS bounded, another client served."""
    data = os.path.join(scratch, "pipelined")
    daemon = Daemon(binary, data)
    app = token(binary, data, "pipelined-app", "manifest:read")
    request = (b"GET /zz/unknown/link HTTP/1.1\r\nHost: storefront.example\r\n"
               b"User-Agent: Mozilla/5.0 (X11; Linux x86_64)\r\n\r\n") * 1_200
    try:
        status, page, _ = call(daemon.port, None, "GET", "/zz/unknown/link", None, {"Host": "storefront.example"})
        if status != 404:
            fail("an unknown link on the link host answered %d" % status)
        before = rss_mb(daemon.process.pid)
        connections = []
        for _ in range(300):
            connection = socket.socket()
            connection.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)
            connection.bind(("127.0.0.77", 0))
            connection.connect(("127.0.0.1", daemon.port))
            connection.setblocking(False)
            connections.append([connection, 0])
        deadline = time.monotonic() + 6
        while time.monotonic() < deadline:
            progress = False
            for entry in connections:
                if entry[1] < len(request):
                    try:
                        sent = entry[0].send(request[entry[1]:entry[1] + 65536])
                        entry[1] += sent
                        progress = progress or sent > 0
                    except BlockingIOError:
                        pass
                    except OSError:
                        entry[1] = len(request)  # reset by the server
            if not progress:
                time.sleep(0.05)
        time.sleep(1)
        during = rss_mb(daemon.process.pid)
        queued = daemon.metric("waymark_http_output_bytes_queued") or 0
        shed = daemon.metric("waymark_http_slow_readers_shed_total") or 0
        began = time.monotonic()
        status, _, _ = call(daemon.port, app, "GET", "/v1/manifest?platform=ios&version=5.3.0")
        other = time.monotonic() - began
        sent = sum(entry[1] for entry in connections)
        for entry in connections:
            entry[0].close()
        alive = daemon.alive()
    finally:
        daemon.stop()
    if not alive:
        fail("the daemon died under pipelined answers nobody reads")
    if status != 200 or other > 2:
        fail("another client's manifest beside them: %d in %.2f s" % (status, other))
    # Each event loop sheds its own connections, so until the other's next turn or sweep
    # both may hold the share and a connection's 1 MiB (2 x 33 MiB), each in a malloc arena
    # of its own that keeps what it freed; 30 MB besides.
    if during - before > 100:
        fail("300 connections pipelining small answers without reading took RSS from %.1f to %.1f MB" % (before, during))
    if queued > 32 * 1024 * 1024 + 1024 * 1024:
        fail("%.1f MiB of answers queued for one address (its share is 32 MiB)" % (queued / 1048576))
    print("hostile: 300 connections from one address pipelined %.1f MB of requests for a %d-byte page without reading: %d reset "
          "as the slowest past its 32 MiB share, %.1f MiB queued; RSS %.1f -> %.1f MB (bound +100); another client's manifest in %.0f ms"
          % (sent / 1e6, len(page), shed, queued / 1048576, before, during, 1000 * other))
