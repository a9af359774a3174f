#!/usr/bin/env python3
"""Staged rollouts and scheduled publishing end to end, on a live daemon whose clock the
test moves (`serve --clock-file`): simulated installs in every cohort fetch their manifest
and post the resolutions their revision gives them, round after round.

  1. A healthy candidate goes 1 -> 10 -> 50 -> 100 % and becomes the current revision.
  2. A candidate that breaks one route on one build is stopped at the 1 % step; every
     cohort's manifest is the stable one again; /metrics and the audit log name the route.
  3. Pause holds a rollout past its minimums; resume lets it go on; abort puts every cohort
     back on stable; a publish during a rollout is refused unless it supersedes it; promote
     makes a candidate current at once.
  4. A scheduled publish fires at its time; one whose routes stop validating (a schema
     loses a destination) is skipped and says why; a scheduled rollout starts at its time.

Usage: rollout-e2e.py WAYMARK_BINARY
"""
import copy
import datetime
import http.client
import json
import os
import shutil
import sys
import tempfile
import time

sys.path.insert(0, os.path.dirname(__file__))
import waymark_daemon  # noqa: E402
from waymark_daemon import iso  # noqa: E402

BUILDS = ["5.2.0", "5.3.0"]
INSTALLS = 400          # install i: cohort i % 100, build BUILDS[(i // 100) % 2]
ROUND = 120             # seconds the clock moves per round
STEPS = [{"percent": p, "minimumDuration": 600, "minimumResolutions": 200} for p in (1, 10, 50, 100)]


def fail(message):
    print("rollout-e2e: FAIL: " + message)
    sys.exit(1)




def parse(text):
    return datetime.datetime.strptime(text[:19], "%Y-%m-%dT%H:%M:%S").replace(tzinfo=datetime.timezone.utc).timestamp()


class Daemon:
    def __init__(self, binary, scratch):
        self.clock_file = os.path.join(scratch, "clock")
        self.now = int(time.time())
        self.set_clock(self.now)
        self.data = os.path.join(scratch, "data")
        self.process, self.token, self.port = waymark_daemon.start(
            binary, self.data, "--clock-file", self.clock_file, "--rollout-look-interval", "1",
            # The rollout's mechanics, not the guard's caps (make test-guard has those): every
            # install here posts from one address, so the per-source caps and breadth are
            # opened up to what 400 installs on loopback can give.
            "--guard-per-source", "1000", "--guard-per-network", "1000000", "--guard-installs", "2", "--guard-networks", "1")
        if not self.port or not self.token:
            fail("the daemon did not start")
        self.connection = None

    def set_clock(self, seconds):
        self.now = seconds
        temporary = self.clock_file + ".tmp"
        with open(temporary, "w") as out:
            out.write("%d\n" % seconds)
        os.replace(temporary, self.clock_file)

    def advance(self, seconds):
        self.set_clock(self.now + seconds)

    def call(self, method, path, body=None, headers=None):
        """On one kept-alive connection (opened again if the daemon closed it)."""
        data = json.dumps(body).encode() if isinstance(body, (dict, list)) else body
        all_headers = {"Authorization": "Bearer " + self.token}
        if isinstance(body, (dict, list)):
            all_headers["Content-Type"] = "application/json"
        all_headers.update(headers or {})
        for attempt in range(2):
            if self.connection is None:
                self.connection = http.client.HTTPConnection("127.0.0.1", self.port, timeout=30)
            try:
                self.connection.request(method, path, body=data, headers=all_headers)
                response = self.connection.getresponse()
                payload = response.read()
                text = payload.decode("utf-8", "replace")
                parsed = json.loads(text) if response.getheader("Content-Type", "").startswith("application/json") and text else None
                return response.status, parsed, dict(response.getheaders()), text
            except (http.client.HTTPException, ConnectionError):
                self.connection.close()
                self.connection = None
                if attempt:
                    raise

    def expect(self, method, path, status, body=None, headers=None, what=""):
        got, parsed, answer_headers, text = self.call(method, path, body, headers)
        if got != status:
            fail("%s %s %s: expected %d, got %d: %s" % (what, method, path, status, got, text[:400]))
        return parsed, answer_headers

    def stop(self):
        self.process.terminate()
        try:
            self.process.wait(timeout=15)
        except Exception:
            self.process.kill()


