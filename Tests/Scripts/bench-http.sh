#!/usr/bin/env bash
# make bench-http: Waymark's HTTP server and nginx serve the same ~40 KB JSON file on
# loopback, in the same run; wrk drives each for a 200 and a conditional 304 (If-None-Match).
# Prints req/s, p50 and p99 for each, and Waymark/nginx ratios.
set -euo pipefail
cd "$(dirname "$0")/../.."
bash Tests/Scripts/install-packages.sh wrk=wrk nginx=nginx-light

DURATION=${BENCH_DURATION:-10}
CONNECTIONS=${BENCH_CONNECTIONS:-64}
WRK_THREADS=${BENCH_WRK_THREADS:-2}
# Both servers pin a worker per core (nginx: worker_cpu_affinity auto; Waymark: pinThreads)
# unless BENCH_PIN=0: the same tuning for both, and fewer migrations at the tail.
PIN=${BENCH_PIN:-1}
WAYMARK_PORT=${WAYMARK_PORT:-18080}
NGINX_PORT=${NGINX_PORT:-18081}
work=$(mktemp -d)
pids=()
cleanup() { for pid in "${pids[@]}"; do kill "$pid" 2>/dev/null || true; done; rm -rf "$work"; }
trap cleanup EXIT

swift build -c release --product HTTPFixtureServer >/dev/null
bin=$(swift build -c release --show-bin-path)/HTTPFixtureServer

# A manifest-shaped JSON document of about 40 KB.
python3 - "$work/manifest.json" <<'PY'
import json, sys
routes = [{"id": f"campaign-{i}", "patterns": [f"/c/campaign-{i}/:slug", f"/p/{i}/:id"], "destination": "product",
           "params": {"id": {"capture": "id"}}, "owner": "marketing", "notes": "generated for bench-http"} for i in range(240)]
doc = {"format": "waymark.manifest/1", "app": "storefront", "revision": 42, "routes": routes}
text = json.dumps(doc, separators=(",", ":"))
while len(text) > 40_960: routes.pop(); text = json.dumps(doc, separators=(",", ":"))
open(sys.argv[1], "w").write(text)
PY
bytes=$(stat -c %s "$work/manifest.json")
# nginx workers run as an unprivileged user: the served tree must be readable by it.
chmod 755 "$work"

mkdir -p "$work/nginx/logs" "$work/www"
cp "$work/manifest.json" "$work/www/manifest.json"
chmod -R a+rX "$work/www"
cat > "$work/nginx/nginx.conf" <<CONF
worker_processes $(nproc);
$([ "$PIN" = 1 ] && echo "worker_cpu_affinity auto;")
daemon off;
pid $work/nginx/nginx.pid;
error_log $work/nginx/logs/error.log warn;
events { worker_connections 4096; }
http {
    access_log off;
    sendfile on;
    tcp_nopush on;
    keepalive_requests 1000000;
    types { application/json json; }
    server {
        listen 127.0.0.1:$NGINX_PORT reuseport;
        root $work/www;
        location = /manifest.json { add_header Cache-Control no-cache; }
    }
}
CONF
nginx -p "$work/nginx" -c "$work/nginx/nginx.conf" & pids+=($!)
"$bin" "$work/manifest.json" "$WAYMARK_PORT" "$(nproc)" $([ "$PIN" = 1 ] && echo --pin) >/dev/null & pids+=($!)
for port in "$NGINX_PORT" "$WAYMARK_PORT"; do
  for _ in $(seq 50); do curl -fs -o /dev/null "http://127.0.0.1:$port/manifest.json" && break; sleep 0.1; done
