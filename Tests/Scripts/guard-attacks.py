#!/usr/bin/env python3
"""make test-guard: the attacks on the telemetry Waymark acts on, replayed against a live
daemon whose clock the test moves (`serve --clock-file`), with the guard's defaults (25
installs and 10 networks for a trip, 5 resolutions an install and 50 a network a day).

The fleet: 30,000 installs with random install ids (cohort, and the day's source key, made
as the client library makes them), two builds, spread over 200 networks — each posts from
loopback addresses of its own (127.0.N.2, one /24 each). Each round the clock moves 2
minutes and 1,200 of them post one batch each of how their links resolved (3 % fail), some
with the shape of an unknown link they followed.

  1. A healthy candidate walks 1 -> 10 -> 50 -> 100 % while, every round, an attacker on one
     address lands 600 links as an iPhone, posts forged failure claims for the candidate
     (1,000 a batch, random source keys), a count of 5,000 (refused, 400), events in old
     hours with every combination of names (the cell table's old half fills), one batch of
     1,000 chosen shapes with count 1,000 each, and 2,000 random-word links: the rollout
     completes; the guard never says "0 resolutions" while phones post; the present's
     minute cells keep their route names; the real shapes stay on top of the unknown links,
     with their suggestion, and nothing of the attacker's words is suggested, not even a
     shape close to a route (`/products/:param`) offered under 8 made-up source keys.
  2. A candidate that breaks `product` on 5.3.0 (40 %) while the attacker posts 1,000
     forged successes for it every round trips at its first step, 1 %.
  3. A candidate that breaks `product` on 5.3.0 at 20 % while 20 attacker networks post their
     day's share of stable failures for that route and build trips at its first step, 10 %.
  4. `Tests/Scripts/guard-reference.py --check`: the exact p-values in the guard's Swift
     table equal the Python reference's.

Usage: guard-attacks.py WAYMARK_BINARY
"""
import datetime
import hashlib
import http.client
import json
import os
import random
import re
import shutil
import socket
import subprocess
import sys
import tempfile
import time
import uuid

sys.path.insert(0, os.path.dirname(__file__))
import waymark_daemon  # noqa: E402
from waymark_daemon import iso  # noqa: E402

INSTALLS = 30_000
NETWORKS = 200
PER_ROUND = 1_200
ROUND = 120
BUILDS = ["5.2.0", "5.3.0"]
REAL_SHAPES = ["/spring/deals", "/summer/deals"]
# Close to the example's product route: 3 sources would get it suggested as /products/:id.
STEERED = "/products/:param"


def fail(message):
    print("guard-attacks: FAIL: " + message)
    sys.exit(1)




class Daemon:
    def __init__(self, binary, scratch):
        self.clock_file = os.path.join(scratch, "clock")
        self.set_clock(int(time.time()))
        self.process, self.token, self.port = waymark_daemon.start(
            binary, os.path.join(scratch, "data"), "--clock-file", self.clock_file, "--rollout-look-interval", "1",
            "--telemetry-max-cells", "20000")
        if not self.port or not self.token:
            fail("the daemon did not start")

    def set_clock(self, seconds):
        self.now = seconds
        with open(self.clock_file + ".tmp", "w") as out:
            out.write("%d\n" % seconds)
        os.replace(self.clock_file + ".tmp", self.clock_file)

    def call(self, method, path, body=None, headers=None):
        status, payload, _ = waymark_daemon.call(self.port, self.token, method, path, body, headers)
        return status, (json.loads(payload) if payload and payload[:1] in (b"{", b"[") else payload)

    def stop(self):
        self.process.terminate()
        try:
            self.process.wait(timeout=15)
        except subprocess.TimeoutExpired:
            self.process.kill()


class Connection:
    """Kept-alive requests from one source address."""

    def __init__(self, port, address, token):
        self.port, self.address, self.token = port, address, token
        self.connection = None

    def post(self, path, body, headers=None):
        data = json.dumps(body).encode()
        all_headers = {"Authorization": "Bearer " + self.token, "Content-Type": "application/json"}
        all_headers.update(headers or {})
        return self.request("POST", path, data, all_headers)

    def request(self, method, path, data, headers):
        for attempt in range(2):
            if self.connection is None:
                self.connection = http.client.HTTPConnection("127.0.0.1", self.port, timeout=30, source_address=(self.address, 0))
            try:
                self.connection.request(method, path, body=data, headers=headers)
                response = self.connection.getresponse()
                return response.status, response.read()
            except (ConnectionError, http.client.HTTPException, OSError):
                self.connection.close()
                self.connection = None
                if attempt:
                    raise
        return 0, b""


