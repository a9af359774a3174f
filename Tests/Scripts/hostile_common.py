"""What the attacks of hostile.py share: the daemon fixture (`Daemon`), HTTP calls, tokens,
readings of RSS and metrics, the payloads several attacks send, and `timed`, which keeps each
attack's seconds. Each attack is a file of its own in attacks/, importing all of this."""
import http.client
import itertools
import json
import random
import os
import re
import resource
import signal
import socket
import subprocess
import sys
import tempfile
import threading
import time
import urllib.parse
import waymark_daemon
from waymark_daemon import iso, peak_mb  # noqa: E402
from waymark_daemon import call, rss_mb

EXAMPLE = waymark_daemon.EXAMPLE


def fail(message):
    print("hostile: FAIL: " + message, file=sys.stderr)
    sys.exit(1)


def json_of(payload):
    try:
        return json.loads(payload)
    except ValueError:
        return None




def token(binary, data, name, *scopes, rate=None):
    command = [binary, "token", "create", "--data-dir", data, "--name", name]
    for scope in scopes:
        command += ["--scope", scope]
    if rate is not None:
        command += ["--rate", str(rate)]
    created = subprocess.run(command, capture_output=True, text=True)
    if created.returncode != 0:
        fail("token create %s: %s" % (name, created.stderr))
    return created.stdout.strip()


class Daemon:
    def __init__(self, binary, data, *arguments):
        self.process, self.admin, self.port = waymark_daemon.start(binary, data, "--threads", "2", *arguments)
        if self.port is None:
            self.process.kill()
            fail("the daemon did not start:\n" + self.process.stderr.read())
        threading.Thread(target=self.process.stdout.read, daemon=True).start()
        threading.Thread(target=self.process.stderr.read, daemon=True).start()

    def alive(self):
        return self.process.poll() is None

    def stop(self):
        self.process.send_signal(signal.SIGTERM)
        self.process.wait(timeout=30)

    def metric(self, name):
        status, body, _ = call(self.port, self.admin, "GET", "/metrics")
        match = re.search(r"^%s (\S+)$" % re.escape(name), body.decode(), re.M)
        return float(match.group(1)) if match else None


def moved_clock(path):
    """A function that sets the clock a daemon reads with `--clock-file path` (written
    whole, then renamed into place, so the daemon never reads half a number)."""
    def set_clock(seconds):
        with open(path + ".tmp", "w") as out:
            out.write("%d\n" % seconds)
        os.replace(path + ".tmp", path)
    return set_clock




def calendar(count):
    base = int(time.time()) - 86_400
    routes = json.load(open(os.path.join(EXAMPLE, "routes.json")))
    for index in range(count):
        start = base + index * 3_600
        routes["routes"].append({"id": "deal-%d" % index, "patterns": ["/deal/:code"], "destination": "promo",
                                 "validFrom": iso(start), "validUntil": iso(start + 14 * 86_400), "owner": "marketing"})
    routes["routes"].append({"id": "deal", "patterns": ["/deal/:code"], "destination": "promo", "owner": "marketing"})
    return routes


def audit_after_stop(data, flood):
    entries = [json.loads(line) for line in open(os.path.join(data, "audit.log"))]
    added = len(entries) - flood["lines_before"]
    refused = [entry for entry in entries if entry.get("outcome") == "refused" and entry.get("action") == "publish"]
    counted = sum(entry.get("count", 1) for entry in refused)
    if flood["lines_during"] > 12:
        fail("the audit log grew by %d lines during the flood" % flood["lines_during"])
    if counted < flood["refusals"]:
        fail("the audit log counts %d refused publishes; the flood made %d" % (counted, flood["refusals"]))
    print("hostile: audit log under the flood: %d lines written while it ran, %d in all after SIGTERM, counting %d refused "
          "publishes (the flood's %d), %d bytes in all" % (flood["lines_during"], added, counted, flood["refusals"],
                                                          os.path.getsize(os.path.join(data, "audit.log"))))


def run_for(threads, seconds, stop):
    """Starts `threads`, lets them run `seconds`, sets `stop` and joins them; the seconds they ran."""
    started = time.monotonic()
    for thread in threads:
        thread.start()
    time.sleep(seconds)
    stop.set()
    for thread in threads:
        thread.join()
    return time.monotonic() - started


