#!/usr/bin/env python3
"""The Android library's loop against a live daemon: its manifest client fetches the
android build's manifest over HTTP (then 304 by ETag), links go through its dispatcher
with a login gate, and its telemetry reporter posts one batch with the envelope of
docs/api.md — whose first 202 is lost on the way back, so the same batch (same id) is sent
again. The server's counts, read back, must be exactly the resolutions once.

Then two journeys, each launch a process of its own (dev.waymark.tools.LiveJourneys):
the first tap on a campaign published after the cache was written opens it on a cold
start that waits for the manifest (and ends notFound without the wait, the control); and a
process killed (SIGKILL) at the login screen whose next launch, logged in, carries the link
out from the gate stash, once. Then the deferred link: a browser without the app sent to Google
Play with the link as its Install Referrer, which the library opens after the install by the
deferred door, once.

    python3 Tests/Scripts/android-live.py .build/debug/waymark CLASSPATH
"""
import datetime
import http.client
import json
import os
import signal
import subprocess
import sys
import tempfile
import time
import urllib.parse

import waymark_daemon

LINKS = [
    ("https://storefront.example/orders/42", "navigated"),
    ("storefront://p/p12", "navigated"),
    ("push:https://storefront.example/p/p12", "navigated"),
    ("app:product?id=p12", "navigated"),
    ("https://storefront.example/p/bad", "notFound(validationFailed)"),
    ("https://storefront.example/nowhere", "notFound(unknownRoute)"),
    ("storefront://settings", "navigated"),
]


def main():
    waymark, classpath = sys.argv[1], sys.argv[2]
    with tempfile.TemporaryDirectory() as data, tempfile.TemporaryDirectory() as cache:
        process, token, port = waymark_daemon.start(waymark, data)
        try:
            assert port and token, "the daemon did not start"
            schema = json.load(open(os.path.join(waymark_daemon.EXAMPLE, "schema-ios-5.3.0.json")))
            schema["platform"] = "android"
            status, body, _ = waymark_daemon.call(port, token, "PUT", "/v1/schemas/android/5.3.0", schema)
            assert status in (200, 201), (status, body)
            started = datetime.datetime.now(datetime.timezone.utc) - datetime.timedelta(minutes=1)
            output = subprocess.run(["java", "-cp", classpath, "dev.waymark.tools.LiveClientKt", "http://127.0.0.1:%d" % port, token, cache,
                                     *[link for link, _ in LINKS]], capture_output=True, text=True, timeout=120)
            assert output.returncode == 0, output.stderr
            out = output.stdout
            assert "manifest: Updated(revision=" in out, out
            assert "manifest again: NotModified" in out, out
            assert "gate: auth for orderDetail" in out, out
            for link, result in LINKS:
                assert "result: %s %s\n" % (link, result) in out, (link, out)
            assert "telemetry first: RetryLater(status=null" in out, out
            assert "telemetry again: Delivered(" in out and "resolutions=7" in out, out
            assert "telemetry pending: 0" in out, out
            query = "/v1/telemetry/counts?groupBy=platform,entry,outcome&from=%s" % started.strftime("%Y-%m-%dT%H:%M:%SZ")
            status, body, _ = waymark_daemon.call(port, token, "GET", query)
            assert status == 200, body
            counted = {(g["key"]["platform"], g["key"]["entry"], g["key"]["outcome"]): g["total"] for g in json.loads(body)["groups"]}
            expected = {("android", "universalLink", "proceed"): 1, ("android", "scheme", "proceed"): 2, ("android", "push", "proceed"): 1,
                        ("android", "inApp", "proceed"): 1, ("android", "universalLink", "notFound"): 2}
            assert counted == expected, counted
            journeys(port, token, cache, classpath)
        finally:
            process.terminate()
            process.wait()
    print("android-live: the JVM library against a live daemon: manifest 200 then 304, %d links with the login gate, "
          "and a batch sent twice (its 202 lost) counted once: %d resolutions; the first tap on a campaign newer than the "
          "cache opens it; a link at the login screen survives a SIGKILL, once" % (len(LINKS), sum(expected.values())))


