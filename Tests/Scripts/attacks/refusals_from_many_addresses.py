from hostile_common import *  # noqa: F401,F403


def refusals_from_many_addresses(binary, scratch):
    """Refused publishes from 200 addresses of one /24 (127.0.0.10-209): the audit log
    counts them under their network, a line or two, not a line per address."""
    data = os.path.join(scratch, "many-addresses")
    daemon = Daemon(binary, data)
    audit = os.path.join(data, "audit.log")
    before = sum(1 for _ in open(audit))
    body = b'{"routes": {}}'
    refused = 0
    for index in range(200):
        connection = socket.socket()
        connection.bind(("127.0.0.%d" % (10 + index), 0))
        connection.settimeout(5)
        connection.connect(("127.0.0.1", daemon.port))
        connection.sendall(("POST /v1/revisions HTTP/1.1\r\nHost: w\r\nContent-Type: application/json\r\n"
                            "Content-Length: %d\r\nConnection: close\r\n\r\n" % len(body)).encode() + body)
        refused += first_line(connection, 5).startswith("HTTP/1.1 401")
        connection.close()
    daemon.stop()
    lines = [json.loads(line) for line in list(open(audit))[before:]]
    counted = [line for line in lines if line.get("outcome") == "refused"]
    if refused != 200 or sum(line.get("count", 1) for line in counted) != 200 or len(counted) > 2:
        fail("200 refusals from 200 addresses of one /24: %d answered 401, audit lines %s" % (refused, counted[:5]))
    print("hostile: 200 refused publishes from 200 addresses of one /24: %d audit line(s), peer %s, counting all 200"
          % (len(counted), ", ".join(sorted({line.get("peer", "?") for line in counted}))))
