#!/usr/bin/env python3
"""SIGKILL crash test of `waymark serve`'s store.

Publishes revisions, registers schemas, schedules publishes a moment ahead and runs staged
rollouts (started, advanced, paused, resumed, aborted, promoted by hand, and tripped by the
guard on failing telemetry) from client threads while the daemon is killed with SIGKILL at
random moments, KILLS times (so some kills land while a schedule fires or the guard trips).
After every restart it checks:
  - every 201 the daemon answered is still there, with the same content hash;
  - every schedule answered 201 is still there; each one that fired names a revision
    whose routes, author and message are its own; none whose time has passed stays
    pending once the daemon has started (a missed one fires at start);
  - the daemon started at all (it verifies every stored hash and refuses a damaged store),
    every revision and manifest it serves parses, revisions are numbered without gaps;
  - no temporary files are left in the data directory after start;
  - the audit log is whole JSON lines;
  - the rollout is at least where its last acknowledged control left it (the same version
    and status, or a later one), never a mix: a tripped one has its findings and its audit
    entry, and each cohort's manifest is the revision the rollout's state gives it;
  - every telemetry batch answered 202 is counted exactly once, and a batch that was in
    flight when the daemon died is counted once or not at all (each batch's events go to
    cells of (minute, entry, route) no other batch uses, so a double count shows).

Usage: crash-test.py WAYMARK_BINARY [KILLS] [SEED]   (fixed seed: same kill times each run)
"""
import http.client
import json
import os
import random
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
import time

import waymark_daemon

from waymark_daemon import iso  # noqa: E402

ROOT = os.path.normpath(os.path.join(os.path.dirname(__file__), "..", ".."))
EXAMPLE = os.path.join(ROOT, "manifests", "storefront")


FAILURES = []  # failures seen by client threads, raised by the main thread


def fail(message):
    if threading.current_thread() is not threading.main_thread():
        FAILURES.append(message)
        sys.exit(1)  # ends this client thread only; the main thread reports it
    print("crash-test: FAIL: " + message, file=sys.stderr)
    sys.exit(1)


RUNNING = []  # daemons to kill if the test stops early


class Daemon:
    def __init__(self, binary, data):
        self.process, self.token, self.port = waymark_daemon.start(binary, data, "--threads", "2", "--rollout-look-interval", "1",
            # One client on loopback stands for every install: the guard's caps and breadth
            # are opened up so its telemetry can advance or trip a rollout (make test-guard
            # holds the caps).
            "--guard-per-source", "1000", "--guard-per-network", "1000000", "--guard-installs", "1", "--guard-networks", "1")
        RUNNING.append(self.process)
        if self.port is None:
            self.process.kill()
            fail("the daemon did not start:\n" + self.process.stderr.read())
        # Keep draining stdout so the daemon never blocks on a full pipe.
        threading.Thread(target=self.process.stdout.read, daemon=True).start()

    def kill(self):
        self.process.send_signal(signal.SIGKILL)
        self.process.wait()


def call(port, token, method, path, body=None, headers=None):
    connection = http.client.HTTPConnection("127.0.0.1", port, timeout=10)
    all_headers = {"Authorization": "Bearer " + token}
    if isinstance(body, (dict, list)):
        all_headers["Content-Type"] = "application/json"
    all_headers.update(headers or {})
    data = json.dumps(body).encode() if isinstance(body, (dict, list)) else body
    connection.request(method, path, body=data, headers=all_headers)
    response = connection.getresponse()
    payload = response.read()
    connection.close()
    return response.status, (json.loads(payload) if payload else None)


def next_document(port, token, routes, counter, prefix):
    """The current revision's number and the example's routes with one route of their own added."""
    _, answer = call(port, token, "GET", "/v1/revisions")
    counter[0] += 1
    document = json.loads(json.dumps(routes))
    document["routes"].append({"id": "%s-%d" % (prefix, counter[0]), "patterns": ["/%s/%d" % (prefix, counter[0])],
                               "destination": "home", "owner": "crash-test"})
    return answer["current"], document


