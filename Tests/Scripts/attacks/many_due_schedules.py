from hostile_common import *  # noqa: F401,F403


# 34 -----------------------------------------------------------------------------------------
def many_due_schedules(binary, scratch):
    """A marketing token schedules as many publishes as may wait (100), each of the same
    5,000-route document (each with its own message), all due the same second (the
    daemon's clock moved there with --clock-file). Firing takes a document's turn one
    schedule at a time, and a schedule whose base is no longer current (all but the first,
    once the first has published) is skipped without being validated: another marketer's
    validations, sent one after another as they fire, are each answered within 2 s.
    Before, all the due schedules were validated in one turn and the validations waited
    for all (7-8 s)."""
    data = os.path.join(scratch, "many-due-schedules")
    clock = os.path.join(scratch, "many-due-schedules-clock")
    start = int(time.time())
    set_clock = moved_clock(clock)
    set_clock(start)
    daemon = Daemon(binary, data, "--clock-file", clock)  # the test moves the daemon's clock to their time
    scheduler = token(binary, data, "scheduler", "routes:publish", rate="unlimited")
    other = token(binary, data, "other-marketer", "routes:publish", rate="unlimited")
    routes = json.load(open(os.path.join(EXAMPLE, "routes.json")))
    example = json.dumps(routes).encode()
    for index in range(5_000):
        routes["routes"].append({"id": "d%d" % index, "patterns": ["/due/d%d" % index], "destination": "home"})
    at = start + 3_600
    try:
        scheduled = 0
        for index in range(100):
            # Each its own message: one identical to a fired one would count as fired by it.
            sent = json.dumps({"at": iso(at), "message": "due %d" % index, "routes": routes}).encode()
            status, answer, _ = call(daemon.port, scheduler, "POST", "/v1/schedules", sent,
                                     {"If-Match": '"rev-1"', "Content-Type": "application/json"}, timeout=60)
            if status != 201:
                fail("many due schedules: scheduling answered %d %s" % (status, answer[:300]))
            scheduled += 1
        slowest, asked = 0.0, 0
        set_clock(at)
        until = time.monotonic() + 60
        while time.monotonic() < until:
            started = time.monotonic()
            status, answer, _ = call(daemon.port, other, "POST", "/v1/validate", example, {"Content-Type": "application/json"}, timeout=120)
            slowest = max(slowest, time.monotonic() - started)
            asked += 1
            if status != 200:
                fail("many due schedules: another marketer's validation answered %d %s" % (status, answer[:200]))
            status, listing, _ = call(daemon.port, scheduler, "GET", "/v1/schedules")
            statuses = [item["status"] for item in json_of(listing)["schedules"]]
            if "pending" not in statuses:
                break
            time.sleep(0.05)
        alive = daemon.alive()
    finally:
        daemon.stop()
    fired, skipped = statuses.count("fired"), statuses.count("skipped")
    if not alive or fired != 1 or skipped != scheduled - 1:
        fail("many due schedules: %d fired and %d skipped of %d (alive: %s)" % (fired, skipped, scheduled, alive))
    if slowest > 2:
        fail("many due schedules: another marketer's validation took %.1f s while %d schedules fired" % (slowest, scheduled))
    print("hostile: %d publishes of a 5,000-route document scheduled for the same second: %d fired, %d skipped (their base had moved); "
          "another marketer's %d validations meanwhile, the slowest %.2f s" % (scheduled, fired, skipped, asked, slowest))