def routes_document(extra=None):
    with open(os.path.join(waymark_daemon.EXAMPLE, "routes.json")) as source:
        document = json.load(source)
    if extra:
        document["routes"].append(extra)
    return document


class Installs:
    """The simulated installs: each fetches its build's manifest for its cohort and reports
    one round of resolutions of the revision it was served. `broken=(revision, build)` names
    the revision and build on which `product` fails 40 % of the time (a pattern that rejects
    real ids) instead of 3 %."""

    def __init__(self, daemon):
        self.daemon = daemon
        self.installs = [{"index": i, "cohort": i % 100, "build": BUILDS[(i // 100) % 2]} for i in range(INSTALLS)]

    def manifest_revision(self, build, cohort):
        manifest, headers = self.daemon.expect("GET", "/v1/manifest?platform=ios&version=%s&cohort=%d" % (build, cohort), 200)
        return manifest["revision"], headers.get("ETag")

    def round(self, broken=None):
        """One round at the daemon's clock; returns {revision: installs served it}."""
        served = {}
        ts = iso(self.daemon.now - 30)
        for install in self.installs:
            revision, _ = self.manifest_revision(install["build"], install["cohort"])
            served[revision] = served.get(revision, 0) + 1
            # The same counts from every install, so that whatever part of a round a look
            # sees, a healthy candidate's rates equal the stable revision's: only the broken
            # build differs, and the guard's verdict never depends on when the look happens.
            product_failed = 12 if broken and broken == (revision, install["build"]) else 1
            events = [
                {"ts": ts, "entry": "universalLink", "outcome": "proceed", "route": "product", "count": 30 - product_failed},
                {"ts": ts, "entry": "universalLink", "outcome": "notFound", "reason": "validationFailed", "route": "product",
                 "count": product_failed},
                {"ts": ts, "entry": "push", "outcome": "proceed", "route": "category", "count": 20},
                {"ts": ts, "entry": "universalLink", "outcome": "proceed", "route": "home", "count": 9},
                {"ts": ts, "entry": "universalLink", "outcome": "notFound", "reason": "unknownRoute", "count": 1},
            ]
            batch = {"client": {"platform": "ios", "appVersion": install["build"], "revision": revision,
                                "cohort": install["cohort"], "source": "%032x" % (install["index"] + 1)}, "events": events}
            status, parsed, _, text = self.daemon.call("POST", "/v1/telemetry", batch)
            if status != 202 or (parsed or {}).get("rejected"):
                fail("telemetry refused: %d %s" % (status, text[:300]))
        return served

    def split(self):
        """Each cohort's revision on each build (and the ETags, equal per revision and build)."""
        seen = {}
        for build in BUILDS:
            for cohort in range(100):
                seen[(build, cohort)] = self.manifest_revision(build, cohort)[0]
        return seen


def rollout(daemon):
    parsed, headers = daemon.expect("GET", "/v1/rollout", 200)
    return parsed, headers["ETag"]


def looked(daemon):
    """Moves the clock a second, which brings the primary's look at once (`--clock-file`:
    a move of the look interval), waits for that look and returns the rollout: it saw
    everything posted before it."""
    daemon.advance(1)
    deadline = time.time() + 20
    while time.time() < deadline:
        state, etag = rollout(daemon)
        checked = state.get("guard", {}).get("checked")
        if state["status"] not in ("running", "paused") or (checked and parse(checked) >= daemon.now):
            return state, etag
        time.sleep(0.05)
    fail("no look at the rollout's telemetry within 20 s: %r" % (state,))


def current(daemon):
    parsed, headers = daemon.expect("GET", "/v1/revisions", 200)
    return parsed["current"]


def publish(daemon, document, base, message, rollout_steps=None, supersede=None, status=201):
    body = {"message": message, "routes": document}
    if rollout_steps is not None:
        body["rollout"] = {"steps": rollout_steps}
    if supersede is not None:
        body["supersede"] = supersede
    parsed, _ = daemon.expect("POST", "/v1/revisions", status, body, {"If-Match": '"rev-%d"' % base}, what=message)
    return parsed


def healthy_walk(daemon, installs):
    base = current(daemon)
    candidate = publish(daemon, routes_document({"id": "winter", "patterns": ["/sale/winter"], "destination": "promo", "params": {"code": {"const": "WINTER"}}}), base,
                        "Winter campaign", STEPS)["number"]
    percents, rounds = [], 0
    while True:
        daemon.advance(ROUND)
        served = installs.round()
        state, _ = looked(daemon)
        rounds += 1
        if not percents or percents[-1] != state["percent"]:
            percents.append(state["percent"])
            # The split matches the step: cohorts below the percent get the candidate.
            split = installs.split()
            wrong = [key for key, revision in split.items()
                     if revision != (candidate if key[1] < state["percent"] or state["status"] == "completed" else base)]
            if wrong:
                fail("at %d%% (%s) cohorts are served the wrong revision: %r" % (state["percent"], state["status"], wrong[:5]))
        if state["status"] == "completed":
            break
        if state["status"] != "running":
            fail("the healthy candidate stopped: %s %r" % (state["status"], state.get("findings")))
        if state.get("guard", {}).get("verdict") == "tripped":
            fail("the guard tripped a healthy candidate: %r" % state["guard"])
        if rounds > 40:
            fail("the healthy rollout did not complete in 40 rounds: %r" % state)
    if percents != [1, 10, 50, 100]:
        fail("the steps went %r, not 1 -> 10 -> 50 -> 100" % percents)
    if current(daemon) != candidate:
        fail("the completed candidate %d is not current" % candidate)
    if any(revision != candidate for revision in installs.split().values()):
        fail("after completion some cohort is not on the candidate")
    print("rollout-e2e: healthy candidate %d went 1 -> 10 -> 50 -> 100%% in %d rounds of %d s and is current" % (candidate, rounds, ROUND))
    return candidate


def broken_candidate(daemon, installs):
    stable = current(daemon)
    candidate = publish(daemon, routes_document({"id": "autumn", "patterns": ["/sale/autumn"], "destination": "promo", "params": {"code": {"const": "AUTUMN"}}}), stable,
                        "Autumn campaign (breaks product ids on 5.3.0)", STEPS)["number"]
    rounds = 0
    while True:
        daemon.advance(ROUND)
        installs.round(broken=(candidate, "5.3.0"))
        state, _ = looked(daemon)
        rounds += 1
        if state["status"] != "running" or rounds > 10:
            break
    if state["status"] != "tripped" or state["percent"] != 1:
        fail("the broken candidate was not stopped at 1%%: %s at %d%%" % (state["status"], state["percent"]))
    findings = state["findings"]
    if not findings or findings[0].get("route") != "product":
        fail("the trip does not name the product route first: %r" % findings)
    if not any(f.get("route") == "product" and f.get("build") == "ios 5.3.0" for f in findings):
        fail("no finding names product on ios 5.3.0: %r" % findings)
    if any(f.get("build") == "ios 5.2.0" for f in findings):
        fail("a finding names 5.2.0, where nothing broke: %r" % findings)
    split = installs.split()
    if any(revision != stable for revision in split.values()):
        fail("after the trip some cohort is not on the stable revision %d: %r" % (stable, [k for k, v in split.items() if v != stable][:5]))
    if current(daemon) != stable:
        fail("the current revision moved after a trip")
    _, _, _, metrics = daemon.call("GET", "/metrics")
    if 'waymark_rollout_status{status="tripped"} 1' not in metrics or 'route="product",build="ios 5.3.0"' not in metrics:
        fail("/metrics does not say what tripped the rollout")
    if "waymark_rollout_trips_total 1" not in metrics:
        fail("/metrics does not count the trip")
    with open(os.path.join(daemon.data, "audit.log")) as log:
        trips = [json.loads(line) for line in log if '"rollout.trip"' in line]
    if not trips or trips[-1].get("findings", [{}])[0].get("route") != "product":
        fail("the audit log has no trip naming the route: %r" % trips[-1:])
    first = findings[0]
    print("rollout-e2e: broken candidate %d tripped at 1%% after %d round(s): %s" % (candidate, rounds, first["text"]))
    return stable


def controls(daemon, installs):
    stable = current(daemon)
    candidate = publish(daemon, routes_document({"id": "spring-2", "patterns": ["/sale/spring-2"], "destination": "promo", "params": {"code": {"const": "SPRING2"}}}), stable,
                        "Spring again", STEPS)["number"]
    state, etag = rollout(daemon)
    paused, _ = daemon.expect("POST", "/v1/rollout/pause", 200, headers={"If-Match": etag}, what="pause")
    daemon.expect("POST", "/v1/rollout/pause", 412, headers={"If-Match": etag}, what="pause again at the old version")
    for _ in range(7):   # well past the step's 600 s and 200 resolutions
        daemon.advance(ROUND)
        installs.round()
        state, etag = looked(daemon)
    if state["status"] != "paused" or state["percent"] != 1:
        fail("a paused rollout moved: %s %d%%" % (state["status"], state["percent"]))
    daemon.expect("POST", "/v1/rollout/resume", 200, headers={"If-Match": etag}, what="resume")
    moved = False
    for _ in range(8):
        daemon.advance(ROUND)
        installs.round()
        state, etag = looked(daemon)
        if state["percent"] > 1:
            moved = True
            break
    if not moved:
        fail("a resumed rollout did not go on: %r" % state)
    # A publish during a rollout: refused, unless it supersedes it.
    document = routes_document({"id": "hotfix", "patterns": ["/hotfix"], "destination": "home"})
    refused = daemon.call("POST", "/v1/revisions", {"message": "Hotfix", "routes": document}, {"If-Match": '"rev-%d"' % stable})
    if refused[0] != 409 or refused[1]["error"]["code"] != "rolloutInProgress":
        fail("a publish during a rollout was not refused: %d %s" % (refused[0], refused[3][:200]))
    daemon.expect("POST", "/v1/rollout/abort", 200, headers={"If-Match": etag}, what="abort")
    state, etag = rollout(daemon)
    if state["status"] != "aborted" or any(revision != stable for revision in installs.split().values()):
        fail("an aborted rollout still serves its candidate")
    # Another rollout, superseded by a publish that asks to, then one promoted at once.
    publish(daemon, routes_document({"id": "spring-3", "patterns": ["/sale/spring-3"], "destination": "promo", "params": {"code": {"const": "SPRING3"}}}), stable, "Spring 3", STEPS)
    hotfix = publish(daemon, document, stable, "Hotfix over the rollout", supersede=True)["number"]
    state, _ = rollout(daemon)
    if state["status"] != "superseded" or current(daemon) != hotfix:
        fail("the superseding publish did not end the rollout: %s, current %d" % (state["status"], current(daemon)))
    promoted_candidate = publish(daemon, routes_document({"id": "summer", "patterns": ["/sale/summer"], "destination": "promo", "params": {"code": {"const": "SUMMER"}}}), hotfix,
                                 "Summer", STEPS)["number"]
    _, etag = rollout(daemon)
    daemon.expect("POST", "/v1/rollout/promote", 200, headers={"If-Match": etag}, what="promote")
    if current(daemon) != promoted_candidate or any(revision != promoted_candidate for revision in installs.split().values()):
        fail("a promoted candidate is not everyone's")
    print("rollout-e2e: pause held %d at 1%% for 7 rounds, resume went on, abort put every cohort back on %d, "
          "a publish during a rollout was refused (409) and superseded it when asked, promote made %d current"
          % (candidate, stable, promoted_candidate))


def settled(daemon, schedule):
    """Schedule `schedule` once it is no longer pending (the primary looks every 50 ms with --clock-file), or as it is after 15 s."""
    deadline = time.time() + 15
    while True:
        item, _ = daemon.expect("GET", "/v1/schedules/%d" % schedule, 200)
        if item["status"] != "pending" or time.time() > deadline:
            return item
        time.sleep(0.1)


def schedules(daemon):
    base = current(daemon)
    at = daemon.now + 900
    good = {"at": iso(at), "message": "Black Friday at its hour",
            "routes": routes_document({"id": "black-friday", "patterns": ["/sale/black-friday"], "destination": "promo", "params": {"code": {"const": "BLACKFRIDAY"}}})}
    fired_item, _ = daemon.expect("POST", "/v1/schedules", 201, good, {"If-Match": '"rev-%d"' % base}, what="schedule")
    # Not before its time: ten ticks of the scheduler (every 50 ms with --clock-file) pass.
    daemon.advance(600)
    time.sleep(0.5)
    item, _ = daemon.expect("GET", "/v1/schedules/%d" % fired_item["id"], 200)
    if item["status"] != "pending" or current(daemon) != base:
        fail("the scheduled publish fired early: %r" % item)
    daemon.set_clock(at + 1)
    item = settled(daemon, fired_item["id"])
    if item["status"] != "fired" or current(daemon) != item.get("revision"):
        fail("the scheduled publish did not fire at its time: %r" % item)
    base = item["revision"]
    # One whose route needs newArrivals, which 5.3.0's schema then loses.
    needing = routes_document({"id": "arrivals-2", "patterns": ["/arrivals"], "destination": "newArrivals"})
    at = daemon.now + 600
    doomed, _ = daemon.expect("POST", "/v1/schedules", 201, {"at": iso(at), "message": "Arrivals", "routes": needing},
                              {"If-Match": '"rev-%d"' % base}, what="schedule the doomed one")
    with open(os.path.join(waymark_daemon.EXAMPLE, "schema-ios-5.3.0.json")) as source:
        schema = json.load(source)
    del schema["destinations"]["newArrivals"]
    daemon.expect("PUT", "/v1/schemas/ios/5.3.0", 200, json.dumps(schema).encode(), what="schema without newArrivals")
    daemon.set_clock(at + 1)
    skipped = settled(daemon, doomed["id"])
    if skipped["status"] != "skipped" or "no longer validate" not in skipped.get("reason", "") or current(daemon) != base:
        fail("the schedule that stopped validating was not skipped: %r" % skipped)
    _, _, _, metrics = daemon.call("GET", "/metrics")
    if "waymark_schedules_skipped_total 1" not in metrics or "waymark_schedules_fired_total 1" not in metrics:
        fail("/metrics does not count the fired and the skipped schedule")
    # A scheduled rollout (without new-arrivals, which no build can open any more).
    at = daemon.now + 300
    document = routes_document({"id": "nine", "patterns": ["/sale/nine"], "destination": "promo", "params": {"code": {"const": "NINE"}}})
    document["routes"] = [route for route in document["routes"] if route["destination"] != "newArrivals"]
    body = {"at": iso(at), "message": "Winter rollout at nine", "rollout": {"steps": STEPS}, "routes": document}
    scheduled, _ = daemon.expect("POST", "/v1/schedules", 201, body, {"If-Match": '"rev-%d"' % base}, what="schedule a rollout")
    daemon.set_clock(at + 1)
    item = settled(daemon, scheduled["id"])
    state, _ = rollout(daemon)
    if item["status"] != "fired" or state["candidate"] != item.get("revision") or state["status"] != "running" or current(daemon) != base:
        fail("the scheduled rollout did not start at its time: %r %r" % (item, state))
    print("rollout-e2e: a scheduled publish fired at its time as revision %d; one whose routes stopped validating was skipped (%s); "
          "a scheduled rollout started candidate %d" % (base, skipped["reason"][:90], state["candidate"]))


def main():
    if len(sys.argv) != 2:
        print(__doc__)
        sys.exit(2)
    binary = sys.argv[1]
    scratch = tempfile.mkdtemp(prefix="waymark-rollout-")
    daemon = Daemon(binary, scratch)
    started = time.time()
    try:
        installs = Installs(daemon)
        healthy_walk(daemon, installs)
        broken_candidate(daemon, installs)
        controls(daemon, installs)
        schedules(daemon)
    finally:
        daemon.stop()
        shutil.rmtree(scratch, ignore_errors=True)
    print("rollout-e2e: passed in %.0f s" % (time.time() - started))


if __name__ == "__main__":
    main()
