from hostile_common import *  # noqa: F401,F403


# 41 -----------------------------------------------------------------------------------------
def counts_answer_size(binary, scratch):
    """The largest counts answer a telemetry:read token may ask for: two days of minutes by
    six dimensions, 1,000 groups, over 480 groups counted now."""
    import uuid
    data = os.path.join(scratch, "counts-answer-size")
    daemon = Daemon(binary, data)
    phone = token(binary, data, "answer-phone", "telemetry:write", rate="unlimited")
    reader = token(binary, data, "answer-reader", "telemetry:read", rate="unlimited")
    routes = ["home", "product", "category", "search", "cart", "orders", "order-detail", "settings", "new-arrivals", "spring-sale"]
    outcomes = [("proceed", None), ("gated", None), ("notFound", "validationFailed"), ("notFound", "expired"), ("notFound", "unknownRoute"),
                ("notFound", "malformed")]
    try:
        ts = iso(int(time.time()) - 30)
        for version in ("5.2.0", "5.3.0"):
            events = [dict({"ts": ts, "entry": entry, "outcome": outcome, "route": route}, **({"reason": reason} if reason else {}))
                      for route in routes for entry in ("universalLink", "scheme", "push", "inApp") for outcome, reason in outcomes]
            status, answer, _ = call(daemon.port, phone, "POST", "/v1/telemetry", json.dumps({
                "batch": uuid.uuid4().hex, "client": {"platform": "ios", "appVersion": version, "revision": 1}, "events": events}).encode(),
                {"Content-Type": "application/json"})
            if status != 202:
                fail("a batch of many groups answered %d: %s" % (status, answer[:300]))
        span = "from=%s&to=%s" % (iso(time.time() - 47 * 3_600), iso(time.time() + 60))
        dimensions = "groupBy=route,entry,outcome,reason,appVersion,platform&step=1m"
        before = rss_mb(daemon.process.pid)
        status, answer, _ = call(daemon.port, reader, "GET", "/v1/telemetry/counts?%s&%s&limit=1000" % (span, dimensions), timeout=60)
        refused = json_of(answer) or {}
        after_refused = rss_mb(daemon.process.pid)
        if status != 400 or refused.get("error", {}).get("code") != "answerTooLarge":
            fail("1,000 groups of two days of minutes answered %d (%d bytes), not 400 answerTooLarge" % (status, len(answer)))
        status, answer, _ = call(daemon.port, reader, "GET", "/v1/telemetry/counts?%s&%s&limit=170" % (span, dimensions), timeout=60)
        largest = json_of(answer) or {}
        peak = peak_mb(daemon.process.pid)
        if status != 200 or len(largest.get("groups", [])) != 170:
            fail("170 groups of two days of minutes answered %d" % status)
    finally:
        daemon.stop()
    details = refused["error"]["details"]
    if peak - before > 64:
        fail("the largest allowed counts answer (%d bytes) took RSS from %.1f to a peak of %.1f MB" % (len(answer), before, peak))
    print("hostile: two days of minutes by six dimensions over 480 groups: limit=1000 refused 400 answerTooLarge (%d values, at most %d; "
          "RSS %.1f -> %.1f MB), the largest allowed (170 groups, %d values, %.1f MB of JSON) peaked RSS at %.1f MB from %.1f"
          % (details["values"], details["maximum"], before, after_refused, 170 * details["buckets"], len(answer) / 1e6, peak, before))
