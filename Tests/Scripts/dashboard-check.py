#!/usr/bin/env python3
"""GET /dashboard in a real headless Chromium (Debian's `chromium`).

Starts `waymark serve` on a scratch data directory, posts a known set of telemetry, then
loads the page in Chromium three ways and reads the DOM Chromium built:
  - with a token in the fragment: the page ran under its Content-Security-Policy, read
    the counts and drew them; every figure on it (tiles, the failures-by-reason bars, the
    top failing routes, the rates per app version and per revision) equals what was
    posted, and it refreshed itself on its timer;
  - without a token: it asks for one;
  - with a revoked token: it says the server refused it and asks again;
  - with a rollout the guard tripped: the rollout panel says so, with the candidate's and
    the stable revision's failure rates and the finding that names the broken route.
Finally it takes a screenshot (SCREENSHOT, default .build/dashboard.png) for people to
look at, and checks that it is a PNG with something drawn on it.

Usage: dashboard-check.py WAYMARK_BINARY [SCREENSHOT]
"""
import datetime
import html.parser
import http.client
import json
import os
import shutil
import struct
import subprocess
import sys
import tempfile
import time
import zlib

import waymark_daemon

from waymark_daemon import iso  # noqa: E402

ROOT = os.path.normpath(os.path.join(os.path.dirname(__file__), "..", ".."))


def fail(message):
    print("dashboard-check: FAIL: " + message, file=sys.stderr)
    sys.exit(1)




class Daemon:
    def __init__(self, binary, data):
        self.process, self.token, self.port = waymark_daemon.start(binary, data, "--rollout-look-interval", "1",
            # One batch per side from one client stands for a fleet here: the guard's caps and
            # breadth are opened up (make test-guard holds them).
            "--guard-per-source", "1000", "--guard-per-network", "1000000", "--guard-installs", "1", "--guard-networks", "1",
            "--shapes-per-source", "1000", "--shapes-per-network", "1000", "--suggestion-sources", "1",
            # Fifty minutes of history posted at once, as a client back online would: counted
            # in the per-minute cells the page draws only within the lateness window.
            "--telemetry-lateness", "60")
        if self.port is None or self.token is None:
            self.process.kill()
            fail("the daemon did not start:\n" + self.process.stderr.read())

    def call(self, method, path, body=None, token=None, extra=None):
        connection = http.client.HTTPConnection("127.0.0.1", self.port, timeout=10)
        headers = {"Authorization": "Bearer " + (token or self.token), **(extra or {})}
        if body is not None:
            headers["Content-Type"] = "application/json"
        connection.request(method, path, body=body, headers=headers)
        response = connection.getresponse()
        data = response.read()
        connection.close()
        return response.status, data

    def stop(self):
        self.process.terminate()
        try:
            self.process.wait(timeout=10)
        except subprocess.TimeoutExpired:
            self.process.kill()


# What is posted: per minute over the last 50 minutes, a fixed mix. Routes are the
# storefront's; revision 9 does not exist, so its events count under "other".
def batches(now):
    plans = [("5.3.0", 1, 50), ("5.2.0", 1, 30), ("5.3.0", 9, 10)]
    for version, revision, minutes in plans:
        events = []
        for m in range(minutes):
            ts = iso(now - 60 * m - 20)
            events.append({"ts": ts, "entry": "universalLink", "outcome": "proceed", "route": "product", "count": 10 + m % 7})
            events.append({"ts": ts, "entry": "push", "outcome": "notFound", "reason": "unknownRoute", "count": 1 + m % 5,
                           "shape": "/products/%d?email=jane%%40example.com" % (1000 + m)})
            if m % 3 == 0:
                events.append({"ts": ts, "entry": "scheme", "outcome": "notFound", "reason": "validationFailed", "route": "product", "count": 2})
            if m % 4 == 0:
                events.append({"ts": ts, "entry": "inApp", "outcome": "notFound", "reason": "expired", "route": "spring-sale", "count": 3})
            if m % 10 == 0:
                events.append({"ts": ts, "entry": "inApp", "outcome": "gated", "route": "orders", "precondition": "loggedIn", "count": 4})
        yield {"client": {"platform": "ios", "appVersion": version, "revision": revision}, "events": events}


