#!/usr/bin/env python3
"""GET /console in a real headless Chromium (Debian's `chromium` and `chromium-driver`),
driven with Selenium (Debian's `python3-selenium`) as a person would use it, against a
live daemon seeded with the storefront example:

  - the page's Content-Security-Policy: default-src 'none', its one script and one style
    by hash (the hashes of what it serves), requests to its own origin only;
  - log in with a routes:publish token (the page asks; a wrong token is refused);
  - compose a campaign route: id, a pattern with a capture, the destination, a window, a
    fallback, an owner; a constant of the wrong type gets a type error next to its field,
    gone once fixed; a pattern that takes the same links as an existing route names that
    route, as a link to it; publishing is refused while an error stands;
  - preview the link on the draft: gated for a logged-out user, proceeding logged in,
    `expired` after the window; its QR code shown;
  - review the diff and publish: the new revision is in the history and in the manifest
    the API serves;
  - a second browser publishes first: the first one's publish is refused (412), the page
    says who published and rebases; a route changed on both sides is a conflict the person
    settles; nothing is overwritten;
  - roll back, after a confirmation that shows what will change;
  - keyboard: the section tabs move with the arrow keys;
  - performance (its own stage, first): a week of hourly telemetry posted by the script from
    three builds, plus web landings; the route table's sparkline and week; the spring sale's
    chart per day, by door, platform, version and outcome, read back from the SVG's data
    and equal to what was posted; the CSV download equal to the chart; campaigns by id
    prefix and by owner adding up their routes; two routes and two weeks on one chart;
    every route's web landings by what they did; a telemetry:read token alone seeing the
    performance view only, with the same numbers;
  - the token went to this origin's /v1/ API and nowhere else (Chromium's network log), and
    Chromium logged no policy violation;
  - the impact of a draft (`impact_stage`, a daemon of its own fed a week of telemetry by
    this script): removing product's /p/:id alias shows "Up to N opens last week would no
    longer open product" next to product's change, N the posted opens (proceed and gated);
    publishing asks for a confirmation naming N; a route added for the top unknown shape
    shows that shape's count as gained.
  - importing links (`import_stage`, a daemon of its own whose builds claim the short-link
    domain): a Takeout CSV chosen in the page becomes the draft, the links not imported
    listed with their reasons (page.link, an unanswered deep link with its shape);
    published, the short link lands.
Screenshots of the main states go to SCREENSHOTS (default .build/console).

Usage: console-check.py WAYMARK_BINARY [SCREENSHOTS] (through console-check.sh, which installs what it needs)
"""
import base64
import calendar
import csv
import hashlib
import http.client
import json
import os
import random
import re
import shutil
import subprocess
import sys
import tempfile
import time

import waymark_daemon

from waymark_daemon import iso  # noqa: E402

try:
    from selenium import webdriver
    from selenium.common.exceptions import TimeoutException
    from selenium.webdriver.chrome.options import Options
    from selenium.webdriver.chrome.service import Service
    from selenium.webdriver.common.by import By
    from selenium.webdriver.common.keys import Keys
    from selenium.webdriver.support.ui import Select, WebDriverWait
except ImportError:
    print("console-check: FAIL: selenium is not installed (make test-console installs it into .venv-selenium)", file=sys.stderr)
    sys.exit(1)

ROOT = waymark_daemon.ROOT
STEPS = []


def fail(message):
    print("console-check: FAIL: " + message, file=sys.stderr)
    sys.exit(1)


def step(text):
    STEPS.append(text)
    print("console-check: " + text)


def api(port, token, method, path, body=None, headers=None):
    status, data, answer_headers = waymark_daemon.call(port, token, method, path, body, headers)
    try:
        return status, json.loads(data) if data else None, answer_headers
    except ValueError:
        return status, data, answer_headers


def browser(size=(1280, 800)):
    options = Options()
    options.binary_location = shutil.which("chromium") or "/usr/bin/chromium"
    for argument in ["--headless=new", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage", "--no-first-run",
                     "--window-size=%d,%d" % size, "--lang=en-US"]:
        options.add_argument(argument)
    options.set_capability("goog:loggingPrefs", {"browser": "ALL", "performance": "ALL"})
    driver = webdriver.Chrome(service=Service(shutil.which("chromedriver") or "/usr/bin/chromedriver"), options=options)
    driver.set_window_size(*size)
    return driver


def wait(driver, condition, what, seconds=15):
    try:
        return WebDriverWait(driver, seconds, poll_frequency=0.1).until(lambda d: condition(d))
    except TimeoutException:
        logs = [entry["message"] for entry in driver.get_log("browser")][-5:]
        fail("timed out waiting for " + what + "; status: " + text(driver, "status") + "; the browser's last messages: %r" % logs)


def text(driver, element_id):
    try:
        return driver.find_element(By.ID, element_id).text
    except Exception:
        return ""


def items(driver, list_id):
    return [item.text for item in driver.find_elements(By.CSS_SELECTOR, "#%s li" % list_id)]


def type_into(driver, element_id, value, clear=True):
    element = driver.find_element(By.ID, element_id)
    if clear:
        element.send_keys(Keys.CONTROL, "a")
        element.send_keys(Keys.DELETE)
    element.send_keys(value)
    return element


def set_time(driver, element_id, value):
    """A datetime-local field: Chromium's own picker cannot be typed into the same way in
    every locale, so the value is set and an input event sent, as typing ends with."""
    element = driver.find_element(By.ID, element_id)
    driver.execute_script("arguments[0].disabled = false; arguments[0].value = arguments[1];"
                          "arguments[0].dispatchEvent(new Event('input', {bubbles: true}));"
                          "arguments[0].dispatchEvent(new Event('change', {bubbles: true}));", element, value)


def settled(driver):
    """The draft's last edit has been checked by the server."""
    return "Checking" not in text(driver, "status")


def shot(driver, folder, name, show=None):
    """A screenshot of the window, scrolled to the element `show` (an id) when given."""
    if show:
        driver.execute_script("arguments[0].scrollIntoView({block: 'center'})", driver.find_element(By.ID, show))
    path = os.path.join(folder, name + ".png")
    driver.save_screenshot(path)
    with open(path, "rb") as handle:
        if handle.read(8) != b"\x89PNG\r\n\x1a\n":
            fail("the screenshot %s is not a PNG" % path)
    return path


def log_in(driver, base, token):
    driver.get(base + "/console")
    wait(driver, lambda d: d.find_element(By.ID, "token").is_displayed(), "the page to ask for a token")
    type_into(driver, "token", token + "\n")
    wait(driver, lambda d: d.find_element(By.ID, "app").is_displayed() and "Draft from revision" in text(d, "status"), "the console to open")


def route_row(driver, route_id):
    rows = driver.find_elements(By.CSS_SELECTOR, "#routes-table tr[data-route='%s']" % route_id)
    return rows[0] if rows else None


def edit_route(driver, route_id):
    driver.find_element(By.ID, "tab-routes").click()
    row = wait(driver, lambda d: route_row(d, route_id), "the route %s in the table" % route_id)
    row.find_element(By.CSS_SELECTOR, "button[data-edit]").click()
    wait(driver, lambda d: d.find_element(By.ID, "f-id").get_attribute("value") == route_id, "the form to hold " + route_id)


def publish(driver, message):
    driver.find_element(By.ID, "tab-review").click()
    wait(driver, lambda d: settled(d) and d.find_element(By.ID, "publish").is_enabled(), "publish to be allowed")
    type_into(driver, "publish-message", message)
    driver.find_element(By.ID, "publish").click()
    # The page writes "Publishing…" as the click is handled, then the answer.
    wait(driver, lambda d: text(d, "publish-result") not in ("", "Publishing…"), "an answer to the publish")
    return text(driver, "publish-result")


