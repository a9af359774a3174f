#!/usr/bin/env python3
"""Memory of a release `waymark serve` holding a large table for many builds: 10,000
routes (the shapes of `make bench`) published once, 20 app builds with a schema each,
every build's manifest fetched, then 1,000 idle keep-alive connections. Prints the RSS
after each step and what the builds' cached views cost beside their manifests' bytes;
fails above LIMIT_MB (64) at the end.

Then history on disk: a data directory whose history holds 1,000 revisions of a
1,000-route document (published through the API, each acknowledged with its SHA-256) and
whose current revision has 10,000 routes, for 20 builds. The daemon is restarted on it:
it must be listening within 2 s and under LIMIT_MB of RSS, serve every build's manifest,
and serve old revisions (1, 500, 999 and a diff) exactly as they were published — the
SHA-256 acknowledged, the document sent, the file's body — and after 300 reads of
different old revisions and telemetry naming history's route ids up to its bound (revision
501's, read in the background, and not revision 500's), RSS must stay under
LIMIT_MB + 32 (what history's reads may keep: revision answers and parsed documents).

Then the memory formula's terms for answers (docs/operations.md, "Memory"), each against
the worst its lane may be asked for, on a daemon of its own: the largest counts answer a
telemetry:read token may ask (two days of minutes by six dimensions, as many groups as
500,000 values allow) must peak within the 32 MiB of answers being made plus its own bytes
(queued output); the largest impact a marketing token may ask (a draft and a base of 39,900
four-segment patterns each, the most a replay indexes) within the 160 MiB of a document in
work plus the 64 MiB of a replay, and the replay beyond its draft's validation within 64.

Usage: memory.py WAYMARK_RELEASE_BINARY [LIMIT_MB]
"""
import hashlib
import http.client
import json
import re
import os
import resource
import socket
import sys
import tempfile
import threading
import time

import waymark_daemon

from waymark_daemon import iso, peak_mb, reset_peak  # noqa: E402
from waymark_daemon import rss_mb

ROUTES, BUILDS, IDLE = 10_000, 20, 1_000
# Route ids telemetry may name on the history's restart (--telemetry-max-routes).
NAMED_ROUTES = 10_500
HISTORY, HISTORY_ROUTES, START_SECONDS = 1_000, 1_000, 2.0


def fail(message):
    print("memory: FAIL: " + message, file=sys.stderr)
    sys.exit(1)




def call(port, token, method, path, body=None, headers=None):
    status, payload, _ = waymark_daemon.call(port, token, method, path, body, headers, timeout=120)
    return status, payload


def schema(version):
    return {"format": "waymark.schema/1", "app": "bench", "platform": "ios", "version": version,
            "schemes": ["bench"], "hosts": ["bench.example", "www.bench.example"], "preconditions": ["auth"],
            "destinations": {
                "home": {"tab": "home"},
                "item": {"parent": "home", "params": {"id": {"type": "string", "pattern": "^p[0-9]{1,8}$"}}},
                "page": {"parent": "home"},
                "order": {"parent": "home", "preconditions": ["auth"], "params": {"n": {"type": "int", "min": 1, "max": 2147483647}}},
                "doc": {"parent": "home", "params": {"path": {"type": "string", "maxLength": 200}}},
                "list": {"parent": "home", "params": {"slug": {"type": "slug"}, "q": {"type": "string", "optional": True}}}}}


