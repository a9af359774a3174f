#!/usr/bin/env bash
# Slow-client check: slowhttptest's slowloris (-H), slow body (-B) and slow read (-X)
# against Waymark's HTTP server with 3-second deadlines. Passes when, for each attack,
#   - a probe client gets every one of its requests answered within 1 s throughout,
#   - slowhttptest's own probe never finds the service unavailable, and
#   - the server really held the attack's connections (ss, at the peak) and then dropped
#     them: once the deadlines have had time to fire (8 s in: 3 s to open them all, 3 s
#     deadline, sweep), it holds under a tenth — or slowhttptest stops early because the
#     server closed every one. (ss, not slowhttptest's counters: in slow-read mode
#     slowhttptest does not notice a connection reset by the server.) Slow readers all
#     come from one address here, and past that address's share of the output budget
#     (32 MiB of large answers queued) the server resets the slowest at once rather than
#     at the write deadline: so for slow-read, holding a share's worth at the peak (at
#     least 16) shows the attack reached it.
# It also prints the kernel's TCP memory at its peak: slow readers with tiny windows once
# pushed it past tcp_mem's pressure mark (autotuned send buffers, ~2.7 MB each), which
# slowed every other connection by up to 1.8 s; the server now bounds the unsent bytes
# the kernel holds per connection (TCP_NOTSENT_LOWAT).
set -euo pipefail
cd "$(dirname "$0")/../.."
bash Tests/Scripts/install-packages.sh curl=curl slowhttptest=slowhttptest ss=iproute2
ulimit -n 65536 2>/dev/null || true

CONNECTIONS=${SLOW_CONNECTIONS:-900}
LENGTH=${SLOW_SECONDS:-20}
work=$(mktemp -d)
server_pid=""
cleanup() { [ -n "$server_pid" ] && kill "$server_pid" 2>/dev/null; rm -rf "$work"; }
trap cleanup EXIT

swift build --product HTTPFixtureServer >/dev/null
bin=$(swift build --show-bin-path)/HTTPFixtureServer
head -c 200000 /dev/zero | tr '\0' 'x' | sed 's/^/"/; s/$/"/' > "$work/manifest.json"
"$bin" "$work/manifest.json" 0 2 --timeouts 3 >"$work/stdout" 2>/dev/null &
server_pid=$!
for _ in $(seq 100); do grep -q "on 127.0.0.1:" "$work/stdout" 2>/dev/null && break; sleep 0.1; done
port=$(sed -n 's/.*on 127.0.0.1:\([0-9]*\).*/\1/p' "$work/stdout")
url="http://127.0.0.1:$port"

failures=0
attack() { # attack NAME SLOWHTTPTEST-OPTIONS...
  local name=$1; shift
  slowhttptest "$@" -c "$CONNECTIONS" -r 300 -l "$LENGTH" -p 3 >"$work/$name.out" 2>&1 &
  local attacker=$!
  # Probe while the attack runs: every request must be answered, each within 1 s.
  local probes=0 slow=0 peak=0 held=0 late=$CONNECTIONS started=$SECONDS tcp=0 pages
  sleep 1
  while kill -0 "$attacker" 2>/dev/null; do
    code=$(curl -s -o /dev/null -m 1 -w '%{http_code}' -H 'If-None-Match: "none"' "$url/manifest.json" || echo 000)
    probes=$((probes + 1))
    [ "$code" = 200 ] || slow=$((slow + 1))
    held=$(ss -tnH state established "( sport = :$port )" | wc -l)
    [ "$held" -gt "$peak" ] && peak=$held
    pages=$(awk '/^TCP:/ { for (i = 1; i < NF; i++) if ($i == "mem") print $(i + 1) }' /proc/net/sockstat)
    [ "${pages:-0}" -gt "$tcp" ] && tcp=$pages
    if [ $((SECONDS - started)) -ge 8 ] && [ "$held" -lt "$late" ]; then late=$held; fi
    sleep 0.5
  done
  wait "$attacker" || true
  # slowhttptest's CSV: seconds,closed,pending,connected,... ; its text report says, every
  # second, whether its own probe found the service available.
  local available dropped=no
  available=$(sed 's/\x1b\[[0-9;]*m//g' "$work/$name.out" | grep -c 'service available: *NO' || true)
  if grep -q "No open connections left" "$work/$name.out"; then
    dropped="yes (slowhttptest stopped: the server had closed them all)"
  elif [ "$late" -le $((CONNECTIONS / 10)) ]; then
    dropped="yes (at most $late still held after 8 s)"
  fi
  echo "  $name: $probes probes, $slow failed or slower than 1 s; slowhttptest found the service unavailable $available times;" \
       "server held $peak of $CONNECTIONS slow connections at the peak; dropped: $dropped;" \
       "kernel TCP memory peaked at $((tcp * 4 / 1024)) MiB (pressure at $(($(cut -f2 /proc/sys/net/ipv4/tcp_mem) * 4 / 1024)) MiB)"
  if [ "$slow" -ne 0 ] || [ "$available" -ne 0 ] || [ "$peak" -lt "${MIN_PEAK:-$((CONNECTIONS / 2))}" ] || [ "$dropped" = no ]; then
    failures=$((failures + 1))
  fi
}

echo "slow clients: $CONNECTIONS connections per attack for ${LENGTH}s, server deadlines 3 s"
attack slowloris -H -i 1 -x 10 -u "$url/manifest.json"
attack slow-body -B -i 1 -s 60000 -x 10 -u "$url/echo"
MIN_PEAK=16 attack slow-read -X -k 10 -n 1 -w 1 -y 16 -z 8 -u "$url/manifest.json"
kill -0 "$server_pid" || { echo "the server died"; exit 1; }
echo "slow-clients: $((3 - failures)) passed, $failures failed"
[ "$failures" = 0 ]
