from hostile_common import *  # noqa: F401,F403


# 38 -----------------------------------------------------------------------------------------
def phone_token_scope(binary, scratch):
    """The app's token (it ships in every binary) against everything but what a phone needs."""
    import uuid
    data = os.path.join(scratch, "phone-token-scope")
    daemon = Daemon(binary, data)
    phone = token(binary, data, "app", "manifest:read", "telemetry:write", rate="unlimited")
    marketing = token(binary, data, "campaigns", "routes:publish", rate="unlimited")
    try:
        routes = json.load(open(os.path.join(EXAMPLE, "routes.json")))
        body = json.dumps({"at": iso(time.time() + 3 * 86_400), "message": "Black Friday: coupon BF-SECRET-2026", "routes": routes}).encode()
        status, answer, _ = call(daemon.port, marketing, "POST", "/v1/schedules", body, {"Content-Type": "application/json", "If-Match": '"rev-1"'})
        if status != 201:
            fail("scheduling answered %d: %s" % (status, answer[:200]))
        refused = {}
        for method, target, payload in (("GET", "/v1/schedules", None), ("GET", "/v1/schedules/1", None), ("GET", "/v1/revisions", None),
                                        ("GET", "/v1/revisions/1", None), ("GET", "/v1/revisions/1/diff/1", None), ("GET", "/v1/rollout", None),
                                        ("GET", "/v1/schemas", None), ("GET", "/v1/schemas/ios/5.3.0", None),
                                        ("GET", "/v1/qr?url=https://storefront.example/p/1", None),
                                        ("POST", "/v1/resolve", b'{"url": "https://storefront.example/p/42", "platform": "ios", "version": "5.3.0"}')):
            status, answer, _ = call(daemon.port, phone, method, target, payload, {"Content-Type": "application/json"} if payload else None)
            refused[target] = status
            if status != 403 or b"routes:read" not in answer or b"BF-SECRET" in answer:
                fail("the app's token got %d for %s %s: %s" % (status, method, target, answer[:300]))
        status, manifest, _ = call(daemon.port, phone, "GET", "/v1/manifest?platform=ios&version=5.3.0")
        batch = json.dumps({"batch": uuid.uuid4().hex, "client": {"platform": "ios", "appVersion": "5.3.0", "revision": 1},
                            "events": [{"ts": iso(time.time() - 30), "entry": "scheme", "outcome": "proceed", "route": "product"}]})
        posted, _, _ = call(daemon.port, phone, "POST", "/v1/telemetry", batch, {"Content-Type": "application/json"})
        if status != 200 or posted != 202:
            fail("the app's token no longer reads its manifest (%d) or posts telemetry (%d)" % (status, posted))
    finally:
        daemon.stop()
    print("hostile: the app's token (manifest:read, telemetry:write) asked for a campaign scheduled in 3 days, revisions, diffs, the "
          "rollout, schemas, QR codes and resolving: %d of %d refused 403 naming routes:read, nothing of the schedule's notes shown; "
          "its manifest 200 and its telemetry 202" % (sum(1 for status in refused.values() if status == 403), len(refused)))
