from hostile_common import *  # noqa: F401,F403

CRAWLERS = ["facebookexternalhit/1.1 (+http://www.facebook.com/externalhit_uatext.php)", "WhatsApp/2.23.20.0 A",
            "Slackbot-LinkExpanding 1.0 (+https://api.slack.com/robots)", "Mozilla/5.0 (compatible; Discordbot/2.0; +https://discordapp.com)",
            "Mozilla/5.0 (compatible; Googlebot/2.1; +http://www.google.com/bot.html)", "TelegramBot (like TwitterBot)"]
IPHONE = "Mozilla/5.0 (iPhone; CPU iPhone OS 17_4 like Mac OS X) AppleWebKit/605.1.15 Version/17.4 Mobile/15E148 Safari/604.1"


def crawler_flood(daemon):
    """Link previews and bots: hostile preview fields are refused at publishing (a private or
    script image, bidi overrides, a 10 MB title), hostile-but-valid text reaches the card
    escaped, and 10,000 fetches by preview crawlers, other bots and HEAD (known links, random
    unknown ones) change none of what stands for people: the counts without an entry filter,
    the impact preview's opens, the rollout guard's evidence, the unknown-links list."""
    admin, port = daemon.admin, daemon.port
    routes = json.load(open(os.path.join(EXAMPLE, "routes.json")))

    def publish(document, extra=None):
        _, listing, _ = call(port, admin, "GET", "/v1/revisions")
        body = {"message": "previews", "routes": document}
        body.update(extra or {})
        return call(port, admin, "POST", "/v1/revisions", body, {"If-Match": '"rev-%d"' % json_of(listing)["current"], "Content-Type": "application/json"})

    refused = {}
    for label, preview in [("private image", {"image": "https://169.254.169.254/latest/meta-data/"}), ("script image", {"image": "javascript:alert(1)"}),
                           ("bidi override", {"title": "Sale \u202egnp.exe"}), ("10 MB title", {"title": "t" * 10_000_000}),
                           ("an image of 100 KB", {"image": "https://cdn.example/" + "a" * 100_000}), ("unknown member", {"title": "x", "script": "alert(1)"}),
                           ("line break", {"description": "one\r\nSet-Cookie: a=b"})]:
        document = json.loads(json.dumps(routes))
        document["routes"].append({"id": "hostile", "patterns": ["/sale/hostile"], "destination": "home", "preview": preview})
        status, body, _ = publish(document)
        refused[label] = status
        if status != 422 or b"preview" not in body or b"alert" in body or b"tttttttttt" in body:
            fail("a hostile preview (%s) answered %d: %s" % (label, status, body[:300]))
    document = json.loads(json.dumps(routes))
    for route in document["routes"]:
        if route["id"] == "product":
            route["preview"] = {"title": "Tea </title><script>alert(1)</script>", "description": "\"><img src=x onerror=alert(1)>",
                                "image": "https://cdn.storefront.example/tea.png?a=1&b=<2>"[:-4]}
    status, body, _ = publish(document)
    if status != 201:
        fail("publishing a route with a preview answered %d %s" % (status, body[:300]))

    def land(target, agent, method="GET"):
        connection = http.client.HTTPConnection("127.0.0.1", port, timeout=10)
        connection.request(method, target, headers={"Host": "storefront.example", "User-Agent": agent})
        answer = connection.getresponse()
        page = answer.read()
        connection.close()
        return answer.status, page, answer.getheader("Location")

    status, page, _ = land("/product/p42", CRAWLERS[0])
    if status != 200 or b"<script" in page or b"<img" in page or b"&lt;/title&gt;&lt;script&gt;" not in page:
        fail("a crawler's card for a hostile title answered %d: %s" % (status, page[:600]))
    for _ in range(5):
        status, page, _ = land("/product/p42", IPHONE)
        if status != 200 or b'href="https://apps.apple.com/' not in page:
            fail("a person on an iPhone got %d, not the hand-off page: %s" % (status, page[:300]))
    # A rollout running, so that the guard has evidence to keep.
    document["routes"][0]["notes"] = "the candidate of a rollout"
    status, body, _ = publish(document, {"rollout": {}})
    if status != 201:
        fail("starting a rollout answered %d %s" % (status, body[:300]))
    draft = json.loads(json.dumps(document))
    draft["routes"] = [route for route in draft["routes"] if route["id"] != "product"]

    def people():
        time.sleep(2.5)  # landings are handed to telemetry every second
        asked = time.time()
        deadline = asked + 30
        while True:  # the guard's next look after now (every 5 s)
            _, rollout, _ = call(port, admin, "GET", "/v1/rollout")
            checked = (json_of(rollout).get("guard") or {}).get("checked")
            if checked and time.mktime(time.strptime(checked[:19], "%Y-%m-%dT%H:%M:%S")) - time.timezone >= int(asked):
                break
            if time.time() > deadline:
                fail("the guard did not look within 30 s: %s" % rollout[:300])
            time.sleep(0.5)
        _, counts, _ = call(port, admin, "GET", "/v1/telemetry/counts?groupBy=entry,route&from=%s" % iso(time.time() - 3600))
        _, listing, _ = call(port, admin, "GET", "/v1/revisions")
        current = json_of(listing)["current"]
        status, impact, _ = call(port, admin, "POST", "/v1/revisions/%d/impact" % current, draft, {"Content-Type": "application/json"}, timeout=60)
        if status != 200:
            fail("the impact answered %d %s" % (status, impact[:300]))
        _, rollout, _ = call(port, admin, "GET", "/v1/rollout")
        evidence = json_of(rollout).get("guard") or {}
        _, unknown, _ = call(port, admin, "GET", "/v1/telemetry/unknown-links?limit=200")
        answer = json_of(impact)
        opens = [(route["id"], route["opens"]) for route in answer["routes"]] + [answer.get("allOpens"), answer.get("unattributed")]
        return (json_of(counts)["total"], sorted(json.dumps(group["key"], sort_keys=True) + "=%d" % group["total"] for group in json_of(counts)["groups"]),
                opens, {side: evidence.get(side) for side in ("candidate", "stable", "step", "refused")},
                sorted((item["shape"], item["count"]) for item in json_of(unknown)["shapes"]))

    before = people()
    flooded = {"card": 0, "redirect": 0, "notFound": 0}
    lock = threading.Lock()

    def crawl(worker):
        random_source = random.Random(worker)
        for index in range(1_250):
            agent = CRAWLERS[(worker + index) % len(CRAWLERS)]
            pick = index % 4
            target = ["/product/p%d" % random_source.randrange(10**6), "/sale/spring", "/unknown/%x/shape" % random_source.getrandbits(48),
                      "/product/p42"][pick]
            method = "HEAD" if index % 10 == 0 else "GET"
            status, _, _ = land(target, IPHONE if method == "HEAD" else agent, method)
            with lock:
                flooded["card" if status == 200 else "redirect" if status == 302 else "notFound"] += 1

    started = time.monotonic()
    workers = [threading.Thread(target=crawl, args=(worker,)) for worker in range(8)]
    for worker in workers:
        worker.start()
    for worker in workers:
        worker.join()
    seconds = time.monotonic() - started
    after = people()
    if sum(flooded.values()) != 10_000 or flooded["card"] == 0:
        fail("the crawlers' answers: %s" % flooded)
    for name, was, now in zip(["counts", "groups", "impact opens", "guard evidence", "unknown links"], before, after):
        if was != now:
            fail("10,000 bot fetches changed %s: %s before, %s after" % (name, str(was)[:400], str(now)[:400]))
    time.sleep(0.5)
    _, bots, _ = call(port, admin, "GET", "/v1/telemetry/counts?entry=bot&from=%s" % iso(time.time() - 3600))
    if json_of(bots)["total"] < 10_000:
        fail("only %d of the 10,000 bot fetches are counted as bot" % json_of(bots)["total"])
    _, rollout, headers = call(port, admin, "GET", "/v1/rollout")
    call(port, admin, "POST", "/v1/rollout/abort", None, {"If-Match": headers.get("ETag", "")}, timeout=30)
    print("hostile: previews: %s refused 422; 10,000 crawler, bot and HEAD fetches in %.1f s (%s) counted as %d bot, and the people's "
          "counts (%d), the impact's opens, the guard's evidence and the unknown links unchanged"
          % (", ".join(refused), seconds, ", ".join("%d %s" % (count, kind) for kind, count in flooded.items()), json_of(bots)["total"], before[0]))
