from hostile_common import *  # noqa: F401,F403

ANDROID = "Mozilla/5.0 (Linux; Android 14; Pixel 8) AppleWebKit/537.36 Chrome/124.0 Mobile Safari/537.36"
IPHONE = "Mozilla/5.0 (iPhone; CPU iPhone OS 17_4 like Mac OS X) AppleWebKit/605.1.15 Version/17.4 Mobile/15E148 Safari/604.1"


def deferred_times(binary, scratch):
    """Deferred links never go stale in a kept answer: with no publish and no window edge
    ahead, a landing is kept until the store changes — but one carrying the time it was made
    (Google Play's Install Referrer `t`, the iPhone's hand-off text) is made again once 30 s
    have passed (the daemon's clock moved with --clock-file a day and more), so the time it
    hands out is always within 30 s of now and the app's one-day bound holds."""
    data = os.path.join(scratch, "deferred-times")
    clock = os.path.join(scratch, "deferred-times-clock")
    start = int(time.time())
    set_clock = moved_clock(clock)
    set_clock(start)
    daemon = Daemon(binary, data, "--clock-file", clock)
    seen = []
    try:
        for offset in (0, 10, 31, 90_000, 90_010, 200_000):
            set_clock(start + offset)
            for agent, pattern in ((ANDROID, r"t%3D(\d+)"), (IPHONE, r"#waymark=(\d+)")):
                connection = http.client.HTTPConnection("127.0.0.1", daemon.port, timeout=10)
                connection.request("GET", "/product/p1", headers={"Host": "storefront.example", "User-Agent": agent})
                answer = connection.getresponse()
                text = (answer.getheader("Location") or "") + answer.read().decode()
                connection.close()
                found = re.search(pattern, text)
                if not found:
                    fail("no time in the %s landing at +%d s: %s" % ("Android" if agent == ANDROID else "iPhone", offset, text[:300]))
                made = int(found.group(1))
                if not 0 <= start + offset - made <= 30:
                    fail("at +%d s a kept landing handed out a time %d s old" % (offset, start + offset - made))
                seen.append(start + offset - made)
    finally:
        daemon.stop()
    print("hostile: deferred links' times in kept landings, the clock moved up to 200,000 s: at most %d s old (%s)"
          % (max(seen), ", ".join(str(age) for age in seen)))
