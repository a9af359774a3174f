#!/usr/bin/env python3
"""Three `waymark serve --database` nodes on one PostgreSQL (make test-postgres, under
Tests/Scripts/postgres.sh, which sets WAYMARK_TEST_DATABASE_URL).

  postgres-nodes.py WAYMARK [--rounds N] [--kills K] [--away S]

1. Changes on any node reach every node: N route changes and rollbacks, each made on a
   random node, each seen on all three nodes' manifests within the bound (the watcher's poll,
   2 s; by notification, far less), with the same bytes and ETag everywhere. Prints the
   slowest a change took to be everywhere.
2. SIGKILL during changes and telemetry: K times, a random node is killed while changes and
   telemetry batches (each with its id) go to it; every change it acknowledged (201) is on
   the others afterwards, the killed node, restarted, serves the same manifest as the rest,
   and once every batch not acknowledged is sent again to another node (as a phone's journal
   does), the database's counts are exactly the acknowledged batches' (none lost, none
   counted twice).
3. The database stopped for --away seconds (20) and started again: every node answers its
   manifest throughout (from memory), a change is 503 with Retry-After, and once the database
   is back every node takes changes again by itself (no node restarted), each on all three.
4. The lease: the node holding it (`waymark_lease_held` in /metrics) is killed just before a
   schedule is due: another node takes the lease and fires it, once (one revision, and the
   killed node restarted fires nothing more). Then mid-rollout: after a look on a healthy
   candidate, the holder is killed; another node looks within the bound, and a candidate
   that starts failing after the kill (telemetry to the survivors only) is tripped.
5. Moving: with the nodes stopped, `waymark migrate` copies the database into a data
   directory and that directory into an empty database (each copy checked by the command);
   a file-store daemon on the directory and a node on the new database serve the manifest
   the nodes served, the same bytes and ETag.

The tokens are the database's: the first node makes the admin token, and it works on every node.
"""
import argparse
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

sys.path.insert(0, os.path.dirname(__file__))
from waymark_daemon import EXAMPLE, call, start  # noqa: E402

MANIFEST = "/v1/manifest?platform=ios&version=5.3.0"
BOUND = 2.5  # the watcher's poll (DatabaseWatcher.defaultPollInterval, 2 s), with room for a busy machine's scheduling
# The lease: a SIGKILLed holder's session ends with its socket, and another node tries every
# second (DatabaseLease.defaultTryInterval); the scheduler ticks each second, a look each
# --rollout-look-interval (1 s here). With room for a busy machine.
LEASE_BOUND = 5.0
# The guard's mechanics, not its caps (make test-guard has those): every install here posts
# from loopback, so the per-source caps and breadth are opened up.
GUARD = ["--guard-per-source", "1000", "--guard-per-network", "1000000", "--guard-installs", "2", "--guard-networks", "1",
         "--rollout-look-interval", "1"]


def fail(message):
    print("postgres-nodes: FAIL: " + message)
    sys.exit(1)


class Node:
    def __init__(self, binary, root, index, url, token=None, data=None):
        """`url` None: a file-store daemon on `data`."""
        self.binary, self.index, self.url = binary, index, url
        self.data = data or os.path.join(root, "node%d" % index)
        self.token = token
        self.process = None
        self.port = 0

    def start(self, seed):
        env = dict(os.environ, WAYMARK_DATABASE_URL=self.url) if self.url else None
        process, token, port = start(self.binary, self.data, *(GUARD if self.url else []), seed=seed, port=self.port, env=env)
        if port is None:
            process.kill()
            fail("node %d did not start: %s" % (self.index, process.stderr.read()[-2000:]))
        self.process, self.port = process, port
        self.token = self.token or token
        # Keep its output drained, so a full pipe never blocks it.
        threading.Thread(target=process.stdout.read, daemon=True).start()
        threading.Thread(target=process.stderr.read, daemon=True).start()

    def kill(self):
        self.process.send_signal(signal.SIGKILL)
        self.process.wait()

    def stop(self):
        if self.process and self.process.poll() is None:
            self.process.terminate()
            try:
                self.process.wait(timeout=10)
            except Exception:
                self.process.kill()

    def manifest(self):
        status, body, headers = call(self.port, self.token, "GET", MANIFEST)
        if status != 200:
            fail("node %d answered the manifest %d: %r" % (self.index, status, body[:300]))
        return body, headers.get("ETag")

    def put_route(self, route_id):
        route = {"patterns": ["/go/%s" % route_id], "destination": "home", "owner": "marketing"}
        return call(self.port, self.token, "PUT", "/v1/routes/" + route_id, route, timeout=10)

    def current(self):
        status, body, _ = call(self.port, self.token, "GET", "/v1/revisions")
        if status != 200:
            fail("node %d answered /v1/revisions %d" % (self.index, status))
        return json.loads(body)["current"]

    def revisions(self):
        status, body, _ = call(self.port, self.token, "GET", "/v1/revisions?limit=1000")
        if status != 200:
            fail("node %d answered /v1/revisions %d" % (self.index, status))
        return json.loads(body)

    def holds_lease(self):
        try:
            status, body, _ = call(self.port, self.token, "GET", "/metrics", timeout=5)
        except Exception:
            return False
        return status == 200 and b"\nwaymark_lease_held 1" in body

    def rollout(self):
        status, body, _ = call(self.port, self.token, "GET", "/v1/rollout")
        if status != 200:
            fail("node %d answered /v1/rollout %d: %r" % (self.index, status, body[:300]))
        return json.loads(body)

    def post_batch(self, batch):
        """The answer's status and whether it was a repeat; None if the node was not there."""
        try:
            status, body, _ = call(self.port, self.token, "POST", "/v1/telemetry", batch, timeout=10)
        except Exception:
            return None
        if status not in (202, 503):
            fail("node %d answered a batch %d: %r" % (self.index, status, body[:300]))
        if status == 503 and b"databaseUnavailable" not in body:
            fail("node %d answered a batch 503 for another reason than the database: %r" % (self.index, body[:300]))
        return status, status == 202 and b'"duplicate":true' in body