def outcome(driver, build, user):
    rows = driver.find_elements(By.CSS_SELECTOR, "#preview-table tr[data-build='%s'][data-user='%s']" % (build, user))
    return rows[0].get_attribute("data-outcome") if rows else None


def check_policy(port):
    status, page, headers = waymark_daemon.call(port, None, "GET", "/console")
    if status != 200:
        fail("GET /console answered %d without a token" % status)
    policy = {part.split(" ", 1)[0]: part.split(" ", 1)[1] if " " in part else "" for part in headers["Content-Security-Policy"].split("; ")}
    html = page.decode()
    scripts = re.findall(r"<script>(.*?)</script>", html, re.S)
    styles = re.findall(r"<style>(.*?)</style>", html, re.S)

    def digest(content):
        return "'sha256-%s'" % base64.b64encode(hashlib.sha256(content.encode()).digest()).decode()

    expected = {"default-src": "'none'", "script-src": " ".join(map(digest, scripts)), "style-src": " ".join(map(digest, styles)),
                "connect-src": "'self'", "img-src": "'self' blob:", "base-uri": "'none'", "form-action": "'none'", "frame-ancestors": "'none'"}
    if policy != expected:
        fail("the console's policy is %r, expected %r" % (policy, expected))
    markup = html.split("<script>")[0].split("</style>")[1]
    if len(scripts) != 1 or len(styles) != 1 or re.search(r"<script\s|<link|<iframe|<object|\son[a-z]+=|style=\"|(src|href|action)=\"", markup):
        fail("the page loads or runs something other than its one inline script and style")
    if "unsafe" in headers["Content-Security-Policy"]:
        fail("the policy allows something unsafe")
    if headers.get("X-Content-Type-Options") != "nosniff" or headers.get("Referrer-Policy") != "no-referrer":
        fail("the page lacks nosniff or no-referrer: %r" % headers)
    step("page policy: default-src 'none', one script and one style by hash, connect-src 'self', img-src 'self' blob:")


def check_requests(driver, base, token):
    """Every request that carried the token went to this origin's /v1/ API."""
    carried = 0
    for entry in driver.get_log("performance"):
        message = json.loads(entry["message"])["message"]
        if message.get("method") != "Network.requestWillBeSent":
            continue
        request = message["params"]["request"]
        url, headers = request["url"], {k.lower(): v for k, v in request.get("headers", {}).items()}
        if token in json.dumps(request):
            carried += 1
            if not url.startswith(base + "/v1/") or headers.get("authorization") != "Bearer " + token:
                fail("the token went to %s" % url)
        elif not url.startswith(base + "/") and not url.startswith("blob:" + base) and not url.startswith("data:"):
            fail("the page requested %s" % url)
    # The API's refusals this test provokes (401 for a wrong token, 403 for the dry
    # validation by which the page learns a reading token cannot publish, 412 for a stale
    # publish) are logged by Chromium as failed resources; anything else severe, or any
    # policy violation, is a failure.
    expected = re.compile(r"Failed to load resource: the server responded with a status of 4(01|03|12)|/favicon\.ico ")
    violations = [entry["message"] for entry in driver.get_log("browser")
                  if "Content Security Policy" in entry["message"] or (entry["level"] == "SEVERE" and not expected.search(entry["message"]))]
    if violations:
        fail("the browser logged: %s" % violations[:3])
    return carried


# ---- Performance: a week of telemetry, read back from the chart ----------------------------

DOORS = {"universalLink": "app, via a link", "scheme": "app, via a link", "push": "app, via a push", "inApp": "in the app"}
CLIENTS = [("ios", "5.3.0"), ("ios", "5.2.0"), ("android", "5.3.0")]


def post_week(port, phone):
    """Posts a week of telemetry, hourly, from three builds (android 5.3.0 has no schema, so
    its version is counted as `other`): every hour of the last 7 UTC days up to now, events
    for spring-sale (every door, proceeded, gated on auth, expired), product, orders and
    order-detail, with seeded random counts. Returns what was posted, one (ts, platform,
    version, entry, outcome, reason, precondition, route, count) per event."""
    rng = random.Random(36)
    now = int(time.time())
    first = (now // 86400 - 6) * 86400
    posted = []
    for platform, version in CLIENTS:
        events = []
        for hour in range(first, now, 3600):
            ts = min(hour + 120, now - 1)
            for route in ("spring-sale", "spring-sale", "product", "orders", "order-detail"):
                entry = rng.choice(list(DOORS))
                outcome = rng.choice(["proceed", "proceed", "proceed", "gated", "notFound"])
                event = {"ts": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(ts)), "entry": entry, "outcome": outcome,
                         "route": route, "count": rng.randint(1, 9)}
                if outcome == "gated":
                    event["precondition"] = "auth"
                if outcome == "notFound":
                    event["reason"] = "expired"
                events.append(event)
                posted.append((ts, platform, version if platform == "ios" else "other", entry, outcome, event.get("reason"),
                               event.get("precondition"), route, event["count"]))
        # The week before: spring-sale at noon each day, to be compared with this week.
        for day in range(7):
            ts = first - (7 - day) * 86400 + 12 * 3600
            count = 10 * (day + 1) + len(platform)
            events.append({"ts": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(ts)), "entry": "push", "outcome": "proceed",
                           "route": "spring-sale", "count": count})
            posted.append((ts, platform, version if platform == "ios" else "other", "push", "proceed", None, None, "spring-sale", count))
        for index in range(0, len(events), 1000):
            status, answer, _ = api(port, phone, "POST", "/v1/telemetry",
                                    {"client": {"platform": platform, "appVersion": version, "revision": 1}, "events": events[index:index + 1000]})
            if status != 202 or answer["rejected"]:
                fail("posting the week's telemetry: %d %r" % (status, answer))
    return posted


def land(port, path, user_agent, times):
    """Opens a link on the web `times` times, as a browser without the app would."""
    for _ in range(times):
        status, _, _ = waymark_daemon.call(port, None, "GET", path, headers={"Host": "storefront.example", "User-Agent": user_agent})
        if status not in (200, 302, 404):  # 200: an iPhone's hand-off page (docs/landing.md, "Deferred links")
            fail("a landing on %s answered %d" % (path, status))


def per_day(posted, keep):
    days = {}
    for event in posted:
        if keep(event):
            day = time.strftime("%Y-%m-%d", time.gmtime(event[0]))
            days[day] = days.get(day, 0) + event[8]
    return days


def chart(driver):
    """The chart's data as the SVG carries it: {series: {start: count}}."""
    found = {}
    for point in driver.execute_script(
            "return [...document.querySelectorAll('#perf-chart circle')].map((c) => [c.dataset.series, c.dataset.start, Number(c.dataset.count)])"):
        found.setdefault(point[0], {})[point[1]] = point[2]
    return found


def choose(driver, **choices):
    """Sets the performance controls and waits until the chart drawn is of those choices."""
    for name, value in choices.items():
        if name == "prefix":
            type_into(driver, "perf-prefix", value)
        else:
            Select(driver.find_element(By.ID, "perf-" + name)).select_by_value(value)
    key = "|".join([driver.find_element(By.ID, "perf-subject").get_attribute("value"), driver.find_element(By.ID, "perf-prefix").get_attribute("value").strip(),
                    driver.find_element(By.ID, "perf-range").get_attribute("value"), driver.find_element(By.ID, "perf-step").get_attribute("value"),
                    driver.find_element(By.ID, "perf-split").get_attribute("value"), driver.find_element(By.ID, "perf-compare").get_attribute("value")])
    wait(driver, lambda d: d.find_elements(By.CSS_SELECTOR, "#perf-chart[data-key='%s']" % key), "the chart of %s" % key)
    return chart(driver)


