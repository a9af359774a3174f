#!/usr/bin/env python3
"""deploy/nginx/waymark.conf exercised for real: nginx (TLS, the manifest cache) in front
of `waymark serve --public-reads` on loopback. 400 concurrent GETs of one build's manifest
through nginx, half of them conditional (If-None-Match), must reach Waymark as a handful
of requests, with Waymark's bytes and ETag; after a publish nginx revalidates and serves
the new revision within its 5 s freshness.

Usage: nginx-cache.py WAYMARK_BINARY
"""
import concurrent.futures
import http.client
import json
import os
import random
import re
import shutil
import socket
import ssl
import subprocess
import sys
import tempfile
import threading
import time

import waymark_daemon

ROOT = waymark_daemon.ROOT
CLIENTS = 400


def fail(message):
    print("nginx-cache: FAIL: " + message, file=sys.stderr)
    sys.exit(1)


def unused_port():
    """A port below the kernel's ephemeral range that nothing holds now: no outgoing
    connection (this machine's other checks make thousands) and no `--port 0` listener is
    ever given one there, so it stays free unless a process asks for it by number; nginx's
    start is tried again on new ports if one did."""
    with open("/proc/sys/net/ipv4/ip_local_port_range") as handle:
        low = int(handle.read().split()[0])
    while True:
        if low - 1024 >= 1000:
            port = random.randrange(max(1024, low - 12000), low)
        else:
            port = 0  # (no room below the range on this host: one the kernel picks, still tried again if taken)
        with socket.socket() as probe:
            try:
                probe.bind(("127.0.0.1", port))
                return probe.getsockname()[1]
            except OSError:
                continue