def writer_publish(port, token, acked, stop, routes, counter):
    """Publishes on top of the current revision until the daemon dies; records each 201."""
    while not stop.is_set():
        try:
            base, document = next_document(port, token, routes, counter, "crash")
            status, answer = call(port, token, "POST", "/v1/revisions",
                                  {"message": "crash test %d" % counter[0], "routes": document},
                                  {"If-Match": '"rev-%d"' % base, "Content-Type": "application/json"})
            if status == 201:
                acked["revisions"][answer["number"]] = answer["sha256"]
            elif status not in (412, 409):  # the base moved, or a rollout is in progress
                fail("publish answered %d: %s" % (status, answer))
        except (OSError, http.client.HTTPException, ValueError):
            return  # the daemon was killed: whatever was not answered was not acknowledged


def writer_schedule(port, token, acked, stop, routes, counter, rng):
    """Schedules publishes a moment ahead on the current revision; records each 201."""
    while not stop.is_set():
        try:
            base, document = next_document(port, token, routes, counter, "sched")
            at = time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(time.time() + rng.uniform(1.0, 2.5)))
            status, answer = call(port, token, "POST", "/v1/schedules",
                                  {"at": at, "message": "scheduled %d" % counter[0], "routes": document},
                                  {"If-Match": '"rev-%d"' % base, "Content-Type": "application/json"})
            if status == 201:
                acked["schedules"][answer["id"]] = document
            elif status not in (412, 400):  # the base moved, or the second turned while asking
                fail("scheduling answered %d: %s" % (status, answer))
            time.sleep(0.05)
        except (OSError, http.client.HTTPException, ValueError):
            return


ROLLOUT_STEPS = [{"percent": 1, "minimumDuration": 0, "minimumResolutions": 0},
                 {"percent": 50, "minimumDuration": 0, "minimumResolutions": 0},
                 {"percent": 100, "minimumDuration": 0, "minimumResolutions": 0}]


def writer_rollout(port, token, acked, stop, routes, counter, rng):
    """Starts rollouts and acts on them at random; posts telemetry (ios 5.2.0, which the
    exact-count check leaves out) that makes the guard advance a healthy candidate or trip a
    failing one. Records each acknowledged rollout state as (candidate, version, status, percent)."""
    def acknowledge(answer):
        with acked["lock"]:
            acked["rollout"] = max(acked["rollout"] or (0, 0, "", 0), (answer["candidate"], answer["version"], answer["status"], answer["percent"]))

    while not stop.is_set():
        try:
            status, state = call(port, token, "GET", "/v1/rollout")
            if status == 404 or state["status"] not in ("running", "paused"):
                base, document = next_document(port, token, routes, counter, "roll")
                status, answer = call(port, token, "POST", "/v1/revisions",
                                      {"message": "rollout %d" % counter[0], "routes": document, "rollout": {"steps": ROLLOUT_STEPS}},
                                      {"If-Match": '"rev-%d"' % base, "Content-Type": "application/json"})
                if status == 201:
                    acked["revisions"][answer["number"]] = answer["sha256"]
                    acked["rollouts"] += 1
                    acknowledge(answer["rollout"])
                elif status not in (412, 409):
                    fail("starting a rollout answered %d: %s" % (status, answer))
                continue
            choice = rng.random()
            if choice < 0.5:
                failing = choice < 0.2
                for revision, rate in ((state["candidate"], 0.5 if failing else 0.02), (state["stable"], 0.02)):
                    failed = int(300 * rate)
                    events = [{"ts": iso(time.time()), "entry": "universalLink", "outcome": "proceed", "route": "product", "count": 300 - failed},
                              {"ts": iso(time.time()), "entry": "universalLink", "outcome": "notFound", "reason": "validationFailed",
                               "route": "product", "count": failed}]
                    status, answer = call(port, token, "POST", "/v1/telemetry",
                                          {"client": {"platform": "ios", "appVersion": "5.2.0", "revision": revision,
                                                      "cohort": 0, "source": "%032x" % rng.randrange(1 << 64)}, "events": events})
                    if status != 202:
                        fail("rollout telemetry answered %d: %s" % (status, answer))
            else:
                action = rng.choice(["advance", "pause", "resume", "abort", "promote", "advance", "pause", "resume"])
                etag = '"rollout-%d-%d"' % (state["candidate"], state["version"])
                status, answer = call(port, token, "POST", "/v1/rollout/" + action, None, {"If-Match": etag})
                if status == 200:
                    acknowledge(answer)
                elif status not in (409, 412):  # not applicable now, or the guard (or another action) moved it first
                    fail("rollout %s answered %d: %s" % (action, status, answer))
            time.sleep(0.03)
        except (OSError, http.client.HTTPException, ValueError):
            return