def psql(sql):
    result = subprocess.run([os.environ["WAYMARK_TEST_PSQL"], os.environ["WAYMARK_TEST_DATABASE_URL"], "-Atc", sql],
                            capture_output=True, text=True)
    if result.returncode != 0:
        fail("psql %r: %s" % (sql, result.stderr))
    return result.stdout.strip()


def iso(seconds):
    return time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(seconds))


def batch_of(rng, count):
    """A phone's batch with its id, `count` resolutions of one route in this minute."""
    return {"batch": "%032x" % rng.getrandbits(128), "client": {"platform": "ios", "appVersion": "5.3.0", "revision": 1},
            "events": [{"ts": iso(time.time() - 1), "entry": "scheme", "outcome": "proceed", "route": "product", "count": count}]}


def holder(nodes, what):
    """The one node holding the lease, waited for (at most LEASE_BOUND); never two."""
    began = time.monotonic()
    while time.monotonic() - began < LEASE_BOUND:
        holding = [node for node in nodes if node.process and node.process.poll() is None and node.holds_lease()]
        if len(holding) > 1:
            fail("%s: nodes %r all hold the lease" % (what, [node.index for node in holding]))
        if holding:
            return holding[0], time.monotonic() - began
        time.sleep(0.05)
    fail("%s: no node took the lease within %.1f s" % (what, LEASE_BOUND))


def everywhere(nodes, check, what):
    """Waits until `check(node)` holds on every node; the seconds it took."""
    began = time.monotonic()
    while True:
        if all(check(node) for node in nodes):
            return time.monotonic() - began
        if time.monotonic() - began > BOUND:
            states = [(node.index, node.current()) for node in nodes]
            fail("%s was not on every node within %.1f s (current revision per node: %r)" % (what, BOUND, states))
        time.sleep(0.01)


def same_manifest(nodes):
    seen = {node.manifest() for node in nodes}
    if len(seen) != 1:
        fail("the nodes serve different manifests: ETags %r" % sorted(etag for _, etag in seen))


def document(extra):
    with open(os.path.join(EXAMPLE, "routes.json")) as source:
        routes = json.load(source)
    routes["routes"].append(extra)
    return routes


