from hostile_common import *  # noqa: F401,F403


def landing_past_an_edge(binary, scratch):
    """Landings stay cacheable after a route window's edge passes (the daemon's clock moved
    with --clock-file): s-maxage 30 well before it, the seconds left just before it, and 30
    again once it has passed (the next edge, 1,000 s on, is far), not no-cache until the
    store next changes."""
    data = os.path.join(scratch, "edges")
    clock = os.path.join(scratch, "edges-clock")
    start = int(time.time())
    set_clock = moved_clock(clock)
    set_clock(start)
    daemon = Daemon(binary, data, "--clock-file", clock)
    routes = json.load(open(os.path.join(EXAMPLE, "routes.json")))
    routes["routes"].append({"id": "flash", "patterns": ["/flash/sale"], "destination": "home", "validUntil": iso(start + 120)})
    routes["routes"].append({"id": "later", "patterns": ["/later/sale"], "destination": "home", "validFrom": iso(start + 1_120)})
    status, body, _ = call(daemon.port, daemon.admin, "POST", "/v1/revisions", {"message": "edges", "routes": routes},
                           {"If-Match": '"rev-1"', "Content-Type": "application/json"})
    if status != 201:
        daemon.stop()
        fail("publishing routes with windows answered %d %s" % (status, body[:300]))
    browser = {"Host": "storefront.example", "User-Agent": "Mozilla/5.0 (iPhone; CPU iPhone OS 17_0 like Mac OS X)"}
    seen = []
    for offset, expected in ((0, "s-maxage=30"), (100, "s-maxage=20"), (200, "s-maxage=30"), (201, "s-maxage=30"), (1_110, "s-maxage=10")):
        set_clock(start + offset)
        _, _, headers = call(daemon.port, None, "GET", "/product/p1", None, browser)
        control = headers.get("Cache-Control", "")
        seen.append("%+d s: %s" % (offset - 120, control))
        if expected not in control:
            daemon.stop()
            fail("a landing %d s from the window's end answered Cache-Control %r, not %s" % (offset - 120, control, expected))
    daemon.stop()
    print("hostile: landing cacheability around a window edge: %s" % "; ".join(seen))