def journeys(port, token, cache, classpath):
    server = "http://127.0.0.1:%d" % port
    tool = ["java", "-cp", classpath, "dev.waymark.tools.LiveJourneysKt"]
    # A campaign published after this install's cache was written (revision 1).
    routes = json.load(open(os.path.join(waymark_daemon.EXAMPLE, "routes.json")))
    routes["routes"].append({"id": "winter", "patterns": ["/sale/winter"], "destination": "promo", "params": {"code": {"const": "WINTER"}}})
    status, body, _ = waymark_daemon.call(port, token, "POST", "/v1/revisions", {"message": "Winter campaign", "routes": routes},
                                          {"If-Match": '"rev-1"'})
    assert status == 201, (status, body)
    out = subprocess.run(tool + ["firstTap", server, token, cache, "https://storefront.example/sale/winter"],
                         capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stderr
    assert "control: notFound(unknownRoute) revision 1\n" in out.stdout, out.stdout
    assert "firstTap: navigated revision 2 shown " in out.stdout and "promo(code=WINTER)" in out.stdout, out.stdout
    # Killed at the login screen, then launched again, logged in.
    gate = subprocess.Popen(tool + ["gate", server, token, cache, "https://storefront.example/orders/42"],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        line = gate.stdout.readline()
        assert line == "login shown: auth\n", (line, gate.stderr.read() if gate.poll() is not None else "")
    finally:
        gate.send_signal(signal.SIGKILL)
        gate.wait()
    out = subprocess.run(tool + ["relaunch", server, token, cache], capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stderr
    assert "stash file: present\n" in out.stdout, out.stdout
    assert "relaunched: navigated shown " in out.stdout and "orderDetail(orderId=42)" in out.stdout, out.stdout
    assert "stash file after: absent\n" in out.stdout, out.stdout
    deferred(port, token, cache, tool, server)


def deferred(port, token, cache, tool, server):
    """The Install Referrer loop: a browser without the app opens a campaign link with UTM
    items; Google Play's address carries it as the referrer; the library, given the referrer
    as Play returns it (decoded once), opens what the link opens in the app, by the deferred
    door, counted once; handed over again (in the launch, and in the next) it opens nothing."""
    started = datetime.datetime.now(datetime.timezone.utc) - datetime.timedelta(minutes=1)
    connection = http.client.HTTPConnection("127.0.0.1", port, timeout=10)
    connection.request("GET", "/sale/winter?utm_source=mail&utm_campaign=winter-26&email=a%40b.example&utm_term=%3Cscript%3E",
                       headers={"Host": "storefront.example", "User-Agent": "Mozilla/5.0 (Linux; Android 14; Pixel 8) AppleWebKit/537.36 Chrome/124.0 Mobile Safari/537.36"})
    answer = connection.getresponse()
    location = answer.getheader("Location") or ""
    connection.close()
    assert answer.status == 302 and location.startswith("https://play.google.com/store/apps/details?id=example.storefront&referrer="), (answer.status, location)
    referrer = urllib.parse.parse_qs(urllib.parse.urlsplit(location).query)["referrer"][0]  # as Play hands it to the app
    items = urllib.parse.parse_qs(referrer)
    assert items["deeplink"] == ["https://storefront.example/sale/winter"], items
    assert items["utm_source"] == ["mail"] and items["utm_campaign"] == ["winter-26"], items
    assert "email" not in items and "utm_term" not in items and abs(int(items["t"][0]) - time.time()) < 60, items
    out = subprocess.run(tool + ["deferred", server, token, cache, referrer], capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stderr
    lines = dict(line.split(": ", 1) for line in out.stdout.splitlines() if ": " in line)
    assert lines.get("deferred", "").startswith("navigated by deferred shown ") and "promo(code=WINTER)" in lines["deferred"], out.stdout
    assert lines["tapped"] == "navigated shown " + lines["deferred"][len("navigated by deferred shown "):], out.stdout
    assert lines["again"] == "nothing", out.stdout
    assert lines["telemetry"].startswith("Delivered("), out.stdout
    again = subprocess.run(tool + ["deferred", server, token, cache, referrer], capture_output=True, text=True, timeout=120)
    assert again.returncode == 0 and again.stdout.strip() == "deferred: nothing", (again.stdout, again.stderr)
    query = "/v1/telemetry/counts?entry=deferred&groupBy=entry,outcome,route&from=%s" % started.strftime("%Y-%m-%dT%H:%M:%SZ")
    status, body, _ = waymark_daemon.call(port, token, "GET", query)
    counted = {(g["key"]["entry"], g["key"]["outcome"], g["key"]["route"]): g["total"] for g in json.loads(body)["groups"]}
    assert status == 200 and counted == {("deferred", "proceed", "winter"): 1}, (status, counted)
    print("android-live: deferred: %s -> Google Play with the referrer %r; opened by the deferred door as a tap opens it (%s), "
          "counted once; handed over again, in the launch and the next, nothing" % ("/sale/winter", referrer, lines["tapped"]))


if __name__ == "__main__":
    sys.exit(main())
