#!/usr/bin/env bash
# make count-instructions: what one request costs the daemon in user space, counted by
# valgrind --tool=callgrind (instructions, not seconds: the same figure whatever else the
# machine is doing, so a change to the request path can be judged run against run).
# A release `waymark serve` with one event loop runs under callgrind; a Python client sends
# COUNT requests of each case on one keep-alive connection, waiting for each answer:
#   manifest 304  GET /v1/manifest?platform=ios&version=5.3.0, token, If-None-Match
#   manifest 200  the same without If-None-Match (35 KB answer, as in bench-http)
#   landing       GET /product/p1 on the link host storefront.example from a desktop: the
#                 302 to the web site (bench-http's landing pair), counted as web telemetry
#   telemetry     POST /v1/telemetry, a batch of 50 events (bench-telemetry's batches),
#                 durable (the committer thread's work counted too)
#   parser        the same batches through BatchParser.parse alone, in process
# The counters are zeroed after a warm-up and dumped after each case. Kernel work (the
# system calls themselves) is not counted: bench-http and bench-telemetry measure the whole.
set -euo pipefail
cd "$(dirname "$0")/../.."
bash Tests/Scripts/install-packages.sh valgrind=valgrind python3=python3 curl=curl

COUNT=${COUNT:-2000}
PORT=${COUNT_PORT:-18097}
work=$(mktemp -d)
pid=""
cleanup() { [ -n "$pid" ] && kill "$pid" 2>/dev/null; wait 2>/dev/null; rm -rf "$work"; }
trap cleanup EXIT

swift build -c release --product waymark >/dev/null
swift build -c release --product TelemetryBench >/dev/null
bin=$(swift build -c release --show-bin-path)
url="http://127.0.0.1:$PORT"

# The store bench-http measures: the example plus a revision of 300 campaign routes.
"$bin/waymark" serve --data-dir "$work/data" --seed manifests/storefront --port "$PORT" --quiet >"$work/seed.out" 2>&1 &
pid=$!
bash Tests/Scripts/publish-campaigns.sh "$work/seed.out" "$url"
kill "$pid"; wait "$pid" 2>/dev/null || true; pid=""
read_token=$("$bin/waymark" token create --data-dir "$work/data" --name count-app --scope manifest:read 2>/dev/null)
write_token=$("$bin/waymark" token create --data-dir "$work/data" --name count-telemetry --scope telemetry:write --rate unlimited 2>/dev/null)
"$bin/TelemetryBench" generate "$work/batches" 16 "$(date +%s)"

mkdir "$work/callgrind"
valgrind --tool=callgrind --callgrind-out-file="$work/callgrind/out.%p" \
  "$bin/waymark" serve --data-dir "$work/data" --port "$PORT" --threads 1 --quiet >"$work/serve.out" 2>&1 &
pid=$!
for _ in $(seq 600); do curl -fs -o /dev/null "$url/healthz" 2>/dev/null && break; sleep 0.1; done
curl -fs -o /dev/null "$url/healthz"
etag=$(curl -fsI -H "Authorization: Bearer $read_token" "$url/v1/manifest?platform=ios&version=5.3.0" \
  | tr -d '\r' | awk -F': ' 'tolower($1)=="etag"{print $2}')

cat > "$work/client.py" <<'PY'
# client.py PORT COUNT METHOD PATH BODYFILE|- HEADER... : COUNT requests on one connection,
# each answer read whole before the next is sent; exits non-zero on an unexpected status.
import socket, sys
port, count, method, path, bodyfile = int(sys.argv[1]), int(sys.argv[2]), sys.argv[3], sys.argv[4], sys.argv[5]
headers, expected = sys.argv[6:-1], sys.argv[-1]
bodies = [b""] if bodyfile == "-" else [open(f, "rb").read() for f in bodyfile.split(",")]
requests = []
for body in bodies:
    host = "" if any(h.lower().startswith("host:") for h in headers) else f"Host: 127.0.0.1:{port}\r\n"
    head = f"{method} {path} HTTP/1.1\r\n{host}" + "".join(h + "\r\n" for h in headers)
    if body: head += f"Content-Type: application/json\r\nContent-Length: {len(body)}\r\n"
    requests.append(head.encode() + b"\r\n" + body)
