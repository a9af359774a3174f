#!/usr/bin/env python3
"""An HTTPS server on loopback for the link-check tests: the sites a route may point at.

    https-fixture.py DIR [--names a.test,b.test] [--address 127.0.0.1]

Makes a self-signed certificate for `localhost`, `*.waymark.test`, 127.0.0.1 and the extra
--names in DIR (ca.pem, key.pem) unless there already is one, listens on a free port and
prints `PORT <n>` once ready. Every connection and request is appended to DIR/requests.log
(CONNECT, GET, and END once answered) before anything is answered, so a test can show
that a refused target was never reached.
The server exits when its parent does.

What it serves, by path:
  /status/NNN         status NNN, a small HTML body
  /redirect?to=URL    302 to URL (status=NNN to choose another 3xx)
  /drip               a 100,000-byte body, one byte every 0.25 s
  /endless            a chunked body that never ends
  /slow?ms=N          200 after N milliseconds
  /hang               accepts and never answers
  CONNECT (a proxy request) is logged as PROXY and refused
  anything else       DIR/sites/HOST/PATH (HOST from the Host field, port removed);
                      404 when missing; the content type is application/json for
                      /.well-known/ files and text/html otherwise, unless a file
                      PATH.type next to it says another; a file PATH.redirect
                      makes it a 301 to the URL inside
"""
import os
import ssl
import subprocess
import sys
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from urllib.parse import parse_qs, urlsplit

directory = sys.argv[1]
args = dict(zip(sys.argv[2::2], sys.argv[3::2]))
names = ["localhost", "*.waymark.test"] + [n for n in args.get("--names", "").split(",") if n]
address = args.get("--address", "127.0.0.1")
os.makedirs(os.path.join(directory, "sites"), exist_ok=True)
certificate = os.path.join(directory, "ca.pem")
key = os.path.join(directory, "key.pem")
log_path = os.path.join(directory, "requests.log")
log_lock = threading.Lock()

if not os.path.exists(certificate):
    alt = ",".join([f"DNS:{n}" for n in names] + ["IP:127.0.0.1", "IP:::1"])
    subprocess.run(["openssl", "req", "-x509", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1",
                    "-nodes", "-keyout", key, "-out", certificate, "-days", "2", "-subj", "/CN=waymark-test",
                    "-addext", f"subjectAltName={alt}", "-addext", "basicConstraints=critical,CA:TRUE"],
                   check=True, capture_output=True)


def log(line):
    with log_lock, open(log_path, "a") as f:
        f.write(line + "\n")


class Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def log_message(self, *args):
        pass

    def send(self, status, body=b"", content_type="text/html", headers=()):
        self.send_response(status)
        self.send_header("Content-Type", content_type)
        self.send_header("Content-Length", str(len(body)))
        for name, value in headers:
            self.send_header(name, value)
        self.end_headers()
        self.wfile.write(body)

    def do_CONNECT(self):
        log(f"PROXY {self.path}")
        self.send(405)

    def do_GET(self):
        host = (self.headers.get("Host") or "").lower()
        host = host.rsplit(":", 1)[0] if not host.endswith("]") else host
        log(f"GET {host} {self.path}")
        self.ended = False
        try:
            self.answer(host)
        finally:
            self.end(host)

    def end(self, host):
        """Logs END once: before a slow answer is sent, else after the answer."""
        if not self.ended:
            self.ended = True
            log(f"END {host} {self.path}")

    def answer(self, host):
        url = urlsplit(self.path)
        query = parse_qs(url.query)
        if url.path.startswith("/status/"):
            self.send(int(url.path[8:]), b"<p>status</p>")
        elif url.path == "/redirect":
            self.send(int(query.get("status", ["302"])[0]), b"", headers=[("Location", query["to"][0])])
        elif url.path == "/drip":
            self.send_response(200)
            self.send_header("Content-Length", "100000")
            self.end_headers()
            for _ in range(100000):
                self.wfile.write(b"x")
                self.wfile.flush()
                time.sleep(0.25)
        elif url.path == "/endless":
            self.send_response(200)
            self.send_header("Content-Type", "application/json")
            self.send_header("Transfer-Encoding", "chunked")
            self.end_headers()
            chunk = b"x" * 16384
            while True:
                self.wfile.write(b"%x\r\n%s\r\n" % (len(chunk), chunk))
        elif url.path == "/slow":
            time.sleep(int(query.get("ms", ["300"])[0]) / 1000)
            # END before the answer: the client's next request (its slot given back once it
            # has this answer) is then always logged after it, so the log's count of
            # requests in progress never counts one that has ended (it once read 4 of 3).
            self.end(host)
            self.send(200, b"<p>slow</p>")
        elif url.path == "/hang":
            time.sleep(60)
        else:
            path = os.path.normpath(os.path.join(directory, "sites", host, url.path.lstrip("/")))
            if path.startswith(os.path.join(directory, "sites")) and os.path.exists(path + ".redirect"):
                self.send(301, b"", headers=[("Location", open(path + ".redirect").read().strip())])
                return
            if not path.startswith(os.path.join(directory, "sites")) or not os.path.isfile(path):
                self.send(404, b"<p>not found</p>")
                return
            content_type = "application/json" if url.path.startswith("/.well-known/") else "text/html"
            if os.path.exists(path + ".type"):
                content_type = open(path + ".type").read().strip()
            self.send(200, open(path, "rb").read(), content_type)


class Server(ThreadingHTTPServer):
    daemon_threads = True
    # Tests connect in bursts; the default backlog of 5 drops SYNs, and a retransmitted SYN
    # waits a second: longer than the tests' connect timeout.
    request_queue_size = 128
    address_family = __import__("socket").AF_INET6 if ":" in address else __import__("socket").AF_INET

    def verify_request(self, request, client_address):
        log(f"CONNECT {client_address[0]}")
        return True

    def handle_error(self, request, client_address):
        pass  # clients that hang up on purpose (capped bodies, refused certificates)


server = Server((address, 0), Handler)
context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
context.load_cert_chain(certificate, key)
server.socket = context.wrap_socket(server.socket, server_side=True, do_handshake_on_connect=False)
parent = os.getppid()


def watch_parent():
    while os.getppid() == parent:
        time.sleep(0.5)
    os._exit(0)


threading.Thread(target=watch_parent, daemon=True).start()
print(f"PORT {server.server_address[1]}", flush=True)
server.serve_forever()