def ask_until(port, target, bearer, stop, tally, lock):
    """GET `target` with a bearer token on one keep-alive connection until `stop` is set,
    counting the answers in `tally`: 200 and 429 by number, any other status listed under
    "other"."""
    import http.client
    connection = http.client.HTTPConnection("127.0.0.1", port, timeout=60)
    while not stop.is_set():
        connection.request("GET", target, headers={"Authorization": "Bearer " + bearer})
        response = connection.getresponse()
        response.read()
        with lock:
            if response.status in (200, 429):
                tally[response.status] += 1
            else:
                tally["other"].append(response.status)
    connection.close()


def open_head(port, address, text):
    """A connection from `address` (any 127/8 address is loopback) that sent `text`."""
    connection = socket.socket()
    connection.bind((address, 0))
    connection.settimeout(5)
    connection.connect(("127.0.0.1", port))
    connection.sendall(text.encode())
    return connection


def first_line(connection, wait):
    """The status line the daemon answered on `connection` within `wait` seconds, or ""."""
    connection.settimeout(wait)
    received = b""
    try:
        while b"\r\n" not in received:
            chunk = connection.recv(256)
            if not chunk:
                break
            received += chunk
    except OSError:
        pass
    return received.split(b"\r\n", 1)[0].decode(errors="replace")


def data_mib(data):
    """The bytes of every file under a data directory, in MiB."""
    return sum(os.path.getsize(os.path.join(root, name)) for root, _, names in os.walk(data) for name in names) / 1048576


# 24 -----------------------------------------------------------------------------------------
def telemetry_flood(port, fleet, flooders, phones, seconds=6):
    """The app's token spent by flooders, one connection each, as fast as they can, while
    installs post a batch every 2 s, for `seconds`. Each flooder and install is a function
    of its request's count giving the (source address, X-Forwarded-For) it posts from,
    None for the default. The seconds run, the flood's tally (accepted, 429 over the peer's
    share, 429 over the token's rate, any other status) and the installs' (accepted,
    refused statuses)."""
    import uuid
    stop = threading.Event()
    flood = {"accepted": 0, "share": 0, "rate": 0, "other": []}
    installs = {"accepted": 0, "refused": []}
    lock = threading.Lock()

    def post(connection, forwarded):
        batch = json.dumps({"batch": uuid.uuid4().hex, "client": {"platform": "ios", "appVersion": "5.3.0", "revision": 1},
                            "events": [{"ts": iso(int(time.time()) - 30), "entry": "scheme", "outcome": "proceed", "route": "product"}]})
        headers = {"Authorization": "Bearer " + fleet, "Content-Type": "application/json"}
        if forwarded:
            headers["X-Forwarded-For"] = forwarded
        connection.request("POST", "/v1/telemetry", body=batch, headers=headers)
        response = connection.getresponse()
        return response, response.read()

    def flooder(where):
        connection, source = None, None
        for count in itertools.count():
            if stop.is_set():
                break
            address, forwarded = where(count)
            try:
                if connection is None or address != source:
                    connection = http.client.HTTPConnection("127.0.0.1", port, timeout=30,
                                                            source_address=(address, 0) if address else None)
                    source = address
                response, answer = post(connection, forwarded)
                with lock:
                    if response.status == 202:
                        flood["accepted"] += 1
                    elif response.status == 429 and b"over its share" in answer:
                        flood["share"] += 1
                    elif response.status == 429:
                        flood["rate"] += 1
                    else:
                        flood["other"].append(response.status)
                if response.getheader("Connection", "").lower() == "close":
                    connection.close()
                    connection = None
            except (OSError, http.client.HTTPException):
                connection = None

    def install(where):
        for count in itertools.count():
            if stop.is_set():
                break
            address, forwarded = where(count)
            connection = http.client.HTTPConnection("127.0.0.1", port, timeout=30, source_address=(address, 0) if address else None)
            response, _ = post(connection, forwarded)
            connection.close()
            with lock:
                if response.status == 202:
                    installs["accepted"] += 1
                else:
                    installs["refused"].append(response.status)
            stop.wait(2)

    threads = [threading.Thread(target=flooder, args=(where,)) for where in flooders]
    threads += [threading.Thread(target=install, args=(where,)) for where in phones]
    return run_for(threads, seconds, stop), flood, installs


