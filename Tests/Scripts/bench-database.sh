#!/usr/bin/env bash
# The manifest served by a node on PostgreSQL beside one on a data directory, in the same
# run (make bench-database; docs/postgres.md): both release daemons seeded from the
# storefront example, wrk on GET /v1/manifest (200, and 304 with the ETag), the two taking
# turns ROUNDS times; prints each one's median req/s and the database node's ratio to the
# file node's. A node serves manifests from memory whichever store it has, so the ratio is
# expected near 1.00: a figure far below says the database is on the read path.
# Run under Tests/Scripts/postgres.sh (make bench-database does), which gives the database.
set -euo pipefail
cd "$(dirname "$0")/../.."
: "${WAYMARK_TEST_DATABASE_URL:?run under Tests/Scripts/postgres.sh}"
bash Tests/Scripts/install-packages.sh wrk=wrk
waymark=.build/release/waymark
DURATION=${BENCH_DURATION:-5}
ROUNDS=${BENCH_ROUNDS:-3}
CONNECTIONS=${BENCH_CONNECTIONS:-32}
work=$(mktemp -d /tmp/waymark-bench-database-XXXXXX)
pids=()
cleanup() { for pid in "${pids[@]}"; do kill "$pid" 2>/dev/null || true; done; wait 2>/dev/null || true; rm -rf "$work"; }
trap cleanup EXIT

# start NAME ARGS... -> the node's port, once it listens; its output in $work/NAME.out
start() {
  local name=$1; shift
  "$waymark" serve --data-dir "$work/$name" --seed manifests/storefront --port 0 --quiet "$@" >"$work/$name.out" 2>&1 & pids+=($!)
  for _ in $(seq 300); do
    port=$(grep -o 'Listening on http://127.0.0.1:[0-9]*' "$work/$name.out" | head -1 | sed 's/.*://') && [ -n "$port" ] && { echo "$port"; return; }
    sleep 0.1
  done
  cat "$work/$name.out" >&2; exit 1
}
file_port=$(start file)
database_port=$(start database --database "$WAYMARK_TEST_DATABASE_URL")
token() { grep -o 'wm_[0-9a-f]\{8\}_[A-Za-z0-9_-]\{43\}' "$work/$1.out" | head -1; }
file_token=$(token file); database_token=$(token database)
path="/v1/manifest?platform=ios&version=5.3.0"
etag() { curl -s -D - -o /dev/null -H "Authorization: Bearer $2" "http://127.0.0.1:$1$path" | tr -d '\r' | awk -F': ' 'tolower($1)=="etag" {print $2}'; }
file_etag=$(etag "$file_port" "$file_token"); database_etag=$(etag "$database_port" "$database_token")
[ -n "$file_etag" ] && [ "$file_etag" = "$database_etag" ] || { echo "bench-database: the two nodes' ETags differ: $file_etag $database_etag" >&2; exit 1; }

# rate PORT TOKEN [HEADER] -> requests per second
rate() {
  local out
  out=$(wrk -t1 -c"$CONNECTIONS" -d"${DURATION}s" -H "Authorization: Bearer $2" ${3:+-H "$3"} "http://127.0.0.1:$1$path" 2>&1)
  if echo "$out" | grep -q "Non-2xx or 3xx"; then echo "bench-database: unexpected statuses from port $1" >&2; echo "$out" >&2; exit 1; fi
  echo "$out" | awk '/Requests\/sec/ {print $2}'
}
median() { sort -n | awk '{a[NR]=$1} END {print a[int((NR+1)/2)]}'; }
for kind in 200 304; do
  header=""; [ "$kind" = 304 ] && header="If-None-Match: $file_etag"
  : >"$work/file.$kind"; : >"$work/database.$kind"
  for _ in $(seq "$ROUNDS"); do
    rate "$file_port" "$file_token" "$header" >>"$work/file.$kind"
    rate "$database_port" "$database_token" "$header" >>"$work/database.$kind"
  done
  file=$(median <"$work/file.$kind"); database=$(median <"$work/database.$kind")
  echo "bench-database: manifest $kind: data directory $file req/s, database $database req/s (median of $ROUNDS x ${DURATION}s, $CONNECTIONS connections), ratio $(awk -v a="$database" -v b="$file" 'BEGIN {printf "%.2f", a/b}')"
done
