#!/usr/bin/env bash
# make bench-http: Waymark and nginx on loopback, in the same run; wrk drives each for a
# 200 and a conditional 304 (If-None-Match), in two pairs:
#   file      HTTPFixtureServer and nginx serve the same ~40 KB JSON file (the HTTP server alone);
#   manifest  the real `waymark serve` answers GET /v1/manifest?platform=ios&version=5.3.0 with
#             a manifest:read token (store snapshot, token check, cached per-build view),
#             and nginx serves the same bytes as a static file.
#   rollout   the same daemon with a staged rollout in progress (a candidate at 50 %): the 200
#             case asks for cohorts 0..99 in turn (half get the candidate, half the stable
#             revision), the 304 case a candidate cohort with its ETag; nginx serves its file
#             for the same paths.
#   landing   the same daemon answers a link opened in a browser (GET /product/p1 on the link host
#             storefront.example, a desktop's User-Agent: resolved, counted as web telemetry, 302
#             to the web site; an iPhone gets the hand-off page); nginx answers the same request with `return 302` to the same
#             address and the same Cache-Control and Vary.
# Prints req/s, p50 and p99 for each, and Waymark/nginx ratios. BENCH_ONLY=file|manifest|rollout|landing
# runs one pair (or group).
set -euo pipefail
cd "$(dirname "$0")/../.."
bash Tests/Scripts/install-packages.sh wrk=wrk nginx=nginx-light

DURATION=${BENCH_DURATION:-8}
CONNECTIONS=${BENCH_CONNECTIONS:-64}
WRK_THREADS=${BENCH_WRK_THREADS:-2}
# Both servers pin a worker per core (nginx: worker_cpu_affinity auto; Waymark: pinThreads)
# unless BENCH_PIN=0: the same tuning for both, and fewer migrations at the tail.
PIN=${BENCH_PIN:-1}
WAYMARK_PORT=${WAYMARK_PORT:-18080}
NGINX_PORT=${NGINX_PORT:-18081}
API_PORT=${API_PORT:-18082}
ONLY=${BENCH_ONLY:-}
# The Waymark/nginx ratio each pair must reach (the second rig's manifest target is 1.2).
TARGET=${BENCH_TARGET:-1.0}
# The daemon's event loops (its default, one per core, unless BENCH_WAYMARK_THREADS says otherwise).
WAYMARK_THREADS=${BENCH_WAYMARK_THREADS:-$(nproc)}
# BENCH_PUBLIC=1: the daemon runs with --public-reads and apps send no token.
PUBLIC=${BENCH_PUBLIC:-0}
# BENCH_SCHED_BATCH=1: an experiment, not a setting either server ships with: every thread of
# both servers (Waymark's loops, nginx's workers) runs under SCHED_BATCH (chrt -b), which
# only stops a woken thread from preempting the one running (sched(7)), so `wrk` is not
# preempted each time it wakes a server: what wake-up preemption costs each server in this rig.
SCHED_BATCH=${BENCH_SCHED_BATCH:-0}
work=$(mktemp -d)
pids=()
cleanup() { for pid in "${pids[@]}"; do kill "$pid" 2>/dev/null || true; done; rm -rf "$work"; }
trap cleanup EXIT

swift build -c release --product HTTPFixtureServer >/dev/null
swift build -c release --product waymark >/dev/null
bin=$(swift build -c release --show-bin-path)/HTTPFixtureServer
waymark=$(swift build -c release --show-bin-path)/waymark

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
    etag on;
    types { application/json json; }
    server {
        listen 127.0.0.1:$NGINX_PORT reuseport;
        root $work/www;
        location = /manifest.json { add_header Cache-Control no-cache; }
        location = /v1/manifest { alias $work/www/api-manifest.json; default_type application/json; add_header Cache-Control no-cache; }
        location /product/ {
            add_header Cache-Control "public, max-age=0, s-maxage=30";
            add_header Vary User-Agent;
            return 302 https://web.storefront.example/;
        }
    }
}
CONF
# The real daemon: seeded from the storefront example, then a revision with 300 more
# campaign routes so its iOS 5.3.0 manifest is about 40 KB too; a manifest:read token for the app.
"$waymark" serve --data-dir "$work/data" --seed manifests/storefront --port "$API_PORT" --threads "$WAYMARK_THREADS" --quiet \
  $([ "$PIN" = 1 ] && echo --pin-threads) $([ "$PUBLIC" = 1 ] && echo --public-reads) >"$work/serve.out" 2>&1 & pids+=($!); waymark_pid=$!