def cpu_seconds(pid):
    with open("/proc/%d/stat" % pid) as stat:
        fields = stat.read().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def silent_listener(stop):
    """A TCP listener on loopback that accepts and never sends a byte: (port, thread)."""
    server = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    server.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    server.bind(("127.0.0.1", 0))
    server.listen(1024)
    server.settimeout(0.2)
    held = []

    def accept():
        while not stop.is_set():
            try:
                held.append(server.accept()[0])
            except socket.timeout:
                continue
        for connection in held:
            connection.close()
        server.close()

    thread = threading.Thread(target=accept, daemon=True)
    thread.start()
    return server.getsockname()[1], thread


def threads_of(pid):
    with open("/proc/%d/status" % pid) as status:
        return next(int(line.split()[1]) for line in status if line.startswith("Threads:"))


SECONDS = {}


def timed(attack, *arguments):
    """Runs one attack, keeping its wall-clock seconds for the summary (`make test`'s time)."""
    started = time.monotonic()
    try:
        return attack(*arguments)
    finally:
        SECONDS[attack.__name__] = SECONDS.get(attack.__name__, 0) + time.monotonic() - started


# 36 -----------------------------------------------------------------------------------------
def guard_module():
    """Tests/Scripts/guard-attacks.py (make test-guard) as a module: its fleet, its daemon
    with a clock the test moves, its looks."""
    import importlib.util
    spec = importlib.util.spec_from_file_location("guard_attacks", os.path.join(os.path.dirname(__file__), "guard-attacks.py"))
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


class CellForger:
    """Attacker networks 127.3.N.0/24 with the app's telemetry token: each posts, from 10
    made-up installs, its network's day of candidate claims (50), every one failed, and its
    day of stable successes (50), all on `product` in a build the fleet does not run but
    that has a schema (ios 9.9.9): a cell of their own. One more batch names a build with no
    schema (ios 9.9.8)."""

    def __init__(self, guard, daemon, phone):
        self.guard, self.daemon, self.phone = guard, daemon, phone
        self.random = random.Random(36)
        self.posted = set()

    def forge(self, rollout, networks):
        ts = iso(self.daemon.now - 30)
        for network in range(networks):
            if network in self.posted:
                continue  # its day's share is spent: more would be refused per network
            self.posted.add(network)
            connection = self.guard.Connection(self.daemon.port, "127.3.%d.2" % (network + 1), self.phone)
            for side, revision, cohort, outcome in (("candidate", rollout["candidate"], 0, "notFound"), ("stable", rollout["stable"], 99, "proceed")):
                for _ in range(10):
                    event = {"ts": ts, "entry": "universalLink", "outcome": outcome, "route": "product", "count": 5}
                    if outcome == "notFound":
                        event["reason"] = "validationFailed"
                    body = {"client": {"platform": "ios", "appVersion": "9.9.9", "revision": revision, "cohort": cohort,
                                       "source": "%032x" % self.random.getrandbits(128)}, "events": [event]}
                    status, answer = connection.post("/v1/telemetry", body)
                    if status != 202:
                        fail("a forged %s batch answered %d: %s" % (side, status, answer[:200]))
        unregistered = {"client": {"platform": "ios", "appVersion": "9.9.8", "revision": rollout["candidate"], "cohort": 0,
                                   "source": "%032x" % self.random.getrandbits(128)},
                        "events": [{"ts": ts, "entry": "universalLink", "outcome": "notFound", "reason": "validationFailed", "route": "product", "count": 5}]}
        status, answer = self.guard.Connection(self.daemon.port, "127.3.200.2", self.phone).post("/v1/telemetry", unregistered)
        if status != 202:
            fail("a batch on an unregistered build answered %d: %s" % (status, answer[:200]))


