from hostile_common import *  # noqa: F401,F403


def request_ids(daemon):
    """Counting traffic from X-Request-Id: two ids on one keep-alive connection with 100
    requests between them must not differ by 101, nor share a prefix beyond the process's."""
    import http.client
    connection = http.client.HTTPConnection("127.0.0.1", daemon.port, timeout=10)
    ids = []
    for _ in range(102):
        connection.request("GET", "/healthz")
        response = connection.getresponse()
        response.read()
        ids.append(response.getheader("X-Request-Id"))
    connection.close()
    prefix = os.path.commonprefix(ids)
    values = [int(value[len(prefix.rsplit("-", 1)[0]) + 1:], 16) for value in ids]
    steps = {b - a for a, b in zip(values, values[1:])}
    if len(set(ids)) != len(ids) or len(steps) < 90 or values[-1] - values[0] == 101:
        fail("request ids count requests: %s ... %s" % (ids[:3], ids[-2:]))
    print("hostile: 102 request ids on one connection: all distinct, %d different steps between neighbours, "
          "nothing shared but the process's prefix (%s, %s, ...)" % (len(steps), ids[0], ids[1]))