def pipelined(port, address, token, path, bodies):
    """POSTs every body on one new connection from `address`, all sent before any answer is
    read (HTTP/1.1 pipelining; the server answers in order): the (status, body) answers.
    A phone posts one batch at a time; the fleet's many phones are played this way so a
    round costs the test little more than the server's work."""
    out = b"".join(b"POST %s HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: Bearer %s\r\nContent-Type: application/json\r\n"
                   b"Content-Length: %d\r\n\r\n%s" % (path.encode(), token.encode(), len(body), body) for body in bodies)
    connection = socket.create_connection(("127.0.0.1", port), timeout=30, source_address=(address, 0))
    connection.sendall(out)
    return connection, len(bodies)


def answers(pending):
    """Reads the answers `pipelined` left pending on its connection, then closes it."""
    connection, count = pending
    received, results = b"", []
    try:
        while len(results) < count:
            end = received.find(b"\r\n\r\n")
            if end >= 0:
                head = received[:end].decode("latin-1")
                length = int(re.search(r"(?im)^content-length:\s*(\d+)", head).group(1)) if "ontent-" in head else 0
                if len(received) >= end + 4 + length:
                    results.append((int(head.split(" ", 2)[1]), received[end + 4:end + 4 + length]))
                    received = received[end + 4 + length:]
                    continue
            chunk = connection.recv(65536)
            if not chunk:
                fail("a pipelined connection closed after %d of %d answers" % (len(results), count))
            received += chunk
    finally:
        connection.close()
    return results


class Fleet:
    def __init__(self, daemon, seed):
        self.daemon = daemon
        self.random = random.Random(seed)
        self.installs = []
        for index in range(INSTALLS):
            install_id = str(uuid.UUID(int=self.random.getrandbits(128), version=4)).upper()
            cohort = int(uuid.UUID(install_id).hex[:8], 16) % 100  # docs/rollouts.md: the first 32 bits, modulo 100
            self.installs.append({"id": install_id, "cohort": cohort, "build": BUILDS[index % 2],
                                  "network": self.random.randrange(NETWORKS)})

    @staticmethod
    def source(install, now):
        day = datetime.datetime.fromtimestamp(now, datetime.timezone.utc).strftime("%Y-%m-%d")
        return hashlib.sha256(("waymark-source/1|%s|%s" % (install["id"], day)).encode()).digest()[:16].hex()

    def round(self, rollout, broken=None, broken_rate=0.40):
        """One round: a sample of installs each posts one batch for the revision it is served."""
        ts = iso(self.daemon.now - 30)
        by_network = {}
        for install in self.random.sample(self.installs, PER_ROUND):
            on_candidate = rollout["status"] in ("running", "paused") and install["cohort"] < rollout["percent"]
            revision = rollout["candidate"] if on_candidate or rollout["status"] == "completed" else rollout["stable"]
            product_rate = broken_rate if broken and on_candidate and install["build"] == broken else 0.03
            events = []
            for route, rate in (("product", product_rate), ("home", 0.03), ("category", 0.03)):
                failed = self.random.random() < rate
                event = {"ts": ts, "entry": "universalLink", "outcome": "notFound" if failed else "proceed", "route": route}
                if failed:
                    event["reason"] = "validationFailed"
                events.append(event)
            if self.random.random() < 0.05:
                events.append({"ts": ts, "entry": "universalLink", "outcome": "notFound", "reason": "unknownRoute",
                               "shape": self.random.choice(REAL_SHAPES)})
            batch = {"batch": uuid.uuid4().hex, "events": events,
                     "client": {"platform": "ios", "appVersion": install["build"], "revision": revision,
                                "cohort": install["cohort"], "source": self.source(install, self.daemon.now)}}
            by_network.setdefault(install["network"], []).append(json.dumps(batch).encode())
        # Each network's batches in order on one connection, every network's sent before any
        # answer is read.
        pending = [pipelined(self.daemon.port, "127.0.%d.2" % (network + 1), self.daemon.token, "/v1/telemetry", bodies)
                   for network, bodies in sorted(by_network.items())]
        posted = 0
        for connection in pending:
            for status, body in answers(connection):
                if status != 202:
                    fail("a phone's batch answered %d: %s" % (status, body[:300]))
                posted += 1
        return posted


