#!/usr/bin/env python3
"""A primary and two followers on loopback (issue 7's multi-process test).

  1. The followers mirror the primary: the same manifest bytes and ETag on every node.
  2. A publish on the primary is served by both followers within the poll interval
     (measured); a token created on the primary works on them; writes to a follower are
     refused with 409 and change nothing.
  2b. A rollout on the primary: each follower serves every cohort the revision the primary
     serves it, at the first step and after an advance, and all of them the stable one
     after an abort.
  3. The primary stops: the followers keep serving the last good revision, say so in
     /readyz and /metrics, and still accept telemetry (durable on the follower).
  4. The primary comes back. Telemetry is posted to both followers while follower 1 is
     SIGKILLed at random moments and restarted, once exactly between the primary counting
     its forward and the follower recording that (WAYMARK_TEST_KILL_AFTER_FORWARD).
  5. The primary's counts equal exactly what the followers acknowledged: each batch's
     events go to (minute, entry, route) cells no other batch uses, so a batch counted
     twice, or in part, shows; a batch in flight at a kill is counted once or not at all.

Usage: followers-test.py WAYMARK_BINARY [KILLS] [SEED]
"""
import http.client
import json
import os
import random
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import threading
import time

import waymark_daemon

from waymark_daemon import iso  # noqa: E402

INTERVAL = 0.5
ROUTES = ["home", "product", "category", "search", "cart", "orders", "order-detail", "settings", "new-arrivals", "spring-sale"]
ENTRIES = ["universalLink", "scheme", "push", "inApp"]
EVENTS_PER_BATCH = 2  # two cells a batch, so one counted in part shows; 40,000 batches fit in the cells
HOURS = 2000  # inside the 90 days of per-hour counts (events this old count in their hour only)
RUNNING = []
FAILURES = []


def fail(message):
    if threading.current_thread() is not threading.main_thread():
        FAILURES.append(message)
        sys.exit(1)
    print("followers-test: FAIL: " + message, file=sys.stderr)
    sys.exit(1)


def call(port, token, method, path, body=None, headers=None):
    connection = http.client.HTTPConnection("127.0.0.1", port, timeout=10)
    all_headers = {"Authorization": "Bearer " + token} if token else {}
    all_headers.update(headers or {})
    data = json.dumps(body).encode() if isinstance(body, (dict, list)) else body
    connection.request(method, path, body=data, headers=all_headers)
    response = connection.getresponse()
    payload = response.read()
    connection.close()
    return response.status, dict(response.getheaders()), payload


def json_call(port, token, method, path, body=None, headers=None):
    status, _, payload = call(port, token, method, path, body, headers)
    return status, (json.loads(payload) if payload else None)


def free_port():
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


class Node:
    def __init__(self, binary, data, *arguments, seed=True, port=0, env=None):
        self.process, self.token, self.port = waymark_daemon.start(binary, data, *arguments, seed=seed, port=port, env=env)
        RUNNING.append(self.process)
        if self.port is None:
            self.process.kill()
            fail("a node did not start:\n" + self.process.stderr.read())
        threading.Thread(target=self.process.stdout.read, daemon=True).start()
        threading.Thread(target=self.process.stderr.read, daemon=True).start()

    def stop(self, sig=signal.SIGTERM):
        self.process.send_signal(sig)
        self.process.wait()


def manifest(port, token):
    status, headers, body = call(port, token, "GET", "/v1/manifest?platform=ios&version=5.3.0")
    return status, headers.get("ETag"), body


def wait_until(what, predicate, timeout):
    started = time.time()
    while time.time() - started < timeout:
        if predicate():
            return time.time() - started
        time.sleep(0.02)
    fail("timed out after %.1f s waiting for %s" % (timeout, what))




