#!/usr/bin/env python3
"""Link landing on a live daemon, with curl as the browser (iPhone, Android and desktop
User-Agents) and an attacker's script.

  1. Every branch: a live route's fallback (mapped query items passed on, others dropped),
     the App Store, Google Play and the web for a resolved link without a fallback, a gated
     route, the schema's notFoundURL and Waymark's own 404 page, an expired campaign, a
     fallback that points at the link itself, HEAD (no body), POST (405), an undeclared
     host and the API's own paths on a link host (today's 404, no landing).
  2. Hostile paths through curl --path-as-is: dot segments, encoded slashes, overlong,
     invalid UTF-8, control bytes, CRLF attempts, network-path and absolute-URL lookalikes;
     then 3,000 random ones over one connection each. None redirects anywhere but an
     address the schemas or routes declared (the whole Location is checked), none reflects
     the link into the page, and the daemon stays up and healthy.
  3. Counting: after the landings, /v1/telemetry/counts?entry=web has people's by platform,
     outcome and reason, exactly, and entry=bot the crawlers', other bots' and HEAD's.
     Preview crawlers (facebookexternalhit, WhatsApp) get the route's card, escaped.
  4. Unknown links: a scanner's flood of random-word links from wrk on one address
     (FLOOD_SECONDS, default 20: about a million on two cores with a release build) while
     people follow three real unknown links from 40 networks of their own (loopback
     addresses 127.0.N.2); the daemon's RSS stays flat (within FLOOD_RSS_MB, default 24, of
     where it was after a two-second warm-up flood), the scanner's network adds 30 shapes a
     minute and no more (the rest refused), and /v1/telemetry/unknown-links has the three
     real shapes on top, with nothing of the links' ids in it.

Usage: landing-check.py WAYMARK_BINARY
"""
import json
import os
import random
import re
import shutil
import socket
import subprocess
import sys
import tempfile
import threading
import time
import urllib.parse

sys.path.insert(0, os.path.dirname(__file__))
import waymark_daemon  # noqa: E402

IPHONE = "Mozilla/5.0 (iPhone; CPU iPhone OS 17_4 like Mac OS X) AppleWebKit/605.1.15 Version/17.4 Mobile/15E148 Safari/604.1"
ANDROID = "Mozilla/5.0 (Linux; Android 14; Pixel 8) AppleWebKit/537.36 Chrome/124.0 Mobile Safari/537.36"
FACEBOOK = "facebookexternalhit/1.1 (+http://www.facebook.com/externalhit_uatext.php)"
WHATSAPP = "WhatsApp/2.23.20.0 A"
GOOGLEBOT = "Mozilla/5.0 (compatible; Googlebot/2.1; +http://www.google.com/bot.html)"
INSTAGRAM = "Mozilla/5.0 (iPhone; CPU iPhone OS 17_1 like Mac OS X) AppleWebKit/605.1.15 (KHTML, like Gecko) Mobile/15E148 Instagram 307.0.2.18.107"
FACEBOOK_APP = "Mozilla/5.0 (Linux; Android 13; SM-S911B; wv) AppleWebKit/537.36 Version/4.0 Chrome/120.0 Mobile Safari/537.36 [FB_IAB/FB4A;FBAV/441.0.0.33.113;]"
DESKTOP = "Mozilla/5.0 (Macintosh; Intel Mac OS X 10_15_7) AppleWebKit/605.1.15 Version/17.4 Safari/605.1.15"
APP_STORE = "https://apps.apple.com/app/id6450000000"
PLAY = "https://play.google.com/store/apps/details?id=example.storefront"
WEB = "https://web.storefront.example/"
ANDROID_WEB = "https://web.storefront.example/android"
NOT_FOUND = "https://web.storefront.example/unknown-link"
FALLBACKS = ["https://web.storefront.example/sale", "https://web.storefront.example/search?src=link"]
VALIDATED = [APP_STORE, PLAY, WEB, ANDROID_WEB, NOT_FOUND] + FALLBACKS