class Attacker:
    """Everything from one address, 127.0.0.1, with the app's token (it ships in the binary)."""

    def __init__(self, daemon):
        self.daemon = daemon
        self.connection = Connection(daemon.port, "127.0.0.1", daemon.token)
        self.random = random.Random(99)
        self.cells_filled = False

    def land(self, count, path=None):
        agent = "Mozilla/5.0 (iPhone; CPU iPhone OS 17_4 like Mac OS X)"
        for _ in range(count):
            target = path or "/%s/%s" % (self.word(), self.word())
            status, _ = self.connection.request("GET", target, None, {"Host": "storefront.example", "User-Agent": agent})
            if status not in (200, 302, 404):  # 200: an iPhone's hand-off page
                fail("a landing answered %d" % status)

    def word(self):
        return "".join(self.random.choice("abcdefghijklmnopqrstuvwxyz") for _ in range(self.random.randint(4, 9)))

    def forged(self, rollout, outcome):
        ts = iso(self.daemon.now - 30)
        event = {"ts": ts, "entry": "universalLink", "outcome": outcome, "route": "product", "count": 1_000}
        if outcome == "notFound":
            event["reason"] = "validationFailed"
        for _ in range(5):
            body = {"client": {"platform": "ios", "appVersion": "5.3.0", "revision": rollout["candidate"], "cohort": 0,
                               "source": "%032x" % self.random.getrandbits(128)}, "events": [event]}
            status, answer = self.connection.post("/v1/telemetry", body)
            if status != 202:
                fail("a forged batch answered %d: %s" % (status, answer[:200]))
        event = dict(event, count=5_000)
        status, answer = self.connection.post("/v1/telemetry", {"client": {"platform": "ios", "appVersion": "5.3.0", "revision": 1}, "events": [event]})
        if status != 400 or b"countTooLarge" not in answer:
            fail("a count of 5,000 answered %d: %s" % (status, answer[:200]))

    def fill_cells(self):
        """Events in old hours with every combination the vocabulary has: the cell table's old half."""
        if self.cells_filled:
            return
        self.cells_filled = True
        routes = ["product", "home", "category", "search", "orders", "order-detail", "cart", "promo-code", "spring-sale", "new-arrivals"]
        entries = ["universalLink", "scheme", "push", "inApp"]
        for hour in range(1, 400):
            ts = iso(self.daemon.now - 3_600 * hour)
            events = [{"ts": ts, "entry": entry, "outcome": "proceed", "route": route} for route in routes for entry in entries]
            for version in BUILDS:
                body = {"client": {"platform": "ios", "appVersion": version, "revision": 1}, "events": events}
                status, answer = self.connection.post("/v1/telemetry", body)
                if status != 202:
                    fail("an old batch answered %d: %s" % (status, answer[:200]))

    def steer(self, shape):
        """One shape close to a route, offered under 8 made-up source keys from one address."""
        for _ in range(8):
            event = {"ts": iso(self.daemon.now - 30), "entry": "universalLink", "outcome": "notFound", "reason": "unknownRoute",
                     "shape": shape}
            status, answer = self.connection.post("/v1/telemetry", {"client": {"platform": "ios", "appVersion": "5.3.0", "revision": 1,
                                                                                "source": "%032x" % self.random.getrandbits(128)},
                                                                     "events": [event]})
            if status != 202:
                fail("a steering batch answered %d: %s" % (status, answer[:200]))

    def wipe_shapes(self):
        events = [{"ts": iso(self.daemon.now - 30), "entry": "universalLink", "outcome": "notFound", "reason": "unknownRoute",
                   "shape": "/attacker/%s" % self.word(), "count": 1_000} for _ in range(1_000)]
        status, answer = self.connection.post("/v1/telemetry", {"client": {"platform": "ios", "appVersion": "5.3.0", "revision": 1,
                                                                            "source": "%032x" % 7}, "events": events})
        if status != 400 or b"batchTooLarge" not in answer:
            fail("1,000 shapes x 1,000 answered %d: %s" % (status, answer[:200]))
        for event in events:
            event["count"] = 1
        status, answer = self.connection.post("/v1/telemetry", {"client": {"platform": "ios", "appVersion": "5.3.0", "revision": 1,
                                                                            "source": "%032x" % 7}, "events": events})
        if status != 202:
            fail("1,000 chosen shapes answered %d: %s" % (status, answer[:200]))


