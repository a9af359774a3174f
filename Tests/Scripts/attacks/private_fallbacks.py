from hostile_common import *  # noqa: F401,F403


def private_fallbacks(daemon):
    """Fallbacks that would send a visitor's browser into their own machine or network
    (loopback, private, link-local, localhost; any spelling of an address) are refused."""
    routes = json.load(open(os.path.join(EXAMPLE, "routes.json")))
    answers = {}
    for fallback in ("https://127.0.0.1/x", "https://[::1]/x", "https://0x7f000001/x", "https://2130706433/x",
                     "https://localhost/x", "https://10.0.0.1/x", "https://169.254.169.254/latest/meta-data/"):
        document = json.loads(json.dumps(routes))
        document["routes"].append({"id": "inside", "patterns": ["/sale/inside"], "destination": "home", "fallbackURL": fallback})
        _, listing, _ = call(daemon.port, daemon.admin, "GET", "/v1/revisions")
        status, body, _ = call(daemon.port, daemon.admin, "POST", "/v1/revisions", {"message": "inside", "routes": document},
                               {"If-Match": '"rev-%d"' % json_of(listing)["current"], "Content-Type": "application/json"})
        answers[fallback] = status
    if any(status != 422 for status in answers.values()):
        fail("private fallbacks answered %s" % answers)
    print("hostile: fallbacks at loopback, private and link-local addresses and localhost refused (422): %s" % ", ".join(answers))
