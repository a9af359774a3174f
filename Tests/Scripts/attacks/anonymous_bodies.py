from hostile_common import *  # noqa: F401,F403


def anonymous_bodies(daemon):
    before = rss_mb(daemon.process.pid)
    sockets, answers = [], []
    started = time.monotonic()
    for index in range(36):
        connection = socket.create_connection(("127.0.0.1", daemon.port))
        connection.settimeout(5)
        head = ("POST /v1/revisions HTTP/1.1\r\nHost: waymark\r\nContent-Type: application/json\r\n"
                "Content-Length: %d\r\n%s\r\n" % (16 << 20, "Expect: 100-continue\r\n" if index % 2 else ""))
        connection.sendall(head.encode())
        sockets.append(connection)
    for index, connection in enumerate(sockets):
        try:
            if index % 2 == 0:
                connection.sendall(b" " * (256 << 10))  # the body's start, sent without waiting
        except OSError:
            pass  # already answered and closed: fine
        received = b""
        try:
            while b"\r\n\r\n" not in received:
                chunk = connection.recv(4096)
                if not chunk:
                    break
                received += chunk
        except OSError:
            pass
        answers.append(received.split(b"\r\n", 1)[0].decode(errors="replace"))
        connection.close()
    elapsed = time.monotonic() - started
    after = rss_mb(daemon.process.pid)
    if any(not answer.startswith("HTTP/1.1 401") for answer in answers):
        fail("anonymous 16 MiB publishes were answered %s" % sorted(set(answers)))
    if after - before > 16:
        fail("RSS grew from %.1f to %.1f MB under anonymous bodies" % (before, after))
    print("hostile: 36 anonymous 16 MiB publishes (half with Expect: 100-continue): all 401 before their bodies, "
          "none invited, in %.2f s; RSS %.1f MB before, %.1f MB after" % (elapsed, before, after))
