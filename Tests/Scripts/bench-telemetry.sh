#!/usr/bin/env bash
# make bench-telemetry: wrk posts batches of 50 events to a release `waymark serve` with
# 64 connections, durability on (202 only after the group commit's fdatasync), for
# BENCH_DURATION seconds; the events the daemon counted are read back from
# /v1/telemetry/counts, so the figure is events accepted, durable and counted per second.
# In the same run, TelemetryBench decodes the same batches with Foundation's JSONDecoder
# into Codable structs (the ordinary way) on every core, and the ratio is printed.
# Targets: >= 1,500,000 events/s ingested, >= 3x the JSONDecoder path.
set -euo pipefail
cd "$(dirname "$0")/../.."
bash Tests/Scripts/install-packages.sh wrk=wrk curl=curl python3=python3

DURATION=${BENCH_DURATION:-10}
CONNECTIONS=${BENCH_CONNECTIONS:-64}
ROUNDS=${BENCH_ROUNDS:-3}
PORT=${TELEMETRY_PORT:-18083}
BATCHES=64
work=$(mktemp -d)
server_pid=""
cleanup() { [ -n "$server_pid" ] && kill "$server_pid" 2>/dev/null; wait 2>/dev/null; rm -rf "$work"; }
trap cleanup EXIT

swift build -c release --product waymark >/dev/null
swift build -c release --product TelemetryBench >/dev/null
bin=$(swift build -c release --show-bin-path)
"$bin/waymark" serve --data-dir "$work/data" --seed manifests/storefront --port "$PORT" --threads "$(nproc)" --quiet \
  >"$work/stdout" 2>"$work/stderr" &
server_pid=$!
for _ in $(seq 100); do grep -q "^Listening on" "$work/stdout" 2>/dev/null && break; sleep 0.1; done
grep -q "^Listening on" "$work/stdout" || { cat "$work/stdout" "$work/stderr" >&2; exit 1; }
url="http://127.0.0.1:$PORT"
write=$("$bin/waymark" token create --data-dir "$work/data" --name bench-app --scope telemetry:write --rate unlimited 2>/dev/null)  # capacity, not the default 2,000/s
read=$("$bin/waymark" token create --data-dir "$work/data" --name bench-ops --scope telemetry:read 2>/dev/null)

"$bin/TelemetryBench" generate "$work/batches" "$BATCHES" "$(date +%s)"
bytes=$(cat "$work/batches"/batch-*.json | wc -c)
# Every generated batch must be accepted whole.
for file in "$work/batches"/batch-0.json "$work/batches"/batch-1.json "$work/batches"/batch-2.json; do
  reply=$(curl -fs -H "Authorization: Bearer $write" -H 'Content-Type: application/json' --data-binary @"$file" "$url/v1/telemetry")
  [ "$reply" = '{"accepted":50,"rejected":[]}' ] || { echo "unexpected reply: $reply" >&2; exit 1; }
done

# The requests are formatted once per wrk thread, not once per request: wrk shares the
# two cores with the daemon (about 7% less of wrk's CPU per request, measured with top).
cat > "$work/post.lua" <<LUA
local requests = {}
local index = 0
init = function(args)
  local headers = { ["Authorization"] = "Bearer $write", ["Content-Type"] = "application/json" }
  for i = 0, $BATCHES - 1 do
    local file = io.open("$work/batches/batch-" .. i .. ".json", "rb")
    requests[#requests + 1] = wrk.format("POST", "/v1/telemetry", headers, file:read("*a"))
    file:close()
  end
end
request = function()
  index = index % #requests + 1
  return requests[index]
end
LUA

# Events counted so far (the generated events carry no count, so resolutions = events), by
# hour: events that reach the daemon more than the lateness window after their time count
# in their hour only.
counted() {
  curl -fs -H "Authorization: Bearer $read" "$url/v1/telemetry/counts?step=1h&from=$(date -u -d '-2 hours' +%Y-%m-%dT%H:%M:%SZ)&to=$(date -u -d '+10 minutes' +%Y-%m-%dT%H:%M:%SZ)" \
    | python3 -c 'import json,sys; print(json.load(sys.stdin)["total"])'
}

wrk -t2 -c"$CONNECTIONS" -d2s -s "$work/post.lua" "$url/v1/telemetry" >/dev/null
: > "$work/results"
for round in $(seq "$ROUNDS"); do
  before=$(counted)
  start=$(date +%s.%N)
  out=$(wrk -t2 -c"$CONNECTIONS" -d"${DURATION}s" --latency -s "$work/post.lua" "$url/v1/telemetry")
  end=$(date +%s.%N)
  if echo "$out" | grep -q "Non-2xx or 3xx"; then echo "refused batches:" >&2; echo "$out" >&2; exit 1; fi
  after=$(counted)
  requests=$(echo "$out" | awk '/requests in/ { print $1 }')
  p99=$(echo "$out" | awk 'function ms(v) { if (v ~ /us$/) return v/1000; if (v ~ /ms$/) return v+0; if (v ~ /s$/) return v*1000; return v } $1=="99%" { printf "%.2f", ms($2) }')
  # The daemon must have counted exactly what wrk saw acknowledged (requests cut off at the end may add a few).
  python3 - "$before" "$after" "$requests" "$start" "$end" "$p99" >> "$work/results" <<'PY'
import sys
before, after, requests = int(sys.argv[1]), int(sys.argv[2]), int(sys.argv[3])
elapsed = float(sys.argv[5]) - float(sys.argv[4])
counted = after - before
if counted < requests * 50:
    sys.exit(f"counted {counted} events but wrk saw {requests} batches acknowledged")
print(counted / elapsed, requests * 50 / elapsed, sys.argv[6])
PY
done
decoder=$("$bin/TelemetryBench" decode "$work/batches" 3 "$(nproc)")
echo "$decoder" > "$work/decoder"

python3 - "$work/results" "$work/decoder" "$BATCHES" "$bytes" "$DURATION" "$CONNECTIONS" <<'PY'
import statistics, sys
rounds = [list(map(float, line.split())) for line in open(sys.argv[1])]
figures = dict(line.split() for line in open(sys.argv[2]))
ingest = statistics.median(r[0] for r in rounds)
wrk_rate = statistics.median(r[1] for r in rounds)
p99 = statistics.median(r[2] for r in rounds)
decoder = float(figures["jsondecoder_events_per_second"])
parser = float(figures["batchparser_events_per_second"])
print(f"{sys.argv[3]} batches of 50 events ({int(sys.argv[4]) // int(sys.argv[3])} bytes each), wrk -c{sys.argv[6]}, {sys.argv[5]} s x {len(rounds)} rounds (median):")
print(f"  ingested (202 after fdatasync, counted by the daemon): {ingest:12,.0f} events/s  (rounds: {', '.join(f'{r[0]:,.0f}' for r in rounds)}; p99 {p99:.2f} ms)")
print(f"  JSONDecoder into Codable structs, in process:          {decoder:12,.0f} events/s")
print(f"  BatchParser alone, in process:                         {parser:12,.0f} events/s")
ratio = ingest / decoder
print(f"  ratio ingest / JSONDecoder: {ratio:.2f}  (target >= 3.0: {'met' if ratio >= 3 else 'NOT met'}; "
      f"target >= 1,500,000 events/s: {'met' if ingest >= 1_500_000 else 'NOT met'})")
PY