def expectations(posted):
    expected = {"total": 0, "failures": 0, "gated": 0, "reasons": {}, "routes": {}, "versions": {}, "revisions": {}}
    for batch in posted:
        client = batch["client"]
        revision = str(client["revision"]) if client["revision"] == 1 else "other"
        for event in batch["events"]:
            count, failed = event["count"], event["outcome"] == "notFound"
            expected["total"] += count
            expected["gated"] += count if event["outcome"] == "gated" else 0
            for table, key in (("versions", client["appVersion"]), ("revisions", revision)):
                total, failures = expected[table].get(key, (0, 0))
                expected[table][key] = (total + count, failures + (count if failed else 0))
            if failed:
                expected["failures"] += count
                expected["reasons"][event["reason"]] = expected["reasons"].get(event["reason"], 0) + count
                route = event.get("route", "none")
                expected["routes"][route] = expected["routes"].get(route, 0) + count
    return expected


# HTML's void elements: the only ones Chromium's serialization writes without an end tag.
VOID = {"area", "base", "br", "col", "embed", "hr", "img", "input", "link", "meta", "source", "track", "wbr"}


class DOM(html.parser.HTMLParser):
    """The elements of the dumped DOM: attributes by id, text by id, and every rect."""

    def __init__(self, text):
        super().__init__()
        self.attributes, self.text, self.rects, self.stack = {}, {}, [], []
        self.body = {}
        self.feed(text)

    def handle_starttag(self, tag, attributes):
        attributes = dict(attributes)
        if tag == "body":
            self.body = attributes
        if tag == "rect":
            self.rects.append(attributes | {"svg": next((i for i in reversed(self.stack) if i and i.startswith("svg-")), None)})
        identifier = attributes.get("id")
        if identifier:
            self.attributes[identifier] = attributes
            self.text[identifier] = ""
        if tag not in VOID:
            self.stack.append(identifier)

    def handle_endtag(self, tag):
        if tag not in VOID and self.stack:
            self.stack.pop()

    def handle_data(self, data):
        for identifier in self.stack:
            if identifier:
                self.text[identifier] += data


def chromium(url, profile, extra):
    arguments = ["chromium", "--headless", "--no-sandbox", "--disable-gpu", "--hide-scrollbars", "--no-first-run",
                 "--disable-extensions", "--user-data-dir=" + profile, "--window-size=1280,1100",
                 "--enable-logging=stderr", "--v=0"] + extra + [url]
    done = subprocess.run(arguments, capture_output=True, text=True, timeout=120)
    if done.returncode != 0:
        fail("chromium exited %d:\n%s" % (done.returncode, done.stderr[-2000:]))
    refused = [line for line in done.stderr.splitlines() if "Content Security Policy" in line or "Refused to" in line]
    if refused:
        fail("the page broke its own Content-Security-Policy:\n" + "\n".join(refused))
    return done.stdout


def dump(daemon, profile, fragment="", query="", budget=6000):
    url = "http://127.0.0.1:%d/dashboard%s%s" % (daemon.port, query, fragment)
    return DOM(chromium(url, profile, ["--virtual-time-budget=%d" % budget, "--dump-dom"]))


def check_figures(dom, expected):
    if dom.body.get("data-state") != "ready":
        fail("the page did not show the counts (state %r; status %r)" % (dom.body.get("data-state"), dom.text.get("status")))
    tiles = {"tile-total": expected["total"], "tile-failures": expected["failures"], "tile-gated": expected["gated"]}
    for identifier, value in tiles.items():
        if dom.text[identifier].strip() != "{:,}".format(value):
            fail("%s shows %r, expected %s" % (identifier, dom.text[identifier], "{:,}".format(value)))
    rate = "%.1f%%" % (100 * expected["failures"] / expected["total"])
    if dom.text["tile-rate"].strip() != rate:
        fail("the failure rate shows %r, expected %s" % (dom.text["tile-rate"], rate))

    reasons = {}
    for rect in dom.rects:
        if rect["svg"] == "svg-reasons":
            reasons[rect["data-reason"]] = reasons.get(rect["data-reason"], 0) + int(rect["data-count"])
    if reasons != expected["reasons"]:
        fail("failures over time add up to %r, expected %r" % (reasons, expected["reasons"]))

    routes = [(rect["data-route"], int(rect["data-failures"])) for rect in dom.rects if rect["svg"] == "svg-routes"]
    wanted = sorted(expected["routes"].items(), key=lambda item: -item[1])
    if routes != wanted:
        fail("top failing routes are %r, expected %r" % (routes, wanted))

    for svg, attribute, table in (("svg-versions", "data-appversion", "versions"), ("svg-revisions", "data-revision", "revisions")):
        bars = {rect[attribute]: (int(rect["data-total"]), int(rect["data-failures"])) for rect in dom.rects if rect["svg"] == svg}
        if bars != expected[table]:
            fail("%s shows %r, expected %r" % (svg, bars, expected[table]))
    if list(dict.fromkeys(rect["data-revision"] for rect in dom.rects if rect["svg"] == "svg-revisions")) != ["1", "other"]:
        fail("revisions are not in order, numbered ones first")