def fail(message):
    print("landing-check: FAIL: " + message)
    sys.exit(1)


def raw(port, method, path, agent, host):
    """One request on a raw socket with Connection: close: everything the server sent."""
    import socket
    with socket.create_connection(("127.0.0.1", port), timeout=10) as connection:
        connection.sendall(("%s %s HTTP/1.1\r\nHost: %s\r\n%sConnection: close\r\n\r\n" %
                            (method, path, host, "User-Agent: %s\r\n" % agent if agent else "")).encode())
        received = b""
        while True:
            chunk = connection.recv(65536)
            if not chunk:
                return received
            received += chunk


def curl(port, path, agent=None, host="storefront.example", method="GET"):
    """(status, Location or None, headers, body) as curl saw them; HEAD on a raw socket, so
    that a body sent after the head would be seen."""
    if method == "HEAD":
        wire = raw(port, method, path, agent, host)
        head, _, body = wire.partition(b"\r\n\r\n")
        lines = head.decode("latin-1").split("\r\n")
        headers = {line.split(":", 1)[0].strip().lower(): line.split(":", 1)[1].strip() for line in lines[1:] if ":" in line}
        return int(lines[0].split()[1]), headers.get("location"), headers, body
    with tempfile.NamedTemporaryFile() as head, tempfile.NamedTemporaryFile() as body:
        command = ["curl", "-s", "--path-as-is", "-o", body.name, "-D", head.name, "-H", "Host: " + host,
                   "--max-time", "10", "http://127.0.0.1:%d%s" % (port, path)]
        if method != "GET":
            command[1:1] = ["-X", method, "--data", "{}"]
        if agent is not None:
            command[1:1] = ["-A", agent]
        else:
            command[1:1] = ["-H", "User-Agent:"]
        subprocess.run(command, check=False)
        lines = open(head.name, "rb").read().decode("latin-1").split("\r\n")
        status = int(lines[0].split()[1]) if lines and lines[0].startswith("HTTP/") else 0
        headers = {}
        for line in lines[1:]:
            if ":" in line:
                name, value = line.split(":", 1)
                headers[name.strip().lower()] = value.strip()
        return status, headers.get("location"), headers, open(body.name, "rb").read()


def check_location(label, location):
    if location is not None and not any(location == v or location.startswith(v + "?") or location.startswith(v + "&")
                                        or (v.endswith("?src=link") and location.startswith(v)) for v in VALIDATED):
        fail("%s: redirected to %r, which no schema or route declared" % (label, location))


# The scanner: random words from one address (one network), as fast as wrk goes.
FLOOD_LUA = r"""
local letters = "abcdefghijklmnopqrstuvwxyz"
local function word()
  local out = {}
  for i = 1, math.random(4, 10) do local k = math.random(1, 26); out[i] = letters:sub(k, k) end
  return table.concat(out)
end
request = function()
  return wrk.format("GET", "/" .. word() .. "/" .. word() .. "/" .. math.random(1, 1000000))
end
"""
REAL = ["/spring/deals", "/summer/deals/", "/old/catalog/%d?email=jane%%40example.com"]


def real_visitors(port, networks):
    """People following the three real unknown links, each from a network of its own
    (loopback addresses 127.0.N.2: one /24 each), a few times each."""
    for network in range(1, networks + 1):
        for index, path in enumerate(REAL):
            target = path % (10_000 + network) if "%" in path else path
            connection = socket.create_connection(("127.0.0.1", port), timeout=10, source_address=("127.0.%d.2" % network, 0))
            connection.sendall(("GET %s HTTP/1.1\r\nHost: storefront.example\r\nUser-Agent: %s\r\nConnection: close\r\n\r\n"
                                % (target, IPHONE)).encode())
            while connection.recv(65536):
                pass
            connection.close()