def routes(count):
    """The shapes of `make bench` and bench-publish.sh."""
    table = [{"id": "home", "patterns": ["/"], "destination": "home"}]
    for i in range(count - 1):
        kind = i % 10
        if kind < 4:
            table.append({"id": "r%d" % i, "patterns": ["/shop/s%d/item/:id" % i, "/s%d/:id" % i], "destination": "item"})
        elif kind < 7:
            table.append({"id": "r%d" % i, "patterns": ["/campaign/c%d/landing" % i], "destination": "page"})
        elif kind < 9:
            table.append({"id": "r%d" % i, "patterns": ["/account/a%d/orders/:n" % i], "destination": "order"})
        elif i % 20 == 9:
            table.append({"id": "r%d" % i, "patterns": ["/docs/d%d/*path" % i], "destination": "doc"})
        else:
            table.append({"id": "r%d" % i, "patterns": ["/l/d%d/:slug" % i], "destination": "list", "params": {"q": {"query": "q"}}})
    return {"format": "waymark.routes/1", "app": "bench", "routes": table}


def main():
    if len(sys.argv) < 2:
        fail("usage: memory.py WAYMARK_RELEASE_BINARY [LIMIT_MB]")
    binary = os.path.abspath(sys.argv[1])
    limit = float(sys.argv[2]) if len(sys.argv) > 2 else 64.0
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    resource.setrlimit(resource.RLIMIT_NOFILE, (min(hard, 65536), hard))
    with tempfile.TemporaryDirectory(prefix="waymark-memory-") as scratch:
        process, token, port = waymark_daemon.start(binary, os.path.join(scratch, "data"), "--threads", "2", "--no-seed", seed=False)
        if port is None:
            process.kill()
            fail("the daemon did not start:\n" + process.stderr.read())
        threading.Thread(target=process.stdout.read, daemon=True).start()
        try:
            steps = [("started", rss_mb(process.pid))]
            versions = ["1.0.%d" % index for index in range(BUILDS)]
            for version in versions:
                status, body = call(port, token, "PUT", "/v1/schemas/ios/" + version, schema(version))
                if status != 201:
                    fail("schema %s: %d %s" % (version, status, body[:200]))
            steps.append(("%d schemas" % BUILDS, rss_mb(process.pid)))
            status, body = call(port, token, "POST", "/v1/revisions", {"message": "memory", "routes": routes(ROUTES)},
                                {"If-None-Match": "*", "Content-Type": "application/json"})
            if status != 201:
                fail("publish: %d %s" % (status, body[:300]))
            time.sleep(1.5)
            steps.append(("%d routes published" % ROUTES, rss_mb(process.pid)))
            manifest_bytes = 0
            for version in versions:
                status, body = call(port, token, "GET", "/v1/manifest?platform=ios&version=" + version)
                if status != 200:
                    fail("manifest %s: %d" % (version, status))
                manifest_bytes += len(body)
            time.sleep(1.5)  # the work queue gives back what building the views freed once it is quiet
            steps.append(("%d manifests fetched (%.1f MB of manifests)" % (BUILDS, manifest_bytes / 1e6), rss_mb(process.pid)))
            # Beside RSS: each view's copy in its memory file (shared memory the cgroup counts), once.
            status, body = call(port, token, "GET", "/metrics")
            held = re.search(r"^waymark_http_body_file_bytes (\d+)$", body.decode(), re.M)
            file_bytes = int(held.group(1)) if held else -1
            if file_bytes != manifest_bytes:
                fail("%d bytes in memory files for %d bytes of manifests (each view's once)" % (file_bytes, manifest_bytes))
            idle = []
            for _ in range(IDLE):
                connection = socket.create_connection(("127.0.0.1", port))
                connection.sendall(b"GET /healthz HTTP/1.1\r\nHost: m\r\n\r\n")
                connection.recv(4096)
                idle.append(connection)
            time.sleep(0.5)
            steps.append(("%d idle connections" % IDLE, rss_mb(process.pid)))
            final = steps[-1][1]
            for connection in idle:
                connection.close()
        finally:
            process.kill()
            process.wait()
    print("memory: " + "; ".join("%s %.1f MB" % step for step in steps))
    published, fetched = steps[2][1], steps[3][1]
    print("memory: the %d builds' views (the revision's parsed document, kept once, included) took %.1f MB beyond the "
          "published store, for %.1f MB of manifests: %.2f MB a build beside its %.2f MB manifest"
          % (BUILDS, fetched - published, manifest_bytes / 1e6, (fetched - published) / BUILDS, manifest_bytes / BUILDS / 1e6))
    print("memory: beside RSS, the views' memory files (sendfile) hold %.1f MB: each manifest once" % (file_bytes / 1e6))
    if final > limit:
        fail("%.1f MB RSS, over %.0f MB" % (final, limit))
    print("memory: %.1f MB RSS with %d routes, %d builds' manifests and %d idle connections (limit %.0f MB)"
          % (final, ROUTES, BUILDS, IDLE, limit))