bash Tests/Scripts/publish-campaigns.sh "$work/serve.out" "http://127.0.0.1:$API_PORT"
app_token=$("$waymark" token create --data-dir "$work/data" --name bench-app --scope manifest:read 2>/dev/null)
api_auth="Authorization: Bearer $app_token"
[ "$PUBLIC" = 1 ] && api_auth="Accept: application/json"
api_path="/v1/manifest?platform=ios&version=5.3.0"
curl -fs -H "$api_auth" "http://127.0.0.1:$API_PORT$api_path" > "$work/www/api-manifest.json"
chmod a+r "$work/www/api-manifest.json"
api_bytes=$(stat -c %s "$work/www/api-manifest.json")

# nginx listens with `reuseport`, so it would join, without an error, another server's
# SO_REUSEPORT group on its port (a leftover nginx of a hand-run rig, say) and the kernel would
# share wrk's connections between the two: one such run printed 1.44 for a 304 ratio that was
# 1.08. (The daemon and the fixture refuse a port anything listens on.) A bind without
# SO_REUSEPORT conflicts with every listener there.
python3 - "$NGINX_PORT" <<'PY'
import socket, sys
port = int(sys.argv[1])
probe = socket.socket()
probe.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
try:
    probe.bind(("127.0.0.1", port))
except OSError as error:
    sys.exit(f"bench-http: something already listens on 127.0.0.1:{port} ({error.strerror}); nginx would share the "
             f"port with it and measure both. Stop it, or choose another port with NGINX_PORT.")
