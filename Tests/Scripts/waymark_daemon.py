"""Starting `waymark serve` from the Python test scripts, and the small helpers they share
(a request on its own connection, a process's RSS)."""
import os
import re
import subprocess
import time

ROOT = os.path.normpath(os.path.join(os.path.dirname(__file__), "..", ".."))
EXAMPLE = os.path.join(ROOT, "manifests", "storefront")
TOKEN = re.compile(r"(wm_[0-9a-f]{8}_[A-Za-z0-9_-]{43})")


def start(binary, data, *arguments, seed=True, port=0, env=None):
    """Starts the daemon on a loopback port (by default a free one), seeded from the
    storefront example unless `seed` is false (a follower).
    Returns (process, admin token or None, port or None): the token is printed only when
    the data directory had none; the port is None if the daemon did not start."""
    process = subprocess.Popen(
        [binary, "serve", "--data-dir", data, "--port", str(port), "--quiet", *(["--seed", EXAMPLE] if seed else []), *arguments],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env)
    token = port = None
    deadline = time.time() + 30
    for line in process.stdout:
        match = TOKEN.search(line)
        if match:
            token = match.group(1)
        match = re.search(r"Listening on http://127\.0\.0\.1:(\d+)", line)
        if match:
            port = int(match.group(1))
            break
        if time.time() > deadline:
            break
    return process, token, port


def rss_mb(pid):
    """The process's resident set in MB, from /proc."""
    with open("/proc/%d/status" % pid) as status:
        for line in status:
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) / 1024
    return 0.0


def call(port, token, method, path, body=None, headers=None, timeout=30):
    """One request on its own connection: (status, body bytes, headers as a dict).
    A dict or list body is sent as JSON; a token as a bearer token."""
    import http.client
    import json
    connection = http.client.HTTPConnection("127.0.0.1", port, timeout=timeout)
    all_headers = {"Authorization": "Bearer " + token} if token else {}
    if isinstance(body, (dict, list)):
        all_headers["Content-Type"] = "application/json"
    all_headers.update(headers or {})
    data = json.dumps(body).encode() if isinstance(body, (dict, list)) else body
    connection.request(method, path, body=data, headers=all_headers)
    response = connection.getresponse()
    result = (response.status, response.read(), dict(response.getheaders()))
    connection.close()
    return result


def peak_mb(pid):
    """The process's peak resident memory so far (VmHWM), in MB (0 if /proc says none)."""
    with open("/proc/%d/status" % pid) as status:
        for line in status:
            if line.startswith("VmHWM:"):
                return int(line.split()[1]) / 1024
    return 0.0


def reset_peak(pid):
    """Starts the process's peak resident memory (VmHWM) again from its RSS now (proc(5),
    clear_refs 5), so the next peak is the next request's own."""
    with open("/proc/%d/clear_refs" % pid, "w") as out:
        out.write("5")


def iso(seconds):
    """Seconds since 1970 as RFC 3339 UTC to the second, as the API reads times."""
    return time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(seconds))
