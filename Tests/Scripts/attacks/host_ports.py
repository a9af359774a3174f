from hostile_common import *  # noqa: F401,F403


def host_ports(daemon):
    """A link opened with a Host whose port is not digits is refused, not landed."""
    answers = {}
    for host in ("storefront.example:evil", "storefront.example:80:80", "[::1]x", "storefront.example:443"):
        connection = socket.create_connection(("127.0.0.1", daemon.port), timeout=5)
        connection.sendall(("GET /product/p1 HTTP/1.1\r\nHost: %s\r\nConnection: close\r\n\r\n" % host).encode())
        answers[host] = first_line(connection, 5)[9:12]
        connection.close()
    if answers != {"storefront.example:evil": "400", "storefront.example:80:80": "400", "[::1]x": "400", "storefront.example:443": "302"}:
        fail("hosts with bad ports answered %s" % answers)
    print("hostile: Host ports: %s" % ", ".join("%s %s" % item for item in answers.items()))