def flood(port, admin, pid):
    seconds = int(os.environ.get("FLOOD_SECONDS", "20"))
    limit_mb = float(os.environ.get("FLOOD_RSS_MB", "24"))
    with tempfile.NamedTemporaryFile("w", suffix=".lua", delete=False) as script:
        script.write(FLOOD_LUA)
    try:
        def run(duration):
            out = subprocess.run(["wrk", "-t2", "-c32", "-d%ds" % duration, "-s", script.name, "-H", "Host: storefront.example",
                                  "-H", "User-Agent: " + IPHONE, "http://127.0.0.1:%d" % port], capture_output=True, text=True, check=True).stdout
            requests = int(next(line for line in out.splitlines() if "requests in" in line).split()[0])
            return requests
        run(2)
        before = waymark_daemon.rss_mb(pid)
        visitors = threading.Thread(target=real_visitors, args=(port, 40))
        visitors.start()
        requests = run(seconds)
        visitors.join()
        time.sleep(1.5)  # the last second's landings flushed
        after = waymark_daemon.rss_mb(pid)
        print("landing-check: flood of %d random links in %d s: RSS %.1f MB -> %.1f MB" % (requests, seconds, before, after))
        if after - before > limit_mb:
            fail("RSS grew %.1f MB under the flood (limit %.0f)" % (after - before, limit_mb))
        status, body, _ = waymark_daemon.call(port, admin, "GET", "/v1/telemetry/unknown-links?limit=5")
        if status != 200:
            fail("unknown-links: %d %s" % (status, body[:200]))
        listing = json.loads(body)
        top = [shape["shape"] for shape in listing["shapes"][:3]]
        print("landing-check: top shapes %s of %d offered, %d held; %d refused (the scanner's network past its 30 a minute)"
              % (top, listing["total"], listing["capacity"], listing["refused"]))
        if listing["refused"] < requests // 2:
            fail("the scanner's links were not refused: %d of %d" % (listing["refused"], requests))
        if sorted(top) != sorted(["/spring/deals", "/summer/deals", "/old/catalog/:param"]):
            fail("the real shapes are not on top: %r" % listing["shapes"][:5])
        if "jane" in body.decode() or "example.com" in body.decode():
            fail("personal data in the shapes")
    finally:
        os.unlink(script.name)