connection = socket.create_connection(("127.0.0.1", port))
buffer = b""
for index in range(count):
    connection.sendall(requests[index % len(requests)])
    while True:
        end = buffer.find(b"\r\n\r\n")
        if end >= 0:
            lines = buffer[:end].decode().split("\r\n")
            length = next((int(l.split(":", 1)[1]) for l in lines[1:] if l.lower().startswith("content-length:")), 0)
            if len(buffer) >= end + 4 + length:
                if lines[0].split(" ")[1] != expected: sys.exit(f"{method} {path}: {lines[0]}")
                buffer = buffer[end + 4 + length:]
                break
        data = connection.recv(1 << 20)
        if not data: sys.exit("the server closed the connection")
        buffer += data
PY
batches=$(ls "$work"/batches/batch-*.json | paste -sd,)
# case LABEL UNIT EXPECTED METHOD PATH BODY HEADER...
case_() {
  local label=$1 unit=$2 expected=$3 method=$4 path=$5 body=$6
  shift 6
  python3 "$work/client.py" "$PORT" 200 "$method" "$path" "$body" "$@" "$expected"
  callgrind_control -z "$pid" >/dev/null 2>&1
  python3 "$work/client.py" "$PORT" "$COUNT" "$method" "$path" "$body" "$@" "$expected"
  callgrind_control -d "$pid" >/dev/null 2>&1
  local dump total
  for _ in $(seq 50); do dump=$(ls -t "$work"/callgrind/out.* 2>/dev/null | head -1); [ -n "$dump" ] && break; sleep 0.1; done
  total=$(callgrind_annotate "$dump" 2>/dev/null | awk '/PROGRAM TOTALS/ { gsub(",", "", $1); print $1; exit }')
  printf "  %-34s %9d instructions per %s\n" "$label" "$((total / COUNT))" "$unit"
  # CALLGRIND_KEEP=DIR keeps each case's dump there, for callgrind_annotate by function.
  if [ -n "${CALLGRIND_KEEP:-}" ]; then mkdir -p "$CALLGRIND_KEEP"; cp "$dump" "$CALLGRIND_KEEP/$(echo "$label" | tr -c 'A-Za-z0-9' _).out"; fi
  rm -f "$work"/callgrind/out.*.*
}
echo "count-instructions: callgrind, release build, one event loop, $COUNT requests per case on one connection"
case_ "GET /v1/manifest, 304" request 304 GET "/v1/manifest?platform=ios&version=5.3.0" - \
  "Authorization: Bearer $read_token" "If-None-Match: $etag"
case_ "GET /v1/manifest, 200 (35 KB)" request 200 GET "/v1/manifest?platform=ios&version=5.3.0" - \
  "Authorization: Bearer $read_token"
case_ "GET /product/p1, landing 302" request 302 GET /product/p1 - "Host: storefront.example" \
  "User-Agent: Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 Chrome/124.0 Safari/537.36"
case_ "POST /v1/telemetry, 50 events" batch 202 POST /v1/telemetry "$batches" "Authorization: Bearer $write_token"

# The batch parser alone, in process: TelemetryBench parses each batch ROUNDS times, only
# BatchParser.parse is counted, and every event must have been accepted.
ROUNDS=20
parsed=$((ROUNDS * $(ls "$work"/batches/batch-*.json | wc -l)))
accepted=$(valgrind --tool=callgrind --callgrind-out-file="$work/callgrind/parser.out" --toggle-collect='*BatchParser*parse*' \
  "$bin/TelemetryBench" parse "$work/batches" "$ROUNDS" 2>/dev/null | awk '{ print $2 }')
[ "$accepted" = "$((parsed * 50))" ] || { echo "the parser accepted $accepted events of $((parsed * 50))" >&2; exit 1; }
# (awk reads to the end: an early exit would end callgrind_annotate with SIGPIPE.)
total=$(callgrind_annotate "$work/callgrind/parser.out" 2>/dev/null | awk '/PROGRAM TOTALS/ && !done { gsub(",", "", $1); print $1; done = 1 }')
printf "  %-34s %9d instructions per batch\n" "BatchParser.parse alone, 50 events" "$((total / parsed))"
