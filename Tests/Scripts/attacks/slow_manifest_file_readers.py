from hostile_common import *  # noqa: F401,F403


def slow_manifest_file_readers(daemon, binary, data):
    """300 connections from one address each ask for a 35 KB manifest (sent from its view's
    memory file) and read nothing, in 5 groups with a publish after each. A file lives while
    a queued answer holds it; 35 KB fits in what the kernel takes per connection, and the
    socket then holds the file's pages, not the file, so retired views' files are closed at
    once rather than piling up. What waits stays within the peer's output share, RSS grows by
    less than 32 MB, a fetch from another address gets the newest bytes whole, and closing
    the readers leaves only the live view's file."""
    reader = token(binary, data, "slow-manifest-reader", "manifest:read", rate="unlimited")
    routes = json.load(open(os.path.join(EXAMPLE, "routes.json")))
    routes["routes"] += [{"id": "campaign-%d" % index, "patterns": ["/campaign/spring-%d/:slug" % index],
                          "destination": "category", "owner": "marketing"} for index in range(300)]

    def publish(index):
        _, listing, _ = call(daemon.port, daemon.admin, "GET", "/v1/revisions")
        routes["routes"][0]["notes"] = "slow manifest readers %d" % index
        status, body, _ = call(daemon.port, daemon.admin, "POST", "/v1/revisions", {"message": "slow readers %d" % index, "routes": routes},
                               {"If-Match": '"rev-%d"' % json_of(listing)["current"], "Content-Type": "application/json"}, timeout=60)
        if status != 201:
            fail("publishing the campaigns for slow manifest readers: %d %s" % (status, body[:200]))

    publish(0)
    call(daemon.port, reader, "GET", "/v1/manifest?platform=ios&version=5.3.0", timeout=10)
    before = rss_mb(daemon.process.pid)
    files_before = daemon.metric("waymark_http_body_files") or 0  # the live view's
    held, answered = [], [0]
    request = ("GET /v1/manifest?platform=ios&version=5.3.0 HTTP/1.1\r\nHost: w\r\nAuthorization: Bearer %s\r\n\r\n" % reader).encode()
    for group in range(5):
        for _ in range(60):
            try:
                connection = socket.socket()
                connection.bind(("127.0.0.11", 0))
                connection.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)
                connection.settimeout(10)
                connection.connect(("127.0.0.1", daemon.port))
                connection.sendall(request)
                if connection.recv(12).startswith(b"HTTP/1.1 200"):
                    answered[0] += 1
                held.append(connection)
            except OSError:
                pass
        publish(group + 1)
    time.sleep(0.5)
    peak = rss_mb(daemon.process.pid)
    queued = daemon.metric("waymark_http_output_bytes_queued") or 0
    files_held = daemon.metric("waymark_http_body_files") or 0
    file_bytes = daemon.metric("waymark_http_body_file_bytes") or 0
    status, body, headers = call(daemon.port, reader, "GET", "/v1/manifest?platform=ios&version=5.3.0", timeout=10)
    newest = json_of(body) or {}
    for connection in held:
        connection.close()
    deadline = time.monotonic() + 10
    while time.monotonic() < deadline and (daemon.metric("waymark_http_body_files") or 0) > files_before:
        time.sleep(0.2)
    files_after = daemon.metric("waymark_http_body_files") or 0
    if answered[0] < 250:
        fail("only %d of 300 slow manifest readers were answered" % answered[0])
    if queued > (32 << 20) + (1 << 20) or file_bytes > queued + 4 * len(body) + (1 << 20):
        fail("slow manifest readers: %.1f MiB queued, %.1f MiB in body files (share 32 MiB)" % (queued / 1048576, file_bytes / 1048576))
    if peak - before > 32:
        fail("RSS grew from %.1f to %.1f MB under 300 slow manifest readers" % (before, peak))
    if status != 200 or len(body) < 16384 or int(headers.get("Content-Length", -1)) != len(body) or "routes" not in newest:
        fail("a manifest fetch beside the slow readers answered %d with %d bytes" % (status, len(body)))
    if files_after > files_before:
        fail("%d body files left after the slow readers closed (%d before them)" % (files_after, files_before))
    print("hostile: 300 slow readers from one address of a %d-byte manifest sent from its memory file, 5 publishes among them: "
          "%d answered, %d files (%.1f MiB) held, %.1f MiB queued (share 32 MiB); RSS %.1f -> %.1f MB (bound + 32 MB); "
          "a fetch beside them got revision %s whole; %d files once they closed (%d before)"
          % (len(body), answered[0], files_held, file_bytes / 1048576, queued / 1048576, before, peak, newest.get("revision"),
             files_after, files_before))