def check_performance(binary, data, port, base, marketing, folder, drivers):
    """The performance view on a week of posted telemetry, with a routes:publish token alone."""
    started = time.monotonic()
    # The stage's days are UTC days read at different moments: it does not begin in the last
    # minute of one, so they are the same days throughout.
    while time.time() % 86400 > 86400 - 60:
        time.sleep(1)
    phone = subprocess.run([binary, "token", "create", "--data-dir", data, "--name", "phones", "--scope", "telemetry:write", "--rate", "unlimited"],
                           capture_output=True, text=True, check=True).stdout.strip()
    posted = post_week(port, phone)
    iphone = "Mozilla/5.0 (iPhone; CPU iPhone OS 17_0 like Mac OS X) AppleWebKit/605.1.15"
    desktop = "Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36"
    land(port, "/sale/spring", iphone, 3)   # ended in March: notFound (expired), Waymark's 404 page
    land(port, "/sale/spring", desktop, 2)
    land(port, "/new", iphone, 4)           # new-arrivals: no fallback, so the App Store
    today = time.strftime("%Y-%m-%d", time.gmtime())
    landed = [(int(time.time()), "ios", "5.3.0", "web", "notFound", "expired", None, "spring-sale", 3),
              (int(time.time()), "other", "other", "web", "notFound", "expired", None, "spring-sale", 2)]
    # Landings are handed to the counts every second: wait until they are there.
    query = "/v1/telemetry/counts?step=1h&entry=web&from=%sT00:00:00Z" % today
    deadline = time.monotonic() + 15
    while api(port, marketing, "GET", query)[1]["total"] != 9:
        if time.monotonic() > deadline:
            fail("the 9 landings were not counted: %r" % api(port, marketing, "GET", query)[1]["total"])
        time.sleep(0.1)
    posted += landed
    week_start = (int(time.time()) // 86400 - 6) * 86400
    spring_all = [event for event in posted if event[7] == "spring-sale"]
    spring = [event for event in spring_all if event[0] >= week_start]

    p = browser((1280, 1000))
    drivers.append(p)
    p.execute_cdp_cmd("Browser.setDownloadBehavior", {"behavior": "allow", "downloadPath": folder})
    log_in(p, base, marketing)
    # The route table's sparkline and week.
    expected_days = per_day(spring, lambda e: True)
    row = wait(p, lambda d: d.find_elements(By.CSS_SELECTOR, "#routes-table tr[data-route='spring-sale'] svg.spark"), "the spring sale's sparkline")[0]
    days = row.get_attribute("data-days").split(",")
    sparkline = [int(n) for n in row.get_attribute("data-counts").split(",")]
    week = int(p.find_element(By.CSS_SELECTOR, "[data-week='spring-sale']").text)
    if sparkline != [expected_days.get(day, 0) for day in days] or week != sum(e[8] for e in spring):
        fail("the spring sale's sparkline %r (week %d) is not what was posted: %r" % (sparkline, week, expected_days))
    step("route table: spring-sale's sparkline is the posted opens per day %r, %d in the week" % (sparkline, week))

    p.find_element(By.ID, "tab-performance").click()
    by_door = choose(p, subject="route:spring-sale", range="week", step="day", split="door", compare="")
    shown_days = {}
    for series in by_door.values():
        for start, count in series.items():
            shown_days[start[:10]] = shown_days.get(start[:10], 0) + count
    if shown_days != {day: expected_days.get(day, 0) for day in days}:
        fail("the spring sale's chart per day %r is not what was posted %r" % (shown_days, expected_days))
    doors = {}
    for event in spring:
        name = DOORS.get(event[3], "web: not found")
        doors[name] = doors.get(name, 0) + event[8]
    if {name: sum(series.values()) for name, series in by_door.items()} != doors:
        fail("the split by door %r is not what was posted %r" % ({n: sum(s.values()) for n, s in by_door.items()}, doors))
    legend = [item.text for item in p.find_elements(By.CSS_SELECTOR, "#perf-legend li")]
    if sorted(legend) != sorted("%s: %d" % item for item in doors.items()):
        fail("the legend does not say the numbers: %r" % legend)
    step("spring-sale, last week by day: %r per day, by door %r, as posted (read from the SVG; the legend says the same)" % (
        [shown_days[day] for day in days], doors))
    p.execute_script("window.scrollTo(0, 0)")
    shot(p, folder, "12-performance")

    # The CSV is exactly the chart.
    for name in os.listdir(folder):
        if name.endswith(".csv"):
            os.remove(os.path.join(folder, name))
    p.find_element(By.ID, "perf-csv").click()
    csv_path = os.path.join(folder, "waymark-opens-%s.csv" % days[0])
    wait(p, lambda d: os.path.exists(csv_path) and open(csv_path).read().endswith("\n"), "the CSV download")
    with open(csv_path, newline="") as handle:
        rows = list(csv.reader(handle))
    from_csv = {name: {row[0]: int(row[column]) for row in rows[1:]} for column, name in enumerate(rows[0]) if column > 0}
    if rows[0][0] != "start" or from_csv != by_door:
        fail("the CSV %r is not the chart %r" % (rows[:3], by_door))
    # The page's CSV field rule, on names a campaign's owner could have.
    fields = [("plain", "spring-sale", "spring-sale"), ("a comma", "north, south", '"north, south"'),
              ("quotes", 'say "hi"', '"say ""hi"""'), ("a formula", "=HYPERLINK(1)", "'=HYPERLINK(1)"),
              ("a plus", "+1", "'+1"), ("an at", "@team", "'@team"), ("a minus", "-x", "'-x"), ("a count", 42, "42")]
    for label, value, expected in fields:
        if p.execute_script("return csvField(arguments[0])", value) != expected:
            fail("the CSV field for %s: %r, not %r" % (label, p.execute_script("return csvField(arguments[0])", value), expected))
    step("the CSV download (%d rows, %d series) equals the chart's numbers; %d field rules hold (quoting, formulas)"
         % (len(rows) - 1, len(rows[0]) - 1, len(fields)))

    by_platform = choose(p, split="platform")
    platforms = {}
    for event in spring:
        name = "other (web, neither)" if event[1] == "other" else event[1]
        platforms[name] = platforms.get(name, 0) + event[8]
    if {name: sum(series.values()) for name, series in by_platform.items()} != platforms:
        fail("the split by platform %r is not what was posted %r" % ({n: sum(s.values()) for n, s in by_platform.items()}, platforms))
    by_version = choose(p, split="version")
    versions = {}
    for event in spring:
        name = ("web, neither platform" if event[1] == "other" else event[1]) + (", other version" if event[2] == "other" else " " + event[2])
        versions[name] = versions.get(name, 0) + event[8]
    if {name: sum(series.values()) for name, series in by_version.items()} != versions:
        fail("the split by app version %r is not what was posted %r" % ({n: sum(s.values()) for n, s in by_version.items()}, versions))
    by_outcome = choose(p, split="outcome")
    outcomes = {}
    for event in spring:
        name = {"proceed": "proceeded", "gated": "gated: needs auth", "notFound": "not found: expired"}[event[4]]
        outcomes[name] = outcomes.get(name, 0) + event[8]
    if {name: sum(series.values()) for name, series in by_outcome.items()} != outcomes:
        fail("the split by outcome %r is not what was posted %r" % ({n: sum(s.values()) for n, s in by_outcome.items()}, outcomes))
    step("split by platform %r, by version %r, by outcome %r: as posted" % (platforms, versions, outcomes))

    # Every route, by door: what the web landings did, told apart.
    everything = choose(p, subject="all", split="door")
    web = {name: sum(series.values()) for name, series in everything.items() if name.startswith("web:")}
    if web != {"web: not found": 5, "web: the store": 4}:
        fail("every route's web landings by what they did: %r (5 on the ended spring sale, 4 to the App Store)" % web)
    step("every route by door: the web landings as they landed, %r" % web)
    choose(p, subject="route:spring-sale")

    # Hour steps hold the same opens, 24 cells a day.
    hourly = choose(p, split="none", step="hour")
    cells = int(p.find_element(By.ID, "perf-chart").get_attribute("data-cells"))
    # The chart's own cells (168 hours ending with the current one when it was drawn).
    first_hour = min(calendar.timegm(time.strptime(start, "%Y-%m-%dT%H:%M:%SZ")) for start in hourly["Opens"])
    in_hours = sum(e[8] for e in spring_all if first_hour <= e[0] < first_hour + 7 * 86400)
    if sum(hourly["Opens"].values()) != in_hours or cells != 7 * 24:
        fail("the week in hours: %d opens in %d cells" % (sum(hourly["Opens"].values()), cells))

    # The month holds both weeks; the spring sale's window (March) is past the 90 days kept.
    month = choose(p, range="month", step="day")
    if sum(month["Opens"].values()) != sum(e[8] for e in spring_all) or len(month["Opens"]) != 30:
        fail("the month: %d opens in %d days, posted %d" % (sum(month["Opens"].values()), len(month["Opens"]), sum(e[8] for e in spring_all)))
    Select(p.find_element(By.ID, "perf-range")).select_by_value("window")
    wait(p, lambda d: "90 days" in text(d, "perf-error") and not d.find_elements(By.ID, "perf-chart"), "the window's refusal")
    step("the month: %d opens in 30 days; the spring sale's window: %r" % (sum(month["Opens"].values()), text(p, "perf-error")))
    Select(p.find_element(By.ID, "perf-range")).select_by_value("week")

    # A campaign by id prefix adds up its routes; by owner likewise.
    campaign = choose(p, subject="prefix", prefix="order", step="day", split="none")
    orders = per_day(posted, lambda e: e[7] in ("orders", "order-detail"))
    if campaign.get("Opens") != {day + "T00:00:00Z": orders.get(day, 0) for day in days}:
        fail("the campaign 'order' %r is not orders + order-detail %r" % (campaign, orders))
    owned = choose(p, subject="owner:app-team")
    team = per_day(posted, lambda e: e[7] in ("product", "orders", "order-detail"))
    if owned.get("Opens") != {day + "T00:00:00Z": team.get(day, 0) for day in days}:
        fail("the campaign of owner app-team %r is not product + orders + order-detail %r" % (owned, team))
    step("campaigns: ids starting with 'order' add up orders and order-detail (%d), owner app-team adds up its routes (%d)"
         % (sum(orders.values()), sum(team.values())))

    # Two routes, and two weeks, on one chart.
    compared = choose(p, subject="route:spring-sale", compare="with:route:product")
    product = per_day(posted, lambda e: e[7] == "product")
    if compared != {"spring-sale": {d + "T00:00:00Z": expected_days.get(d, 0) for d in days},
                    "product": {d + "T00:00:00Z": product.get(d, 0) for d in days}}:
        fail("spring-sale with product: %r" % compared)
    weeks = choose(p, compare="previous")
    this_week = weeks.get("spring-sale", {})
    earlier = [time.strftime("%Y-%m-%d", time.gmtime(week_start - (7 - n) * 86400)) for n in range(7)]
    earlier_days = per_day(spring_all, lambda e: e[0] < week_start)
    before = [name for name in weeks if name == "spring-sale, the period before (from %s)" % earlier[0]]
    if this_week != compared["spring-sale"] or len(before) != 1 or \
       [weeks[before[0]][day + "T00:00:00Z"] for day in days] != [earlier_days.get(day, 0) for day in earlier]:
        fail("spring-sale this week and the week before (%r): %r" % ([earlier_days.get(day, 0) for day in earlier], weeks))
    shot(p, folder, "13-performance-compare", "perf-title")
    step("spring-sale with product on one chart, and with the week before, day by day (%r)" % [earlier_days.get(day, 0) for day in earlier])
    carried = check_requests(p, base, marketing)

    # A telemetry:read token alone: the performance view only, the same numbers.
    ops = subprocess.run([binary, "token", "create", "--data-dir", data, "--name", "ops", "--scope", "telemetry:read"],
                         capture_output=True, text=True, check=True).stdout.strip()
    p.find_element(By.ID, "logout").click()
    type_into(p, "token", ops + "\n")
    wait(p, lambda d: "Performance only" in text(d, "status"), "the performance-only console")
    hidden = [tab for tab in ("routes", "compose", "preview", "review", "history") if p.find_element(By.ID, "tab-" + tab).is_displayed()]
    p.find_element(By.ID, "tab-performance").send_keys(Keys.ARROW_RIGHT)
    hidden += [tab for tab in ("routes", "compose", "preview", "review", "history") if p.find_element(By.ID, "panel-" + tab).is_displayed()]
    if hidden or not p.find_element(By.ID, "panel-performance").is_displayed():
        fail("a telemetry:read token is offered %s" % hidden)
    again = choose(p, subject="route:spring-sale", range="week", step="day", split="platform", compare="")
    if {name: sum(series.values()) for name, series in again.items()} != platforms:
        fail("with a telemetry:read token the split by platform is %r, not %r" % (again, platforms))
    carried += check_requests(p, base, ops)
    step("a telemetry:read token alone: the performance view only, the same split by platform; performance stage %.1f s"
         % (time.monotonic() - started))
    return carried


def post_impact_week(port, phone, now):
    """A week of telemetry for impact_stage: product opened through two builds every day
    (proceeded and gated; failures too, which are not opens), cart beside it, and unknown
    links as shapes. Events more than 10 minutes old count in their hour only (docs/api.md,
    "Lateness"), which is what the replay reads. Each shape comes from a source key of its
    own, one event a batch: a source adds at most 3 shapes a minute and a network 30
    (--shapes-per-source/--shapes-per-network), and 20 stay under both. Returns the product
    opens posted and the shapes' counts."""
    rng = random.Random(36)
    opens = 0
    for platform, version in (("ios", "5.3.0"), ("ios", "5.2.0")):
        events = []
        for day in range(7):
            for _ in range(3):
                ts = iso(now - day * 86400 - rng.randint(1, 20) * 3600 - rng.randint(0, 3599))
                proceeded, gated = rng.randint(20, 60), rng.randint(1, 9)
                opens += proceeded + gated
                events += [{"ts": ts, "entry": "universalLink", "outcome": "proceed", "route": "product", "count": proceeded},
                           {"ts": ts, "entry": "scheme", "outcome": "gated", "precondition": "auth", "route": "product", "count": gated},
                           {"ts": ts, "entry": "scheme", "outcome": "notFound", "reason": "validationFailed", "route": "product", "count": 4},
                           {"ts": ts, "entry": "scheme", "outcome": "proceed", "route": "cart", "count": rng.randint(1, 30)}]
        status, answer, _ = api(port, phone, "POST", "/v1/telemetry",
                                {"client": {"platform": platform, "appVersion": version, "revision": 1}, "events": events})
        if status != 202 or answer["accepted"] != len(events):
            fail("a week of telemetry for %s %s was answered %s %r" % (platform, version, status, answer))
    shapes = {"/winter/:param": 12, "/outlet/:param": 5, "/gift-cards": 3}
    serial = 0
    for shape, count in shapes.items():
        for _ in range(count):
            serial += 1
            event = {"ts": iso(now - 60), "entry": "universalLink", "outcome": "notFound", "reason": "unknownRoute", "shape": shape}
            status, answer, _ = api(port, phone, "POST", "/v1/telemetry",
                                    {"client": {"platform": "ios", "appVersion": "5.3.0", "revision": 1, "source": "%032x" % (0x36b0000 + serial)},
                                     "events": [event]})
            if status != 202 or answer["accepted"] != 1:
                fail("a shape was answered %s %r" % (status, answer))
    return opens, shapes




def impact_stage(binary, folder):
    """Review & publish shows what a draft does to last week's traffic, on a daemon of its
    own fed a week of telemetry: a removed alias warns next to its change with the number
    posted, publish asks for a confirmation naming it, and a route for the top unknown
    shape shows the shape's count as gained."""
    scratch = tempfile.mkdtemp(prefix="waymark-impact-")
    data = os.path.join(scratch, "data")
    process, admin, port = waymark_daemon.start(binary, data)
    driver = None
    try:
        if port is None or admin is None:
            fail("the impact daemon did not start: " + process.stderr.read())
        base = "http://127.0.0.1:%d" % port
        marketing, phone, reader = (subprocess.run([binary, "token", "create", "--data-dir", data, "--name", name, "--scope", scope],
                                                   capture_output=True, text=True, check=True).stdout.strip()
                                    for name, scope in (("marketing", "routes:publish"), ("phone", "telemetry:write"),
                                                        ("ops", "telemetry:read")))
        opens, shapes = post_impact_week(port, phone, int(time.time()))
        status, unknown, _ = api(port, reader, "GET", "/v1/telemetry/unknown-links?limit=3")
        top = unknown["shapes"][0] if status == 200 and unknown["shapes"] else {}
        if top.get("shape") != "/winter/:param" or top.get("count") != shapes["/winter/:param"] or unknown["refused"] != 0:
            fail("the posted shapes are not the unknown links: %s %r" % (status, unknown))
        step("a week of telemetry posted: %d product opens (proceed and gated) over two builds, cart beside it; "
             "unknown links /winter/:param x12 (the top), /outlet/:param x5, /gift-cards x3, none refused" % opens)

        driver = browser()
        log_in(driver, base, marketing)
        # Remove product's short-link alias.
        edit_route(driver, "product")
        type_into(driver, "f-patterns", "/product/:id\n/deeplink/product/:id")
        wait(driver, lambda d: settled(d), "the draft to be checked")
        driver.find_element(By.ID, "tab-review").click()
        expected = "Up to %d opens last week would no longer open product" % opens
        warning = wait(driver, lambda d: d.find_elements(By.CSS_SELECTOR, "#review-diff table[data-changed='product'] + ul.impact li.warning"),
                       "the warning next to product's change")
        if not warning[0].text.startswith(expected) or warning[0].get_attribute("data-count") != str(opens) \
                or warning[0].get_attribute("data-basis") != "upTo" or "/p/:id" not in warning[0].text:
            fail("next to product's change: %r (expected %r)" % (warning[0].text, expected))
        estimated = driver.find_element(By.ID, "impact-estimates-list").get_attribute("textContent")
        if "not by link or pattern" not in estimated or "up to" not in estimated:
            fail("the page does not say what is estimated: %r" % estimated)
        shot(driver, folder, "12-impact-warning", "review-diff")
        # Publishing asks first, naming the number; cancelled, nothing is published.
        type_into(driver, "publish-message", "Drop the short links")
        driver.find_element(By.ID, "publish").click()
        wait(driver, lambda d: d.find_element(By.ID, "impact-confirm-panel").is_displayed(), "the confirmation")
        asked = text(driver, "impact-confirm-text")
        if expected not in asked:
            fail("the confirmation does not name %d: %r" % (opens, asked))
        shot(driver, folder, "13-impact-confirm", "impact-confirm-panel")
        driver.find_element(By.ID, "impact-cancel").click()
        status, listing, _ = api(port, admin, "GET", "/v1/revisions")
        if listing["current"] != 1:
            fail("a cancelled confirmation published revision %s" % listing["current"])
        step("removing /p/:id: %r next to product's change (the page says why it is an upper bound); "
             "publish asked %r; cancelled, nothing published" % (warning[0].text[:len(expected)], asked))

        # What publishing asks about, on answers made up to be edge cases: a change far below
        # 1 % (a flood of forged opens could make any share that small) still asks; opens under
        # no route ask at 1 % of the week; a draft that changes nothing does not ask.
        def questions(answer):
            return driver.execute_script("return impactQuestions(arguments[0])", answer)
        change = {"kind": "windowShrunk", "count": 5, "share": 0.00003, "warning": False, "message": "5 opens last week would no longer open product: closed."}
        quiet = {"routes": [{"id": "product", "opens": 160000, "changes": [change]}], "unattributed": 0, "allOpens": 160000}
        asked_small = questions(quiet)
        if asked_small != [change["message"]]:
            fail("a change of 5 opens in 160,000 is not asked about: %r" % asked_small)
        folded = {"routes": [], "unattributed": 20, "allOpens": 2000}
        if len(questions(folded)) != 1 or questions(dict(folded, unattributed=19)) != [] or questions({"routes": [], "unattributed": 0, "allOpens": 10}) != []:
            fail("unattributed opens ask at 1 %% of the week, not otherwise: %r" % questions(folded))
        step("publishing asks about a change of 5 opens in 160,000 (no warning beside it) and about unattributed opens from 1 % of the week")

        # A route for the top unknown shape: its count, gained.
        driver.find_element(By.ID, "tab-routes").click()
        driver.find_element(By.ID, "new-route").click()
        wait(driver, lambda d: d.find_element(By.ID, "route-form").is_displayed(), "the route form")
        type_into(driver, "f-id", "winter")
        type_into(driver, "f-patterns", "/winter/:id")
        Select(driver.find_element(By.ID, "f-destination")).select_by_value("product")
        wait(driver, lambda d: settled(d), "the draft to be checked")
        driver.find_element(By.ID, "tab-review").click()
        gained = wait(driver, lambda d: d.find_elements(By.CSS_SELECTOR, "#impact-gained li[data-shape='/winter/:param']"), "the gained shape")
        said = gained[0].text
        if gained[0].get_attribute("data-count") != str(shapes["/winter/:param"]) or "Gained" not in said or "winter" not in said:
            fail("the gained shape reads %r" % said)
        others = [item.get_attribute("data-shape") for item in driver.find_elements(By.CSS_SELECTOR, "#impact-gained li[data-shape]")]
        if others != ["/winter/:param"]:
            fail("only /winter/:param is answered by the draft, not %r" % others)
        shot(driver, folder, "14-impact-gained", "impact-panel")
        # Confirmed, it publishes.
        result = publish(driver, "Drop the short links, add winter")
        if "Not published yet" not in result:
            fail("publish did not ask: %r" % result)
        driver.find_element(By.ID, "impact-confirm").click()
        wait(driver, lambda d: "Published revision 2" in text(d, "publish-result"), "the confirmed publish")
        step("a route for /winter/:param: %r; confirmed, revision 2 published" % said)
    finally:
        tear_down([driver] if driver is not None else [], process, scratch)


def import_stage(binary, folder):
    """Import links from the console, on a daemon of its own whose builds claim the short-link
    domain: a Takeout CSV chosen in the page becomes the draft (the report names what was not
    imported and why), the review shows the added routes, and publishing makes them current:
    the short link then lands."""
    scratch = tempfile.mkdtemp(prefix="waymark-import-")
    data = os.path.join(scratch, "data")
    process, admin, port = waymark_daemon.start(binary, data)
    driver = None
    try:
        if port is None or admin is None:
            fail("the import daemon did not start: " + process.stderr.read())
        base = "http://127.0.0.1:%d" % port
        marketing = subprocess.run([binary, "token", "create", "--data-dir", data, "--name", "marketing", "--scope", "routes:publish"],
                                   capture_output=True, text=True, check=True).stdout.strip()
        for version in ("5.2.0", "5.3.0"):
            schema = json.load(open(os.path.join(waymark_daemon.EXAMPLE, "schema-ios-%s.json" % version)))
            schema["hosts"].append("links.storefront.example")
            status, _, _ = api(port, admin, "PUT", "/v1/schemas/ios/" + version, schema)
            if status != 200:
                fail("registering the schema with the short-link host: %d" % status)
        export = os.path.join(scratch, "links.csv")
        with open(export, "w") as out:
            out.write("Short link,link,st,archived\r\n"
                      "https://links.storefront.example/box1,https://storefront.example/product/p42,The box,false\r\n"
                      "https://links.storefront.example/box2,https://storefront.example/c/shoes,,false\r\n"
                      "https://storefront.page.link/x,https://storefront.example/cart,,false\r\n"
                      "https://links.storefront.example/blog,https://storefront.example/blog/post-1,,false\r\n")
        driver = browser()
        log_in(driver, base, marketing)
        wait(driver, lambda d: d.find_element(By.ID, "import-open").is_displayed(), "the import button")
        driver.find_element(By.ID, "import-open").click()
        type_into(driver, "import-host", "links.storefront.example")
        driver.find_element(By.ID, "import-file").send_keys(export)
        driver.find_element(By.ID, "import-run").click()
        wait(driver, lambda d: "link(s) read" in text(d, "import-result") or "Not imported" in text(d, "import-result"), "the import's report")
        said, skipped = text(driver, "import-result"), items(driver, "import-skipped")
        if "4 link(s) read: 2 imported" not in said or len(skipped) != 2:
            fail("the import reads %r, skipped %r" % (said, skipped))
        if not any("cannotMove" in line for line in skipped) or not any("unanswered" in line and "/blog/:param" in line for line in skipped):
            fail("the skipped links do not say why: %r" % skipped)
        wait(driver, lambda d: route_row(d, "link.box1") is not None and settled(d), "the imported routes in the draft")
        shot(driver, folder, "15-import", "import-form")
        result = publish(driver, "Imported from Firebase")
        if "Published revision 2" not in result:
            fail("publishing the imported draft: %r" % result)
        connection = http.client.HTTPConnection("127.0.0.1", port, timeout=10)
        connection.request("GET", "/box1", headers={"Host": "links.storefront.example", "User-Agent": "Mozilla/5.0 (X11; Linux x86_64)"})
        landed = connection.getresponse()
        landed.read()
        connection.close()
        if landed.status != 302:
            fail("the imported short link lands as %d" % landed.status)
        step("import from the console: %r; skipped %d with their reasons; published as revision 2, /box1 lands" % (said[:60], len(skipped)))
    finally:
        tear_down([driver] if driver is not None else [], process, scratch)


def tear_down(drivers, process, scratch):
    """Closes the browsers, stops the daemon and removes its data directory."""
    for driver in drivers:
        try:
            driver.quit()
        except Exception:
            pass
    process.terminate()
    process.wait(timeout=10)
    shutil.rmtree(scratch, ignore_errors=True)


def main():
    began = time.monotonic()
    binary = os.path.abspath(sys.argv[1])
    folder = sys.argv[2] if len(sys.argv) > 2 else os.path.join(ROOT, ".build", "console")
    os.makedirs(folder, exist_ok=True)
    for tool in ("chromium", "chromedriver"):
        if shutil.which(tool) is None:
            fail("%s is not installed (make test-console installs it)" % tool)
    scratch = tempfile.mkdtemp(prefix="waymark-console-")
    data = os.path.join(scratch, "data")
    process, admin, port = waymark_daemon.start(binary, data)
    drivers = []
    try:
        if port is None or admin is None:
            fail("the daemon did not start: " + process.stderr.read())
        base = "http://127.0.0.1:%d" % port
        marketing = subprocess.run([binary, "token", "create", "--data-dir", data, "--name", "marketing", "--scope", "routes:publish"],
                                   capture_output=True, text=True, check=True).stdout.strip()
        reader = subprocess.run([binary, "token", "create", "--data-dir", data, "--name", "reader", "--scope", "routes:read", "--scope", "manifest:read"],
                                capture_output=True, text=True, check=True).stdout.strip()
        check_policy(port)
        carried = check_performance(binary, data, port, base, marketing, folder, drivers)

        a = browser()
        drivers.append(a)
        # A token the server does not know is refused, and the page asks again.
        a.get(base + "/console")
        wait(a, lambda d: d.find_element(By.ID, "token").is_displayed(), "the page to ask for a token")
        type_into(a, "token", "wm_00000000_" + "x" * 43 + "\n")
        wait(a, lambda d: "does not know" in text(d, "login-error"), "the refusal of an unknown token")
        shot(a, folder, "1-login-refused")
        type_into(a, "token", marketing + "\n")
        wait(a, lambda d: d.find_element(By.ID, "app").is_displayed() and "Draft from revision 1" in text(d, "status"), "the console to open")
        if not route_row(a, "spring-sale") or len(a.find_elements(By.CSS_SELECTOR, "#routes-table tbody tr")) != 10:
            fail("the routes table does not show the example's ten routes")
        builds = {route: route_row(a, route).find_elements(By.TAG_NAME, "td")[6].text for route in ("new-arrivals", "product")}
        if builds != {"new-arrivals": "ios 5.3.0", "product": "ios 5.2.0, ios 5.3.0"}:
            fail("new-arrivals resolves on ios 5.3.0 only, product on both: %r" % builds)
        if "ended" not in route_row(a, "spring-sale").text:
            fail("the spring sale (March 2026) should show as ended: %r" % route_row(a, "spring-sale").text)
        Select(a.find_element(By.ID, "filter-owner")).select_by_value("marketing")
        if [r.get_attribute("data-route") for r in a.find_elements(By.CSS_SELECTOR, "#routes-table tbody tr")] != ["spring-sale"]:
            fail("filtering by owner marketing should leave the spring sale alone")
        Select(a.find_element(By.ID, "filter-owner")).select_by_value("")
        shot(a, folder, "2-routes")
        step("logged in with a routes:publish token (an unknown one refused); ten routes, windows and builds shown, filters work")

        # A 503 with Retry-After (the server's lanes or a token's share full) changed nothing:
        # the page asks again; one without Retry-After is shown as it is.
        retried = a.execute_async_script("""
            const done = arguments[arguments.length - 1];
            const real = window.fetch;
            let calls = 0;
            const busy = (headers) => Promise.resolve(new Response('{"error":{"code":"busy","message":"Busy."}}',
                                                                   { status: 503, headers: Object.assign({ "Content-Type": "application/json" }, headers) }));
            window.fetch = (...args) => (++calls === 1 ? busy({ "Retry-After": "0" }) : real(...args));
            api("GET", "/v1/revisions").then((answer) => {
              const first = [answer.status, calls];
              calls = 0;
              window.fetch = () => { calls++; return busy({}); };
              return api("GET", "/v1/revisions").then((other) => { window.fetch = real; done([first, [other.status, calls]]); });
            }).catch((error) => { window.fetch = real; done(String(error)); });
        """)
        if retried != [[200, 2], [503, 1]]:
            fail("a 503 with Retry-After should be sent again (200 after 2 requests), one without shown at once (503 after 1): %r" % (retried,))
        step("a busy answer (503, Retry-After) is asked again; one without Retry-After is shown")

        # Keyboard: the section tabs move with the arrow keys.
        a.find_element(By.ID, "tab-routes").send_keys(Keys.ARROW_RIGHT)
        wait(a, lambda d: d.find_element(By.ID, "panel-compose").is_displayed(), "the arrow key to open Compose")
        a.switch_to.active_element.send_keys(Keys.ARROW_LEFT)
        wait(a, lambda d: d.find_element(By.ID, "panel-routes").is_displayed(), "the arrow key to go back to Routes")

        # Compose a campaign route.
        a.find_element(By.ID, "new-route").click()
        wait(a, lambda d: d.find_element(By.ID, "route-form").is_displayed(), "the route form")
        type_into(a, "f-id", "winter-orders")
        type_into(a, "f-patterns", "/winter/:orderId")
        Select(a.find_element(By.ID, "f-destination")).select_by_value("orderDetail")
        wait(a, lambda d: d.find_elements(By.ID, "f-param-source-orderId"), "the orderId parameter row")
        if "int" not in a.find_element(By.CSS_SELECTOR, "label[for='f-param-source-orderId']").text:
            fail("the parameter's type is not shown")
        Select(a.find_element(By.ID, "f-param-source-orderId")).select_by_value("const")
        type_into(a, "f-param-orderId", "abc")
        wait(a, lambda d: settled(d) and any("whole number" in item or "int" in item for item in items(d, "problems-params-orderId")),
             "a type error next to the constant")
        server_said = [item.text for item in a.find_elements(By.CSS_SELECTOR, "#problems-params-orderId li[data-source='server']")]
        if not server_said:
            fail("the validator's own sentence is not next to the constant: %r" % items(a, "problems-params-orderId"))
        if a.find_element(By.ID, "publish").is_enabled():
            fail("publish is allowed while an error stands")
        shot(a, folder, "3-type-error", "problems-params-orderId")
        type_into(a, "f-param-orderId", "42")
        wait(a, lambda d: settled(d) and not items(d, "problems-params-orderId"), "the type error to go once fixed")
        step("a constant 'abc' for an int parameter: an error next to its field (%r), gone once it is 42" % server_said[0])
        Select(a.find_element(By.ID, "f-param-source-orderId")).select_by_value("capture")
        type_into(a, "f-param-orderId", "orderId")
        set_time(a, "f-from", "2026-01-01T00:00:00")
        set_time(a, "f-until", "2036-01-01T00:00:00")
        type_into(a, "f-fallback", "https://storefront.example/winter")
        type_into(a, "f-owner", "marketing")
        # The link's card: its text drawn as text, an image that is not https refused next to its field.
        type_into(a, "f-preview-title", "Winter <b>orders</b> & more")
        type_into(a, "f-preview-description", "Track every order")
        if text(a, "card-title") != "Winter <b>orders</b> & more" or a.find_elements(By.CSS_SELECTOR, "#card b"):
            fail("the card does not show the title as text: %r" % text(a, "card-title"))
        type_into(a, "f-preview-image", "http://cdn.storefront.example/winter.png")
        wait(a, lambda d: settled(d) and any("https" in item for item in items(d, "problems-preview-image")), "the image's error next to it")
        if a.find_element(By.ID, "publish").is_enabled():
            fail("publish is allowed while the preview image is refused")
        type_into(a, "f-preview-image", "https://cdn.storefront.example/winter.png")
        wait(a, lambda d: settled(d) and not items(d, "problems-preview-image") and "cdn.storefront.example" in text(d, "card-image"),
             "the image's error to go, the card to name it")
        step("the link's card: the title drawn as text, an http image refused next to its field, an https one named on the card")
        # A second pattern that takes the same links as order-detail's.
        a.find_element(By.ID, "f-patterns").send_keys(Keys.END, "\n/orders/:orderId")
        conflict = wait(a, lambda d: settled(d) and d.find_elements(By.CSS_SELECTOR, "#problems-patterns button[data-goto]"),
                        "the conflict with order-detail, named")
        said = items(a, "problems-patterns")
        if conflict[0].text != '"order-detail"' or not a.find_elements(By.CSS_SELECTOR, "#problems-patterns li.error[data-source='server']"):
            fail("the conflict does not name order-detail as an error: %r" % said)
        shot(a, folder, "4-conflict", "problems-patterns")
        type_into(a, "f-patterns", "/winter/:orderId")
        wait(a, lambda d: settled(d) and not items(d, "problems-patterns") and not items(d, "problems-params-orderId"), "the draft to be clean")
        step("a pattern overlapping order-detail's: %r, \"order-detail\" a link to it; removed, the draft is valid" % said[0])

        # Preview on the draft.
        a.find_element(By.ID, "preview-route").click()
        wait(a, lambda d: outcome(d, "ios 5.3.0", "logged in"), "the preview")
        link = a.find_element(By.ID, "p-link").get_attribute("value")
        if outcome(a, "ios 5.3.0", "logged out") != "gated" or outcome(a, "ios 5.3.0", "logged in") != "proceed":
            fail("%s should be gated logged out and proceed logged in: %s, %s"
                 % (link, outcome(a, "ios 5.3.0", "logged out"), outcome(a, "ios 5.3.0", "logged in")))
        wait(a, lambda d: (d.find_element(By.ID, "p-qr").get_attribute("src") or "").startswith("blob:"), "the QR code")
        shot(a, folder, "5-preview", "preview-table")
        Select(a.find_element(By.ID, "p-when")).select_by_value("at")
        set_time(a, "p-time", "2036-06-01T12:00:00")
        a.find_element(By.ID, "p-run").click()
        wait(a, lambda d: outcome(d, "ios 5.3.0", "logged in") == "notFound", "the preview after the window")
        why = a.find_element(By.CSS_SELECTOR, "#preview-table tr[data-build='ios 5.3.0'][data-user='logged in'] td:last-child").text
        if "expired" not in why:
            fail("after the window the link should be expired, not %r" % why)
        step("preview of %s on the draft: gated logged out, proceed logged in, expired in June 2036; QR code shown" % link)

        # Review and publish.
        a.find_element(By.ID, "tab-review").click()
        wait(a, lambda d: "winter-orders" in text(d, "review-diff"), "the diff to show the new route")
        shot(a, folder, "6-review")
        result = publish(a, "Winter campaign")
        if "Published revision 2" not in result:
            fail("publishing answered %r" % result)
        a.find_element(By.ID, "tab-history").click()
        wait(a, lambda d: d.find_elements(By.CSS_SELECTOR, "#history-table tr[data-revision='2']"), "revision 2 in the history")
        history = a.find_element(By.CSS_SELECTOR, "#history-table tr[data-revision='2']").text
        if "Winter campaign" not in history or "marketing" not in history:
            fail("the history row is %r" % history)
        status, manifest, _ = api(port, reader, "GET", "/v1/manifest?platform=ios&version=5.3.0")
        if status != 200 or manifest["revision"] != 2 or "winter-orders" not in [r["id"] for r in manifest["routes"]]:
            fail("the manifest does not serve the new route: %s" % status)
        shot(a, folder, "7-history")
        step("published revision 2 (\"Winter campaign\", by marketing): in the history and in the ios 5.3.0 manifest")

        # A second browser publishes first.
        b = browser()
        drivers.append(b)
        log_in(b, base, marketing)
        edit_route(b, "spring-sale")
        type_into(b, "f-owner", "brand")
        if "Published revision 3" not in publish(b, "Spring owner"):
            fail("the second browser could not publish")
        edit_route(a, "new-arrivals")
        type_into(a, "f-notes", "Now for every build from 5.3.0.")
        result = publish(a, "New arrivals note")
        if "Not published" not in result or not a.find_element(By.ID, "rebase-panel").is_displayed():
            fail("a publish from a stale base was not refused: %r" % result)
        if "Revision 3 was published by marketing" not in text(a, "rebase-text"):
            fail("the page does not say who published first: %r" % text(a, "rebase-text"))
        shot(a, folder, "8-refused", "rebase-panel")
        a.find_element(By.ID, "rebase").click()
        wait(a, lambda d: "without conflicts" in text(d, "rebase-text"), "a clean rebase")
        if "Published revision 4" not in publish(a, "New arrivals note"):
            fail("the rebased draft did not publish")
        _, four, _ = api(port, admin, "GET", "/v1/revisions/4")
        routes = {r["id"]: r for r in four["routes"]["routes"]}
        if routes["spring-sale"].get("owner") != "brand" or "every build" not in routes["new-arrivals"].get("notes", ""):
            fail("revision 4 lost a change: %r / %r" % (routes["spring-sale"], routes["new-arrivals"]))
        step("browser B published revision 3 first; A's publish was refused (412), rebased cleanly, and published 4 with both changes")

        # Both change the same route: a conflict the person settles.
        b.get(base + "/console")
        wait(b, lambda d: "Draft from revision 4" in text(d, "status"), "browser B to reload")
        edit_route(b, "search")
        type_into(b, "f-owner", "growth")
        if "Published revision 5" not in publish(b, "Search to growth"):
            fail("browser B could not publish revision 5")
        edit_route(a, "search")
        type_into(a, "f-owner", "search-team")
        publish(a, "Search to search-team")
        a.find_element(By.ID, "rebase").click()
        wait(a, lambda d: d.find_elements(By.CSS_SELECTOR, "#rebase-conflicts li[data-conflict='search']"), "the conflict on search")
        if a.find_element(By.ID, "publish").is_enabled():
            fail("publish is allowed while a conflict is unsettled")
        shot(a, folder, "9-conflict-on-rebase", "rebase-conflicts")
        a.find_element(By.CSS_SELECTOR, "#rebase-conflicts button[data-keep='mine']").click()
        if "Published revision 6" not in publish(a, "Search to search-team"):
            fail("the settled draft did not publish")
        _, six, _ = api(port, admin, "GET", "/v1/revisions/6")
        _, five, _ = api(port, admin, "GET", "/v1/revisions/5")
        if {r["id"]: r for r in six["routes"]["routes"]}["search"].get("owner") != "search-team" or \
           {r["id"]: r for r in five["routes"]["routes"]}["search"].get("owner") != "growth":
            fail("the conflict was not settled as chosen, or revision 5 changed")
        step("both changed search's owner: the rebase showed the conflict, publish waited for a choice; 'keep mine' published 6")

        # Roll back to revision 2, after a confirmation showing what changes.
        a.find_element(By.ID, "tab-history").click()
        button = wait(a, lambda d: d.find_elements(By.CSS_SELECTOR, "button[data-rollback='2']"), "the rollback button of revision 2")
        button[0].click()
        wait(a, lambda d: d.find_element(By.ID, "rollback-panel").is_displayed() and "search" in text(d, "rollback-diff"), "the confirmation")
        shot(a, folder, "10-rollback-confirm", "rollback-panel")
        a.find_element(By.ID, "rollback-confirm").click()
        wait(a, lambda d: "Rolled back: revision 7" in text(d, "history-result"), "the rollback")
        _, seven, _ = api(port, admin, "GET", "/v1/revisions/7")
        _, two, _ = api(port, admin, "GET", "/v1/revisions/2")
        if seven.get("restores") != 2 or seven["routes"]["routes"] != two["routes"]["routes"]:
            fail("revision 7 is not revision 2's routes again: %r" % {k: seven.get(k) for k in ("number", "restores")})
        step("rolled back after a confirmation listing the changes: revision 7 restores revision 2")

        # The diff of any two revisions.
        Select(a.find_element(By.ID, "h-from")).select_by_value("1")
        Select(a.find_element(By.ID, "h-to")).select_by_value("2")
        a.find_element(By.ID, "h-compare").click()
        wait(a, lambda d: "winter-orders" in text(d, "h-diff"), "the diff of revisions 1 and 2")

        # Publishing at a time: a schedule, on the current revision.
        edit_route(a, "cart")
        type_into(a, "f-owner", "checkout")
        a.find_element(By.ID, "tab-review").click()
        Select(a.find_element(By.ID, "publish-mode")).select_by_value("schedule")
        at = time.strftime("%Y-%m-%dT09:30:00", time.gmtime(time.time() + 30 * 86400))  # schedules reach a year ahead at most
        set_time(a, "publish-at", at)
        result = publish(a, "Checkout owns the cart")
        status, schedule, _ = api(port, admin, "GET", "/v1/schedules/1")
        if "Scheduled (1) for %sZ" % at not in result or status != 200 or schedule["status"] != "pending" or schedule["base"] != 7:
            fail("the scheduled publish: %r, %s %r" % (result, status, schedule))
        step("the diff of revisions 1 and 2 shown; a publish scheduled for %sZ on revision 7 (schedule 1, pending)" % at)

        # A reading token looks but cannot change anything.
        b.delete_all_cookies()
        b.get(base + "/console")
        b.execute_script("sessionStorage.clear()")
        b.get(base + "/console")
        type_into(b, "token", reader + "\n")
        wait(b, lambda d: "Read-only" in text(d, "status"), "the read-only console")
        if b.find_element(By.ID, "publish").is_enabled() or b.find_elements(By.CSS_SELECTOR, "button[data-rollback]"):
            fail("a routes:read token may publish or roll back in the page")
        step("a routes:read token: the routes shown, publishing and rollback not offered")

        # Readable at a tablet's width.
        a.set_window_size(820, 1180)
        a.find_element(By.ID, "tab-routes").click()
        width = a.execute_script("return document.documentElement.scrollWidth")
        if width > 820:
            fail("at a tablet's width the page scrolls sideways (%d px)" % width)
        shot(a, folder, "11-tablet")

        carried += check_requests(a, base, marketing) + check_requests(b, base, marketing)
        step("the token went only to %s/v1/ (%d requests); no policy violation logged" % (base, carried))
    finally:
        tear_down(drivers, process, scratch)
    impact_stage(binary, folder)
    import_stage(binary, folder)
    print("console-check: ok (%d checks in %.1f s, daemons and browsers included; screenshots in %s)" % (len(STEPS), time.monotonic() - began, folder))


if __name__ == "__main__":
    main()
