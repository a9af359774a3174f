from hostile_common import *  # noqa: F401,F403


# 40 -----------------------------------------------------------------------------------------
def route_recency(binary, scratch):
    """100,000 route ids each counted once, then a new campaign: counted under its name."""
    import uuid
    data = os.path.join(scratch, "route-recency")
    clock_file = os.path.join(scratch, "route-recency-clock")
    set_clock = moved_clock(clock_file)
    now = int(time.time())
    set_clock(now)
    daemon = Daemon(binary, data, "--clock-file", clock_file)
    phone = token(binary, data, "recency-phone", "telemetry:write", rate="unlimited")
    marketing = token(binary, data, "recency-marketing", "routes:publish", rate="unlimited")
    routes = json.load(open(os.path.join(EXAMPLE, "routes.json")))

    def publish(number, ids):
        document = json.loads(json.dumps(routes))
        document["routes"] += [{"id": name, "patterns": ["/old/%s" % name], "destination": "home"} for name in ids]
        status, answer, _ = call(daemon.port, marketing, "POST", "/v1/revisions", json.dumps({"message": "ids %d" % number, "routes": document}).encode(),
                                 {"If-Match": '"rev-%d"' % number, "Content-Type": "application/json"}, timeout=120)
        if status != 201:
            fail("publishing %d route ids: %d %s" % (len(ids), status, answer[:300]))

    def opened(names, at):
        for start in range(0, len(names), 1_000):
            events = [{"ts": iso(at - 5), "entry": "universalLink", "outcome": "proceed", "route": name} for name in names[start:start + 1_000]]
            status, answer, _ = call(daemon.port, phone, "POST", "/v1/telemetry", json.dumps({
                "batch": uuid.uuid4().hex, "client": {"platform": "ios", "appVersion": "5.3.0", "revision": 1}, "events": events}).encode(),
                {"Content-Type": "application/json"}, timeout=60)
            if status != 202:
                fail("a batch naming old routes answered %d: %s" % (status, answer[:300]))

    try:
        for round in range(10):
            ids = ["old%d-%d" % (round, index) for index in range(10_000)]
            publish(round + 1, ids)
            now += 120
            set_clock(now)
            opened(ids, now)
        publish(11, ["campaign"])
        now += 120
        set_clock(now)
        time.sleep(0.2)
        for _ in range(7):
            opened(["campaign"], now)
        status, answer, _ = call(daemon.port, daemon.admin, "GET", "/v1/telemetry/counts?groupBy=route&limit=1000&from=%s&to=%s"
                                 % (iso(now - 60), iso(now + 60)))
        groups = {group["key"]["route"]: group["total"] for group in json_of(answer)["groups"]} if status == 200 else {}
        reclaimed = daemon.metric("waymark_telemetry_routes_reclaimed_total")
    finally:
        daemon.stop()
    if groups.get("campaign") != 7:
        fail("after 100,000 old route ids a new campaign opened 7 times counts %s under its name (%s)" % (groups.get("campaign"), groups))
    print("hostile: 100,000 route ids each counted once over 10 publishes (2 minutes apart), then a new campaign opened 7 times: "
          "counted 7 under its name (other %d in its minute); %d old names given back newest-first" % (groups.get("other", 0), reclaimed or 0))
