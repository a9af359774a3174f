#!/usr/bin/env bash
# Schemathesis (from PyPI, in .venv) against a live `waymark serve` on a scratch data
# directory, every operation of docs/openapi.yaml, all checks, fixed seed: 0 failures.
# Installs python3-venv from Debian and schemathesis into .venv when missing.
set -euo pipefail
cd "$(dirname "$0")/../.."
bash Tests/Scripts/python-tools.sh schemathesis
bin=${1:?usage: api-fuzz.sh WAYMARK_BINARY}

work=$(mktemp -d)
server_pid=""
cleanup() { [ -n "$server_pid" ] && kill "$server_pid" 2>/dev/null; wait 2>/dev/null; rm -rf "$work"; }
trap cleanup EXIT

"$bin" serve --data-dir "$work/data" --port 0 --threads 2 --quiet >"$work/stdout" 2>"$work/stderr" &
server_pid=$!
for _ in $(seq 100); do grep -q "^Listening on" "$work/stdout" 2>/dev/null && break; sleep 0.1; done
port=$(sed -n 's/^Listening on http:\/\/127.0.0.1:\([0-9]*\).*/\1/p' "$work/stdout")
token=$(grep -o 'wm_[0-9a-f]\{8\}_[A-Za-z0-9_-]\{43\}' "$work/stdout" | head -1)
[ -n "$port" ] && [ -n "$token" ] || { echo "api-fuzz: the daemon did not start"; cat "$work/stdout" "$work/stderr"; exit 1; }

.venv/bin/schemathesis --config-file Tests/Fuzz/schemathesis.toml run docs/openapi.yaml \
  --url "http://127.0.0.1:$port" -H "Authorization: Bearer $token" --checks all \
  --report junit --report-dir "$work/report" --no-color 2>&1 | tail -n 400 || status=$?
# A daemon that died says why on its standard error (Swift prints the crash's backtrace).
if ! kill -0 "$server_pid" 2>/dev/null; then
  echo "api-fuzz: the daemon died; the end of its standard error:"
  tail -n 80 "$work/stderr"
fi
exit "${status:-0}"