def verify_rollout(daemon, data, acked):
    """The rollout is where its last acknowledged control left it, or later; whole; served as it says."""
    status, state = call(daemon.port, daemon.token, "GET", "/v1/rollout")
    if status == 404:
        if acked["rollout"]:
            fail("a rollout was acknowledged (%r) but the restarted daemon has none" % (acked["rollout"],))
        return None
    mine = (state["candidate"], state["version"])
    if acked["rollout"]:
        candidate, version, ack_status, percent = acked["rollout"]
        if mine < (candidate, version):
            fail("the rollout went back: acknowledged %r, restarted at %r" % (acked["rollout"], (state["candidate"], state["version"], state["status"])))
        if mine == (candidate, version) and (state["status"], state["percent"]) != (ack_status, percent):
            fail("rollout %d version %d was acknowledged %s at %d%% but is %s at %d%%"
                 % (candidate, version, ack_status, percent, state["status"], state["percent"]))
    if state["status"] == "tripped":
        if not state["findings"]:
            fail("rollout %d is tripped without findings" % state["candidate"])
        with open(os.path.join(data, "audit.log")) as log:
            entries = [json.loads(line) for line in log if '"rollout.' in line]
        if not any(entry.get("candidate") == state["candidate"] and entry.get("version") == state["version"] for entry in entries):
            fail("rollout %d's trip (version %d) has no audit entry" % (state["candidate"], state["version"]))
    # The guard may move the rollout while the cohorts are read (it looks once a second from
    # the start): a reading counts only if the rollout's version was the same before and after.
    for _ in range(20):
        _, before = call(daemon.port, daemon.token, "GET", "/v1/rollout")
        _, revisions = call(daemon.port, daemon.token, "GET", "/v1/revisions")
        served = {cohort: call(daemon.port, daemon.token, "GET", "/v1/manifest?platform=ios&version=5.3.0&cohort=%d" % cohort)[1]["revision"]
                  for cohort in (0, 1, 49, 50, 99)}
        _, after = call(daemon.port, daemon.token, "GET", "/v1/rollout")
        if before["version"] == after["version"] and before["candidate"] == after["candidate"]:
            break
    else:
        fail("the rollout kept changing while its cohorts were read")
    active = before["status"] in ("running", "paused")
    for cohort, revision in served.items():
        expected = before["candidate"] if active and cohort < before["percent"] else revisions["current"]
        if revision != expected:
            fail("cohort %d is served revision %d; the rollout (%s at %d%%) says %d" % (cohort, revision, before["status"], before["percent"], expected))
    return state["status"]


