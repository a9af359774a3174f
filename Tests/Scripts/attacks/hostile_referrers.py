from hostile_common import *  # noqa: F401,F403

ANDROID = "Mozilla/5.0 (Linux; Android 14; Pixel 8) AppleWebKit/537.36 Chrome/124.0 Mobile Safari/537.36"
IPHONE = "Mozilla/5.0 (iPhone; CPU iPhone OS 17_4 like Mac OS X) AppleWebKit/605.1.15 Version/17.4 Mobile/15E148 Safari/604.1"
INSTAGRAM = "Mozilla/5.0 (iPhone; CPU iPhone OS 17_1 like Mac OS X) AppleWebKit/605.1.15 (KHTML, like Gecko) Mobile/15E148 Instagram 307.0.2.18.107"
FACEBOOK = "Mozilla/5.0 (Linux; Android 13; SM-S911B; wv) AppleWebKit/537.36 Version/4.0 Chrome/120.0 Mobile Safari/537.36 [FB_IAB/FB4A;FBAV/441.0.0.33.113;]"
PLAY = "https://play.google.com/store/apps/details?id=example.storefront&referrer="


def land(daemon, query, agent):
    """(status, Location or "", page) of /product/p42?QUERY opened by `agent` on the link host."""
    connection = http.client.HTTPConnection("127.0.0.1", daemon.port, timeout=10)
    connection.request("GET", "/product/p42?" + query, headers={"Host": "storefront.example", "User-Agent": agent})
    answer = connection.getresponse()
    page = answer.read().decode()
    connection.close()
    return answer.status, answer.getheader("Location") or "", page


def hostile_referrers(daemon):
    """Install Referrers from hostile links: an Android visitor sent to Google Play with UTM
    items that carry encoded CR LF, quotes, markup, another referrer, 1,900-byte values and
    2,000 items. The Location is Play's address and one `referrer` item, every byte of it
    unreserved or an escape; decoded once (as Play hands it to the app) it holds the link,
    `t` and only the plain, short UTM items; its length is bounded by the link's."""
    schema = json.load(open(os.path.join(EXAMPLE, "schema-ios-5.3.0.json")))
    schema.update(platform="android", version="5.3.0")
    status, body, _ = call(daemon.port, daemon.admin, "PUT", "/v1/schemas/android/5.3.0", schema)
    if status not in (200, 201):
        fail("registering an Android build answered %d %s" % (status, body[:300]))
    # (query, whether the engine takes the link: control characters and invalid UTF-8 are malformed, 404, no store)
    queries = [("utm_source=%0d%0aSet-Cookie:%20a=b&utm_medium=ok", False), ("utm_source=%22%0a&utm_medium=ok", False),
               ("utm_campaign=%22%3E%3Cscript%3E&utm_term=x", True), ("referrer=evil&utm_source=a&deeplink=https://evil.example", True),
               ("utm_content=" + "c" * 1_900, True), ("&".join("utm_source=%d" % index for index in range(2_000))[:1_990], True),
               ("utm_source=a+b&utm_medium=%2541", True), ("utm_source=" + "%FF" * 600, False), ("q=%00&utm_source=%E2%80%AE", False),
               ("utm_source=%E2%80%AE", False), ("utm_medium='x'&utm_source=ok&utm_term=%C3%A9", True)]
    longest, sent = 0, 0
    for query, taken in queries:
        status, location, _ = land(daemon, query, ANDROID)
        if not taken:
            if status != 404 or location:
                fail("a malformed link (%s) answered %d %r" % (query[:60], status, location[:200]))
            continue
        if status != 302 or not location.startswith(PLAY) or "&" in location[len(PLAY):]:
            fail("a hostile referrer (%s) answered %d %r" % (query[:60], status, location[:300]))
        encoded = location[len(PLAY):]
        if re.search(r"[^A-Za-z0-9\-._~%]", encoded):
            fail("the referrer has a byte that is not unreserved: %r" % encoded[:300])
        items = urllib.parse.parse_qs(urllib.parse.unquote(encoded), keep_blank_values=True)
        if items.get("deeplink") != ["https://storefront.example/product/p42"] or set(items) - {"deeplink", "t", "utm_source", "utm_medium", "utm_campaign", "utm_term", "utm_content"}:
            fail("the referrer of %s holds %r" % (query[:60], {key: value[:1] for key, value in items.items()}))
        for key, values in items.items():
            if key.startswith("utm_") and (len(values) != 1 or not re.fullmatch(r"[A-Za-z0-9\-._~]{1,100}", values[0])):
                fail("a UTM item that is not plain went through: %s=%r" % (key, values[:2]))
        longest = max(longest, len(location))
        sent += 1
    # The same links from an iPhone: the hand-off page, whose one link is the App Store's
    # (with `ct` only from a plain utm_campaign) and whose hand-off text is the link as opened
    # (none of the query, which the route does not map) and when.
    pages = 0
    for query, taken in queries:
        status, _, page = land(daemon, query, IPHONE)
        if not taken:
            continue
        hrefs = re.findall(r'href="([^"]*)"', page)
        handoffs = re.findall(r'data-handoff="([^"]*)"', page)
        if status != 200 or len(hrefs) != 1 or not re.fullmatch(r"https://apps\.apple\.com/app/id6450000000(\?ct=[A-Za-z0-9\-._~]{1,40})?", hrefs[0]):
            fail("an iPhone's page for %s: %d %r" % (query[:60], status, hrefs))
        if len(handoffs) != 1 or not re.fullmatch(r"https://storefront\.example/product/p42#waymark=[0-9]{10}", handoffs[0]) or "<" in handoffs[0]:
            fail("an iPhone's hand-off for %s: %r" % (query[:60], handoffs[:1]))
        pages += 1
    # And from in-app browsers: Open in the app is the app's scheme or an intent:// address
    # for its package, never anything of the query the route does not map.
    opened = 0
    for agent, expected in ((INSTAGRAM, r"storefront://product/p42"), (FACEBOOK, r"intent://storefront\.example/product/p42#Intent;scheme=https;package=example\.storefront;S\.browser_fallback_url=[A-Za-z0-9\-._~%]+;end")):
        for query, taken in queries:
            status, _, page = land(daemon, query, agent)
            if not taken:
                continue
            found = re.findall(r'<a id="open" class="get" href="([^"]*)"', page)
            if status != 200 or len(found) != 1 or not re.fullmatch(expected, found[0]) or "<script" in page.split("</main>")[0]:
                fail("an in-app browser's page for %s: %d %r" % (query[:60], status, found[:1]))
            opened += 1
    if sent != sum(taken for _, taken in queries):
        fail("only %d hostile links were sent to Google Play" % sent)
    if longest > 1_000:
        fail("a referrer of %d bytes" % longest)
    print("hostile: %d hostile referrers (%d sent to Google Play, %d iPhone hand-off pages escaped, %d in-app pages): Location Play's address and one referrer item of unreserved bytes and escapes, "
          "only plain UTM items, at most %d bytes" % (len(queries), sent, pages, opened, longest))
