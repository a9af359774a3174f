#!/usr/bin/env bash
# `waymark validate --check-links` on the storefront example, against its sites served
# from loopback (Tests/Fixtures/storefront-sites) by https-fixture.py:
#   1. every file and fallback good: no finding, exit 0, and the time it took (under 2 s);
#   2. the www host's apple-app-site-association gone: a warning, or exit 1 with
#      --link-findings error;
#   3. without --allow-address the loopback sites are refused as loopback.
set -euo pipefail
cd "$(dirname "$0")/../.."
BIN=${1:-.build/debug/waymark}
dir=$(mktemp -d)
fixture=""
cleanup() { [ -n "$fixture" ] && kill "$fixture" 2>/dev/null; rm -rf "$dir"; }
trap cleanup EXIT

mkdir -p "$dir/sites"
cp -r Tests/Fixtures/storefront-sites/. "$dir/sites/"
python3 Tests/Scripts/https-fixture.py "$dir" --names storefront.example,www.storefront.example > "$dir/port" &
fixture=$!
for _ in $(seq 100); do grep -q PORT "$dir/port" 2>/dev/null && break; sleep 0.1; done
port=$(awk '/PORT/ {print $2}' "$dir/port")
[ -n "$port" ] || { echo "link-checks: the fixture did not start" >&2; exit 1; }

example=manifests/storefront
run() {
  "$BIN" validate --schema $example/schema-ios-5.2.0.json --schema $example/schema-ios-5.3.0.json $example/routes.json \
    --json --check-links --ca-file "$dir/ca.pem" \
    --connect-to "storefront.example:443:127.0.0.1:$port" --connect-to "www.storefront.example:443:127.0.0.1:$port" "$@"
}
# The link checks' findings in a report on stdin: "severity code path" lines.
findings() {
  python3 -c '
import json, sys
report = json.load(sys.stdin)
for severity in ("errors", "warnings"):
    for p in report[severity]:
        if p["code"] in ("unreachableFallback", "associatedDomainMissing", "associatedDomainWrongApp", "associatedDomainNotCovering"):
            print(severity[:-1], p["code"], p["path"], "-", p["message"])'
}

start=$(date +%s%N)
run --allow-address "127.0.0.1:$port" --link-findings error > "$dir/good.json"
elapsed=$(( ($(date +%s%N) - start) / 1000000 ))
found=$(findings < "$dir/good.json")
[ -z "$found" ] || { echo "link-checks: findings on good sites:"; echo "$found"; exit 1; } >&2
requests=$(grep -c '^GET ' "$dir/requests.log")
echo "link-checks: the example with checks on: valid, $requests fetches, ${elapsed} ms (must be under 2000)"
[ "$elapsed" -lt 2000 ] || { echo "link-checks: too slow" >&2; exit 1; }

rm "$dir/sites/www.storefront.example/.well-known/apple-app-site-association"
run --allow-address "127.0.0.1:$port" > "$dir/warning.json"
[ "$(findings < "$dir/warning.json" | cut -d' ' -f1-3)" = 'warning associatedDomainMissing $' ] \
  || { echo "link-checks: expected one associatedDomainMissing warning:"; findings < "$dir/warning.json"; exit 1; } >&2
status=0
run --allow-address "127.0.0.1:$port" --link-findings error > "$dir/error.json" || status=$?
[ "$status" -eq 1 ] || { echo "link-checks: --link-findings error should exit 1, got $status" >&2; exit 1; }
echo "link-checks: a missing apple-app-site-association: $(findings < "$dir/error.json")"

before=$(grep -c '^GET ' "$dir/requests.log")
run > "$dir/refused.json" || true
after=$(grep -c '^GET ' "$dir/requests.log")
grep -q 'host name leads to loopback' "$dir/refused.json" && ! grep -q '127\.0\.0\.1' "$dir/refused.json" && [ "$before" -eq "$after" ] \
  || { echo "link-checks: loopback must be refused without --allow-address" >&2; exit 1; }
echo "link-checks: without --allow-address every fetch is refused as loopback, without telling the address, and the sites saw no request"
