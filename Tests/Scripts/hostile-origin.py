#!/usr/bin/env python3
"""A hostile HTTP server on loopback, for the app's clients (Swift and Kotlin): what a
compromised server, a proxy or a captive portal may send. Prints its port, then serves
until killed; every path is judged by its first segment:

    /big/...      200, Content-Length 400 MB, zeros for as long as the client reads
    /chunked/...  200, chunked, no length, zeros without end, for as long as the client reads
    /drip/...     200, Content-Length 1,000, one byte every 10 seconds
    /trickle/...  the same, a byte every 0.2 s: faster than any idle timeout, 200 s in all
    /stats        {"first segment": bytes of body sent, ...} so far, as JSON
    /elsewhere/...  307 to the same server under another name (localhost): another origin
    /same/...     307 to /stats on this origin

It exits when its parent does (a test process that ends, however it ends).

    python3 Tests/Scripts/hostile-origin.py
"""
import http.server
import json
import os
import socketserver
import sys
import threading
import time

TOTAL = 400 * 1024 * 1024
CHUNK = b"\0" * 65536
SENT = {}
LOCK = threading.Lock()


def count(kind, n):
    with LOCK:
        SENT[kind] = SENT.get(kind, 0) + n


class Handler(http.server.BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def log_message(self, *args):
        pass

    def do_POST(self):
        length = int(self.headers.get("Content-Length") or 0)
        self.rfile.read(length)
        self.do_GET()

    def do_GET(self):
        kind = self.path.split("/")[1].split("?")[0]
        try:
            if kind == "stats":
                with LOCK:
                    body = json.dumps(SENT).encode()
                self.send_response(200)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)
            elif kind == "big":
                self.send_response(200)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(TOTAL))
                self.end_headers()
                self.stream(kind, lambda chunk: self.wfile.write(chunk))
            elif kind == "chunked":
                self.send_response(200)
                self.send_header("Content-Type", "application/json")
                self.send_header("Transfer-Encoding", "chunked")
                self.end_headers()
                self.stream(kind, lambda chunk: self.wfile.write(b"%x\r\n%s\r\n" % (len(chunk), chunk)), endless=True)
            elif kind in ("elsewhere", "same"):
                host = "localhost" if kind == "elsewhere" else "127.0.0.1"
                self.send_response(307)
                self.send_header("Location", "http://%s:%d/stats" % (host, self.server.server_address[1]))
                self.send_header("Content-Length", "0")
                self.end_headers()
            elif kind in ("drip", "trickle"):
                self.send_response(200)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", "1000")
                self.end_headers()
                for _ in range(1000):
                    self.wfile.write(b" ")
                    self.wfile.flush()
                    count(kind, 1)
                    time.sleep(10 if kind == "drip" else 0.2)
            else:
                self.send_response(404)
                self.send_header("Content-Length", "0")
                self.end_headers()
        except (BrokenPipeError, ConnectionResetError):
            pass

    def stream(self, kind, write, endless=False):
        sent = 0
        while endless or sent < TOTAL:
            write(CHUNK)
            sent += len(CHUNK)
            count(kind, len(CHUNK))
            if endless:
                time.sleep(0.0005)  # at most ~100 MB/s: a client's limit is reached in a third of a second, not at a core's whole speed


class Server(socketserver.ThreadingMixIn, http.server.HTTPServer):
    daemon_threads = True
    allow_reuse_address = True
    # Many clients at once (the suites run in parallel): a full accept queue drops SYNs, and
    # a dropped SYN is retried for up to two minutes.
    request_queue_size = 128


def watch_parent(parent):
    while os.getppid() == parent:
        time.sleep(0.5)
    os._exit(0)


def main():
    threading.Thread(target=watch_parent, args=(os.getppid(),), daemon=True).start()
    server = Server(("127.0.0.1", 0), Handler)
    print(server.server_address[1], flush=True)
    server.serve_forever()


if __name__ == "__main__":
    sys.exit(main())
