#!/usr/bin/env bash
# Live tests of Waymark's HTTP server with real clients on loopback: curl, Python's
# http.client, wrk, and h2load --h1 -m 4 (pipelining). Installs wrk and h2load when missing.
set -euo pipefail
cd "$(dirname "$0")/../.."
bash Tests/Scripts/install-packages.sh curl=curl wrk=wrk h2load=nghttp2-client

work=$(mktemp -d)
server_pid=""
cleanup() { [ -n "$server_pid" ] && kill "$server_pid" 2>/dev/null; rm -rf "$work"; }
trap cleanup EXIT
passed=0; failed=0
check() { # check LABEL COMMAND...
  local label=$1; shift
  if "$@" >"$work/out" 2>&1; then passed=$((passed + 1)); else failed=$((failed + 1)); echo "FAIL: $label"; sed 's/^/    /' "$work/out" | head -20; fi
}

swift build --product HTTPFixtureServer >/dev/null
bin=$(swift build --show-bin-path)/HTTPFixtureServer
python3 -c "print('{\"routes\": [' + ','.join(['{\"id\": \"r%d\"}' % i for i in range(2000)]) + ']}')" > "$work/manifest.json"
"$bin" "$work/manifest.json" 0 2 --access-log >"$work/stdout" 2>"$work/access.log" &
server_pid=$!
for _ in $(seq 100); do grep -q "on 127.0.0.1:" "$work/stdout" 2>/dev/null && break; sleep 0.1; done
port=$(sed -n 's/.*on 127.0.0.1:\([0-9]*\).*/\1/p' "$work/stdout")
url="http://127.0.0.1:$port"
etag=$(curl -fsI "$url/manifest.json" | tr -d '\r' | awk -F': ' 'tolower($1)=="etag"{print $2}')

# curl
check "curl GET returns the file" bash -c "curl -fs '$url/manifest.json' | cmp - '$work/manifest.json'"
check "curl HEAD has the length and no body" bash -c "
  out=\$(curl -fs -I '$url/manifest.json' | tr -d '\r')
  echo \"\$out\" | grep -qx \"Content-Length: $(stat -c %s "$work/manifest.json")\"
  [ \$(curl -fs --head '$url/manifest.json' -o /dev/null -w '%{size_download}') = 0 ]"
check "curl conditional GET is 304" bash -c "[ \$(curl -s -o /dev/null -w '%{http_code}' -H 'If-None-Match: $etag' '$url/manifest.json') = 304 ]"
check "curl chunked POST echoes" bash -c "[ \"\$(printf 'hello chunked' | curl -fs -H 'Transfer-Encoding: chunked' --data-binary @- '$url/echo')\" = 'hello chunked' ]"
check "curl Expect: 100-continue" bash -c "curl -sv -H 'Expect: 100-continue' --data-binary 'continued' '$url/echo' 2>&1 | grep -q '< HTTP/1.1 100 Continue' && [ \"\$(curl -fs -H 'Expect: 100-continue' --data-binary 'continued' '$url/echo')\" = continued ]"
check "curl body over the route limit is 413" bash -c "[ \$(head -c 70000 /dev/zero | curl -s -o /dev/null -w '%{http_code}' --data-binary @- '$url/echo') = 413 ]"
check "curl Expect over the limit gets 413, no 100" bash -c "out=\$(head -c 70000 /dev/zero | curl -sv -H 'Expect: 100-continue' --data-binary @- '$url/echo' 2>&1); echo \"\$out\" | grep -q '< HTTP/1.1 413' && ! echo \"\$out\" | grep -q '< HTTP/1.1 100'"
check "curl 404, 405 with Allow, 501" bash -c "
  [ \$(curl -s -o /dev/null -w '%{http_code}' '$url/nope') = 404 ]
  curl -s -D - -o /dev/null -X DELETE '$url/manifest.json' | tr -d '\r' | grep -qx 'Allow: GET, HEAD'
  curl -s -D - -o /dev/null -X BREW '$url/manifest.json' | tr -d '\r' | grep -qx 'Allow: GET, HEAD'
  [ \$(curl -s -o /dev/null -w '%{http_code}' -X BREW '$url/nope') = 501 ]"