def main():
    binary = sys.argv[1]
    work = tempfile.mkdtemp(prefix="waymark-nginx-")
    os.chmod(work, 0o755)
    processes = []
    try:
        daemon = subprocess.Popen([binary, "serve", "--data-dir", os.path.join(work, "data"), "--port", "0", "--public-reads",
                                   "--seed", waymark_daemon.EXAMPLE], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        processes.append(daemon)
        port = token = None
        for line in daemon.stdout:
            found = waymark_daemon.TOKEN.search(line)
            token = token or (found.group(1) if found else None)
            match = re.search(r"Listening on http://127\.0\.0\.1:(\d+)", line)
            if match:
                port = int(match.group(1))
                break
        if not port or not token:
            fail("waymark did not start")
        threading.Thread(target=daemon.stdout.read, daemon=True).start()
        access = []  # Waymark's access log: one JSON line per request on stderr
        def read_log():
            for line in daemon.stderr:
                try:
                    access.append(json.loads(line))
                except ValueError:
                    pass
        threading.Thread(target=read_log, daemon=True).start()

        # The shipped config with this machine's paths and ports.
        subprocess.run(["openssl", "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-days", "1", "-subj", "/CN=links.example.com",
                        "-keyout", os.path.join(work, "privkey.pem"), "-out", os.path.join(work, "fullchain.pem")],
                       check=True, capture_output=True)
        with open(os.path.join(ROOT, "deploy", "nginx", "waymark.conf")) as handle:
            shipped = handle.read()

        def start_nginx(https, plain):
            """nginx on the shipped config with this machine's paths and these ports; None
            when a port was taken between choosing it and nginx binding it."""
            conf = shipped
            for old, new in [("/etc/ssl/waymark/", work + "/"), ("/var/cache/nginx/waymark", work + "/cache"),
                             ("server 127.0.0.1:8080;", "server 127.0.0.1:%d;" % port),
                             ("listen 443 ssl http2;", "listen 127.0.0.1:%d ssl http2;" % https), ("listen [::]:443 ssl http2;", ""),
                             ("listen 80;", "listen 127.0.0.1:%d;" % plain), ("listen [::]:80;", "")]:
                if old not in conf:
                    fail("deploy/nginx/waymark.conf no longer has %r" % old)
                conf = conf.replace(old, new)
            with open(os.path.join(work, "waymark.conf"), "w") as handle:
                handle.write(conf)
            with open(os.path.join(work, "nginx.conf"), "w") as handle:
                handle.write("worker_processes 2;\nerror_log %s/error.log;\npid %s/nginx.pid;\nevents { worker_connections 2048; }\n"
                             "http {\n  access_log off;\n  client_body_temp_path %s/body;\n  proxy_temp_path %s/proxy;\n"
                             "  fastcgi_temp_path %s/fastcgi;\n  uwsgi_temp_path %s/uwsgi;\n  scgi_temp_path %s/scgi;\n"
                             "  include %s/waymark.conf;\n}\n" % ((work,) * 8))
            test = subprocess.run(["nginx", "-t", "-c", os.path.join(work, "nginx.conf")], capture_output=True, text=True)
            if test.returncode != 0:
                fail("nginx -t refused the config:\n" + test.stderr)
            nginx = subprocess.Popen(["nginx", "-c", os.path.join(work, "nginx.conf"), "-g", "daemon off;"], stderr=subprocess.PIPE, text=True)
            processes.append(nginx)
            deadline = time.time() + 10
            while time.time() < deadline:
                if nginx.poll() is not None:
                    error = nginx.stderr.read()
                    if os.path.exists(os.path.join(work, "error.log")):
                        with open(os.path.join(work, "error.log")) as handle:
                            error += handle.read()
                    if "Address already in use" in error:
                        return None
                    fail("nginx exited (%d) on start:\n%s" % (nginx.returncode, error))
                # nginx writes its pid file once it holds its listening sockets (a
                # connection alone could reach whoever took the port).
                try:
                    with open(os.path.join(work, "nginx.pid")) as handle:
                        written = handle.read().strip() == str(nginx.pid)
                except OSError:
                    written = False
                if written:
                    threading.Thread(target=nginx.stderr.read, daemon=True).start()
                    return nginx
                time.sleep(0.05)
            fail("nginx did not listen on 127.0.0.1:%d and :%d within 10 s" % (https, plain))

        for _ in range(5):
            https, plain = unused_port(), unused_port()
            if https != plain and start_nginx(https, plain):
                break
        else:
            fail("nginx found its ports taken five times")

        context = ssl.create_default_context(cafile=os.path.join(work, "fullchain.pem"))
        context.check_hostname = False
        target = "/v1/manifest?platform=ios&version=5.3.0"

        def get(path, headers=None, via_nginx=True):
            if via_nginx:
                connection = http.client.HTTPSConnection("127.0.0.1", https, context=context, timeout=20)
            else:
                connection = http.client.HTTPConnection("127.0.0.1", port, timeout=20)
            connection.request("GET", path, headers=headers or {})
            response = connection.getresponse()
            body = response.read()
            connection.close()
            return response.status, response.getheader("ETag"), body, response.getheader("X-Cache-Status")

        _, direct_etag, direct_body, _ = get(target, via_nginx=False)
        time.sleep(0.3)  # its access log line follows the answer
        before = sum(1 for entry in access if entry.get("path", "").startswith("/v1/manifest"))
        barrier = threading.Barrier(CLIENTS)

        def client(index):
            barrier.wait()
            headers = {"If-None-Match": direct_etag} if index % 2 else {}
            return get(target, headers)

        started = time.time()
        with concurrent.futures.ThreadPoolExecutor(CLIENTS) as pool:
            answers = list(pool.map(client, range(CLIENTS)))
        elapsed = time.time() - started
        time.sleep(0.3)  # the access log line follows the answer
        reached = sum(1 for entry in access if entry.get("path", "").startswith("/v1/manifest")) - before
        # A conditional GET is answered 304 from the cache; the few that went to Waymark to
        # fill it (nginx asks unconditionally, to store the whole answer) get the 200.
        not_modified = 0
        for index, (status, etag, body, _) in enumerate(answers):
            ok = status == 200 and body == direct_body or (status == 304 and index % 2 and not body)
            if not ok or etag != direct_etag:
                fail("client %d got %d %s through nginx, expected Waymark's bytes or a 304 with ETag %s" % (index, status, etag, direct_etag))
            not_modified += status == 304
        if not_modified < CLIENTS // 2 - 3:
            fail("only %d of %d conditional GETs through nginx were answered 304" % (not_modified, CLIENTS // 2))
        # One request fills the cache (the others wait on its lock); after that nginx asks
        # again at most once per 5 s of freshness (a background update, one at a time), so a
        # herd slowed by a busy machine may add one per 5 s it lasted.
        allowed = 1 + int(elapsed // 5)
        if reached > allowed:
            fail("%d concurrent GETs through nginx in %.1f s reached Waymark %d times (at most %d: one fill and one per 5 s)"
                 % (CLIENTS, elapsed, reached, allowed))

        # A publish: nginx revalidates with the ETag after 5 s and serves the new revision.
        with open(os.path.join(waymark_daemon.EXAMPLE, "routes.json")) as handle:
            routes = json.load(handle)
        # New content: the same routes again would be an unchanged publish, not a revision.
        routes["routes"].append({"id": "nginx-cache", "patterns": ["/nginx-cache"], "destination": "home"})
        connection = http.client.HTTPConnection("127.0.0.1", port, timeout=10)
        connection.request("POST", "/v1/revisions", body=json.dumps({"message": "nginx-cache", "routes": routes}),
                           headers={"Authorization": "Bearer " + token, "If-Match": '"rev-1"', "Content-Type": "application/json"})
        if connection.getresponse().status != 201:
            fail("publishing revision 2 failed")
        published = time.time()
        _, new_etag, _, _ = get(target, via_nginx=False)
        while True:
            status, etag, _, cache = get(target)
            if etag == new_etag:
                break
            if time.time() - published > 12:
                fail("nginx still serves %s 12 s after the publish" % etag)
            time.sleep(0.1)
        lag = time.time() - published
        print("nginx-cache: nginx -t accepts deploy/nginx/waymark.conf; %d concurrent GETs of one manifest through nginx "
              "(TLS; %d of the %d with If-None-Match answered 304, the rest 200 with Waymark's bytes and ETag) in %.2f s reached Waymark %d time(s); "
              "after a publish nginx served the new revision %.1f s later (cache status %s)" % (CLIENTS, not_modified, CLIENTS // 2, elapsed, reached, lag, cache))
    finally:
        for process in processes:
            if process.poll() is None:
                process.terminate()
                try:
                    process.wait(timeout=10)
                except subprocess.TimeoutExpired:
                    process.kill()
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
