from hostile_common import *  # noqa: F401,F403


# 37 -----------------------------------------------------------------------------------------
def forged_advance(binary, scratch):
    """Thin traffic: 60 stable installs on 20 networks and no honest candidate evidence;
    5, then 10, then 20 attacker networks post candidate successes under 50 made-up source
    keys each round. No step advances."""
    guard = guard_module()
    os.makedirs(os.path.join(scratch, "forged-advance"), exist_ok=True)
    daemon = guard.Daemon(binary, os.path.join(scratch, "forged-advance"))
    try:
        phone = token(binary, os.path.join(scratch, "forged-advance", "data"), "forged-advance-phone", "telemetry:write", rate="unlimited")
        steps = [{"percent": 10, "minimumDuration": 240, "minimumResolutions": 200},
                 {"percent": 100, "minimumDuration": 240, "minimumResolutions": 200}]
        guard.publish(daemon, "advance", {"steps": steps})
        state = guard.rollout_state(daemon)
        rng = random.Random(37)
        installs = [{"network": index % 20, "source": "%032x" % rng.getrandbits(128), "cohort": 50 + index % 50} for index in range(60)]
        rounds, seen = 0, []
        for rounds in range(1, 10):
            daemon.set_clock(daemon.now + guard.ROUND)
            ts = iso(daemon.now - 30)
            if rounds == 1:
                for install in installs:
                    events = [{"ts": ts, "entry": "universalLink", "outcome": "proceed", "route": route} for route in ("product", "home", "category", "product", "home")]
                    status, answer = guard.Connection(daemon.port, "127.4.%d.2" % (install["network"] + 1), phone).post("/v1/telemetry", {
                        "client": {"platform": "ios", "appVersion": "5.3.0", "revision": state["stable"], "cohort": install["cohort"],
                                   "source": install["source"]}, "events": events})
                    if status != 202:
                        fail("an install's batch answered %d: %s" % (status, answer[:200]))
            networks = 5 if rounds <= 3 else 10 if rounds <= 6 else 20
            for key in range(50):
                event = {"ts": ts, "entry": "universalLink", "outcome": "proceed", "route": "product", "count": 5}
                status, answer = guard.Connection(daemon.port, "127.5.%d.2" % (key % networks + 1), phone).post("/v1/telemetry", {
                    "client": {"platform": "ios", "appVersion": "5.3.0", "revision": state["candidate"], "cohort": 0,
                               "source": "%032x" % rng.getrandbits(128)}, "events": [event]})
                if status != 202:
                    fail("a forged success answered %d: %s" % (status, answer[:200]))
            state = guard.looked(daemon)
            seen.append((networks, state["percent"], state.get("guard", {}).get("verdict")))
            if state["status"] != "running" or state["percent"] != 10:
                fail("forged successes from %d networks moved the rollout: %s" % (networks, json.dumps(state)[:900]))
        detail = state["guard"]["detail"]
        candidate = state["guard"]["candidate"]
    finally:
        daemon.stop()
    print("hostile: thin traffic (60 stable installs on 20 networks), 5, 10 then 20 attacker networks posting candidate successes under 50 "
          "made-up source keys a round for %d rounds, past the step's time: still at 10 %% (%d resolutions from %d installs claimed), "
          "the guard %s: %s" % (rounds, candidate["resolutions"], candidate["installs"], state["guard"]["verdict"], detail))