def lease(nodes, rng):
    first, _ = holder(nodes, "at start")
    # A schedule due a second after its holder is killed.
    before = nodes[0].revisions()
    current = before["current"]
    due = int(time.time()) + 2
    status, body, _ = call(first.port, first.token, "POST", "/v1/schedules",
                           {"at": iso(due), "message": "due during the kill", "routes": document({"id": "scheduled", "patterns": ["/scheduled"], "destination": "home", "owner": "marketing"})},
                           {"If-Match": '"rev-%d"' % current})
    if status != 201:
        fail("a schedule was answered %d: %r" % (status, body[:300]))
    schedule = json.loads(body)["id"]
    first.kill()
    survivors = [node for node in nodes if node is not first]
    second, took = holder(survivors, "after the holder was killed")
    while True:
        status, body, _ = call(second.port, second.token, "GET", "/v1/schedules/%d" % schedule)
        item = json.loads(body)
        if item["status"] == "fired":
            break
        if item["status"] != "pending" or time.time() > due + LEASE_BOUND:
            fail("the schedule due during the kill is %r at %s" % (item["status"], iso(time.time())))
        time.sleep(0.05)
    fired_after = time.time() - due
    first.start(seed=False)
    time.sleep(2)  # the restarted node's scheduler has ticked: it must not fire again
    everywhere(nodes, lambda other: other.manifest()[1] == second.manifest()[1], "the scheduled revision")
    after = second.revisions()
    made = [revision for revision in after["revisions"] if revision["message"] == "due during the kill"]
    if len(made) != 1 or after["current"] != current + 1:
        fail("the schedule made %d revision(s); current went from %d to %d" % (len(made), current, after["current"]))
    print("postgres-nodes: lease: holder node %d killed 2 s before a schedule was due: node %d took the lease within %.0f ms "
          "and fired it %.1f s after its time, once (one revision; the killed node, restarted, fired nothing)"
          % (first.index, second.index, took * 1000, fired_after))

    # Mid-rollout: a candidate at 50 %, healthy until its holder is killed, failing after.
    current = after["current"]
    steps = [{"percent": 50, "minimumDuration": 3600, "minimumResolutions": 1000000}, {"percent": 100, "minimumDuration": 3600, "minimumResolutions": 1000000}]
    status, body, _ = call(second.port, second.token, "POST", "/v1/revisions",
                           {"message": "candidate", "routes": document({"id": "winter", "patterns": ["/sale/winter"], "destination": "home", "owner": "marketing"}),
                            "rollout": {"steps": steps}}, {"If-Match": '"rev-%d"' % current})
    if status != 201:
        fail("a rollout's publish was answered %d: %r" % (status, body[:300]))
    candidate = json.loads(body)["number"]
    installs = 60

    def round_(to, broken):
        for index in range(installs):
            cohort = index % 100 if index < installs // 2 else 50 + index % 50
            revision = candidate if cohort < 50 else current
            failed = 12 if broken and revision == candidate else 1
            events = [{"ts": iso(time.time() - 1), "entry": "universalLink", "outcome": "proceed", "route": "product", "count": 30 - failed},
                      {"ts": iso(time.time() - 1), "entry": "universalLink", "outcome": "notFound", "reason": "validationFailed", "route": "product", "count": failed}]
            batch = {"batch": "%032x" % rng.getrandbits(128), "events": events,
                     "client": {"platform": "ios", "appVersion": "5.3.0", "revision": revision, "cohort": cohort, "source": "%032x" % (index + 1)}}
            node = to[index % len(to)]
            answer = node.post_batch(batch)
            if not answer or answer[0] != 202:
                fail("a rollout batch to node %d was answered %r" % (node.index, answer))

    third, _ = holder(nodes, "mid-rollout")
    began = time.monotonic()
    while "checked" not in third.rollout().get("guard", {}):
        round_(nodes, broken=False)
        if time.monotonic() - began > 20:
            fail("the holder never looked at the healthy candidate: %r" % third.rollout())
        time.sleep(0.2)
    healthy = third.rollout()
    if healthy["status"] != "running":
        fail("the healthy candidate is %r before the kill: %r" % (healthy["status"], healthy.get("guard")))
    third.kill()
    killed = time.monotonic()
    survivors = [node for node in nodes if node is not third]
    fourth, _ = holder(survivors, "mid-rollout, after the holder was killed")
    looked = None
    while True:
        round_(survivors, broken=True)
        state = fourth.rollout()
        if looked is None and "checked" in state.get("guard", {}):
            looked = time.monotonic() - killed
        if state["status"] == "tripped":
            break
        if time.monotonic() - killed > 30:
            fail("the failing candidate was not tripped within 30 s of the kill: %r" % state)
        time.sleep(0.2)
    tripped = time.monotonic() - killed
    if looked is None or looked > LEASE_BOUND + 1:
        fail("the new holder first looked %r s after the kill (bound %.1f s)" % (looked, LEASE_BOUND + 1))
    third.start(seed=False)
    everywhere(nodes, lambda other: other.rollout()["status"] == "tripped", "the trip")
    print("postgres-nodes: lease: holder node %d killed mid-rollout: node %d looked %.1f s later (bound %.1f s) and tripped the candidate, "
          "failing only after the kill, %.1f s after it (guard: %s)" % (third.index, fourth.index, looked, LEASE_BOUND + 1, tripped,
                                                                      fourth.rollout().get("guard", {}).get("detail", "")))


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("waymark")
    parser.add_argument("--rounds", type=int, default=30)
    parser.add_argument("--kills", type=int, default=60)
    parser.add_argument("--away", type=float, default=20)
    arguments = parser.parse_args()
    url = os.environ.get("WAYMARK_TEST_DATABASE_URL")
    if not url:
        fail("WAYMARK_TEST_DATABASE_URL is not set (run under Tests/Scripts/postgres.sh)")
    binary = os.path.abspath(arguments.waymark)
    root = tempfile.mkdtemp(prefix="waymark-nodes-")
    nodes = [Node(binary, root, index, url) for index in range(3)]
    try:
        nodes[0].start(seed=True)
        if not nodes[0].token:
            fail("the first node printed no admin token")
        for node in nodes[1:]:
            node.token = nodes[0].token
            node.start(seed=False)
            if os.path.exists(os.path.join(node.data, "tokens.json")):
                fail("node %d keeps tokens of its own" % node.index)
        same_manifest(nodes)

        # 1. Changes on any node, seen everywhere.
        rng = random.Random(53)
        slowest = 0.0
        for round_ in range(arguments.rounds):
            node = rng.choice(nodes)
            if round_ % 5 == 4:
                base = node.current()
                status, body, _ = call(node.port, node.token, "POST", "/v1/revisions/1/rollback", {"message": "back"}, {"If-Match": '"rev-%d"' % base})
            else:
                status, body, _ = node.put_route("r%d" % round_)
            if status != 201:
                fail("a change on node %d was answered %d: %r" % (node.index, status, body[:300]))
            number = json.loads(body)["number"] if b'"number"' in body else None
            _, etag = node.manifest()
            slowest = max(slowest, everywhere(nodes, lambda other: other.manifest()[1] == etag, "revision %s from node %d" % (number, node.index)))
            same_manifest(nodes)
        print("postgres-nodes: %d changes on random nodes, each on all 3 within %.0f ms (bound %.1f s), the same bytes and ETag everywhere"
              % (arguments.rounds, slowest * 1000, BOUND))

        # 2. SIGKILL during changes and telemetry.
        acknowledged = []
        counted, unanswered = {}, []  # batch id -> count; batches to send again
        for kill in range(arguments.kills):
            victim = rng.choice(nodes)
            stop = threading.Event()

            def phone(node=victim, seed=kill):
                local = random.Random(seed)
                while not stop.is_set():
                    batch = batch_of(local, local.randint(1, 5))
                    answer = node.post_batch(batch)
                    if answer and answer[0] == 202:
                        counted[batch["batch"]] = batch["events"][0]["count"]
                    else:
                        unanswered.append(batch)
                        if answer is None:
                            return

            def hammer(node=victim, kill=kill):
                serial = 0
                while not stop.is_set():
                    route_id = "k%d-%d" % (kill, serial)
                    serial += 1
                    try:
                        status, _, _ = node.put_route(route_id)
                    except Exception:
                        return
                    if status == 201:
                        acknowledged.append(route_id)

            workers = [threading.Thread(target=hammer), threading.Thread(target=phone)]
            for worker in workers:
                worker.start()
            time.sleep(rng.uniform(0.05, 0.3))
            victim.kill()
            stop.set()
            for worker in workers:
                worker.join()
            victim.start(seed=False)
        # The phones send again what was not acknowledged, to any node: one that was
        # committed before its node died is answered as a repeat and counted once.
        repeats = 0
        for batch in unanswered:
            answer = rng.choice(nodes).post_batch(batch)
            if not answer or answer[0] != 202:
                fail("a batch sent again was answered %r" % (answer,))
            repeats += answer[1]
            counted[batch["batch"]] = batch["events"][0]["count"]
        total = int(psql("SELECT coalesce(sum(count), 0) FROM telemetry_counts") or 0)
        batches = int(psql("SELECT count(*) FROM telemetry_batches"))
        if total != sum(counted.values()) or batches != len(counted):
            fail("the database counts %d resolutions in %d batches; the phones had %d acknowledged in %d"
                 % (total, batches, sum(counted.values()), len(counted)))
        # Every acknowledged change is in the routes every node serves.
        everywhere(nodes, lambda other: other.manifest()[1] == nodes[0].manifest()[1], "the last change")
        manifest, _ = nodes[0].manifest()
        missing = [route_id for route_id in acknowledged if ("/go/%s\"" % route_id).encode() not in manifest]
        if missing:
            fail("%d acknowledged change(s) lost after the kills, the first %r" % (len(missing), missing[:5]))
        same_manifest(nodes)
        print("postgres-nodes: %d SIGKILLs of random nodes during changes and telemetry: all %d acknowledged changes on every node, none lost; "
              "%d batches counted exactly once (%d sent again after a kill or 503, %d of them repeats of a committed one)"
              % (arguments.kills, len(acknowledged), len(counted), len(unanswered), repeats))

        # 3. The database away.
        ctl = os.environ.get("WAYMARK_TEST_DATABASE_CTL")
        if not ctl:
            fail("WAYMARK_TEST_DATABASE_CTL is not set (run under Tests/Scripts/postgres.sh)")
        served, _ = nodes[0].manifest()
        subprocess.run([ctl, "stop"], check=True)
        began, reads, refused, slowest_refusal = time.monotonic(), 0, 0, 0.0
        while time.monotonic() - began < arguments.away:
            for node in nodes:
                body, _ = node.manifest()
                if body != served:
                    fail("node %d changed its manifest while the database was away" % node.index)
                reads += 1
            node = nodes[refused % 3]
            asked = time.monotonic()
            status, body, headers = node.put_route("away%d" % refused)
            slowest_refusal = max(slowest_refusal, time.monotonic() - asked)
            if status != 503 or "Retry-After" not in headers:
                fail("a change on node %d with the database away was answered %d %r (expected 503 with Retry-After)" % (node.index, status, body[:300]))
            refused += 1
            time.sleep(0.05)
        subprocess.run([ctl, "start"], check=True)
        back = time.monotonic()
        recovered = []
        for node in nodes:
            while True:
                status, body, _ = node.put_route("back%d" % node.index)
                if status == 201:
                    break
                if status != 503 or time.monotonic() - back > 10:
                    fail("node %d did not take changes within 10 s of the database's return (%d %r)" % (node.index, status, body[:300]))
                time.sleep(0.05)
            recovered.append(time.monotonic() - back)
        everywhere(nodes, lambda other: other.manifest()[1] == nodes[2].manifest()[1], "the changes after the database came back")
        manifest, _ = nodes[0].manifest()
        if not all(("/go/back%d\"" % index).encode() in manifest for index in range(3)):
            fail("a change made after the database came back is missing from the manifest")
        print("postgres-nodes: database stopped %.0f s: %d manifest reads all answered from memory, %d changes 503 with Retry-After (slowest %.0f ms); "
              "back: every node took changes again within %.0f ms, no node restarted" % (arguments.away, reads, refused, slowest_refusal * 1000, max(recovered) * 1000))

        # 4. The lease: the holder killed before a schedule is due, then mid-rollout.
        lease(nodes, rng)

        # 5. Moving out of the database and into another.
        served = nodes[0].manifest()
        for node in nodes:
            node.stop()
        moved = os.path.join(root, "moved")
        empty = os.environ.get("WAYMARK_TEST_EMPTY_DATABASE_URL")
        if not empty:
            fail("WAYMARK_TEST_EMPTY_DATABASE_URL is not set (run under Tests/Scripts/postgres.sh)")
        for source, target in ((url, moved), (moved, empty)):
            result = subprocess.run([binary, "migrate", "--from", source, "--to", target], capture_output=True, text=True)
            if result.returncode != 0:
                fail("waymark migrate to %s: exit %d: %s" % ("the empty database" if target == empty else "a directory", result.returncode, result.stderr))
            print("postgres-nodes: migrate: " + result.stdout.strip())
        again = subprocess.run([binary, "migrate", "--from", moved, "--to", empty], capture_output=True, text=True)
        if again.returncode != 3 or "not empty" not in again.stderr:
            fail("a second move into the same database was not refused: exit %d %r" % (again.returncode, again.stderr))
        files = Node(binary, root, 9, None, token=nodes[0].token, data=moved)
        files.start(seed=False)
        moved_in = Node(binary, root, 8, empty, token=nodes[0].token)
        moved_in.start(seed=False)
        try:
            for copy in (files, moved_in):
                if copy.manifest() != served:
                    fail("the store moved to %s serves another manifest than the nodes did" % ("a directory" if copy is files else "the empty database"))
        finally:
            files.stop()
            moved_in.stop()
        print("postgres-nodes: the store moved out of the database and into another serves the same manifest bytes and ETag, with the same token")
    finally:
        for node in nodes:
            node.stop()
        shutil.rmtree(root, ignore_errors=True)


if __name__ == "__main__":
    main()
