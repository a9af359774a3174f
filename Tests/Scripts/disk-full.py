#!/usr/bin/env python3
"""Disk-full test of `waymark serve` on a small tmpfs this script mounts.

With the data directory's file system filled to the last byte:
  - a publish, a new schema and a replaced schema are answered 507 with Retry-After and
    leave nothing behind (no revision, no schema, no temporary file, the old schema's
    bytes as they were); `waymark token create` fails and tokens.json is unchanged;
  - telemetry is answered 503 once the log's room ahead is used, `/readyz` says 503
    "degraded" naming the telemetry component, and `waymark_telemetry_writable` is 0.
Once the space is freed, without a restart and without a client posting: telemetry is
writable again within a few seconds (`/readyz` 200), and the same publish, schemas and
token succeed. After a restart every telemetry event answered 202 is counted exactly
once and every refused one not at all; every refused change is still absent.

Mounting needs privileges; where it is not allowed the test says so and passes skipped
(exit 0), like the other checks that need the machine's help.

Usage: disk-full.py WAYMARK_BINARY
"""
import errno
import json
import os
import signal
import subprocess
import sys
import tempfile
import time

import waymark_daemon

from waymark_daemon import iso  # noqa: E402

EXAMPLE = waymark_daemon.EXAMPLE
SIZE_MB = 32


def fail(message):
    print("disk-full: FAIL: " + message, file=sys.stderr)
    sys.exit(1)


def call(port, token, method, path, body=None, headers=None):
    """(status, the body parsed as JSON or else as text, Retry-After)."""
    status, payload, answer_headers = waymark_daemon.call(port, token, method, path, body, headers)
    try:
        parsed = json.loads(payload) if payload else None
    except ValueError:
        parsed = payload.decode(errors="replace")
    return status, parsed, answer_headers.get("Retry-After")




def listing(directory):
    found = []
    for root, _, files in os.walk(directory):
        for name in files:
            found.append(os.path.relpath(os.path.join(root, name), directory))
    return sorted(found)


def fill(path):
    """Writes zeros to `path` until the file system is full; returns the bytes written."""
    written = 0
    chunk = b"\0" * 65536
    with open(path, "wb", buffering=0) as filler:
        while True:
            try:
                written += filler.write(chunk)
            except OSError as error:
                if error.errno != errno.ENOSPC:
                    raise
                break
        # The last few bytes, so not even a small write fits.
        for size in (4096, 512, 1):
            while True:
                try:
                    written += filler.write(b"\0" * size)
                except OSError:
                    break
    return written


def main():
    if len(sys.argv) < 2:
        fail("usage: disk-full.py WAYMARK_BINARY")
    binary = os.path.abspath(sys.argv[1])
    mount_point = tempfile.mkdtemp(prefix="waymark-disk-full-")
    mounted = subprocess.run(["mount", "-t", "tmpfs", "-o", "size=%dm" % SIZE_MB, "tmpfs", mount_point],
                             capture_output=True, text=True)
    if mounted.returncode != 0:
        os.rmdir(mount_point)
        print("disk-full: SKIPPED: mounting a tmpfs is not allowed here (%s); run as root or in a "
              "privileged container to test a full disk" % mounted.stderr.strip())
        return
    process = None
    try:
        process = run(binary, mount_point)
    finally:
        if process is not None and process.poll() is None:
            process.kill()
            process.wait()
        subprocess.run(["umount", mount_point])
        os.rmdir(mount_point)


def start(binary, data):
    process, token, port = waymark_daemon.start(binary, data, "--threads", "2")
    if port is None:
        process.kill()
        fail("the daemon did not start:\n" + process.stderr.read())
    return process, token, port


