#!/usr/bin/env python3
"""Three `waymark serve --database` nodes on one PostgreSQL (make test-postgres, under
Tests/Scripts/postgres.sh, which sets WAYMARK_TEST_DATABASE_URL).

  postgres-nodes.py WAYMARK [--rounds N] [--kills K] [--away S]

1. Changes on any node reach every node: N route changes and rollbacks, each made on a
   random node, each seen on all three nodes' manifests within the bound (the watcher's poll,
   2 s; by notification, far less), with the same bytes and ETag everywhere. Prints the
   slowest a change took to be everywhere.
2. SIGKILL during changes: K times, a random node is killed while changes go to it; every
   change it acknowledged (201) is on the others afterwards, and the killed node, restarted,
   serves the same manifest as the rest.
3. The database stopped for --away seconds (20) and started again: every node answers its
   manifest throughout (from memory), a change is 503 with Retry-After, and once the database
   is back every node takes changes again by itself (no node restarted), each on all three.
4. Moving: with the nodes stopped, `waymark migrate` copies the database into a data
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
from waymark_daemon import call, start  # noqa: E402

MANIFEST = "/v1/manifest?platform=ios&version=5.3.0"
BOUND = 2.5  # the watcher's poll (DatabaseWatcher.defaultPollInterval, 2 s), with room for a busy machine's scheduling


def fail(message):
    print("postgres-nodes: FAIL: " + message)
    sys.exit(1)


class Node:
    def __init__(self, binary, root, index, url, token=None):
        self.binary, self.index, self.url = binary, index, url
        self.data = os.path.join(root, "node%d" % index)
        self.token = token
        self.process = None
        self.port = 0

    def start(self, seed):
        env = dict(os.environ, WAYMARK_DATABASE_URL=self.url)
        process, token, port = start(self.binary, self.data, seed=seed, port=self.port, env=env)
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

        # 2. SIGKILL during changes.
        acknowledged = []
        for kill in range(arguments.kills):
            victim = rng.choice(nodes)
            stop = threading.Event()

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

            worker = threading.Thread(target=hammer)
            worker.start()
            time.sleep(rng.uniform(0.05, 0.3))
            victim.kill()
            stop.set()
            worker.join()
            victim.start(seed=False)
        # Every acknowledged change is in the routes every node serves.
        everywhere(nodes, lambda other: other.manifest()[1] == nodes[0].manifest()[1], "the last change")
        manifest, _ = nodes[0].manifest()
        missing = [route_id for route_id in acknowledged if ("/go/%s\"" % route_id).encode() not in manifest]
        if missing:
            fail("%d acknowledged change(s) lost after the kills, the first %r" % (len(missing), missing[:5]))
        same_manifest(nodes)
        print("postgres-nodes: %d SIGKILLs of random nodes during changes: all %d acknowledged changes on every node, none lost"
              % (arguments.kills, len(acknowledged)))

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

        # 4. Moving out of the database and into another.
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
        files = Node(binary, root, 9, url, token=nodes[0].token)
        files.data = moved
        process, _, port = start(binary, moved, seed=False)
        if port is None:
            fail("a daemon on the moved directory did not start: " + process.stderr.read()[-2000:])
        files.process, files.port = process, port
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