def history_routes(number):
    """A 1,000-route document of its own for revision `number` (one route names it)."""
    document = routes(HISTORY_ROUTES)
    document["routes"][-1] = {"id": "history-%d" % number, "patterns": ["/history/h%d" % number], "destination": "page"}
    return document


def file_body(data, number):
    """The body of DIR/revisions/N: the bytes after the record's header line."""
    with open(os.path.join(data, "revisions", "%08d" % number), "rb") as record:
        return record.read().split(b"\n", 1)[1]


def history(binary, limit):
    versions = ["1.0.%d" % index for index in range(BUILDS)]
    with tempfile.TemporaryDirectory(prefix="waymark-history-") as scratch:
        data = os.path.join(scratch, "data")
        process, token, port = waymark_daemon.start(binary, data, "--threads", "2", "--no-seed", seed=False)
        if port is None:
            process.kill()
            fail("the daemon did not start:\n" + process.stderr.read())
        threading.Thread(target=process.stdout.read, daemon=True).start()
        acknowledged = {}
        try:
            # One build while history is written (each publish is validated against every
            # registered schema), the other 19 before the current revision.
            status, body = call(port, token, "PUT", "/v1/schemas/ios/" + versions[0], schema(versions[0]))
            if status != 201:
                fail("schema: %d %s" % (status, body[:200]))
            # Through the API, each validated and made durable (fsynced, audited) like any
            # publish, on one keep-alive connection: the time is the store's own writes.
            started = time.time()
            connection = http.client.HTTPConnection("127.0.0.1", port, timeout=60)
            for number in range(1, HISTORY + 1):
                headers = {"Authorization": "Bearer " + token, "Content-Type": "application/json"}
                headers.update({"If-None-Match": "*"} if number == 1 else {"If-Match": '"rev-%d"' % (number - 1)})
                connection.request("POST", "/v1/revisions", json.dumps({"message": "history %d" % number, "routes": history_routes(number)}), headers)
                response = connection.getresponse()
                body = response.read()
                if response.status != 201:
                    fail("publish %d: %d %s" % (number, response.status, body[:300]))
                acknowledged[number] = json.loads(body)["sha256"]
            connection.close()
            written = time.time() - started
            for version in versions[1:]:
                status, body = call(port, token, "PUT", "/v1/schemas/ios/" + version, schema(version))
                if status != 201:
                    fail("schema %s: %d %s" % (version, status, body[:200]))
            status, body = call(port, token, "POST", "/v1/revisions", {"message": "current", "routes": routes(ROUTES)},
                                {"If-Match": '"rev-%d"' % HISTORY})
            if status != 201:
                fail("publish the current revision: %d %s" % (status, body[:300]))
            current = HISTORY + 1
        finally:
            process.terminate()
            process.wait()
        stored = sum(os.path.getsize(os.path.join(data, "revisions", name)) for name in os.listdir(os.path.join(data, "revisions")))
        print("history: %d revisions of %d routes published through the API in %.1f s, then one of %d routes; %.0f MB of revisions on disk"
              % (HISTORY, HISTORY_ROUTES, written, ROUTES, stored / 1e6))

        started = time.time()
        # Telemetry names the served revision's 10,000 route ids and at most 10,500 of
        # history's, newest first: 500 revisions' own ids (1,000 down to 501) beside them.
        process, _, port = waymark_daemon.start(binary, data, "--threads", "2", "--no-seed", "--telemetry-max-routes", str(NAMED_ROUTES),
                                                seed=False)
        took = time.time() - started
        if port is None:
            process.kill()
            fail("the daemon did not start on the history:\n" + process.stderr.read())
        threading.Thread(target=process.stdout.read, daemon=True).start()
        try:
            steps = [("started", rss_mb(process.pid))]
            if took >= START_SECONDS:
                fail("the daemon took %.2f s to start on %d revisions (at most %.0f s)" % (took, current, START_SECONDS))
            if steps[0][1] >= limit:
                fail("%.1f MB RSS at start on %d revisions, over %.0f MB" % (steps[0][1], current, limit))
            for version in versions:
                status, body = call(port, token, "GET", "/v1/manifest?platform=ios&version=" + version)
                if status != 200 or json.loads(body)["revision"] != current:
                    fail("manifest %s: %d %s" % (version, status, body[:200]))
            time.sleep(1.5)  # the work queue gives back what building the views freed once it is quiet
            steps.append(("%d builds' manifests of revision %d" % (BUILDS, current), rss_mb(process.pid)))
            status, body = call(port, token, "GET", "/v1/revisions")
            listed = json.loads(body)["revisions"] if status == 200 else []
            if len(listed) != current or listed[-1]["number"] != 1 or listed[-1]["sha256"] != acknowledged[1]:
                fail("the revision list: %d, %d entries" % (status, len(listed)))
            for number in (1, 500, 999):
                status, body = call(port, token, "GET", "/v1/revisions/%d" % number)
                answer = json.loads(body) if status == 200 else {}
                if status != 200 or answer.get("routes") != history_routes(number):
                    fail("revision %d: %d, not the document published" % (number, status))
                disk = hashlib.sha256(file_body(data, number)).hexdigest()
                if not (answer["sha256"] == acknowledged[number] == disk):
                    fail("revision %d: served %s, acknowledged %s, on disk %s" % (number, answer["sha256"], acknowledged[number], disk))
            status, body = call(port, token, "GET", "/v1/revisions/1/diff/999")
            diff = json.loads(body) if status == 200 else {}
            if status != 200 or diff.get("added") != ["history-999"] or diff.get("removed") != ["history-1"]:
                fail("the diff of revisions 1 and 999: %d %s" % (status, body[:200]))
            steps.append(("revisions 1, 500, 999 and a diff read", rss_mb(process.pid)))
            # Many old revisions read by one token: what is kept stays bounded.
            read_started = time.time()
            for number in range(2, 302):
                status, body = call(port, token, "GET", "/v1/revisions/%d" % number)
                if status != 200:
                    fail("revision %d: %d" % (number, status))
            reads = time.time() - read_started
            time.sleep(1.5)
            steps.append(("300 other old revisions read (%.1f ms each)" % (reads / 300 * 1000), rss_mb(process.pid)))
            # Telemetry names history's route ids newest first up to --telemetry-max-routes: the
            # newest revisions' at once, older ones once a background read reaches them
            # (revision 501's "history-501", the oldest within the bound); revision 500's
            # is past it and counts as other. A batch a round naming both, until the
            # counts show the first by name.
            named_started = time.time()
            since = time.strftime("%Y-%m-%dT%H:%M:00Z", time.gmtime(time.time() - 120))
            oldest = current - (NAMED_ROUTES - ROUTES)
            while True:
                batch = {"client": {"platform": "ios", "appVersion": versions[0], "revision": current},
                         "events": [{"ts": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()), "entry": "universalLink",
                                     "outcome": "proceed", "route": "history-%d" % number} for number in (oldest, oldest - 1)]}
                status, body = call(port, token, "POST", "/v1/telemetry", batch)
                if status != 202:
                    fail("telemetry: %d %s" % (status, body[:200]))
                status, body = call(port, token, "GET", "/v1/telemetry/counts?groupBy=route&from=" + since)
                if status != 200:
                    fail("telemetry counts: %d %s" % (status, body[:200]))
                named_routes = {group["key"]["route"] for group in json.loads(body)["groups"]}
                if "history-%d" % (oldest - 1) in named_routes:
                    fail("revision %d's route id was named by telemetry, past the %d ids it may name" % (oldest - 1, NAMED_ROUTES))
                if "history-%d" % oldest in named_routes:
                    break
                if time.time() - named_started > 120:
                    fail("revision %d's route id was never named by telemetry" % oldest)
                time.sleep(0.5)
            named = time.time() - named_started
            status, body = call(port, token, "GET", "/metrics")
            vocabulary = re.search(r"^waymark_telemetry_vocabulary_routes (\d+)$", body.decode(), re.M)
            if not vocabulary or int(vocabulary.group(1)) != NAMED_ROUTES:
                fail("telemetry's vocabulary names %s route ids, not %d" % (vocabulary and vocabulary.group(1), NAMED_ROUTES))
            time.sleep(1.5)
            steps.append(("telemetry naming revision %d's route after %.1f s, not %d's (%d route ids named)" % (oldest, named, oldest - 1, NAMED_ROUTES),
                          rss_mb(process.pid)))
        finally:
            process.kill()
            process.wait()
    print("history: started on %d revisions in %.2f s (limit %.0f s); " % (current, took, START_SECONDS)
          + "; ".join("%s %.1f MB" % step for step in steps))
    # At start: under the limit (checked above). Once serving, what history's reads may keep
    # comes on top of the 20 builds' views: 16 MiB of revision answers and at most 4 parsed
    # older documents of 8 MiB together (docs/api.md, "History on disk").
    serving_limit = limit + 32
    worst = max(rss for _, rss in steps)
    if worst > serving_limit:
        fail("%.1f MB RSS with %d revisions of history, over %.0f MB" % (worst, current, serving_limit))
    print("history: every build's manifest and revisions 1, 500 and 999 as published (SHA-256 acknowledged = served = on disk); "
          "%.1f MB RSS at start (limit %.0f MB), at most %.1f MB serving (limit %.0f MB)" % (steps[0][1], limit, worst, serving_limit))