done
waymark_etag=$(curl -fsI "http://127.0.0.1:$WAYMARK_PORT/manifest.json" | tr -d '\r' | awk -F': ' 'tolower($1)=="etag"{print $2}')
nginx_etag=$(curl -fsI "http://127.0.0.1:$NGINX_PORT/manifest.json" | tr -d '\r' | awk -F': ' 'tolower($1)=="etag"{print $2}')
# Both must really answer 200 with the same bytes and 304 to their own ETag.
cmp <(curl -fs "http://127.0.0.1:$WAYMARK_PORT/manifest.json") "$work/manifest.json"
cmp <(curl -fs "http://127.0.0.1:$NGINX_PORT/manifest.json") "$work/manifest.json"
[ "$(curl -s -o /dev/null -w '%{http_code}' -H "If-None-Match: $waymark_etag" "http://127.0.0.1:$WAYMARK_PORT/manifest.json")" = 304 ]
[ "$(curl -s -o /dev/null -w '%{http_code}' -H "If-None-Match: $nginx_etag" "http://127.0.0.1:$NGINX_PORT/manifest.json")" = 304 ]

# run PORT [HEADER] -> "req/s p50_ms p99_ms"
run() {
  local out
  if [ -n "${2:-}" ]; then
    out=$(wrk -t"$WRK_THREADS" -c"$CONNECTIONS" -d"${DURATION}s" --latency -H "$2" "http://127.0.0.1:$1/manifest.json")
  else
    out=$(wrk -t"$WRK_THREADS" -c"$CONNECTIONS" -d"${DURATION}s" --latency "http://127.0.0.1:$1/manifest.json")
  fi
  if echo "$out" | grep -q "Non-2xx or 3xx"; then echo "unexpected status codes from port $1" >&2; echo "$out" >&2; exit 1; fi
  echo "$out" | awk '
    function ms(v) { if (v ~ /us$/) return v/1000; if (v ~ /ms$/) return v+0; if (v ~ /s$/) return v*1000; return v }
    /Requests\/sec/ { rps=$2 } $1=="50%" { p50=ms($2) } $1=="99%" { p99=ms($2) }
    END { printf "%.0f %.3f %.3f\n", rps, p50, p99 }'
}

# Warm both up, then measure each case back to back.
wrk -t2 -c"$CONNECTIONS" -d2s "http://127.0.0.1:$WAYMARK_PORT/manifest.json" >/dev/null
wrk -t2 -c"$CONNECTIONS" -d2s "http://127.0.0.1:$NGINX_PORT/manifest.json" >/dev/null
# Interleave the four cases over several rounds; the machine is shared, so each figure
# printed is the median round (the spread is printed beside it).
ROUNDS=${BENCH_ROUNDS:-3}
: > "$work/results"
for round in $(seq "$ROUNDS"); do
  echo "w200 $(run "$WAYMARK_PORT")" >> "$work/results"
  echo "n200 $(run "$NGINX_PORT")" >> "$work/results"
  echo "w304 $(run "$WAYMARK_PORT" "If-None-Match: $waymark_etag")" >> "$work/results"
  echo "n304 $(run "$NGINX_PORT" "If-None-Match: $nginx_etag")" >> "$work/results"
done
# median CASE COLUMN -> the median of that column over the rounds
median() { awk -v c="$1" -v k="$2" '$1==c {print $k}' "$work/results" | sort -g | awk '{v[NR]=$1} END {print v[int((NR+1)/2)]}'; }
spread() { awk -v c="$1" '$1==c {print $2}' "$work/results" | sort -g | awk '{v[NR]=$1} END {printf "%s-%s", v[1], v[NR]}'; }
for c in w200 n200 w304 n304; do
  eval "${c}=$(median $c 2) ${c}p50=$(median $c 3) ${c}p99=$(median $c 4) ${c}range=$(spread $c)"
done

echo "bench-http: $bytes-byte JSON, wrk -t$WRK_THREADS -c$CONNECTIONS -d${DURATION}s on loopback, $(nproc) cores shared by servers and wrk, workers pinned: $([ "$PIN" = 1 ] && echo yes || echo no)"
echo "  median of $ROUNDS interleaved rounds (req/s range over rounds in brackets)"
printf "  %-12s %10s %18s %9s %9s\n" "" "req/s" "(range)" "p50 ms" "p99 ms"
printf "  %-12s %10s %18s %9s %9s\n" "200 Waymark" "$w200" "($w200range)" "$w200p50" "$w200p99"
printf "  %-12s %10s %18s %9s %9s\n" "200 nginx" "$n200" "($n200range)" "$n200p50" "$n200p99"
printf "  %-12s %10s %18s %9s %9s\n" "304 Waymark" "$w304" "($w304range)" "$w304p50" "$w304p99"
printf "  %-12s %10s %18s %9s %9s\n" "304 nginx" "$n304" "($n304range)" "$n304p50" "$n304p99"
awk -v w2="$w200" -v n2="$n200" -v w3="$w304" -v n3="$n304" -v p2="$w200p99" -v p3="$w304p99" 'BEGIN {
  r2 = w2 / n2; r3 = w3 / n3
  printf "  ratio Waymark/nginx: 200 %.2f, 304 %.2f\n", r2, r3
  printf "targets: ratio >= 1.0 on 200 %s, on 304 %s; p99 < 5 ms: 200 %s, 304 %s\n",
    (r2 >= 1 ? "ok" : "MISSED"), (r3 >= 1 ? "ok" : "MISSED"), (p2 < 5 ? "ok" : "MISSED"), (p3 < 5 ? "ok" : "MISSED") }'