def run(binary, mount_point):
    data = os.path.join(mount_point, "data")
    process, admin, port = start(binary, data)
    with open(os.path.join(EXAMPLE, "routes.json")) as handle:
        routes = json.load(handle)
    with open(os.path.join(EXAMPLE, "schema-ios-5.3.0.json")) as handle:
        schema_text = handle.read()
    now = int(time.time())
    accepted_events = [0]

    def post_batch(events):
        body = {"client": {"platform": "ios", "appVersion": "5.3.0", "revision": 1},
                "events": [{"ts": iso(now - index % 3000), "entry": "universalLink", "outcome": "proceed", "route": "home"}
                           for index in range(events)]}
        status, answer, retry = call(port, admin, "POST", "/v1/telemetry", body, {"Content-Type": "application/json"})
        if status == 202:
            accepted_events[0] += answer["accepted"]
        return status, answer, retry

    def publish(tag):
        status, answer, _ = call(port, admin, "GET", "/v1/revisions")
        base = answer["current"]
        document = json.loads(json.dumps(routes))
        document["routes"].append({"id": "full-" + tag, "patterns": ["/full/" + tag], "destination": "home", "owner": "disk-full"})
        status, answer, retry = call(port, admin, "POST", "/v1/revisions", {"message": "disk full " + tag, "routes": document},
                                     {"If-Match": '"rev-%d"' % base, "Content-Type": "application/json"})
        return base, status, answer, retry

    def schema(version, note):
        body = schema_text.replace('"version": "5.3.0"', '"version": "%s"' % version)
        if note:
            body = body.replace('"format"', '"note": "%s", "format"' % note, 1)
        return call(port, admin, "PUT", "/v1/schemas/ios/" + version, body.encode(), {"Content-Type": "application/json"})

    def token_create(name):
        return subprocess.run([binary, "token", "create", "--data-dir", data, "--name", name, "--scope", "telemetry:read"],
                              capture_output=True, text=True)

    status, _, _ = post_batch(10)
    if status != 202:
        fail("telemetry before the disk filled answered %d" % status)

    filler = os.path.join(mount_point, "filler")
    filled = fill(filler)
    before = listing(data)
    with open(os.path.join(data, "tokens.json"), "rb") as handle:
        tokens_before = handle.read()
    with open(os.path.join(data, "schemas", "ios@5.3.0"), "rb") as handle:
        schema_before = handle.read()

    # Changes: each refused whole, with 507 and Retry-After, leaving nothing.
    base, status, answer, retry = publish("a")
    if status != 507 or retry is None or answer["error"]["code"] != "insufficientStorage":
        fail("a publish on a full disk answered %d %s (Retry-After %s), not 507" % (status, answer, retry))
    status, answer, _ = call(port, admin, "GET", "/v1/revisions")
    if answer["current"] != base:
        fail("the refused publish changed the current revision to %s" % answer["current"])
    status, answer, retry = schema("5.4.0", None)
    if status != 507 or retry is None:
        fail("a new schema on a full disk answered %d %s" % (status, answer))
    status, answer, retry = schema("5.3.0", "changed")
    if status != 507:
        fail("a replaced schema on a full disk answered %d %s" % (status, answer))
    created = token_create("full-reader")
    if created.returncode == 0:
        fail("waymark token create succeeded on a full disk")
    with open(os.path.join(data, "tokens.json"), "rb") as handle:
        if handle.read() != tokens_before:
            fail("the refused token creation changed tokens.json")
    with open(os.path.join(data, "schemas", "ios@5.3.0"), "rb") as handle:
        if handle.read() != schema_before:
            fail("the refused schema replacement changed the stored schema")
    after = listing(data)
    if after != before:
        fail("refused changes left files behind: %s" % sorted(set(after) ^ set(before)))
    changes = "publish 507, new schema 507, replaced schema 507, token create refused (%s); nothing left behind" % (
        created.stderr.strip().splitlines()[-1].split(": ", 1)[0][:40] + ": " + created.stderr.strip().rsplit(": ", 1)[-1] if created.stderr.strip() else "exit %d" % created.returncode)

    # Telemetry: the log's room ahead takes batches until it is used up; then 503.
    refused_batches = 0
    for attempt in range(200):
        status, answer, retry = post_batch(1000)
        if status == 503:
            refused_batches += 1
            if retry is None:
                fail("telemetry 503 without Retry-After")
            break
        if status != 202:
            fail("telemetry on a full disk answered %d %s" % (status, answer))
    else:
        fail("200 batches of 1,000 events fit on a full disk")
    taken_on_full = attempt
    status, ready, _ = call(port, None, "GET", "/readyz")
    if status != 503 or ready.get("status") != "degraded" or ready["components"]["telemetry"]["writable"] is not False:
        fail("/readyz with telemetry failing answered %d %s" % (status, ready))
    status, metrics, _ = call(port, admin, "GET", "/metrics")
    if "waymark_telemetry_writable 0" not in metrics:
        fail("/metrics does not say telemetry is not writable")

    # Space returns: telemetry repairs itself with no client posting.
    os.unlink(filler)
    freed = time.monotonic()
    while True:
        status, ready, _ = call(port, None, "GET", "/readyz")
        if status == 200:
            break
        if time.monotonic() - freed > 10:
            fail("telemetry was not repaired 10 s after space was freed: /readyz %d %s" % (status, ready))
        time.sleep(0.1)
    recovered_after = time.monotonic() - freed
    status, answer, _ = post_batch(1000)
    if status != 202:
        fail("telemetry after space was freed answered %d %s" % (status, answer))
    _, status, answer, _ = publish("b")
    if status != 201:
        fail("a publish after space was freed answered %d %s" % (status, answer))
    status, answer, _ = schema("5.4.0", None)
    if status != 201:
        fail("a new schema after space was freed answered %d %s" % (status, answer))
    if token_create("full-reader").returncode != 0:
        fail("waymark token create failed after space was freed")

    # A restart: every 202 counted once; no refused change present.
    process.send_signal(signal.SIGTERM)
    process.wait(timeout=30)
    process, _, port = start(binary, data)
    query = "/v1/telemetry/counts?step=1h&from=%s&to=%s" % (iso(now - 7200), iso(now + 3600))
    status, counts, _ = call(port, admin, "GET", query)
    if status != 200 or counts["total"] != accepted_events[0]:
        fail("after a restart %s events are counted; %d were answered 202" % (counts.get("total"), accepted_events[0]))
    status, revisions, _ = call(port, admin, "GET", "/v1/revisions")
    messages = [item.get("message") for item in revisions["revisions"]]
    if "disk full a" in messages or "disk full b" not in messages:
        fail("after a restart the revisions are %s" % messages)
    print("disk-full: %d MiB tmpfs filled (%d bytes); %s; telemetry took %d batches on the full disk (its log's room ahead), "
          "then 503 with /readyz 503 degraded; writable again %.1f s after space was freed, with no client posting; "
          "after a restart %d events counted, each answered 202, none refused"
          % (SIZE_MB, filled, changes, taken_on_full, recovered_after, accepted_events[0]))
    process.send_signal(signal.SIGTERM)
    process.wait(timeout=30)
    return process


if __name__ == "__main__":
    main()