def check_screenshot(path):
    with open(path, "rb") as file:
        data = file.read()
    if data[:8] != b"\x89PNG\r\n\x1a\n":
        fail("the screenshot is not a PNG")
    # Decode enough of the PNG to count colours: a blank or error page has a handful.
    width, height, depth, colour = struct.unpack(">IIBB", data[16:26])
    idat, offset = b"", 8
    while offset < len(data):
        length, kind = struct.unpack(">I4s", data[offset:offset + 8])
        if kind == b"IDAT":
            idat += data[offset + 8:offset + 8 + length]
        offset += 12 + length
    raw = zlib.decompress(idat)
    channels = {2: 3, 6: 4}.get(colour)
    if depth != 8 or channels is None:
        fail("unexpected PNG format (depth %d, colour type %d)" % (depth, colour))
    stride = width * channels
    colours, previous, row = set(), bytearray(stride), 0
    for y in range(height):
        kind, line = raw[y * (stride + 1)], bytearray(raw[y * (stride + 1) + 1:(y + 1) * (stride + 1)])
        for x in range(stride):  # undo the row filter (PNG §9)
            a = line[x - channels] if x >= channels else 0
            b, c = previous[x], previous[x - channels] if x >= channels else 0
            if kind == 1: line[x] = (line[x] + a) & 255
            elif kind == 2: line[x] = (line[x] + b) & 255
            elif kind == 3: line[x] = (line[x] + (a + b) // 2) & 255
            elif kind == 4:
                p = a + b - c
                pa, pb, pc = abs(p - a), abs(p - b), abs(p - c)
                line[x] = (line[x] + (a if pa <= pb and pa <= pc else b if pb <= pc else c)) & 255
        if y % 8 == 0:
            colours.update(bytes(line[i:i + 3]) for i in range(0, stride, channels * 4))
        previous, row = line, row + 1
    # The chart colours of the four reasons must be there.
    for hexa in ("c2372b", "e08a1e", "6b5fb5"):
        if bytes.fromhex(hexa) not in colours:
            fail("the screenshot lacks the chart colour #%s (%d colours sampled)" % (hexa, len(colours)))
    return width, height, len(colours)


def dom_rollout_status(dom):
    """The rollout panel's status and its first finding's text."""
    status = dom.attributes.get("rollout", {}).get("data-status")
    finding = dom.text.get("rollout-finding-0")
    return status, finding.strip() if finding else None


def main():
    if len(sys.argv) < 2:
        fail("usage: dashboard-check.py WAYMARK_BINARY [SCREENSHOT]")
    binary = os.path.abspath(sys.argv[1])
    screenshot = os.path.abspath(sys.argv[2] if len(sys.argv) > 2 else os.path.join(ROOT, ".build", "dashboard.png"))
    if shutil.which("chromium") is None:
        fail("chromium is not installed (make test-dashboard installs it)")
    scratch = tempfile.mkdtemp(prefix="waymark-dashboard-")
    daemon = Daemon(binary, os.path.join(scratch, "data"))
    try:
        now = int(time.time())
        posted = list(batches(now))
        for batch in posted:
            status, body = daemon.call("POST", "/v1/telemetry", json.dumps(batch))
            if status != 202 or json.loads(body)["rejected"]:
                fail("posting telemetry: %d %s" % (status, body[:300]))
        expected = expectations(posted)

        # With a token (and a 10 s refresh, under 35 s of Chromium's virtual time).
        dom = dump(daemon, os.path.join(scratch, "p1"), fragment="#token=" + daemon.token, query="?refresh=10", budget=35000)
        check_figures(dom, expected)
        loads = int(dom.body.get("data-loads", "0"))
        if loads < 3:
            fail("the page read the counts %d times in 35 s with a 10 s refresh" % loads)
        print("dashboard-check: counts drawn as posted (%d resolutions, %d failures, %d routes); refreshed %d times in 35 s"
              % (expected["total"], expected["failures"], len(expected["routes"]), loads))
        # The unknown links the apps reported, as one shape, with its count and a suggestion.
        # A phone's shape counts once, whatever the event's count.
        shape_total = sum(1 for b in posted for e in b["events"] if "shape" in e)
        row = dom.text.get("unknown-0", "")
        if "/products/:param" not in row or "add /products/:id to product" not in row or dom.attributes.get("unknown-0", {}).get("data-count") != str(shape_total):
            fail("the unknown-links panel: %r (count %r, posted %d)" % (row, dom.attributes.get("unknown-0", {}).get("data-count"), shape_total))
        if "jane" in dom.text.get("unknown-links", "") or "unknown-1" in dom.attributes:
            fail("the unknown-links panel shows more than the one shape, or personal data")
        print("dashboard-check: the unknown-links panel shows /products/:param, %d times, with its suggestion" % shape_total)

        # Without a token it asks for one.
        dom = dump(daemon, os.path.join(scratch, "p2"))
        if dom.body.get("data-state") != "token" or "hidden" in dom.attributes["token-form"]:
            fail("without a token the page does not ask for one (state %r)" % dom.body.get("data-state"))
        # A token without telemetry:read is refused, and the page says so.
        created = subprocess.run([binary, "token", "create", "--data-dir", os.path.join(scratch, "data"), "--name", "reader",
                                  "--scope", "manifest:read"], capture_output=True, text=True, check=True)
        narrow = waymark_daemon.TOKEN.search(created.stdout).group(1)
        dom = dump(daemon, os.path.join(scratch, "p3"), fragment="#token=" + narrow)
        if dom.body.get("data-state") != "token" or "refused" not in dom.text["token-reason"]:
            fail("a token without telemetry:read is not reported (state %r, %r)" % (dom.body.get("data-state"), dom.text.get("token-reason")))
        print("dashboard-check: asks for a token without one, and says when the server refuses it")

        # A rollout whose candidate breaks product: the guard trips it; the panel says so.
        if dom_rollout_status(dump(daemon, os.path.join(scratch, "p5"), fragment="#token=" + daemon.token)) != ("none", None):
            fail("the rollout panel shows a rollout before there is one")
        with open(os.path.join(waymark_daemon.EXAMPLE, "routes.json")) as source:
            routes = json.load(source)
        routes["routes"].append({"id": "dashboard-rollout", "patterns": ["/dashboard-rollout"], "destination": "home"})
        status, body = daemon.call("POST", "/v1/revisions", json.dumps({"message": "rollout", "routes": routes, "rollout": {}}),
                                   extra={"If-Match": '"rev-1"'})
        if status != 201:
            fail("starting a rollout: %d %s" % (status, body[:300]))
        # Now, after the publish: the guard's window starts at the minute the step began.
        ts = datetime.datetime.fromtimestamp(time.time(), datetime.timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")
        for revision, failed in ((2, 150), (1, 6)):
            events = [{"ts": ts, "entry": "universalLink", "outcome": "proceed", "route": "product", "count": 300 - failed},
                      {"ts": ts, "entry": "universalLink", "outcome": "notFound", "reason": "validationFailed", "route": "product", "count": failed}]
            status, body = daemon.call("POST", "/v1/telemetry", json.dumps({"client": {"platform": "ios", "appVersion": "5.3.0", "revision": revision,
                                                                                       "cohort": 0, "source": "%032x" % revision},
                                                                            "events": events}))
            if status != 202:
                fail("posting rollout telemetry: %d %s" % (status, body[:300]))
        deadline = time.time() + 20
        while time.time() < deadline and json.loads(daemon.call("GET", "/v1/rollout")[1])["status"] != "tripped":
            time.sleep(0.2)
        if json.loads(daemon.call("GET", "/v1/rollout")[1])["status"] != "tripped":
            fail("the guard did not trip the broken candidate within 20 s: %s" % daemon.call("GET", "/v1/rollout")[1][:600])
        dom = dump(daemon, os.path.join(scratch, "p6"), fragment="#token=" + daemon.token)
        status, finding = dom_rollout_status(dom)
        if status != "tripped" or "product" not in (finding or ""):
            fail("the rollout panel does not show the trip and its route: %r %r" % (status, finding))
        if dom.text.get("rollout-candidate-rate", "").strip() != "50.0%":
            fail("the candidate's failure rate shows %r, expected 50.0%% (150 of 300)" % dom.text.get("rollout-candidate-rate"))
        print("dashboard-check: the rollout panel shows the guard's trip: %s" % finding)

        os.makedirs(os.path.dirname(screenshot), exist_ok=True)
        url = "http://127.0.0.1:%d/dashboard#token=%s" % (daemon.port, daemon.token)
        chromium(url, os.path.join(scratch, "p4"), ["--virtual-time-budget=6000", "--screenshot=" + screenshot])
        width, height, colours = check_screenshot(screenshot)
        print("dashboard-check: screenshot %s (%dx%d, %d colours sampled)" % (os.path.relpath(screenshot), width, height, colours))
    finally:
        daemon.stop()
        shutil.rmtree(scratch, ignore_errors=True)


if __name__ == "__main__":
    main()