def token_for(binary, data, name, *scopes):
    import subprocess
    command = [binary, "token", "create", "--data-dir", data, "--name", name, "--rate", "unlimited"]
    for scope in scopes:
        command += ["--scope", scope]
    return subprocess.run(command, check=True, capture_output=True, text=True).stdout.strip()




MIB = 1024 * 1024 / 1e6  # MB in a MiB


def lanes(binary):
    """Each answer's term of the formula against the worst its lane may be asked."""
    import uuid
    with tempfile.TemporaryDirectory(prefix="waymark-memory-lanes-") as scratch:
        data = os.path.join(scratch, "data")
        process, admin, port = waymark_daemon.start(binary, data, "--threads", "2")
        if port is None:
            process.kill()
            fail("the daemon did not start:\n" + process.stderr.read())
        threading.Thread(target=process.stdout.read, daemon=True).start()
        threading.Thread(target=process.stderr.read, daemon=True).start()
        try:
            phone = token_for(binary, data, "lanes-phone", "telemetry:write")
            reader = token_for(binary, data, "lanes-reader", "telemetry:read")
            marketer = token_for(binary, data, "lanes-marketer", "routes:publish")
            # Counts: 480 groups counted now, then the largest answer allowed over them.
            routes_named = ["home", "product", "category", "search", "cart", "orders", "order-detail", "settings", "new-arrivals", "spring-sale"]
            outcomes = [("proceed", None), ("gated", None), ("notFound", "validationFailed"), ("notFound", "expired"),
                        ("notFound", "unknownRoute"), ("notFound", "malformed")]
            ts = iso(int(time.time()) - 30)
            for version in ("5.2.0", "5.3.0"):
                events = [dict({"ts": ts, "entry": entry, "outcome": outcome, "route": route}, **({"reason": reason} if reason else {}))
                          for route in routes_named for entry in ("universalLink", "scheme", "push", "inApp") for outcome, reason in outcomes]
                status, body = call(port, phone, "POST", "/v1/telemetry", {"batch": uuid.uuid4().hex, "events": events,
                                                                           "client": {"platform": "ios", "appVersion": version, "revision": 1}})
                if status != 202:
                    fail("a batch of many groups: %d %s" % (status, body[:200]))
            span = "from=%s&to=%s" % (iso(time.time() - 47 * 3_600), iso(time.time() + 60))
            query = "/v1/telemetry/counts?%s&groupBy=route,entry,outcome,reason,appVersion,platform&step=1m&limit=" % span
            status, body = call(port, reader, "GET", query + "1000")
            details = json.loads(body).get("error", {}).get("details", {}) if status == 400 else {}
            if status != 400 or not details.get("buckets"):
                fail("the counts answer past the bound: %d %s" % (status, body[:200]))
            groups = details["maximum"] // details["buckets"]
            time.sleep(1.5)
            reset_peak(process.pid)
            counts_before = rss_mb(process.pid)
            status, body = call(port, reader, "GET", query + str(groups))
            counts_peak = peak_mb(process.pid)
            if status != 200 or len(json.loads(body)["groups"]) != groups:
                fail("the largest counts answer (%d groups): %d" % (groups, status))
            counts_bound = 32 * MIB + len(body) / 1e6
            if counts_peak - counts_before > counts_bound:
                fail("the largest counts answer (%d values, %.1f MB) peaked %.1f MB over %.1f, past its term (32 MiB and its bytes: %.1f MB)"
                     % (groups * details["buckets"], len(body) / 1e6, counts_peak - counts_before, counts_before, counts_bound))
            # Impacts: a base and a draft of as many patterns as a replay indexes.
            example = json.load(open(os.path.join(waymark_daemon.EXAMPLE, "routes.json")))

            def document(tag):
                routes = json.loads(json.dumps(example))
                routes["routes"].append({"id": "wide", "patterns": ["/" + "/".join("%s%d_%d" % (tag, index, part) for part in range(4))
                                                                    for index in range(39_900)], "destination": "home"})
                return routes
            status, body = call(port, marketer, "POST", "/v1/revisions", {"message": "wide", "routes": document("a")},
                                {"If-Match": '"rev-1"', "Content-Type": "application/json"})
            if status != 201:
                fail("publishing the wide base: %d %s" % (status, body[:200]))
            draft = json.dumps(document("b")).encode()
            time.sleep(1.5)
            reset_peak(process.pid)
            validate_before = rss_mb(process.pid)
            status, body = call(port, marketer, "POST", "/v1/validate", draft, {"Content-Type": "application/json"})
            validated = peak_mb(process.pid) - validate_before
            if status != 200:
                fail("validating the wide draft: %d %s" % (status, body[:200]))
            time.sleep(1.5)
            reset_peak(process.pid)
            before = rss_mb(process.pid)
            status, body = call(port, marketer, "POST", "/v1/revisions/2/impact", draft, {"Content-Type": "application/json"})
            replayed = peak_mb(process.pid) - before
            if status != 200:
                fail("the largest impact: %d %s" % (status, body[:200]))
            if replayed > (160 + 64) * MIB + len(draft) / 1e6:
                fail("the largest impact peaked %.1f MB over %.1f, past a document in work, a replay and its body" % (replayed, before))
            if replayed - validated > 64 * MIB:
                fail("the largest impact peaked %.1f MB over the daemon, %.1f more than its draft's validation, past the 64 MiB of a replay"
                     % (replayed, replayed - validated))
            # An impact whose draft moves an opened route's destination (both documents analysed
            # and resolved per build after the replay leaves the turn), with as many params as a
            # request's parse allows.
            status, body = call(port, phone, "POST", "/v1/telemetry", {"batch": uuid.uuid4().hex, "client": {"platform": "ios", "appVersion": "5.3.0", "revision": 2},
                                                                       "events": [{"ts": iso(int(time.time()) - 30), "entry": "universalLink", "outcome": "proceed", "route": "product"}]})
            if status != 202:
                fail("an open of product: %d %s" % (status, body[:200]))
            moved = document("b")
            for route in moved["routes"]:
                if route["id"] == "product":
                    route["destination"], route["params"] = "category", {"p%d" % index: {"const": "x"} for index in range(240_000)}
            moved = json.dumps(moved).encode()
            time.sleep(1.5)
            reset_peak(process.pid)
            before = rss_mb(process.pid)
            status, body = call(port, marketer, "POST", "/v1/validate", moved, {"Content-Type": "application/json"})
            moved_validated = peak_mb(process.pid) - before
            time.sleep(1.5)
            reset_peak(process.pid)
            before = rss_mb(process.pid)
            status, body = call(port, marketer, "POST", "/v1/revisions/2/impact", moved, {"Content-Type": "application/json"})
            moved_replayed = peak_mb(process.pid) - before
            if status != 200:
                fail("an impact moving a destination: %d %s" % (status, body[:200]))
            if moved_replayed - moved_validated > 64 * MIB:
                fail("an impact moving a destination with 240,000 params peaked %.1f MB, %.1f more than its validation, past a replay's 64 MiB"
                     % (moved_replayed, moved_replayed - moved_validated))
            # The costliest document a validation may be asked (RoutesDocument.maximumPatterns and
            # maximumSegments, a request's parse): 120,000 routes of three-segment patterns, each
            # with an error to report.
            costly = json.loads(json.dumps(example))
            costly["routes"] += [{"id": "w%d" % index, "patterns": ["/a%d/:b/c" % index], "destination": "home"} for index in range(120_000)]
            costly = json.dumps(costly).encode()
            time.sleep(1.5)
            reset_peak(process.pid)
            before = rss_mb(process.pid)
            status, body = call(port, marketer, "POST", "/v1/validate", costly, {"Content-Type": "application/json"})
            costliest = peak_mb(process.pid) - before
            if status != 200 or json.loads(body).get("valid"):
                fail("validating 120,000 routes with errors: %d %s" % (status, body[:200]))
            if costliest > 160 * MIB + len(costly) / 1e6:
                fail("validating the costliest document (120,000 routes, %.1f MB) peaked %.1f MB over the daemon, past a document in work's 160 MiB and its body"
                     % (len(costly) / 1e6, costliest))
        finally:
            process.kill()
            process.wait()
    print("lanes: the largest counts answer (%d groups, %d values, %.1f MB) peaked %.1f MB over the daemon (term 32 MiB and its bytes); "
          "the largest impact (39,900 patterns a side, %.1f MB draft) peaked %.1f MB over the daemon, %.1f over its draft's validation (replay term 64 MiB); "
          "one moving an opened route's destination with 240,000 params %.1f MB, %+.1f over its validation; the costliest validation (120,000 routes with errors, "
          "%.1f MB) %.1f MB (a document in work: 160 MiB)"
          % (groups, groups * details["buckets"], counts_bound - 32 * MIB, counts_peak - counts_before, len(draft) / 1e6,
             replayed, replayed - validated, moved_replayed, moved_replayed - moved_validated, len(costly) / 1e6, costliest))


if __name__ == "__main__":
    main()
    history(os.path.abspath(sys.argv[1]), float(sys.argv[2]) if len(sys.argv) > 2 else 64.0)
    lanes(os.path.abspath(sys.argv[1]))