# 39 -----------------------------------------------------------------------------------------
def installs_posting(port, phone, seconds, forwarded=None):
    """16 installs, each from an address of its own (another network than the attacker's),
    posting a batch every 0.5 s for `seconds`: (accepted, refused statuses)."""
    import uuid
    answers = {"accepted": 0, "refused": []}
    stop = threading.Event()
    lock = threading.Lock()

    def install(index):
        while not stop.is_set():
            batch = json.dumps({"batch": uuid.uuid4().hex, "client": {"platform": "ios", "appVersion": "5.3.0", "revision": 1},
                                "events": [{"ts": iso(int(time.time()) - 30), "entry": "scheme", "outcome": "proceed", "route": "product"}]})
            headers = {"Content-Type": "application/json"}
            if forwarded:
                headers["X-Forwarded-For"] = forwarded % (10 + index)
            try:
                connection = http.client.HTTPConnection("127.0.0.1", port, timeout=10, source_address=("127.7.%d.2" % index, 0))
                connection.request("POST", "/v1/telemetry", body=batch, headers=dict(headers, Authorization="Bearer " + phone))
                status = connection.getresponse().status
                connection.close()
            except OSError:
                status = 0
            with lock:
                if status == 202:
                    answers["accepted"] += 1
                else:
                    answers["refused"].append(status)
            stop.wait(0.5)

    run_for([threading.Thread(target=install, args=(index,)) for index in range(16)], seconds, stop)
    return answers["accepted"], answers["refused"]


def settled(daemon, name):
    """A metric once it has stopped moving (read every 50 ms, at most 10 s)."""
    last = None
    for _ in range(200):
        now = daemon.metric(name)
        if now is not None and now == last:
            return now
        last = now
        time.sleep(0.05)
    return last


def crc32c(data):
    table = CRC32C_TABLE
    crc = 0xFFFFFFFF
    for byte in data:
        crc = table[(crc ^ byte) & 0xFF] ^ (crc >> 8)
    return crc ^ 0xFFFFFFFF


def _crc32c_table():
    table = []
    for index in range(256):
        crc = index
        for _ in range(8):
            crc = (crc >> 1) ^ 0x82F63B78 if crc & 1 else crc >> 1
        table.append(crc)
    return table


CRC32C_TABLE = _crc32c_table()


def forward_bytes(node, through, batches):
    """A follower's forward as Sources/Telemetry/Forward.swift writes it: each batch a dict of
    platform (0 ios), revision, appVersion, routes, tallies [(minute, entry, outcome, reason,
    route slot, precondition slot, count)], shapes [(minute, entry, count, shape)]."""
    import struct

    def name(value):
        return struct.pack("<H", len(value)) + value
    frames = b""
    for batch in batches:
        payload = struct.pack("<Q", 0)
        if batch.get("shapes"):
            payload += b"\xfb"
        version = batch.get("appVersion", b"")
        payload += struct.pack("<BI", batch.get("platform", 0), batch.get("revision", 0)) + struct.pack("<B", 1 if version else 0) + name(version)
        payload += struct.pack("<H", len(batch.get("routes", []))) + b"".join(name(route) for route in batch.get("routes", []))
        payload += struct.pack("<H", 0)
        payload += struct.pack("<I", len(batch.get("tallies", []))) + b"".join(struct.pack("<iBBBHHI", *tally) for tally in batch.get("tallies", []))
        if batch.get("shapes"):
            payload += struct.pack("<I", len(batch["shapes"])) + b"".join(
                struct.pack("<iBI", minute, entry, count) + name(shape) + struct.pack("<I", 0) for minute, entry, count, shape in batch["shapes"])
        frames += struct.pack("<II", len(payload), crc32c(payload)) + payload
    body = b"WMFWD001" + name(node) + struct.pack("<QI", through, len(batches)) + frames
    return body + struct.pack("<I", crc32c(body))


__all__ = ['CRC32C_TABLE', 'CellForger', 'Daemon', 'EXAMPLE', 'SECONDS', '_crc32c_table', 'ask_until', 'audit_after_stop', 'calendar', 'call', 'cpu_seconds', 'crc32c', 'data_mib', 'fail', 'first_line', 'forward_bytes', 'guard_module', 'http', 'installs_posting', 'iso', 'itertools', 'json', 'json_of', 'moved_clock', 'open_head', 'os', 'peak_mb', 'random', 're', 'resource', 'rss_mb', 'run_for', 'settled', 'signal', 'silent_listener', 'socket', 'subprocess', 'sys', 'telemetry_flood', 'tempfile', 'threading', 'threads_of', 'time', 'timed', 'token', 'urllib', 'waymark_daemon']
