from hostile_common import *  # noqa: F401,F403


def impact_beside_publish(binary, scratch):
    data = os.path.join(scratch, "impact-turn")
    daemon = Daemon(binary, data)
    marketer = token(binary, data, "impact-marketer", "routes:publish", rate="unlimited")
    phone = token(binary, data, "impact-turn-phone", "telemetry:write", rate="unlimited")
    base = json.load(open(os.path.join(EXAMPLE, "routes.json")))
    base["routes"].append({"id": "wide", "patterns": ["/:slug/v%d" % index for index in range(2_000)], "destination": "category"})
    status, body, _ = call(daemon.port, daemon.admin, "POST", "/v1/revisions", {"message": "wide", "routes": base}, {"If-Match": '"rev-1"'}, timeout=60)
    if status != 201:
        fail("publishing the wide route answered %d %s" % (status, body[:300]))
    now = int(time.time())
    events = [{"ts": iso(now - 3600 * hours), "entry": "universalLink", "outcome": "proceed", "route": "wide", "count": 5} for hours in range(1, 100)]
    status, body, _ = call(daemon.port, phone, "POST", "/v1/telemetry", {"client": {"platform": "ios", "appVersion": "5.3.0", "revision": 2}, "events": events})
    if status != 202:
        fail("a week of the wide route's opens answered %d %s" % (status, body[:200]))

    def draft_with(route):
        draft = json.loads(json.dumps(base))
        draft["routes"].insert(0, route)
        return json.dumps(draft).encode()
    drafts = [
        ("200,000 patterns", draft_with({"id": "huge", "patterns": ["/h%d" % index for index in range(200_000)], "destination": "home"}), 422, "impactTooLarge"),
        ("37,900 literals", draft_with({"id": "fan", "patterns": ["/w%d/v0" % index for index in range(37_900)], "destination": "home"}), 422, "impactTooCostly"),
        ("3,000 routes", json.dumps(dict(base, routes=[{"id": "c%d" % index, "patterns": ["/c%d" % index], "destination": "home"} for index in range(3_000)] + base["routes"])).encode(), 200, None),
    ]
    revision = 2
    slowest, figures = 0.0, []
    for name, sent, expected_status, expected_code in drafts:
        for attempt in range(3):
            answered = {}

            def ask():
                started = time.monotonic()
                status, body, _ = call(daemon.port, marketer, "POST", "/v1/revisions/%d/impact" % revision, sent, {"Content-Type": "application/json"}, timeout=120)
                answered["impact"] = (status, body, time.monotonic() - started)
            asking = threading.Thread(target=ask)
            asking.start()
            time.sleep(0.05)
            small = json.loads(json.dumps(base))
            small["routes"][0]["notes"] = "operator %s %d" % (name, attempt)
            started = time.monotonic()
            status, body, _ = call(daemon.port, daemon.admin, "POST", "/v1/revisions", {"message": "operator", "routes": small},
                                   {"If-Match": '"rev-%d"' % revision}, timeout=60)
            took = time.monotonic() - started
            asking.join(timeout=180)
            if status != 201:
                fail("an operator's publish beside the impact of %s answered %d %s" % (name, status, body[:300]))
            revision += 1
            slowest = max(slowest, took)
            impact_status, impact_body, impact_took = answered.get("impact", (None, b"", 0))
            code = (json_of(impact_body).get("error") or {}).get("code") if impact_status != 200 else None
            if impact_status != expected_status or code != expected_code:
                fail("the impact of %s answered %s %s, not %d %s" % (name, impact_status, impact_body[:300], expected_status, expected_code))
            if took > 1.0:
                fail("an operator's publish beside the impact of %s (%d KB, answered in %.2f s) took %.2f s" % (name, len(sent) // 1000, impact_took, took))
            figures.append("%s %d KB: impact %d in %.2f s, publish %.2f s" % (name, len(sent) // 1000, impact_status, impact_took, took))
    if not daemon.alive():
        fail("the daemon died under the impacts")
    daemon.stop()
    print("hostile: impacts beside an operator's publish (3 of 3 each, slowest publish %.2f s): %s" % (slowest, "; ".join(figures[::3])))
