#!/usr/bin/env bash
# make bench-publish: publishing a 10,000-route document to a release `waymark serve`
# over loopback, validation included (target: under 1 s), timed by curl; beside it, in
# the same run, the same document through POST /v1/validate (the dry run: the same parse
# and validation, nothing stored), so the cost of storing it durably shows as the ratio.
set -euo pipefail
cd "$(dirname "$0")/../.."
bash Tests/Scripts/install-packages.sh curl=curl python3=python3
ROUTES=${BENCH_ROUTES:-10000}
RUNS=${BENCH_RUNS:-7}
work=$(mktemp -d)
server_pid=""
cleanup() { [ -n "$server_pid" ] && kill "$server_pid" 2>/dev/null; wait 2>/dev/null; rm -rf "$work"; }
trap cleanup EXIT

swift build -c release --product waymark >/dev/null
bin=$(swift build -c release --show-bin-path)/waymark
"$bin" serve --data-dir "$work/data" --no-seed --port 0 --quiet >"$work/stdout" 2>"$work/stderr" &
server_pid=$!
for _ in $(seq 100); do grep -q "^Listening on" "$work/stdout" 2>/dev/null && break; sleep 0.1; done
url=$(sed -n 's/^Listening on \(http:\/\/127.0.0.1:[0-9]*\).*/\1/p' "$work/stdout")
token=$(grep -o 'wm_[0-9a-f]\{8\}_[A-Za-z0-9_-]\{43\}' "$work/stdout" | head -1)
auth="Authorization: Bearer $token"

# The same shapes as `make bench` (RouteEngineBench): captures, typed params, rest
# captures, query params, an auth-gated destination. RUNS documents differing in one route.
python3 - "$work" "$ROUTES" "$RUNS" <<'PY'
import json, sys
work, count, runs = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
schema = {"format": "waymark.schema/1", "app": "bench", "platform": "ios", "version": "1.0.0",
          "schemes": ["bench"], "hosts": ["bench.example", "www.bench.example"], "preconditions": ["auth"],
          "destinations": {
              "home": {"tab": "home"},
              "item": {"parent": "home", "params": {"id": {"type": "string", "pattern": "^p[0-9]{1,8}$"}}},
              "page": {"parent": "home"},
              "order": {"parent": "home", "preconditions": ["auth"], "params": {"n": {"type": "int", "min": 1, "max": 2147483647}}},
              "doc": {"parent": "home", "params": {"path": {"type": "string", "maxLength": 200}}},
              "list": {"parent": "home", "params": {"slug": {"type": "slug"}, "q": {"type": "string", "optional": True}}}}}
routes = [{"id": "home", "patterns": ["/"], "destination": "home"}]
for i in range(count - 2):
    kind = i % 10
    if kind < 4: routes.append({"id": f"r{i}", "patterns": [f"/shop/s{i}/item/:id", f"/s{i}/:id"], "destination": "item"})
    elif kind < 7: routes.append({"id": f"r{i}", "patterns": [f"/campaign/c{i}/landing"], "destination": "page"})
    elif kind < 9: routes.append({"id": f"r{i}", "patterns": [f"/account/a{i}/orders/:n"], "destination": "order"})
    elif i % 20 == 9: routes.append({"id": f"r{i}", "patterns": [f"/docs/d{i}/*path"], "destination": "doc"})
    else: routes.append({"id": f"r{i}", "patterns": [f"/l/d{i}/:slug"], "destination": "list", "params": {"q": {"query": "q"}}})
json.dump(schema, open(f"{work}/schema.json", "w"))
routes.append({"id": "run-marker", "patterns": [], "destination": "page"})
for run in range(runs):
    routes[-1]["patterns"] = [f"/campaign/run-{run}/landing"]
    document = {"format": "waymark.routes/1", "app": "bench", "routes": routes}
    json.dump(document, open(f"{work}/routes-{run}.json", "w"))
    json.dump({"message": f"bench run {run}", "routes": document}, open(f"{work}/publish-{run}.json", "w"))
PY
bytes=$(stat -c %s "$work/routes-0.json")
[ "$(curl -s -o /dev/null -w '%{http_code}' -X PUT -H "$auth" --data-binary @"$work/schema.json" "$url/v1/schemas/ios/1.0.0")" = 201 ]

: > "$work/publish"; : > "$work/validate"
precondition="If-None-Match: *"
for run in $(seq 0 $((RUNS - 1))); do
  # Interleaved: a dry run, then a publish of the same bytes.
  out=$(curl -s -o "$work/answer" -w '%{http_code} %{time_total}' -X POST -H "$auth" -H 'Content-Type: application/json' \
        --data-binary @"$work/routes-$run.json" "$url/v1/validate")
  [ "${out%% *}" = 200 ] && grep -q '"valid":true' "$work/answer" || { echo "validate failed: $out"; head -c 600 "$work/answer"; exit 1; }
  echo "${out#* }" >> "$work/validate"
  out=$(curl -s -o "$work/answer" -w '%{http_code} %{time_total}' -X POST -H "$auth" -H "$precondition" \
        -H 'Content-Type: application/json' --data-binary @"$work/publish-$run.json" "$url/v1/revisions")
  [ "${out%% *}" = 201 ] || { echo "publish failed: $out"; head -c 600 "$work/answer"; exit 1; }
  echo "${out#* }" >> "$work/publish"
  precondition="If-Match: \"rev-$((run + 1))\""
done
# The manifest for the build is computed once per revision: its first fetch after a publish.
first_fetch=$(curl -s -o "$work/manifest" -w '%{time_total}' -H "$auth" "$url/v1/manifest?platform=ios&version=1.0.0")
manifest_bytes=$(stat -c %s "$work/manifest")

median() { sort -g "$1" | awk '{v[NR]=$1} END {print v[int((NR+1)/2)]}'; }
spread() { sort -g "$1" | awk '{v[NR]=$1} END {printf "%.3f-%.3f", v[1], v[NR]}'; }
p=$(median "$work/publish"); v=$(median "$work/validate")
echo "bench-publish: $ROUTES routes, $bytes-byte document, release build, loopback, $RUNS interleaved runs (median, range)"
printf "  %-36s %8.3f s  (%s)\n" "POST /v1/revisions (validate+store)" "$p" "$(spread "$work/publish")"
printf "  %-36s %8.3f s  (%s)\n" "POST /v1/validate (dry run, peer)" "$v" "$(spread "$work/validate")"
awk -v p="$p" -v v="$v" -v f="$first_fetch" -v m="$manifest_bytes" 'BEGIN {
  printf "  storing durably adds %.3f s (publish/validate %.2f)\n", p - v, p / v
  printf "  first GET /v1/manifest after the last publish (builds the %d-byte view): %.3f s\n", m, f
  printf "target: publish < 1 s %s\n", (p < 1 ? "ok" : "MISSED") }'