class StableForger:
    """Attacker networks 127.1.N.0/24 (N = 1 .. networks), the app's token: each posts its
    network's day of stable evidence (50: 10 made-up installs of 5), every claim a failure of
    `product` on 5.3.0, to raise the baseline a broken candidate is judged against."""

    def __init__(self, daemon, networks):
        self.daemon = daemon
        self.connections = [Connection(daemon.port, "127.1.%d.2" % (index + 1), daemon.token) for index in range(networks)]
        self.random = random.Random(31)

    def forge(self, rollout):
        ts = iso(self.daemon.now - 30)
        event = {"ts": ts, "entry": "universalLink", "outcome": "notFound", "reason": "validationFailed", "route": "product", "count": 5}
        for connection in self.connections:
            for _ in range(10):
                body = {"client": {"platform": "ios", "appVersion": "5.3.0", "revision": rollout["stable"], "cohort": 99,
                                   "source": "%032x" % self.random.getrandbits(128)}, "events": [event]}
                status, answer = connection.post("/v1/telemetry", body)
                if status != 202:
                    fail("a forged stable batch answered %d: %s" % (status, answer[:200]))


def rollout_state(daemon):
    status, state = daemon.call("GET", "/v1/rollout")
    if status != 200:
        fail("GET /v1/rollout answered %d" % status)
    return state


def looked(daemon):
    """The rollout once the primary has looked at the clock's present: moving the clock a
    second (the look interval) brings a look at once (`--clock-file`), which sees
    everything posted before it."""
    daemon.set_clock(daemon.now + 1)
    deadline = time.time() + 20
    while time.time() < deadline:
        state = rollout_state(daemon)
        checked = state.get("guard", {}).get("checked")
        if state["status"] not in ("running", "paused") or (checked and checked >= iso(daemon.now)):
            return state
        time.sleep(0.05)
    fail("no look within 20 s")


def publish(daemon, route_id, rollout=None):
    with open(os.path.join(waymark_daemon.EXAMPLE, "routes.json")) as source:
        document = json.load(source)
    document["routes"].append({"id": route_id, "patterns": ["/%s" % route_id], "destination": "home"})
    _, revisions = daemon.call("GET", "/v1/revisions")
    status, answer = daemon.call("POST", "/v1/revisions", {"message": route_id, "routes": document, "rollout": rollout or {}},
                                 {"If-Match": '"rev-%d"' % revisions["current"]})
    if status != 201:
        fail("publishing %s: %d %s" % (route_id, status, answer))


def healthy_walk(daemon, fleet, attacker):
    publish(daemon, "healthy")
    state = rollout_state(daemon)
    percents, rounds, landed = [state["percent"]], 0, 0
    while state["status"] == "running" and rounds < 60:
        daemon.set_clock(daemon.now + ROUND)
        rounds += 1
        attacker.land(600, "/product/xyz")
        landed += 600
        attacker.forged(state, "notFound")
        attacker.fill_cells()
        attacker.wipe_shapes()
        attacker.land(200)
        fleet.round(state)
        state = looked(daemon)
        guard = state.get("guard", {})
        if state["status"] == "running" and "0 resolutions" in guard.get("detail", "") and guard["candidate"]["resolutions"] == 0:
            fail("the guard says 0 resolutions while phones post: %s" % guard)
        if state["percent"] != percents[-1]:
            percents.append(state["percent"])
    if state["status"] != "completed":
        fail("the healthy candidate did not complete in %d rounds: %s" % (rounds, json.dumps(state)[:800]))
    refused = state["guard"]["refused"]
    print("guard-attacks: healthy candidate %d went %s in %d rounds and completed, with %d iPhone landings, forged failures "
          "(refused as evidence: %d past a network's share, %d past an install's), old events and shape floods beside it"
          % (state["candidate"], " -> ".join("%d%%" % p for p in percents), rounds, landed, refused["perNetwork"], refused["perSource"]))
    if refused["perNetwork"] == 0:
        fail("the forged claims were not capped: %s" % refused)


def present_is_not_blind(daemon):
    status, counts = daemon.call("GET", "/v1/telemetry/counts?from=%s&to=%s&groupBy=route" % (iso(daemon.now - 600), iso(daemon.now + 60)))
    if status != 200:
        fail("counts answered %d" % status)
    routes = {group["key"]["route"]: group["total"] for group in counts["groups"]}
    if routes.get("product", 0) == 0 or routes.get("other", 0) > routes.get("product", 0):
        fail("the present's minutes lost their route names: %s" % routes)
    metrics = waymark_daemon.call(daemon.port, daemon.token, "GET", "/metrics")[1].decode()
    late = next(line for line in metrics.splitlines() if line.startswith("waymark_telemetry_events_late_total"))
    print("guard-attacks: the last 10 minutes by route keep their names (product %d, other %d) after the old-hours flood (%s)"
          % (routes.get("product", 0), routes.get("other", 0), late))


