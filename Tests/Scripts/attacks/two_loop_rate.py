from hostile_common import *  # noqa: F401,F403


def two_loop_rate(daemon, binary, data):
    """A token at --rate 10 on 8 keep-alive connections spread over both event loops for
    6 s: what goes through is at most 1.1 x its allowance (the burst of 50 plus 10 a second)."""
    import http.client
    limited = token(binary, data, "rate-two-loops", "routes:read", rate=10)
    stop = threading.Event()
    through, refused = [0], [0]
    lock = threading.Lock()

    def hammer():
        connection = http.client.HTTPConnection("127.0.0.1", daemon.port, timeout=10)
        while not stop.is_set():
            connection.request("GET", "/v1/revisions", headers={"Authorization": "Bearer " + limited})
            response = connection.getresponse()
            response.read()
            with lock:
                if response.status == 429:
                    refused[0] += 1
                else:
                    through[0] += 1
        connection.close()

    elapsed = run_for([threading.Thread(target=hammer) for _ in range(8)], 6, stop)
    allowance = 50 + 10 * elapsed
    if through[0] > 1.1 * allowance:
        fail("a token at --rate 10 got %d requests through in %.1f s over two loops (allowance %.0f)" % (through[0], elapsed, allowance))
    if refused[0] == 0:
        fail("a token at --rate 10 was never refused")
    print("hostile: a token at --rate 10 on 8 connections over two event loops for %.1f s: %d through (allowance %.0f: "
          "a burst of 50 and 10 a second), %d answered 429" % (elapsed, through[0], allowance, refused[0]))
