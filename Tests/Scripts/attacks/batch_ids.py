from hostile_common import *  # noqa: F401,F403


def batch_ids(binary, scratch):
    """A phone's token replaying and flooding batch ids: a repeat is answered and counted
    nothing; a flood of fresh ids keeps the table at its bound (the oldest forgotten), RSS
    bounded; bodies in another type, and counts past the bounds, refused whole."""
    data = os.path.join(scratch, "batch-ids")
    bound = 5_000
    daemon = Daemon(binary, data, "--telemetry-batch-ids", str(bound))
    try:
        phone = token(binary, data, "phone", "telemetry:write", rate="unlimited")
        rss_before = rss_mb(daemon.process.pid)
        connection = http.client.HTTPConnection("127.0.0.1", daemon.port, timeout=30)
        headers = {"Authorization": "Bearer " + phone, "Content-Type": "application/json"}

        def post(body, extra=None):
            connection.request("POST", "/v1/telemetry", json.dumps(body).encode(), dict(headers, **(extra or {})))
            response = connection.getresponse()
            return response.status, json_of(response.read())

        event = {"ts": iso(int(time.time()) - 30), "entry": "push", "outcome": "proceed", "route": "home"}
        horizon_before = daemon.metric("waymark_telemetry_batch_ids_horizon_seconds")
        ids = ["%032x" % random.getrandbits(128) for _ in range(3 * bound)]
        started = time.monotonic()
        for batch in ids:
            status, answer = post({"batch": batch, "client": {"platform": "ios", "appVersion": "5.3.0", "revision": 1}, "events": [event]})
            if status != 202 or answer.get("duplicate"):
                fail("a fresh batch id answered %d %s" % (status, answer))
        elapsed = time.monotonic() - started
        repeats = [post({"batch": batch, "client": {"platform": "ios", "appVersion": "5.3.0", "revision": 1}, "events": [event]})[1]
                   for batch in ids[-100:]]
        if not all(answer.get("duplicate") and answer.get("accepted") == 0 for answer in repeats):
            fail("a repeated batch was counted again: %s" % repeats[:3])
        forgotten = post({"batch": ids[0], "client": {"platform": "ios", "appVersion": "5.3.0", "revision": 1}, "events": [event]})[1]
        held = daemon.metric("waymark_telemetry_batch_ids")
        if held is None or held > bound:
            fail("%s batch ids held with a bound of %d" % (held, bound))
        if forgotten.get("duplicate"):
            fail("the oldest id past the bound is still remembered")
        # The flood cycled the bound in seconds: the horizon a retry is recognised within says
        # so (the week while the ids fit), which WaymarkTelemetryBatchIdsForgottenEarly reads.
        horizon_after = daemon.metric("waymark_telemetry_batch_ids_horizon_seconds")
        if horizon_before != 168 * 3_600 or horizon_after is None or horizon_after > 600:
            fail("the batch-id horizon was %s before the flood and %s after it" % (horizon_before, horizon_after))
        wrong_type = post({"client": {"platform": "ios", "appVersion": "5.3.0"}, "events": [event]}, {"Content-Type": "text/plain"})[0]
        too_many = post({"client": {"platform": "ios", "appVersion": "5.3.0"}, "events": [dict(event, count=1_000_000)]})
        too_much = post({"client": {"platform": "ios", "appVersion": "5.3.0", "dropped": 1_000_000_000}, "events": [event]})
        if wrong_type != 415 or too_many[0] != 400 or too_many[1]["error"]["code"] != "countTooLarge" or too_much[1]["error"]["code"] != "droppedTooLarge":
            fail("refusals: %s %s %s" % (wrong_type, too_many, too_much))
        rss_after = rss_mb(daemon.process.pid)
        print("hostile: %d fresh batch ids in %.1f s (%.0f/s): %d held (bound %d), 100 repeats counted nothing, the oldest forgotten; "
              "the horizon a retry is recognised within %d s -> %d s; 415 for text/plain, 400 countTooLarge and droppedTooLarge; RSS %.1f -> %.1f MB"
              % (len(ids), elapsed, len(ids) / elapsed, held, bound, horizon_before, horizon_after, rss_before, rss_after))
        if rss_after - rss_before > 16:
            fail("RSS grew %.1f MB for %d batch ids" % (rss_after - rss_before, len(ids)))
    finally:
        daemon.stop()