def verify_schedules(daemon, acked):
    """Acknowledged schedules are all there; fired ones name their own revision (its routes the
    ones sent) and keep no document; none overdue stays pending."""
    deadline = time.time() + 10
    while True:
        status, answer = call(daemon.port, daemon.token, "GET", "/v1/schedules")
        if status != 200:
            fail("schedules answered %d: %s" % (status, answer))
        schedules = {item["id"]: item for item in answer["schedules"]}
        overdue = [item for item in schedules.values() if item["status"] == "pending"
                   and time.mktime(time.strptime(item["at"], "%Y-%m-%dT%H:%M:%SZ")) - time.timezone < time.time() - 2]
        if not overdue or time.time() > deadline:
            break
        time.sleep(0.1)
    if overdue:
        fail("schedules past their time are still pending after the start: %s" % [item["id"] for item in overdue])
    # Ids ascend and are never reused; only the last 1,000 schedules to end are kept, so an
    # acknowledged one may be gone only once 1,000 others have ended.
    if acked["schedules"] and (not schedules or max(schedules) < max(acked["schedules"])):
        fail("the highest schedule is %s, but %d was acknowledged" % (max(schedules) if schedules else None, max(acked["schedules"])))
    ended = sum(1 for item in schedules.values() if item["status"] != "pending")
    for number in acked["schedules"]:
        if number not in schedules and ended < 1000:
            fail("schedule %d was acknowledged but the restarted daemon does not have it" % number)
    fired = 0
    for item in schedules.values():
        if item["status"] != "fired":
            continue
        fired += 1
        status, revision = call(daemon.port, daemon.token, "GET", "/v1/revisions/%d" % item["revision"])
        status2, scheduled = call(daemon.port, daemon.token, "GET", "/v1/schedules/%d" % item["id"])
        # A schedule that has fired keeps no document (its revision holds it): its routes are
        # what was sent, when the 201 came back; the revision carries its message either way.
        sent = acked["schedules"].get(item["id"])
        if status != 200 or status2 != 200 or revision["message"] != item["message"] or (sent is not None and revision["routes"] != sent):
            fail("schedule %d says it fired as revision %d, which is not its routes and message" % (item["id"], item["revision"]))
        if scheduled.get("routes") is not None:
            fail("schedule %d fired and still keeps its routes document" % item["id"])
    return len(schedules), fired


def writer_schemas(port, token, acked, stop, schema_text, counter):
    while not stop.is_set():
        try:
            counter[0] += 1
            version = "5.3.%d" % counter[0]
            body = schema_text.replace('"version": "5.3.0"', '"version": "%s"' % version).encode()
            status, answer = call(port, token, "PUT", "/v1/schemas/ios/" + version, body)
            if status in (200, 201):
                acked["schemas"][version] = answer["sha256"]
            else:
                fail("schema registration answered %d: %s" % (status, answer))
        except (OSError, http.client.HTTPException, ValueError):
            return


ROUTES = ["home", "product", "category", "search", "cart", "orders", "order-detail", "settings", "new-arrivals", "spring-sale"]
ENTRIES = ["universalLink", "scheme", "push", "inApp"]
EVENTS_PER_BATCH = 5
HOURS = 2000  # cells stay inside the 90 days of per-hour counts (events this old count in their hour only)