check "curl HTTP/1.0 gets Connection: close" bash -c "curl -fs --http1.0 -D - -o /dev/null '$url/manifest.json' | tr -d '\r' | grep -qx 'Connection: close'"
check "curl reuses one connection for two requests" bash -c "curl -sv '$url/manifest.json' '$url/manifest.json' -o /dev/null -o /dev/null 2>&1 | grep -q 'Re-using existing connection'"
check "curl over IPv4 sets Date and X-Request-Id" bash -c "curl -fsI '$url/manifest.json' | tr -d '\r' | grep -q '^Date: .* GMT$' && curl -fsI '$url/manifest.json' | grep -qi '^X-Request-Id: '"

# Python's http.client
check "python http.client" python3 - "$port" <<'PY'
import http.client, socket, sys
port = int(sys.argv[1])
c = http.client.HTTPConnection("127.0.0.1", port, timeout=5)
for _ in range(5):                      # keep-alive: five requests, one connection
    c.request("GET", "/manifest.json"); r = c.getresponse(); body = r.read()
    assert r.status == 200 and len(body) == int(r.getheader("Content-Length")), r.status
    sock = c.sock
assert c.sock is sock
c.request("HEAD", "/manifest.json"); r = c.getresponse(); assert r.status == 200 and r.read() == b""
c.request("POST", "/echo", body=iter([b"a" * 1000, b"b" * 1000]), encode_chunked=True)
r = c.getresponse(); assert r.read() == b"a" * 1000 + b"b" * 1000
# A framing error is answered with 400 and the connection is closed.
s = socket.create_connection(("127.0.0.1", port), timeout=5)
s.sendall(b"POST /echo HTTP/1.1\r\nHost: a\r\nContent-Length: 3\r\nTransfer-Encoding: chunked\r\n\r\n")
data = b""
while chunk := s.recv(65536): data += chunk
assert data.startswith(b"HTTP/1.1 400 "), data[:40]
assert b"Connection: close" in data
print("ok")
PY

# wrk: no socket errors, no unexpected statuses.
check "wrk 2 s with 64 connections" bash -c "out=\$(wrk -t2 -c64 -d2s '$url/manifest.json'); echo \"\$out\"; ! echo \"\$out\" | grep -qE 'Socket errors|Non-2xx'"

# h2load in HTTP/1.1 mode with 4 requests in flight per connection (pipelining).
check "h2load --h1 -m 4 pipelining" bash -c "out=\$(h2load --h1 -m 4 -n 4000 -c 8 '$url/manifest.json'); echo \"\$out\"; echo \"\$out\" | grep -q '4000 succeeded, 0 failed, 0 errored'"

# The access log is one JSON object per request.
check "access log lines are JSON" python3 - "$work/access.log" <<'PY'
import json, sys
lines = [l for l in open(sys.argv[1]) if l.strip()]
assert len(lines) > 100, len(lines)
for line in lines:
    entry = json.loads(line)
    if "method" in entry:
        assert {"method", "path", "status", "bytes", "durationUs", "requestId"} <= entry.keys(), entry
print(len(lines), "lines")
PY

# SIGTERM: stops and exits 0.
check "SIGTERM exits 0" bash -c "kill -TERM $server_pid; for _ in \$(seq 50); do kill -0 $server_pid 2>/dev/null || break; sleep 0.1; done; ! kill -0 $server_pid 2>/dev/null"
wait "$server_pid" && status=0 || status=$?
server_pid=""
check "exit status after SIGTERM is 0" test "$status" = 0

echo "http-live: $passed passed, $failed failed"
[ "$failed" = 0 ]
