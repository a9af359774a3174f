#!/usr/bin/env python3
"""The Android library's loop against a live daemon: its manifest client fetches the
android build's manifest over HTTP (then 304 by ETag), links go through its dispatcher
with a login gate, and its telemetry reporter posts one batch with the envelope of
docs/api.md — whose first 202 is lost on the way back, so the same batch (same id) is sent
again. The server's counts, read back, must be exactly the resolutions once.

    python3 Tests/Scripts/android-live.py .build/debug/waymark CLASSPATH
"""
import datetime
import json
import os
import subprocess
import sys
import tempfile

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
        finally:
            process.terminate()
            process.wait()
    print("android-live: the JVM library against a live daemon: manifest 200 then 304, %d links with the login gate, "
          "and a batch sent twice (its 202 lost) counted once: %d resolutions" % (len(LINKS), sum(expected.values())))


if __name__ == "__main__":
    sys.exit(main())