PY
nginx -p "$work/nginx" -c "$work/nginx/nginx.conf" & pids+=($!); nginx_pid=$!
"$bin" "$work/manifest.json" "$WAYMARK_PORT" "$(nproc)" $([ "$PIN" = 1 ] && echo --pin) >/dev/null & pids+=($!); fixture_pid=$!
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
api_etag=$(curl -fsI -H "$api_auth" "http://127.0.0.1:$API_PORT$api_path" | tr -d '\r' | awk -F': ' 'tolower($1)=="etag"{print $2}')
nginx_api_etag=$(curl -fsI "http://127.0.0.1:$NGINX_PORT$api_path" | tr -d '\r' | awk -F': ' 'tolower($1)=="etag"{print $2}')
cmp <(curl -fs -H "$api_auth" "http://127.0.0.1:$API_PORT$api_path") <(curl -fs "http://127.0.0.1:$NGINX_PORT$api_path")
[ "$(curl -s -o /dev/null -w '%{http_code}' -H "$api_auth" -H "If-None-Match: $api_etag" "http://127.0.0.1:$API_PORT$api_path")" = 304 ]
[ "$(curl -s -o /dev/null -w '%{http_code}' -H "If-None-Match: $nginx_api_etag" "http://127.0.0.1:$NGINX_PORT$api_path")" = 304 ]

# The rollout: the campaigns revision plus one route, rolled out over it and advanced to
# 50 %; the guard looks every 5 s as in production (no telemetry: it waits, never moves it).
admin=$(grep -o 'wm_[0-9a-f]\{8\}_[A-Za-z0-9_-]\{43\}' "$work/serve.out" | head -1)
python3 - "$work/candidate.json" "http://127.0.0.1:$API_PORT" "$admin" <<'PY'
import json, sys, urllib.request
out, url, admin = sys.argv[1:]
request = urllib.request.Request(url + "/v1/revisions/2", headers={"Authorization": "Bearer " + admin})
routes = json.load(urllib.request.urlopen(request))["routes"]
routes["routes"].append({"id": "bench-rollout", "patterns": ["/bench-rollout"], "destination": "home"})
json.dump({"message": "bench-http rollout", "routes": routes, "rollout": {}}, open(out, "w"))
PY
[ "$(curl -s -o /dev/null -w '%{http_code}' -X POST -H "Authorization: Bearer $admin" -H 'If-Match: "rev-2"' \
  --data-binary @"$work/candidate.json" "http://127.0.0.1:$API_PORT/v1/revisions")" = 201 ]
for version in 1 2; do
  [ "$(curl -s -o /dev/null -w '%{http_code}' -X POST -H "Authorization: Bearer $admin" -H "If-Match: \"rollout-3-$version\"" \
    "http://127.0.0.1:$API_PORT/v1/rollout/advance")" = 200 ]
done
rollout_path="$api_path&cohort=0"
rollout_etag=$(curl -fsI -H "$api_auth" "http://127.0.0.1:$API_PORT$rollout_path" | tr -d '\r' | awk -F': ' 'tolower($1)=="etag"{print $2}')
stable_etag=$(curl -fsI -H "$api_auth" "http://127.0.0.1:$API_PORT$api_path&cohort=99" | tr -d '\r' | awk -F': ' 'tolower($1)=="etag"{print $2}')
# The split is real: cohort 0 gets revision 3, cohort 99 revision 2, each its own ETag.
[ "$rollout_etag" != "$stable_etag" ] && [ "$(curl -fs -H "$api_auth" "http://127.0.0.1:$API_PORT$rollout_path" | python3 -c 'import json,sys; print(json.load(sys.stdin)["revision"])')" = 3 ]
[ "$(curl -s -o /dev/null -w '%{http_code}' -H "$api_auth" -H "If-None-Match: $rollout_etag" "http://127.0.0.1:$API_PORT$rollout_path")" = 304 ]
# wrk asks for cohorts 0..99 in turn (each thread its own counter).
cat > "$work/cohorts.lua" <<'LUA'
local cohort = 0
request = function()
  cohort = (cohort + 1) % 100
  return wrk.format(nil, wrk.path .. "&cohort=" .. cohort)
end
LUA

# The landing: both answer the link with the same 302.
landing_path="/product/p1"
desktop="User-Agent: Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 Chrome/124.0 Safari/537.36"
for port in "$API_PORT" "$NGINX_PORT"; do
  answer=$(curl -s -o /dev/null -w '%{http_code} %{redirect_url}' -H "Host: storefront.example" -H "$desktop" "http://127.0.0.1:$port$landing_path")
  [ "$answer" = "302 https://web.storefront.example/" ] || { echo "landing on port $port answered: $answer" >&2; exit 1; }
done

if [ "$SCHED_BATCH" = 1 ]; then
  for task in /proc/"$waymark_pid"/task/* /proc/"$fixture_pid"/task/*; do chrt -b -p 0 "${task##*/}"; done
  for worker in $(pgrep -P "$nginx_pid"); do chrt -b -p 0 "$worker"; done
fi

# Where the CPU goes: the serving processes' user and system ticks and voluntary context
# switches (all threads), wrk's own CPU and the times it was preempted (involuntary
# switches), and the machine's idle ticks, read around each run.
# server_pids PORT -> the pids serving it (nginx: its workers).
server_pids() {
  case "$1" in
    "$API_PORT") echo "$waymark_pid" ;;
    "$WAYMARK_PORT") echo "$fixture_pid" ;;
    "$NGINX_PORT") pgrep -P "$nginx_pid" | tr '\n' ' ' ;;
  esac
}
# cpu_sample PIDS -> "user_ticks system_ticks voluntary_switches idle_ticks"
cpu_sample() {
  local user=0 system=0 switches=0 pid fields
  for pid in $1; do
    read -r -a fields < <(sed 's/.*) //' "/proc/$pid/stat")
    user=$((user + fields[11])); system=$((system + fields[12]))
    switches=$((switches + $(cat /proc/"$pid"/task/*/status | awk '$1=="voluntary_ctxt_switches:" {s+=$2} END {print s+0}')))
  done
  echo "$user $system $switches $(awk '$1=="cpu" {print $5+$6; exit}' /proc/stat)"
}

# run URL [HEADER...] -> "req/s p50_ms p99_ms server_user_us server_sys_us server_switches wrk_us idle_pct wrk_preempted"
# per request; WRK_SCRIPT, when set, is passed to wrk.
run() {
  local url=$1 out port pids before after
  shift
  local headers=()
  for header in "$@"; do headers+=(-H "$header"); done
  port=${url#http://127.0.0.1:}; port=${port%%/*}
  pids=$(server_pids "$port")
  before=$(cpu_sample "$pids")
  out=$(/usr/bin/time -f "wrk-cpu %U %S %c" wrk -t"$WRK_THREADS" -c"$CONNECTIONS" -d"${DURATION}s" --latency ${WRK_SCRIPT:+-s "$WRK_SCRIPT"} "${headers[@]}" "$url" 2>&1)
  after=$(cpu_sample "$pids")
  if echo "$out" | grep -q "Non-2xx or 3xx"; then echo "unexpected status codes from $url" >&2; echo "$out" >&2; exit 1; fi
  echo "$out" | awk -v before="$before" -v after="$after" -v hz="$(getconf CLK_TCK)" -v cores="$(nproc)" -v seconds="$DURATION" '
    function ms(v) { if (v ~ /us$/) return v/1000; if (v ~ /ms$/) return v+0; if (v ~ /s$/) return v*1000; return v }
    /Requests\/sec/ { rps=$2 } $1=="50%" { p50=ms($2) } $1=="99%" { p99=ms($2) }
    /requests in/ { total=$1 } $1=="wrk-cpu" { wrk=$2+$3; preempted=$4 }
    END {
      split(before, b, " "); split(after, a, " ")
      us = 1e6 / hz / total
      printf "%.0f %.3f %.3f %.2f %.2f %.3f %.2f %.1f %.3f\n", rps, p50, p99, (a[1]-b[1])*us, (a[2]-b[2])*us,
        (a[3]-b[3])/total, wrk*1e6/total, 100*(a[4]-b[4])/(hz*cores*seconds), preempted/total }'
}

# Warm both up, then measure each case back to back.
file_w="http://127.0.0.1:$WAYMARK_PORT/manifest.json"; file_n="http://127.0.0.1:$NGINX_PORT/manifest.json"
api_w="http://127.0.0.1:$API_PORT$api_path"; api_n="http://127.0.0.1:$NGINX_PORT$api_path"
for url in "$file_w" "$file_n" "$api_n"; do wrk -t2 -c"$CONNECTIONS" -d2s "$url" >/dev/null; done
wrk -t2 -c"$CONNECTIONS" -d2s -H "$api_auth" "$api_w" >/dev/null
wrk -t2 -c"$CONNECTIONS" -d2s -s "$work/cohorts.lua" -H "$api_auth" "$api_w" >/dev/null
wrk -t2 -c"$CONNECTIONS" -d2s -H "Host: storefront.example" -H "$desktop" "http://127.0.0.1:$API_PORT$landing_path" >/dev/null
# Interleave the cases over several rounds; the machine is shared, so each figure
# printed is the median round (the spread is printed beside it). nginx gets the same
# Authorization header (and ignores it), so both parse requests of the same size.
ROUNDS=${BENCH_ROUNDS:-5}
: > "$work/results"
for round in $(seq "$ROUNDS"); do
  if [ "$ONLY" = "" ] || [ "$ONLY" = file ]; then
    echo "w200 $(run "$file_w")" >> "$work/results"
    echo "n200 $(run "$file_n")" >> "$work/results"
    echo "w304 $(run "$file_w" "If-None-Match: $waymark_etag")" >> "$work/results"
    echo "n304 $(run "$file_n" "If-None-Match: $nginx_etag")" >> "$work/results"
  fi
  if [ "$ONLY" = "" ] || [ "$ONLY" = manifest ]; then
    echo "a200 $(run "$api_w" "$api_auth")" >> "$work/results"
    echo "m200 $(run "$api_n" "$api_auth")" >> "$work/results"
    echo "a304 $(run "$api_w" "$api_auth" "If-None-Match: $api_etag")" >> "$work/results"
    echo "m304 $(run "$api_n" "$api_auth" "If-None-Match: $nginx_api_etag")" >> "$work/results"
  fi
  if [ "$ONLY" = "" ] || [ "$ONLY" = landing ]; then
    echo "l302 $(run "http://127.0.0.1:$API_PORT$landing_path" "Host: storefront.example" "$desktop")" >> "$work/results"
    echo "g302 $(run "http://127.0.0.1:$NGINX_PORT$landing_path" "Host: storefront.example" "$desktop")" >> "$work/results"
  fi
  if [ "$ONLY" = "" ] || [ "$ONLY" = rollout ] || [ "$ONLY" = manifest ]; then
    echo "r200 $(WRK_SCRIPT="$work/cohorts.lua" run "$api_w" "$api_auth")" >> "$work/results"
    echo "s200 $(WRK_SCRIPT="$work/cohorts.lua" run "$api_n" "$api_auth")" >> "$work/results"
    echo "r304 $(run "http://127.0.0.1:$API_PORT$rollout_path" "$api_auth" "If-None-Match: $rollout_etag")" >> "$work/results"
    echo "s304 $(run "http://127.0.0.1:$NGINX_PORT$rollout_path" "$api_auth" "If-None-Match: $nginx_api_etag")" >> "$work/results"
  fi
done
# median CASE COLUMN -> the median of that column over the rounds
median() { awk -v c="$1" -v k="$2" '$1==c {print $k}' "$work/results" | sort -g | awk '{v[NR]=$1} END {print v[int((NR+1)/2)]}'; }
spread() { awk -v c="$1" '$1==c {print $2}' "$work/results" | sort -g | awk '{v[NR]=$1} END {printf "%s-%s", v[1], v[NR]}'; }
row() { printf "  %-22s %10s %18s %9s %9s %7s %7s %7s %7s %6s %8s\n" "$1" "$(median "$2" 2)" "($(spread "$2"))" "$(median "$2" 3)" "$(median "$2" 4)" \
  "$(median "$2" 5)" "$(median "$2" 6)" "$(median "$2" 7)" "$(median "$2" 8)" "$(median "$2" 9)" "$(median "$2" 10)"; }
# verdict LABEL WAYMARK200 NGINX200 WAYMARK304 NGINX304 [p99] -> ratio line with the targets.
# Issue 3's targets are for the file pair: ratio >= 1.0 and p99 < 5 ms. Issue 4's for the
# manifest pair is the ratio alone; its p99 is printed beside nginx's, not judged.
verdict() {
  awk -v l="$1" -v w2="$(median "$2" 2)" -v n2="$(median "$3" 2)" -v w3="$(median "$4" 2)" -v n3="$(median "$5" 2)" \
      -v p2="$(median "$2" 4)" -v p3="$(median "$4" 4)" -v q2="$(median "$3" 4)" -v q3="$(median "$5" 4)" -v judge="${6:-}" -v t="$TARGET" 'BEGIN {
    r2 = w2 / n2; r3 = w3 / n3
    printf "  %s ratio Waymark/nginx: 200 %.2f, 304 %.2f\n", l, r2, r3
    if (judge == "p99")
      printf "  %s targets: ratio >= %s on 200 %s, on 304 %s; p99 < 5 ms: 200 %s, 304 %s\n", l, t,
        (r2 >= t ? "ok" : "MISSED"), (r3 >= t ? "ok" : "MISSED"), (p2 < 5 ? "ok" : "MISSED"), (p3 < 5 ? "ok" : "MISSED")
    else
      printf "  %s targets: ratio >= %s on 200 %s, on 304 %s (p99 Waymark/nginx: 200 %.2f/%.2f ms, 304 %.2f/%.2f ms)\n", l, t,
        (r2 >= t ? "ok" : "MISSED"), (r3 >= t ? "ok" : "MISSED"), p2, q2, p3, q3 }'
}

echo "bench-http: wrk -t$WRK_THREADS -c$CONNECTIONS -d${DURATION}s on loopback, $(nproc) cores shared by servers and wrk, workers pinned: $([ "$PIN" = 1 ] && echo yes || echo no), Waymark's loops: $WAYMARK_THREADS, nginx's workers: $(nproc)$([ "$SCHED_BATCH" = 1 ] && echo ", both servers under SCHED_BATCH (an experiment)")"
echo "  median of $ROUNDS interleaved rounds (req/s range over rounds in brackets)"
echo "  per request: the server's user and system CPU (µs), its voluntary context switches, wrk's CPU (µs); the machine idle (%); the times wrk was preempted"
printf "  %-22s %10s %18s %9s %9s %7s %7s %7s %7s %6s %8s\n" "" "req/s" "(range)" "p50 ms" "p99 ms" "user" "system" "switch" "wrk" "idle" "wrk-pre"
if [ "$ONLY" = "" ] || [ "$ONLY" = file ]; then
  echo "  file: the same $bytes-byte JSON file"
  row "200 Waymark" w200; row "200 nginx" n200; row "304 Waymark" w304; row "304 nginx" n304
  verdict file w200 n200 w304 n304 p99
fi
if [ "$ONLY" = "" ] || [ "$ONLY" = manifest ]; then
  echo "  manifest: GET $api_path, $api_bytes bytes, $([ "$PUBLIC" = 1 ] && echo "public reads (no token)" || echo "with a manifest:read token")"
  row "200 waymark serve" a200; row "200 nginx (same bytes)" m200; row "304 waymark serve" a304; row "304 nginx" m304
  verdict manifest a200 m200 a304 m304
fi
if [ "$ONLY" = "" ] || [ "$ONLY" = rollout ] || [ "$ONLY" = manifest ]; then
  echo "  rollout in progress (candidate 3 at 50 % over revision 2): 200 for cohorts 0..99 in turn, 304 for cohort 0 (the candidate)"
  row "200 waymark serve" r200; row "200 nginx (its file)" s200; row "304 waymark serve" r304; row "304 nginx" s304
  verdict rollout r200 s200 r304 s304
fi
if [ "$ONLY" = "" ] || [ "$ONLY" = landing ]; then
  echo "  landing: GET $landing_path on storefront.example from a desktop, 302 to the web site"
  row "302 waymark serve" l302; row "302 nginx return 302" g302
  awk -v w="$(median l302 2)" -v n="$(median g302 2)" -v p="$(median l302 4)" -v q="$(median g302 4)" 'BEGIN {
    printf "  landing ratio Waymark/nginx: 302 %.2f\n  landing target: ratio >= 1.0 %s (p99 Waymark/nginx %.2f/%.2f ms)\n", w / n, (w / n >= 1 ? "ok" : "MISSED"), p, q }'
fi
