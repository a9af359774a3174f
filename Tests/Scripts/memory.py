#!/usr/bin/env python3
"""Memory of a release `waymark serve` holding a large table for many builds: 10,000
routes (the shapes of `make bench`) published once, 20 app builds with a schema each,
every build's manifest fetched, then 1,000 idle keep-alive connections. Prints the RSS
after each step and what the builds' cached views cost beside their manifests' bytes;
fails above LIMIT_MB (64) at the end.

Usage: memory.py WAYMARK_RELEASE_BINARY [LIMIT_MB]
"""
import json
import os
import resource
import socket
import sys
import tempfile
import threading
import time

import waymark_daemon
from waymark_daemon import rss_mb

ROUTES, BUILDS, IDLE = 10_000, 20, 1_000


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
    if final > limit:
        fail("%.1f MB RSS, over %.0f MB" % (final, limit))
    print("memory: %.1f MB RSS with %d routes, %d builds' manifests and %d idle connections (limit %.0f MB)"
          % (final, ROUTES, BUILDS, IDLE, limit))


if __name__ == "__main__":
    main()
