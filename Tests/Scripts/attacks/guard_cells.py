from hostile_common import *  # noqa: F401,F403


def guard_cells(binary, scratch):
    """A healthy rollout while 10, then 20, then 50 attacker networks fill a cell of their
    own (a registered build nobody runs) on both sides; then a real break beside them."""
    guard = guard_module()
    os.makedirs(os.path.join(scratch, "guard-cells"), exist_ok=True)
    daemon = guard.Daemon(binary, os.path.join(scratch, "guard-cells"))
    try:
        schema = open(os.path.join(EXAMPLE, "schema-ios-5.3.0.json")).read().replace('"version": "5.3.0"', '"version": "9.9.9"')
        status, body, _ = call(daemon.port, daemon.token, "PUT", "/v1/schemas/ios/9.9.9", schema.encode(), {"Content-Type": "application/json"})
        if status not in (200, 201):
            fail("registering ios 9.9.9 answered %d: %s" % (status, body[:200]))
        phone = token(binary, os.path.join(scratch, "guard-cells", "data"), "guard-cells-phone", "telemetry:write", rate="unlimited")
        fleet = guard.Fleet(daemon, 36)
        forger = CellForger(guard, daemon, phone)
        guard.publish(daemon, "cells")
        state = guard.rollout_state(daemon)
        rounds, percents, held = 0, [state["percent"]], {}
        while state["status"] == "running" and rounds < 60:
            daemon.set_clock(daemon.now + guard.ROUND)
            rounds += 1
            networks = 10 if rounds <= 4 else 20 if rounds <= 8 else 50
            forger.forge(state, networks)
            fleet.round(state)
            state = guard.looked(daemon)
            held[networks] = state.get("guard", {}).get("verdict")
            if state["percent"] != percents[-1]:
                percents.append(state["percent"])
        if state["status"] != "completed":
            fail("a healthy candidate beside attacker networks in a cell of their own did not complete (%s): %s"
                 % (" -> ".join("%d%%" % p for p in percents), json.dumps(state)[:900]))
        refused = state["guard"]["refused"]
        if not refused.get("unregistered"):
            fail("claims on a build with no schema were not refused as evidence: %s" % refused)
        healthy_rounds = rounds
        guard.publish(daemon, "cells-broken")
        state = guard.rollout_state(daemon)
        rounds = 0
        forger.posted = set()
        while state["status"] == "running" and rounds < 30:
            daemon.set_clock(daemon.now + guard.ROUND)
            rounds += 1
            forger.forge(state, 50)
            fleet.round(state, broken="5.3.0")
            state = guard.looked(daemon)
        if state["status"] != "tripped":
            fail("a 40 %% break on 5.3.0 beside 50 attacker networks in a cell of their own did not trip: %s" % json.dumps(state)[:900])
        if any(finding.get("build") == "ios 9.9.9" for finding in state["findings"]):
            fail("a finding names the attackers' cell: %s" % state["findings"])
    finally:
        daemon.stop()
    print("hostile: 10, 20 then 50 attacker networks (the fleet has 200) each posting its day of candidate failures and stable successes "
          "on ios 9.9.9, a registered build nobody runs: the healthy candidate went %s in %d rounds and completed (last verdicts %s; "
          "%d claims on a build with no schema refused as evidence); a 40 %% break on 5.3.0 beside the 50 tripped at %d %% in round %d: %s"
          % (" -> ".join("%d%%" % p for p in percents), healthy_rounds, held, refused["unregistered"], state["percent"], rounds,
             state["findings"][0]["text"]))