def cell(index, origin):
    """Cell `index` as (ts, entry, route): one of HOURS x 4 x 10 distinct count keys."""
    hour, rest = divmod(index, len(ENTRIES) * len(ROUTES))
    return origin - hour * 3_600, ENTRIES[rest // len(ROUTES)], ROUTES[rest % len(ROUTES)]




def writer_telemetry(port, token, telemetry, stop, origin):
    """Posts batches of EVENTS_PER_BATCH events, each in cells of its own."""
    capacity = HOURS * len(ENTRIES) * len(ROUTES) // EVENTS_PER_BATCH
    while not stop.is_set():
        with telemetry["lock"]:
            batch = telemetry["next"]
            if batch >= capacity:
                return
            telemetry["next"] += 1
            telemetry["sent"].add(batch)
        events = []
        for index in range(batch * EVENTS_PER_BATCH, (batch + 1) * EVENTS_PER_BATCH):
            ts, entry, route = cell(index, origin)
            events.append({"ts": iso(ts), "entry": entry, "outcome": "proceed", "route": route})
        body = {"client": {"platform": "ios", "appVersion": "5.3.0", "revision": 1}, "events": events}
        try:
            status, answer = call(port, token, "POST", "/v1/telemetry", body, {"Content-Type": "application/json"})
        except (OSError, http.client.HTTPException, ValueError):
            return  # in flight when the daemon died: counted once or not at all
        if status != 202 or answer != {"accepted": EVENTS_PER_BATCH, "rejected": []}:
            fail("telemetry answered %d: %s" % (status, answer))
        with telemetry["lock"]:
            telemetry["acked"].add(batch)


def verify_telemetry(daemon, telemetry, origin):
    # ios 5.3.0 only: the rollout writer's telemetry is 5.2.0's.
    query = "/v1/telemetry/counts?step=1h&groupBy=entry,route&limit=1000&appVersion=5.3.0&from=%s&to=%s" % (iso(origin - HOURS * 3_600 - 3_600), iso(origin + 3_600))
    status, answer = call(daemon.port, daemon.token, "GET", query)
    if status != 200:
        fail("telemetry counts answered %d: %s" % (status, answer))
    counted = {}
    starts = [int(time.mktime(time.strptime(bucket, "%Y-%m-%dT%H:%M:%SZ"))) - time.timezone for bucket in answer["buckets"]]
    for group in answer["groups"]:
        entry, route = group["key"]["entry"], group["key"]["route"]
        for start, count in zip(starts, group["counts"]):
            if count:
                counted[(start, entry, route)] = count
    with telemetry["lock"]:
        acked, sent = set(telemetry["acked"]), set(telemetry["sent"])
    seen_batches = set()
    for batch in sent:
        counts = set()
        for index in range(batch * EVENTS_PER_BATCH, (batch + 1) * EVENTS_PER_BATCH):
            ts, entry, route = cell(index, origin)
            counts.add(counted.pop((ts // 3_600 * 3_600, entry, route), 0))
        if batch in acked and counts != {1}:
            fail("telemetry batch %d was acknowledged but its events are counted %s times" % (batch, sorted(counts)))
        if counts not in ({0}, {1}):
            fail("telemetry batch %d (in flight at a kill) is counted %s times: not all or nothing, or twice" % (batch, sorted(counts)))
        if counts == {1}:
            seen_batches.add(batch)
    if counted:
        fail("telemetry counts events no batch sent: %s" % list(counted.items())[:5])
    return len(acked), len(seen_batches)


def verify(daemon, data, acked):
    # A temporary is named .tmp-NAME-PID-COUNTER. One of the running daemon's own is a write
    # in flight (the rollout guard may change the rollout's state as soon as it starts); one
    # of a killed daemon's would be a leftover the start should have removed.
    for root, _, names in os.walk(data):
        for name in names:
            if name.startswith(".tmp-") and name.split("-")[-2] != str(daemon.process.pid):
                fail("a temporary file survived a restart: " + os.path.join(root, name))
    status, answer = call(daemon.port, daemon.token, "GET", "/v1/revisions")
    served = {revision["number"]: revision["sha256"] for revision in answer["revisions"]}
    if sorted(served) != list(range(1, len(served) + 1)):
        fail("revisions are not numbered 1…n: %s" % sorted(served))
    for number, sha in acked["revisions"].items():
        if served.get(number) != sha:
            fail("revision %d was acknowledged with sha256 %s but the restarted daemon has %s" % (number, sha, served.get(number)))
    # Spot-check that what is served parses: the newest revision and a manifest.
    latest = max(served)
    status, revision = call(daemon.port, daemon.token, "GET", "/v1/revisions/%d" % latest)
    if status != 200 or not isinstance(revision.get("routes"), dict):
        fail("revision %d is not served whole (%d)" % (latest, status))
    # A schedule that came due while the daemon was down fires once it is up, possibly
    # between these reads: the manifest must be a revision that was current at some moment
    # from the list read before it to the list read after it (never an older one).
    status, manifest = call(daemon.port, daemon.token, "GET", "/v1/manifest?platform=ios&version=5.3.0")
    _, after = call(daemon.port, daemon.token, "GET", "/v1/revisions")
    if status != 200 or not answer["current"] <= manifest.get("revision", 0) <= after["current"]:
        fail("the manifest is not the current revision %d…%d (%d, %s)"
             % (answer["current"], after["current"], status, manifest and manifest.get("revision")))
    status, answer = call(daemon.port, daemon.token, "GET", "/v1/schemas")
    schemas = {schema["version"]: schema["sha256"] for schema in answer["schemas"]}
    for version, sha in acked["schemas"].items():
        if schemas.get(version) != sha:
            fail("schema ios %s was acknowledged but the restarted daemon has %s" % (version, schemas.get(version)))
    with open(os.path.join(data, "audit.log"), "rb") as log:
        for number, line in enumerate(log.read().split(b"\n")[:-1], 1):
            try:
                json.loads(line)
            except ValueError:
                fail("audit.log line %d is not JSON: %r" % (number, line[:80]))
    return len(served), len(schemas)


def main():
    binary = sys.argv[1]
    kills = int(sys.argv[2]) if len(sys.argv) > 2 else 50
    rng = random.Random(int(sys.argv[3]) if len(sys.argv) > 3 else 20261121)
    with open(os.path.join(EXAMPLE, "routes.json")) as handle:
        routes = json.load(handle)
    with open(os.path.join(EXAMPLE, "schema-ios-5.3.0.json")) as handle:
        schema_text = handle.read()
    work = tempfile.mkdtemp(prefix="waymark-crash-")
    data = os.path.join(work, "data")
    acked = {"revisions": {}, "schemas": {}, "schedules": {}, "rollout": None, "rollouts": 0, "lock": threading.Lock()}
    rollout_counter, rollout_states = [0], {}
    telemetry = {"lock": threading.Lock(), "next": 0, "sent": set(), "acked": set()}
    origin = int(time.time()) // 60 * 60 - 120
    publish_counter, schema_counter, schedule_counter = [0], [0], [0]
    token = None
    started = time.time()
    try:
        for kill in range(1, kills + 1):
            daemon = Daemon(binary, data)
            token = token or daemon.token
            daemon.token = token
            if token is None:
                fail("the first start printed no admin token")
            if acked["revisions"] or kill > 1:
                verify(daemon, data, acked)
                verify_telemetry(daemon, telemetry, origin)
                verify_schedules(daemon, acked)
                rolled = verify_rollout(daemon, data, acked)
                rollout_states[rolled] = rollout_states.get(rolled, 0) + 1
            stop = threading.Event()
            # Every third round publishes nothing by hand, so schedules keep their base and fire.
            writers = [threading.Thread(target=writer_publish, args=(daemon.port, token, acked, stop, routes, publish_counter))
                       ] if kill % 3 else []
            writers += [threading.Thread(target=writer_schemas, args=(daemon.port, token, acked, stop, schema_text, schema_counter)),
                       threading.Thread(target=writer_schedule, args=(daemon.port, token, acked, stop, routes, schedule_counter,
                                                                      random.Random(rng.random())))]
            writers += [threading.Thread(target=writer_telemetry, args=(daemon.port, token, telemetry, stop, origin)) for _ in range(3)]
            # Rollouts in two rounds of three (one of them with publishes racing them); the third keeps
            # the base still for schedules to fire (a rollout in progress skips them).
            if kill % 3 != 0:
                writers.append(threading.Thread(target=writer_rollout, args=(daemon.port, token, acked, stop, routes, rollout_counter,
                                                                             random.Random(rng.random()))))
            for writer in writers:
                writer.start()
            time.sleep(rng.uniform(0.02, 0.4))
            daemon.kill()
            stop.set()
            for writer in writers:
                writer.join()
            if FAILURES:
                fail(FAILURES[0])
        daemon = Daemon(binary, data)
        daemon.token = token
        revisions, schemas = verify(daemon, data, acked)
        batches, counted = verify_telemetry(daemon, telemetry, origin)
        schedules, fired = verify_schedules(daemon, acked)
        final = verify_rollout(daemon, data, acked)
        rollout_states[final] = rollout_states.get(final, 0) + 1
        daemon.process.terminate()
        daemon.process.wait()
        print("crash-test: %d SIGKILLs in %.0f s; %d revisions and %d schema registrations acknowledged, all present after "
              "every restart (%d revisions, %d schemas stored); no temporary files left; audit log whole; "
              "%d telemetry batches acknowledged, each counted exactly once (%d counted, %d of them in flight at a kill); "
              "%d schedules acknowledged, all present (%d stored, %d fired as their own revision, none overdue left pending); "
              "%d rollouts started, each restart at or past its last acknowledged state (restarts found them: %s)"
              % (kills, time.time() - started, len(acked["revisions"]), len(acked["schemas"]), revisions, schemas,
                 batches, counted, counted - batches, len(acked["schedules"]), schedules, fired, acked["rollouts"],
                 ", ".join("%s %d" % (name or "none", count) for name, count in sorted(rollout_states.items(), key=lambda item: str(item[0])))))
    finally:
        # A failed check exits through here: leave no daemon behind.
        for process in RUNNING:
            if process.poll() is None:
                process.kill()
                process.wait()
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