def unknown_links_hold(daemon, attacker):
    attacker.steer(STEERED)
    status, listing = daemon.call("GET", "/v1/telemetry/unknown-links?limit=200")
    if status != 200:
        fail("unknown-links answered %d" % status)
    top = [shape["shape"] for shape in listing["shapes"][:2]]
    if sorted(top) != sorted(REAL_SHAPES):
        fail("the real shapes are not on top: %s" % json.dumps(listing["shapes"][:4]))
    for shape in listing["shapes"]:
        if (shape["shape"].startswith("/attacker") or shape["shape"] == STEERED) and shape["suggestion"] is not None:
            fail("an attacker's shape got a suggestion: %s" % shape)
    steered = [shape for shape in listing["shapes"] if shape["shape"] == STEERED]
    if len(steered) != 1 or steered[0]["sources"] != 1:
        fail("the shape one address offered under 8 source keys: %s" % steered)
    print("guard-attacks: unknown links: %s on top (%s sources each), %d shapes refused past a source's or network's allowance; "
          "%s offered under 8 source keys from one address: %d source, no suggestion"
          % (top, [shape["sources"] for shape in listing["shapes"][:2]], listing["refused"], STEERED, steered[0]["sources"]))


def broken_candidate(daemon, fleet, attacker):
    publish(daemon, "broken")
    state = rollout_state(daemon)
    rounds = 0
    while state["status"] == "running" and rounds < 30:
        daemon.set_clock(daemon.now + ROUND)
        rounds += 1
        attacker.forged(state, "proceed")
        fleet.round(state, broken="5.3.0")
        state = looked(daemon)
    if state["status"] != "tripped" or state["percent"] != 1:
        fail("the broken candidate was not stopped at 1 %%: %s" % json.dumps(state)[:800])
    print("guard-attacks: broken candidate %d tripped at 1%% in round %d under forged successes: %s"
          % (state["candidate"], rounds, state["findings"][0]["text"]))


def hidden_break(daemon, fleet):
    """A candidate that fails product on 5.3.0 at 20 % (against 3 %), rolled out 10 % -> 100 %,
    while 20 attacker networks (10 % as many as the fleet's) fill the stable side of that cell
    with failures."""
    steps = [{"percent": 10, "minimumDuration": 600, "minimumResolutions": 200},
             {"percent": 100, "minimumDuration": 600, "minimumResolutions": 200}]
    publish(daemon, "hidden", {"steps": steps})
    forger = StableForger(daemon, 20)
    state = rollout_state(daemon)
    rounds, percents = 0, [state["percent"]]
    while state["status"] == "running" and rounds < 40:
        daemon.set_clock(daemon.now + ROUND)
        rounds += 1
        forger.forge(state)
        fleet.round(state, broken="5.3.0", broken_rate=0.20)
        state = looked(daemon)
        if state["percent"] != percents[-1]:
            percents.append(state["percent"])
    if state["status"] != "tripped" or state["percent"] > 10:
        fail("a 20 %% break under forged stable failures from 20 networks was not stopped at 10 %% (%s): %s"
             % (" -> ".join("%d%%" % p for p in percents), json.dumps(state)[:800]))
    stable = state["guard"]["stable"]
    print("guard-attacks: a 20 %% break under stable failures forged from 20 networks (stable evidence %d resolutions, %d failures) "
          "went %s and tripped in round %d: %s"
          % (stable["resolutions"], stable["failures"], " -> ".join("%d%%" % p for p in percents), rounds, state["findings"][0]["text"]))


def main():
    binary = sys.argv[1]
    started = time.time()
    reference = subprocess.run([sys.executable, os.path.join(os.path.dirname(__file__), "guard-reference.py"), "--check",
                                os.path.join(waymark_daemon.ROOT, "Tests", "RolloutTests", "RolloutGuardTests.swift")],
                               capture_output=True, text=True)
    print(reference.stdout.strip())
    if reference.returncode != 0:
        fail("the Swift table's p-values differ from the Python reference")
    scratch = tempfile.mkdtemp(prefix="waymark-guard-")
    daemon = Daemon(binary, scratch)
    try:
        fleet = Fleet(daemon, 5)
        attacker = Attacker(daemon)
        healthy_walk(daemon, fleet, attacker)
        present_is_not_blind(daemon)
        unknown_links_hold(daemon, attacker)
        broken_candidate(daemon, fleet, attacker)
        hidden_break(daemon, fleet)
        print("guard-attacks: ok in %.0f s" % (time.time() - started))
    finally:
        daemon.stop()
        shutil.rmtree(scratch, ignore_errors=True)


if __name__ == "__main__":
    main()