def main():
    binary = sys.argv[1]
    work = tempfile.mkdtemp(prefix="waymark-landing-")
    process = None
    try:
        process, admin, port = waymark_daemon.start(binary, os.path.join(work, "data"), "--threads", "2")
        if not port:
            fail("the daemon did not start")
        call = lambda *a, **k: waymark_daemon.call(port, admin, *a, **k)  # noqa: E731
        # An Android build whose landing sends desktops elsewhere, and where unknown links go.
        schema = json.load(open(os.path.join(waymark_daemon.EXAMPLE, "schema-ios-5.3.0.json")))
        schema.update(platform="android", version="5.3.0",
                      landing={"playStoreURL": PLAY, "webURL": ANDROID_WEB, "notFoundURL": NOT_FOUND})
        status, body, _ = call("PUT", "/v1/schemas/android/5.3.0", schema)
        if status not in (200, 201):
            fail("registering the Android schema: %d %s" % (status, body[:300]))
        routes = json.load(open(os.path.join(waymark_daemon.EXAMPLE, "routes.json")))
        for route in routes["routes"]:
            if route["id"] == "search":
                route["fallbackURL"] = "https://web.storefront.example/search?src=link"
        routes["routes"] += [
            {"id": "autumn-sale", "patterns": ["/sale/autumn", "/autumn"], "destination": "promo", "params": {"code": {"const": "AUTUMN26"}},
             "fallbackURL": "https://web.storefront.example/sale", "owner": "marketing",
             "preview": {"title": "Autumn <sale> & \"more\"", "description": "Tea for less", "image": "https://cdn.storefront.example/autumn.png"}},
            {"id": "self", "patterns": ["/self"], "destination": "home", "fallbackURL": "https://storefront.example/self", "owner": "marketing"},
        ]
        status, body, _ = call("POST", "/v1/revisions", {"message": "landing", "routes": routes}, headers={"If-Match": '"rev-1"'})
        if status != 201:
            fail("publishing: %d %s" % (status, body[:300]))

        # (label, method, path, agent, host, status, Location, counted as (platform, outcome, reason) or None)
        rows = [
            ("fallback, iPhone", "GET", "/sale/autumn", IPHONE, "storefront.example", 302, FALLBACKS[0], ("ios", "proceed", "none")),
            ("fallback, desktop, other pattern", "GET", "/Autumn/?utm_source=x", DESKTOP, "www.storefront.example", 302, FALLBACKS[0], ("other", "proceed", "none")),
            ("mapped query item passed on", "GET", "/search?q=red+shoes&email=me%40example.com&utm_source=news", ANDROID, "storefront.example", 302,
             FALLBACKS[1] + "&q=red+shoes", ("android", "proceed", "none")),
            ("App Store: an iPhone's hand-off page", "GET", "/product/p1?utm_campaign=spring", IPHONE, "storefront.example", 200, None, ("ios", "proceed", "none")),
            ("Google Play", "GET", "/p/p2", ANDROID, "storefront.example", 302, PLAY, ("android", "proceed", "none")),
            ("the web (iOS's newest build's)", "GET", "/c/shoes", DESKTOP, "storefront.example", 302, WEB, ("other", "proceed", "none")),
            ("gated: the store", "GET", "/orders/42", ANDROID, "storefront.example", 302, PLAY, ("android", "gated", "none")),
            ("no User-Agent: a desktop", "GET", "/product/p1", None, "STOREFRONT.EXAMPLE", 302, WEB, ("other", "proceed", "none")),
            ("a fallback to itself is skipped", "GET", "/self", ANDROID, "storefront.example", 302, PLAY, ("android", "proceed", "none")),
            ("an expired campaign: the page", "GET", "/sale/spring", IPHONE, "storefront.example", 404, None, ("ios", "notFound", "expired")),
            ("an unknown link: the page", "GET", "/winter/sale", DESKTOP, "storefront.example", 404, None, ("other", "notFound", "unknownRoute")),
            ("an unknown link on Android: notFoundURL", "GET", "/winter/sale", ANDROID, "storefront.example", 302, NOT_FOUND, ("android", "notFound", "unknownRoute")),
            ("a bad param: the page", "GET", "/orders/0", IPHONE, "storefront.example", 404, None, ("ios", "notFound", "validationFailed")),
            ("HEAD: no body", "HEAD", "/product/p1", IPHONE, "storefront.example", 302, APP_STORE, ("ios", "proceed", "none")),
            ("HEAD of the page", "HEAD", "/nope", IPHONE, "storefront.example", 404, None, ("ios", "notFound", "unknownRoute")),
            ("a preview crawler: the card", "GET", "/sale/autumn?utm_source=chat", FACEBOOK, "storefront.example", 200, None, ("other", "proceed", "none")),
            ("WhatsApp, the other pattern: the card", "GET", "/autumn", WHATSAPP, "storefront.example", 200, None, ("other", "proceed", "none")),
            ("a crawler's unknown link: the page", "GET", "/winter/sale", WHATSAPP, "storefront.example", 404, None, ("other", "notFound", "unknownRoute")),
            ("another bot lands as a desktop", "GET", "/product/p1", GOOGLEBOT, "storefront.example", 302, WEB, ("other", "proceed", "none")),
            ("Instagram's browser: Open in the app", "GET", "/product/p1", INSTAGRAM, "storefront.example", 200, None, ("ios", "proceed", "none")),
            ("Facebook's browser on Android: intent://", "GET", "/product/p1", FACEBOOK_APP, "storefront.example", 200, None, ("android", "proceed", "none")),
            ("POST: 405", "POST", "/product/p1", IPHONE, "storefront.example", 405, None, None),
            ("an undeclared host: today's 404", "GET", "/product/p1", IPHONE, "evil.example", 404, None, None),
            ("the API's own path on a link host", "GET", "/v1/nothing", IPHONE, "storefront.example", 404, None, None),
            # Hostile paths.
            ("dot segments", "GET", "/a/../product/p1", IPHONE, "storefront.example", 404, None, ("ios", "notFound", "malformed")),
            ("encoded dot segments", "GET", "/product/%2e%2e/%2e%2e/etc", IPHONE, "storefront.example", 404, None, ("ios", "notFound", "malformed")),
            ("encoded slashes", "GET", "/product/..%2F..%2Fetc%2Fpasswd", IPHONE, "storefront.example", 404, None, ("ios", "notFound", "validationFailed")),
            ("overlong", "GET", "/product/" + "p" * 2100, IPHONE, "storefront.example", 404, None, ("ios", "notFound", "malformed")),
            ("invalid UTF-8", "GET", "/product/%C3%28", IPHONE, "storefront.example", 404, None, ("ios", "notFound", "malformed")),
            ("an encoded NUL", "GET", "/product/p1%00", IPHONE, "storefront.example", 404, None, ("ios", "notFound", "malformed")),
            ("an encoded CRLF", "GET", "/product/p1%0d%0aLocation:%20https://evil.example", IPHONE, "storefront.example", 404, None, ("ios", "notFound", "malformed")),
            ("a network-path lookalike", "GET", "//evil.example/x", IPHONE, "storefront.example", 404, None, ("ios", "notFound", "unknownRoute")),
            ("a redirect parameter", "GET", "/search?q=x&next=https://evil.example&url=//evil.example", DESKTOP, "storefront.example", 302,
             FALLBACKS[1] + "&q=x", ("other", "proceed", "none")),
        ]
        expected = {}
        for label, method, path, agent, host, want, location, counted in rows:
            status, got, headers, body = curl(port, path, agent, host, method)
            if status != want:
                fail("%s: %s %s answered %d, not %d" % (label, method, path[:80], status, want))
            if location == PLAY and got and got.startswith(PLAY + "&referrer="):
                # Google Play's address carries the link as its Install Referrer (docs/landing.md, "Deferred links").
                referrer = urllib.parse.parse_qs(urllib.parse.urlsplit(got).query)["referrer"][0]
                if urllib.parse.parse_qs(referrer).get("deeplink") != ["https://%s%s" % (host.lower(), path.split("?")[0])]:
                    fail("%s: the referrer %r is not the link" % (label, referrer))
            elif got != location:
                fail("%s: Location %r, not %r" % (label, got, location))
            check_location(label, got)
            if method == "HEAD" and body:
                fail("%s: HEAD had a body" % label)
            if counted:
                # Crawlers, other bots and HEAD are counted apart (docs/landing.md, "Counting").
                counted = ("bot" if method == "HEAD" or agent in (FACEBOOK, WHATSAPP, GOOGLEBOT) else "web",) + counted
                if headers.get("vary") != "User-Agent" or not headers.get("cache-control", "").startswith("public, max-age=0, s-maxage="):
                    fail("%s: caching headers %r %r" % (label, headers.get("cache-control"), headers.get("vary")))
                expected[counted] = expected.get(counted, 0) + 1
            if status == 200 and agent in (INSTAGRAM, FACEBOOK_APP):
                opened = re.findall(r'<a id="open" class="get" href="([^"]*)"', body.decode())
                want = "storefront://product/p1" if agent == INSTAGRAM else "intent://storefront.example/product/p1#Intent;scheme=https;package=example.storefront;"
                if len(opened) != 1 or not opened[0].startswith(want):
                    fail("%s: Open in the app goes to %r" % (label, opened))
            if status == 200 and agent == IPHONE:
                page = body.decode()
                if 'href="%s?ct=spring" data-handoff="https://storefront.example/product/p1#waymark=' % APP_STORE not in page or "<script>" not in page:
                    fail("%s: the hand-off page %r" % (label, page[:600]))
            if status == 200 and agent in (FACEBOOK, WHATSAPP):
                page = body.decode()
                card = '<meta property="og:title" content="Autumn &lt;sale&gt; &amp; &quot;more&quot;">'
                if card not in page or 'content="https://cdn.storefront.example/autumn.png"' not in page or "<script" in page or "utm_source" in page:
                    fail("%s: the card %r" % (label, page[:600]))
            if status == 404 and counted and method == "GET":
                page = body.decode()
                policy = headers.get("content-security-policy", "")
                if "unknown or has expired" not in page or not policy.startswith("default-src 'none'") or "evil" in page or "passwd" in page:
                    fail("%s: the 404 page (policy %r)" % (label, policy))
            print("landing-check: %-40s %s %d %s" % (label, method, status, got or ""))

        # Counted as web telemetry, exactly: the landings are handed to the telemetry store
        # every second, so wait until they are all there, then compare.
        deadline = time.time() + 15
        since = urllib.parse.quote(time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(time.time() - 3600)))
        while True:
            groups = {}
            for entry in ("web", "bot"):
                status, body, _ = call("GET", "/v1/telemetry/counts?entry=%s&groupBy=entry,platform,outcome,reason&from=%s" % (entry, since))
                if status != 200:
                    fail("counts: %d %s" % (status, body[:200]))
                groups.update({(g["key"]["entry"], g["key"]["platform"], g["key"]["outcome"], g["key"]["reason"]): g["total"] for g in json.loads(body)["groups"]})
            if sum(groups.values()) >= sum(expected.values()) or time.time() > deadline:
                break
            time.sleep(0.3)
        if groups != expected:
            fail("web telemetry: counted %r, landed %r" % (groups, expected))
        print("landing-check: web and bot telemetry by platform, outcome and reason, exactly: %s" % json.dumps({"/".join(k): v for k, v in sorted(groups.items())}))

        # An attacker's paths: random bytes in every position, each on its own connection.
        rng = random.Random(20261126)
        alphabet = "abcXYZ019/._~-%!$&'()*+,;=:@?" + "%2F%2f%00%0A%FF%C0%AE%25%3F%23"
        for index in range(3000):
            path = "/" + "".join(rng.choice(alphabet) for _ in range(rng.randint(1, 60)))
            if rng.random() < 0.05:
                path += "p" * rng.randint(1000, 3000)
            agent = rng.choice([IPHONE, ANDROID, DESKTOP])
            try:
                status, page, headers = waymark_daemon.call(port, None, "GET", path, headers={"Host": "storefront.example", "User-Agent": agent})
            except Exception as error:  # noqa: BLE001
                fail("random path %r: %s" % (path[:80], error))
            check_location("random path %r" % path[:80], headers.get("Location"))
            if status == 200 and agent == IPHONE:
                # A link that resolves: the hand-off page, whose one link is the App Store's.
                hrefs = re.findall(rb'href="([^"]*)"', page)
                if hrefs != [APP_STORE.encode()] or page.count(b"<script>") != 1:
                    fail("random path %r: the hand-off page links to %r" % (path[:80], hrefs))
            elif status not in (302, 400, 404, 414):
                fail("random path %r: %d" % (path[:80], status))
        if process.poll() is not None:
            fail("the daemon exited")
        status, _, _ = waymark_daemon.call(port, None, "GET", "/healthz")
        if status != 200:
            fail("healthz after the attack: %d" % status)
        print("landing-check: 3,000 random paths: every Location validated, the daemon healthy")

        flood(port, admin, process.pid)
        print("landing-check: ok")
    finally:
        if process:
            process.terminate()
            process.wait(timeout=30)
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