def cell(index, origin):
    hour, rest = divmod(index, len(ENTRIES) * len(ROUTES))
    return origin - hour * 3_600, ENTRIES[rest // len(ROUTES)], ROUTES[rest % len(ROUTES)]


class Telemetry:
    """Batches posted to followers: which were sent, which answered 202."""
    def __init__(self, origin):
        self.lock = threading.Lock()
        self.next = 0
        self.sent = set()
        self.acked = set()
        self.origin = origin

    def post(self, port, token):
        with self.lock:
            batch = self.next
            if batch >= HOURS * len(ENTRIES) * len(ROUTES) // EVENTS_PER_BATCH:
                fail("out of telemetry cells after %d batches" % batch)
            self.next += 1
            self.sent.add(batch)
        events = []
        for index in range(batch * EVENTS_PER_BATCH, (batch + 1) * EVENTS_PER_BATCH):
            ts, entry, route = cell(index, self.origin)
            events.append({"ts": iso(ts), "entry": entry, "outcome": "notFound", "reason": "unknownRoute", "route": route})
        body = {"client": {"platform": "ios", "appVersion": "5.3.0", "revision": 1}, "events": events}
        try:
            status, answer = json_call(port, token, "POST", "/v1/telemetry", body, {"Content-Type": "application/json"})
        except (OSError, http.client.HTTPException, ValueError):
            return False  # in flight when the follower died: counted once or not at all
        if status != 202 or answer != {"accepted": EVENTS_PER_BATCH, "rejected": []}:
            fail("telemetry on a follower answered %d: %s" % (status, answer))
        with self.lock:
            self.acked.add(batch)
        return True

    def verify(self, port, token):
        """The primary's counts against what was acknowledged; returns (acked, counted)."""
        query = "/v1/telemetry/counts?step=1h&groupBy=entry,route&limit=1000&from=%s&to=%s" % (
            iso(self.origin - HOURS * 3_600 - 3_600), iso(self.origin + 3_600))
        status, answer = json_call(port, token, "GET", query)
        if status != 200:
            fail("counts on the primary answered %d: %s" % (status, answer))
        counted = {}
        starts = [int(time.mktime(time.strptime(bucket, "%Y-%m-%dT%H:%M:%SZ"))) - time.timezone for bucket in answer["buckets"]]
        for group in answer["groups"]:
            for start, count in zip(starts, group["counts"]):
                if count:
                    counted[(start, group["key"]["entry"], group["key"]["route"])] = count
        seen = 0
        for batch in sorted(self.sent):
            counts = set()
            for index in range(batch * EVENTS_PER_BATCH, (batch + 1) * EVENTS_PER_BATCH):
                ts, entry, route = cell(index, self.origin)
                counts.add(counted.pop((ts // 3_600 * 3_600, entry, route), 0))
            if batch in self.acked and counts != {1}:
                return None, "batch %d was acknowledged by a follower but the primary counts its events %s times" % (batch, sorted(counts))
            if counts not in ({0}, {1}):
                return None, "batch %d (in flight at a kill) is counted %s times on the primary" % (batch, sorted(counts))
            seen += counts == {1}
        if counted:
            return None, "the primary counts events no batch sent: %s" % list(counted.items())[:5]
        return (len(self.acked), seen), None


def ready(port):
    status, answer = json_call(port, None, "GET", "/readyz")
    return status, answer


def metric(port, token, name):
    _, _, body = call(port, token, "GET", "/metrics")
    for line in body.decode().splitlines():
        if line.startswith(name + " "):
            return float(line.split()[1])
    fail("%s is not in /metrics" % name)


def main():
    binary = sys.argv[1]
    kills = int(sys.argv[2]) if len(sys.argv) > 2 else 8
    rng = random.Random(int(sys.argv[3]) if len(sys.argv) > 3 else 20261121)
    work = tempfile.mkdtemp(prefix="waymark-followers-")
    primary_data, data = os.path.join(work, "primary"), [os.path.join(work, "f1"), os.path.join(work, "f2")]
    started = time.time()
    try:
        primary_port = free_port()
        primary = Node(binary, primary_data, port=primary_port)
        admin = primary.token
        replicator = subprocess.run([binary, "token", "create", "--data-dir", primary_data, "--name", "followers", "--scope", "replication"],
                                    check=True, capture_output=True, text=True).stdout.strip()
        follow = ["--follow", "http://127.0.0.1:%d" % primary_port, "--follow-interval", str(INTERVAL)]
        env = dict(os.environ, WAYMARK_FOLLOW_TOKEN=replicator)
        followers = [Node(binary, directory, *follow, seed=False, env=env) for directory in data]

        # 1. The same bytes and ETag everywhere.
        reference = manifest(primary.port, admin)
        for node in followers:
            if manifest(node.port, admin) != reference:
                fail("a follower's manifest differs from the primary's: %s against %s" % (manifest(node.port, admin)[:2], reference[:2]))

        # 2. A publish reaches both followers within the poll interval; so does a new token.
        with open(os.path.join(waymark_daemon.EXAMPLE, "routes.json")) as handle:
            routes = json.load(handle)
        # New content: the same routes again would be an unchanged publish, not a revision.
        routes["routes"].append({"id": "followers-test", "patterns": ["/followers-test"], "destination": "home"})
        status, answer = json_call(primary.port, admin, "POST", "/v1/revisions", {"message": "followers-test", "routes": routes},
                                   {"If-Match": '"rev-1"', "Content-Type": "application/json"})
        if status != 201:
            fail("publishing on the primary answered %d: %s" % (status, answer))
        published = time.time()
        new = manifest(primary.port, admin)
        lags = []
        for node in followers:
            wait_until("revision 2 on a follower", lambda: manifest(node.port, admin) == new, 10)
            lags.append(time.time() - published)
        if max(lags) > 2 * INTERVAL + 0.5:
            fail("a follower took %.2f s to serve revision 2 (poll interval %.1f s)" % (max(lags), INTERVAL))
        reader = subprocess.run([binary, "token", "create", "--data-dir", primary_data, "--name", "ops", "--scope", "telemetry:read"],
                                check=True, capture_output=True, text=True).stdout.strip()
        for node in followers:
            wait_until("the new token on a follower", lambda: call(node.port, reader, "GET", "/metrics")[0] == 200, 10)
        refused = subprocess.run([binary, "token", "create", "--data-dir", data[0], "--name", "x", "--scope", "admin"], capture_output=True, text=True)
        if refused.returncode == 0:
            fail("'waymark token create' on a follower's data directory succeeded")
        status, answer = json_call(followers[0].port, admin, "POST", "/v1/revisions", {"message": "no", "routes": routes},
                                   {"If-Match": '"rev-2"', "Content-Type": "application/json"})
        if status != 409 or answer["error"]["code"] != "follower" or manifest(followers[0].port, admin) != new:
            fail("a publish on a follower answered %d %s, or changed what it serves" % (status, answer))

        # 2b. A rollout: every cohort gets the same revision from every node, step after step.
        candidate_routes = json.loads(json.dumps(routes))
        candidate_routes["routes"].append({"id": "followers-rollout", "patterns": ["/followers-rollout"], "destination": "home"})
        status, answer = json_call(primary.port, admin, "POST", "/v1/revisions",
                                   {"message": "rollout", "routes": candidate_routes, "rollout": {}},
                                   {"If-Match": '"rev-2"', "Content-Type": "application/json"})
        if status != 201:
            fail("starting a rollout on the primary answered %d: %s" % (status, answer))

        def split(port):
            served = []
            for cohort in range(100):
                status, headers, body = call(port, admin, "GET", "/v1/manifest?platform=ios&version=5.3.0&cohort=%d" % cohort)
                served.append((status, headers.get("ETag")))
            return served

        checked = []
        for action in (None, "advance", "abort"):
            if action:
                _, state = json_call(primary.port, admin, "GET", "/v1/rollout")
                status, answer = json_call(primary.port, admin, "POST", "/v1/rollout/" + action, None,
                                           {"If-Match": '"rollout-%d-%d"' % (state["candidate"], state["version"])})
                if status != 200:
                    fail("rollout %s on the primary answered %d: %s" % (action, status, answer))
            _, state = json_call(primary.port, admin, "GET", "/v1/rollout")
            expected = split(primary.port)
            for node in followers:
                wait_until("the rollout's split (%s, %d%%) on a follower" % (state["status"], state["percent"]),
                           lambda: split(node.port) == expected, 10)
            checked.append("%s %d%%: %d cohort(s) on the candidate" % (state["status"], state["percent"],
                                                                        sum(1 for tag in expected if tag != expected[-1])))
        print("followers-test: every cohort served the same revision by the primary and both followers: " + "; ".join(checked))

        # 3. The primary stops; followers keep serving and accepting telemetry.
        origin = int(time.time()) // 60 * 60 - 120
        telemetry = Telemetry(origin)
        primary.stop()
        for node in followers:
            wait_until("a follower to notice the primary is gone", lambda: ready(node.port)[1]["follower"]["primaryReachable"] is False, 10)
            status, answer = ready(node.port)
            if status != 200 or answer["revision"] != 2 or manifest(node.port, admin) != new:
                fail("a follower without its primary is not serving revision 2 (%d, %s)" % (status, answer))
            if metric(node.port, admin, "waymark_follower_primary_up") != 0:
                fail("waymark_follower_primary_up is not 0 on a follower without its primary")
            for _ in range(5):
                if not telemetry.post(node.port, admin):
                    fail("a follower without its primary refused telemetry")
        pending_while_down = sum(ready(node.port)[1]["follower"]["eventsNotForwarded"] for node in followers)
        if pending_while_down != 10 * EVENTS_PER_BATCH:
            fail("the followers hold %d events for the primary, expected %d" % (pending_while_down, 10 * EVENTS_PER_BATCH))

        # 4. The primary is back; follower 1 is killed while telemetry flows to both.
        primary = Node(binary, primary_data, port=primary_port)
        stop = threading.Event()
        ports = [followers[0].port, followers[1].port]

        def poster(which):
            while not stop.is_set():
                if not telemetry.post(ports[which], admin):
                    # The follower is down or restarting: each refused connect uses up a batch's
                    # cells, so wait for it instead of spinning through them (CI ran out once).
                    time.sleep(0.02)

        posters = [threading.Thread(target=poster, args=(which,)) for which in (0, 0, 1, 1)]
        for thread in posters:
            thread.start()
        mid_forward = 0
        for kill in range(kills):
            time.sleep(rng.uniform(0.1, 1.2))
            followers[0].stop(signal.SIGKILL)
            if kill == kills // 2:
                # Dies right after the primary has counted a forward, before recording that.
                hook = dict(env, WAYMARK_TEST_KILL_AFTER_FORWARD="1")
                victim = Node(binary, data[0], *follow, seed=False, env=hook)
                ports[0] = victim.port
                victim.process.wait(timeout=30)
                mid_forward = -victim.process.returncode
            followers[0] = Node(binary, data[0], *follow, seed=False, env=env)
            ports[0] = followers[0].port
        stop.set()
        for thread in posters:
            thread.join()
        if FAILURES:
            fail(FAILURES[0])
        if mid_forward != signal.SIGKILL:
            fail("the kill-after-forward follower ended with %d, not SIGKILL" % mid_forward)

        # 5. Everything acknowledged reaches the primary, exactly once.
        for node in followers:
            wait_until("a follower to forward everything", lambda: ready(node.port)[1]["follower"]["eventsNotForwarded"] == 0, 30)
        result, problem = telemetry.verify(primary.port, admin)
        if problem:
            fail(problem)
        repeated = metric(primary.port, admin, "waymark_telemetry_forwards_repeated_total")
        if repeated < 1:
            fail("the primary never saw a repeated forward, so the kill after a forward tested nothing")
        acked, counted = result
        for node in followers + [primary]:
            node.stop()
            if node.process.returncode != 0:
                fail("a node exited %d on SIGTERM" % node.process.returncode)
        print("followers-test: a primary and 2 followers; revision 2 served by both followers %.2f s and %.2f s after the publish "
              "(poll interval %.1f s); with the primary stopped both kept serving it and took %d events; %d SIGKILLs of follower 1 "
              "(one between the primary counting a forward and the follower recording it: %d forward(s) repeated, counted once); "
              "%d batches acknowledged by followers, each counted exactly once on the primary (%d counted, %d in flight at a kill); %.0f s"
              % (lags[0], lags[1], INTERVAL, pending_while_down, kills + 1, repeated, acked, counted, counted - acked, time.time() - started))
    finally:
        for process in RUNNING:
            if process.poll() is None:
                process.kill()
                process.wait()
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
