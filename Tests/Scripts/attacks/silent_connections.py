from hostile_common import *  # noqa: F401,F403


def silent_connections(binary, scratch):
    data = os.path.join(scratch, "silent")
    daemon = Daemon(binary, data, "--max-connections", "1000", "--max-connections-per-peer", "500")
    reader = token(binary, data, "reader", "manifest:read", "routes:read")
    held = []
    reset = 0
    for address in ("127.0.0.2", "127.0.0.3", "127.0.0.4"):
        for _ in range(600 if address == "127.0.0.2" else 450):
            connection = socket.socket()
            connection.bind((address, 0))
            try:
                connection.connect(("127.0.0.1", daemon.port))
            except OSError:
                reset += 1
                connection.close()
                continue
            held.append(connection)
    time.sleep(0.5)
    refused = daemon.metric("waymark_http_connections_refused_total")
    shed = daemon.metric("waymark_http_idle_connections_shed_total")
    started = time.monotonic()
    status, _, _ = call(daemon.port, reader, "GET", "/v1/manifest?platform=ios&version=5.3.0", timeout=10)
    answered_in = time.monotonic() - started
    open_now = int(subprocess.run(["ss", "-tnH", "state", "established", "( sport = :%d )" % daemon.port],
                                  capture_output=True, text=True).stdout.count("\n"))
    for connection in held:
        connection.close()
    if status != 200 or answered_in > 1:
        fail("a new client behind 1,500 silent connections got %d in %.2f s" % (status, answered_in))
    if not refused or refused < 100:
        fail("the per-peer cap reset %s connections of 600 from one address (cap 500)" % refused)
    if not shed:
        fail("no idle connection was shed at the connection limit")
    print("hostile: 1,500 silent connections from 3 addresses against --max-connections 1000, 500 per peer: %d reset at accept "
          "(per-peer cap), %d idlest shed at the limit, %d established on its port at the end; a new client answered in %.0f ms"
          % (refused, shed, open_now, answered_in * 1000))
    daemon.stop()
