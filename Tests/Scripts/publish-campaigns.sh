#!/usr/bin/env bash
# publish-campaigns.sh SERVE_OUTPUT URL: waits for a freshly seeded `waymark serve` whose
# output goes to SERVE_OUTPUT, then publishes the storefront example plus 300 campaign
# routes as revision 2 with the admin token it printed, so its iOS 5.3.0 manifest is about
# 35 KB (what bench-http and count-instructions measure). Fails unless the answer is 201.
set -euo pipefail
cd "$(dirname "$0")/../.."
output=$1 url=$2
for _ in $(seq 100); do grep -q "^Listening on" "$output" 2>/dev/null && break; sleep 0.1; done
grep -q "^Listening on" "$output" 2>/dev/null || { echo "publish-campaigns: the daemon did not start; it said:" >&2; cat "$output" >&2; exit 1; }
admin=$(grep -o 'wm_[0-9a-f]\{8\}_[A-Za-z0-9_-]\{43\}' "$output" | head -1)
document=$(mktemp)
trap 'rm -f "$document"' EXIT
python3 - "$document" <<'PY'
import json, sys
document = json.load(open("manifests/storefront/routes.json"))
document["routes"] += [{"id": f"campaign-{i}", "patterns": [f"/campaign/spring-{i}/:slug"], "destination": "category",
                        "owner": "marketing"} for i in range(300)]
json.dump({"message": "300 campaign routes", "routes": document}, open(sys.argv[1], "w"))
PY
status=$(curl -s -o /dev/null -w '%{http_code}' -X POST -H "Authorization: Bearer $admin" -H 'If-Match: "rev-1"' \
  --data-binary @"$document" "$url/v1/revisions")
[ "$status" = 201 ] || { echo "publish-campaigns: publishing answered $status" >&2; exit 1; }
